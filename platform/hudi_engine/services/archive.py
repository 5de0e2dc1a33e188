"""Archival: move old completed instants off the active timeline, into ``.hoodie/archived/``
(layout 1, table version 6) or the LSM history ``.hoodie/timeline/history/`` (layout 2, 8+).

The archived copy is written first (in layout 2: the parquet file, then the manifest naming it),
and the instant files are deleted after: every pending file, then the completed ones oldest first,
so a run killed in between leaves an active timeline with no holes. The next run chooses the same
instants again: an unlisted history file of theirs is written anew, a listed one is kept, and the
deletes finish (a record archived twice is harmless).
"""
from __future__ import annotations

import logging

from .. import config as C
from ..concurrency.locks import locked_table
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..metadata_table.layout import open_mdt
from ..table.archived import archive_folder, lsm_history
from ..table.archived_timeline import archive_log, entry_for, next_archive_file
from ..table.lsm_history import LSMHistory
from ..table.meta_client import HoodieTable
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import CLEAN, FILE_WRITING_ACTIONS, Instant
from ..timeline.lsm import record_for
from ..timeline.timeline import Timeline
from .archive_plan import instants_to_archive

log = logging.getLogger(__name__)


def keep_window(cfg: HoodieConfig) -> tuple[int, int]:
    low, high, retained = (cfg.get(C.KEEP_MIN_COMMITS), cfg.get(C.KEEP_MAX_COMMITS),
                           cfg.get(C.CLEANER_COMMITS_RETAINED))
    if low >= high:
        raise HoodieConfigError(f"{C.KEEP_MIN_COMMITS.key}={low} must be below {C.KEEP_MAX_COMMITS.key}={high}")
    if low <= retained and cfg.get_str(C.CLEANER_POLICY).upper() == "KEEP_LATEST_COMMITS":
        raise HoodieConfigError(
            f"{C.KEEP_MIN_COMMITS.key}={low} must be above {C.CLEANER_COMMITS_RETAINED.key}={retained}, "
            "or the cleaner could need instants archival removed")
    return low, high


def _last_clean_retains(table: HoodieTable) -> str | None:
    cleans = table.timeline.filter([CLEAN], completed=True)
    if not cleans:
        return None
    return decode_instant_avro(table.timeline.read_details(cleans[-1])).get("earliestCommitToRetain") or None


def archive(table: HoodieTable, options: dict | None = None) -> list[Instant]:
    """Archive what Hudi's rules allow; returns the completed instants archived. With several
    writers it runs under the table lock, on the timeline as it is then; the metadata table's own
    timeline is archived after the table's, under the same lock."""
    cfg = HoodieConfig({**(options or {}), **table.props})
    low, high = keep_window(cfg)
    with locked_table(table, cfg, "archiving") as table:
        done = _archive(table, cfg, low, high)
        mdt = open_mdt(table)
        if mdt is not None:
            _archive(mdt, cfg, low + 1, high + 1, retain_from=metadata_archival_bound(table.timeline))
        return done


def metadata_archival_bound(data_timeline: Timeline) -> str | None:
    """The metadata table keeps its instants from the table's first active write or pending
    instant on (Hudi's getEarliestInstantForMetadataArchival): a rollback of a table instant
    still needs the metadata instant of the same time."""
    firsts = [i.timestamp for i in data_timeline.instants if i.action in FILE_WRITING_ACTIONS][:1]
    firsts += [i.timestamp for i in data_timeline.pending()][:1]
    return min(firsts, default=None)


def _archive(table: HoodieTable, cfg: HoodieConfig, low: int, high: int,
             retain_from: str | None = None) -> list[Instant]:
    timeline = table.timeline
    compacted = [i.timestamp for i in timeline.completed_writes()
                 if table.table_type == "MERGE_ON_READ" and i.action == "commit"]
    chosen = instants_to_archive(timeline.instants, low, high, _last_clean_retains(table),
                                 table.table_type == "MERGE_ON_READ", compacted, retain_from)
    if not chosen:
        return []
    files = {instant: timeline.files_of(instant) for instant in chosen}
    history = lsm_history(table, cfg) if table.layout_version >= 2 else None
    where = _to_archive_log(table, cfg, files) if history is None else _to_history(table, history, files)
    pending = [f for group in files.values() for f in group if not f.is_completed]
    table.storage.delete_many([timeline.path_of(f) for f in pending])
    for instant in chosen:            # oldest first, so the active timeline never has a hole
        table.storage.delete(timeline.path_of(instant))
    if history is not None:           # as Hudi: full layers merge once the active files are gone
        history.compact_and_clean(cfg.get(C.TIMELINE_COMPACTION_BATCH), cfg.get(C.TIMELINE_MANIFEST_RETAINED))
    log.info(f"archived {len(chosen)} instants of {table.name} ({chosen[0].timestamp}..{chosen[-1].timestamp}) "
             f"to {where}")
    return chosen


def _to_archive_log(table: HoodieTable, cfg: HoodieConfig, files: dict[Instant, list[Instant]]) -> str:
    """Layout 1: one log file of archived entries, one per instant file."""
    entries = [entry_for(f, table.storage.read_bytes(table.timeline.path_of(f)))
               for group in files.values() for f in group]
    path = next_archive_file(table.storage, archive_folder(table))
    table.storage.write_bytes(path, archive_log(entries, cfg.get(C.COMMITS_ARCHIVAL_BATCH)))
    return path


def _to_history(table: HoodieTable, history: LSMHistory, files: dict[Instant, list[Instant]]) -> str:
    """Layout 2: one layer-0 file of the LSM history, one record per action."""
    records = [record_for({f: table.storage.read_bytes(table.timeline.path_of(f)) for f in group})
               for group in files.values()]
    return f"{history.folder}/{history.add(records).name}"


def archive_inline(table: HoodieTable, options: dict) -> list[Instant]:
    """After a commit: archive when due. Settings archival refuses skip it with a warning here,
    since the write itself has committed; the standalone archive raises instead."""
    cfg = HoodieConfig({**options, **table.props})
    if not cfg.get(C.ARCHIVE_AUTOMATIC):
        return []
    try:
        return archive(table, options)
    except HoodieConfigError as exc:
        log.warning(f"archival skipped: {exc}")
        return []
