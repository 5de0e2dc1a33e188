"""What a query may still read: file versions the cleaner kept, commits the archiver left active.

Readers check these before planning a time-travel or incremental query, so a query that would
miss rows fails with the earliest instant it could use instead.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .. import config as C
from ..errors import HoodieTimelineError
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import CLEAN, WRITE_ACTIONS
from .archived import read_archived
from .meta_client import HoodieTable

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"


def earliest_queryable(clean_metadata: Iterable[Mapping]) -> str | None:
    """The oldest instant a time-travel query can still read, given completed cleans' metadata:
    the latest clean's earliest retained commit, or (policies without one) the last commit it saw."""
    bound = None
    for meta in clean_metadata:
        if meta.get("totalFilesDeleted", 0) == 0:
            continue
        mark = meta.get("earliestCommitToRetain") or meta.get("lastCompletedCommitTimestamp") or None
        if mark and (bound is None or mark > bound):
            bound = mark
    return bound


def check_queryable(as_of: str, bound: str | None, what: str, retention_note: str) -> None:
    """Refuse a read at ``as_of`` whose file versions a clean may have deleted."""
    if bound is not None and as_of < bound:
        raise HoodieTimelineError(
            f"{what} {as_of} is older than the cleaner's retention: its file versions were cleaned. "
            f"The earliest instant still queryable is {bound} ({retention_note}); query at or after "
            f"it, or retain more commits (and savepoint instants you need to keep)")


def check_read_instant(table: HoodieTable, as_of: str, what: str) -> None:
    """Refuse a time-travel or incremental read whose file versions were cleaned."""
    cleans = table.timeline.filter([CLEAN], completed=True)
    if not cleans:
        return
    metas = [decode_instant_avro(table.timeline.read_details(c)) for c in cleans]
    policy = metas[-1].get("policy") or KEEP_LATEST_COMMITS
    setting = (C.CLEANER_FILE_VERSIONS_RETAINED if policy == KEEP_LATEST_FILE_VERSIONS
               else C.CLEANER_HOURS_RETAINED if policy == KEEP_LATEST_BY_HOURS else C.CLEANER_COMMITS_RETAINED)
    note = f"cleaned with {C.CLEANER_POLICY.key}={policy}; raise {setting.key} to keep more"
    check_queryable(as_of, earliest_queryable(metas), what, note)


def check_incremental_begin(table: HoodieTable, begin: str) -> None:
    """Refuse an incremental window that starts among archived commits: their file lists left the
    active timeline, so rows they wrote could be missed silently. ``begin`` is an instant time
    (version 6) or a completion time (8+), as the window is."""
    timeline = table.timeline
    start = timeline.start
    if start is None:
        return
    if table.layout_version < 2:
        if begin >= start:
            return
        when = {i: i.timestamp for i in read_archived(table)}
    else:                       # completion times need not follow instant times: every archived one counts
        active = {i.timestamp for i in timeline.instants}
        when = {i: i.completion_time or i.timestamp for i in read_archived(table) if i.timestamp not in active}
    archived = sorted((t, i) for i, t in when.items() if i.action in WRITE_ACTIONS and t > begin)
    if archived:
        last = archived[-1][0]
        raise HoodieTimelineError(
            f"the incremental query begins at {begin}, but {len(archived)} commits after it (up to "
            f"{last}) were archived ({C.KEEP_MIN_COMMITS.key}/{C.KEEP_MAX_COMMITS.key}); "
            f"begin at or after {last} (the active timeline starts at {start}), or read "
            "a snapshot")
