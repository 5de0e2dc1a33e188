"""Archival: move old completed instants from ``.hoodie/`` to the archived timeline.

The archive file is written first and the instant files are deleted after, oldest first and each
instant's pending files before its completed one, so a run killed in between leaves an active
timeline with no holes (a later run archives the rest; a record archived twice is harmless).
"""
from __future__ import annotations

import logging

from .. import config as C
from ..concurrency.locks import locked_table
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..table.archived_timeline import archive_block, entry_for, next_archive_file
from ..table.meta_client import HoodieTable
from ..table.retention import archive_folder
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import CLEAN, Instant, State
from .archive_plan import instants_to_archive

log = logging.getLogger(__name__)
_WARNED: set[str] = set()


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
    writers it runs under the table lock, on the timeline as it is then."""
    cfg = HoodieConfig({**(options or {}), **table.props})
    low, high = keep_window(cfg)
    if table.layout_version >= 2:
        if len(table.timeline.instants) > high and table.base_path not in _WARNED:
            _WARNED.add(table.base_path)
            log.warning(f"{table.name}: archiving a version {table.version} timeline (Hudi 1.x's LSM history) is "
                        f"not supported yet; its active timeline keeps all {len(table.timeline.instants)} instants")
        return []
    with locked_table(table, cfg, "archiving") as table:
        return _archive(table, cfg, low, high)


def _archive(table: HoodieTable, cfg: HoodieConfig, low: int, high: int) -> list[Instant]:
    timeline = table.timeline
    compacted = [i.timestamp for i in timeline.completed_writes()
                 if table.table_type == "MERGE_ON_READ" and i.action == "commit"]
    chosen = instants_to_archive(timeline.instants, low, high, _last_clean_retains(table),
                                 table.table_type == "MERGE_ON_READ", compacted)
    if not chosen:
        return []
    states = [(i, Instant(i.timestamp, action, state)) for i in chosen
              for action, state in _state_files(table, i)]
    batch = cfg.get(C.COMMITS_ARCHIVAL_BATCH)
    entries = [entry_for(file_instant, timeline.storage.read_bytes(timeline.path_of(file_instant)))
               for _, file_instant in states]
    blob = b"".join(archive_block(entries[i:i + batch]) for i in range(0, len(entries), batch))
    path = next_archive_file(table.storage, archive_folder(table))
    table.storage.write_bytes(path, blob)
    for _, file_instant in sorted(states, key=lambda s: (s[0].timestamp, s[1].state)):
        table.storage.delete(timeline.path_of(file_instant))
    log.info(f"archived {len(chosen)} instants ({chosen[0].timestamp}..{chosen[-1].timestamp}) "
          f"to {path}")
    return chosen


def _state_files(table: HoodieTable, instant: Instant) -> list[tuple[str, State]]:
    """(action, state) of each file the instant has in ``.hoodie/`` (a compaction's are named
    compaction until it completes as a commit)."""
    found = []
    for action in {instant.action, "compaction"} if instant.action == "commit" else {instant.action}:
        for state in State:
            probe = Instant(instant.timestamp, action, state)
            if state == State.COMPLETED and probe.with_state(state).action != action:
                continue
            if table.storage.exists(table.timeline.path_of(probe)):
                found.append((action, state))
    return found


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
