"""A table's archived timeline, whichever layout holds it: ``.hoodie/archived/`` log files (layout 1,
table version 6) or the LSM history ``.hoodie/timeline/history/`` (layout 2, versions 8+)."""
from __future__ import annotations

from .. import config as C
from ..config import HoodieConfig
from ..schema.arrow import parquet_codec
from ..timeline.avro_models import parse_commit_metadata
from ..timeline.instant import WRITE_ACTIONS, Instant, State
from ..timeline.timeline import META_DIR
from .archived_timeline import archived_instants, read_archived_entries
from ..timeline.lsm import INSTANT_COLUMNS
from .lsm_history import LSMHistory
from .meta_client import HoodieTable


def archive_folder(table: HoodieTable) -> str:
    return f"{META_DIR}/{table.config.get_str(C.ARCHIVELOG_FOLDER)}"


def history_folder(table: HoodieTable) -> str:
    return f"{META_DIR}/{table.config.get_str(C.TIMELINE_PATH)}/{table.config.get_str(C.TIMELINE_HISTORY_PATH)}"


def lsm_history(table: HoodieTable, cfg: HoodieConfig | None = None) -> LSMHistory:
    """The table's LSM history, its files written with the table's parquet codec."""
    codec = (cfg or table.config).get_str(C.PARQUET_COMPRESSION)
    return LSMHistory(table.storage, history_folder(table), parquet_codec(codec))


def read_archived(table: HoodieTable) -> list[Instant]:
    """Completed instants of the archived timeline, in time order; in layout 2 with the completion
    times the history recorded (none for instants an upgrade moved from a version 6 archive). The
    history's metadata and plan bytes are not read: every incremental query asks for this."""
    if table.layout_version < 2:
        return archived_instants(table.storage, archive_folder(table))
    return [Instant(r.instant_time, r.action, State.COMPLETED, r.completion_time)
            for r in lsm_history(table).records(INSTANT_COLUMNS)]


def read_archived_commits(table: HoodieTable) -> list[tuple[Instant, dict]]:
    """Archived completed writes with their commit metadata (the 0.x JSON shape), in time order."""
    if table.layout_version < 2:
        return sorted((Instant(e["commitTime"], e["actionType"], State.COMPLETED),
                       e.get("hoodieCommitMetadata") or e.get("hoodieReplaceCommitMetadata") or {})
                      for e in read_archived_entries(table.storage, archive_folder(table))
                      if e.get("actionState") == State.COMPLETED.name and e["actionType"] in WRITE_ACTIONS)
    return [(Instant(r.instant_time, r.action, State.COMPLETED, r.completion_time),
             parse_commit_metadata(r.metadata) if r.metadata else {})
            for r in lsm_history(table).records() if r.action in WRITE_ACTIONS]
