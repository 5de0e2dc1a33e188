"""Procedures that read the timeline: commits and their write stats, rollbacks, table properties.
Rows come from instant files the engine already parses (commit metadata, Avro records); nothing
here touches data files."""
from __future__ import annotations

from ..errors import HoodieTimelineError
from ..table.archived import read_archived_commits
from ..timeline.instant import ROLLBACK, Instant
from .procedure_context import Invocation, completion_times, instant_metadata, java_list


def _newest_commits(inv: Invocation) -> list[Instant]:
    """Completed commits, delta commits and replace commits, newest first (Hudi's commits timeline)."""
    return sorted(inv.table.timeline.completed_writes(), key=lambda i: i.timestamp, reverse=True)


def _stats(meta: dict) -> list[dict]:
    return [s for stats in (meta.get("partitionToWriteStats") or {}).values() for s in stats]


def _n(stat: dict, key: str) -> int:
    """A write stat's counter (absent ones are 0, as in Hudi's HoodieWriteStat)."""
    return int(stat.get(key) or 0)


def _commit_rows(commits: list[tuple[Instant, dict]], done: dict[Instant, str | None]) -> list[tuple]:
    rows = []
    for instant, meta in commits:
        stats = _stats(meta)
        # A file group's first file has no previous commit ("null"): Hudi counts it as added.
        added = sum(1 for s in stats if (s.get("prevCommit") or "").lower() == "null")
        updated = sum(1 for s in stats if (s.get("prevCommit") or "null").lower() != "null")
        rows.append((instant.timestamp, done.get(instant), instant.action,
                     sum(_n(s, "totalWriteBytes") for s in stats), added, updated,
                     len(meta.get("partitionToWriteStats") or {}),
                     sum(_n(s, "numWrites") for s in stats), sum(_n(s, "numUpdateWrites") for s in stats),
                     sum(_n(s, "totalWriteErrors") for s in stats)))
    return rows


def show_commits(inv: Invocation) -> list[tuple]:
    timeline = inv.table.timeline
    return _commit_rows([(i, timeline.commit_metadata(i)) for i in _newest_commits(inv)[:inv.args["limit"]]],
                        completion_times(inv.table))


def show_archived_commits(inv: Invocation) -> list[tuple]:
    """Archived commits of either timeline layout, newest first, within [start_ts, end_ts] when given."""
    start, end = inv.args["start_ts"] or "", inv.args["end_ts"] or "~"
    commits = [(i, meta) for i, meta in reversed(read_archived_commits(inv.table)) if start <= i.timestamp <= end]
    return _commit_rows(commits[:inv.args["limit"]], {i: i.completion_time for i, _ in commits})


_STAT_COUNTERS = ("numWrites", "numInserts", "numDeletes", "numUpdateWrites", "totalWriteErrors", "totalLogBlocks",
                  "totalCorruptLogBlock", "totalRollbackBlocks", "totalLogRecords", "totalUpdatedRecordsCompacted",
                  "totalWriteBytes")


def show_commits_metadata(inv: Invocation) -> list[tuple]:
    timeline, done = inv.table.timeline, completion_times(inv.table)
    rows = []
    for instant in _newest_commits(inv):
        for s in _stats(timeline.commit_metadata(instant)):
            rows.append((instant.timestamp, done.get(instant), instant.action, s.get("partitionPath"),
                         s.get("fileId"), s.get("prevCommit"), *(_n(s, k) for k in _STAT_COUNTERS)))
    return rows[:inv.args["limit"]]


def show_commit_files(inv: Invocation) -> list[tuple]:
    ts, timeline = inv.args["instant_time"], inv.table.timeline
    instant = next((i for i in timeline.completed_writes() if i.timestamp == ts), None)
    if instant is None:
        raise HoodieTimelineError(f"commit {ts} is not a completed commit of {inv.table.name}; its latest commits: "
                                  f"{[i.timestamp for i in _newest_commits(inv)[:10]]}")
    rows = [(instant.action, s.get("partitionPath"), s.get("fileId"), s.get("prevCommit"), _n(s, "numUpdateWrites"),
             _n(s, "numWrites"), _n(s, "totalWriteBytes"), _n(s, "totalWriteErrors"), _n(s, "fileSizeInBytes"))
            for s in _stats(timeline.commit_metadata(instant))]
    return rows[:inv.args["limit"]]


def show_rollbacks(inv: Invocation) -> list[tuple]:
    rows = []
    for instant in inv.table.timeline.filter([ROLLBACK], completed=True):
        meta = instant_metadata(inv.table, instant)
        rows.extend((meta["startRollbackTime"], target, meta["totalFilesDeleted"], meta["timeTakenInMillis"],
                     len(meta.get("partitionMetadata") or {})) for target in meta["commitsRollback"])
    return rows[:inv.args["limit"]]


def show_rollback_detail(inv: Invocation) -> list[tuple]:
    ts = inv.args["instant_time"]
    instant = inv.table.timeline.completed_instant(ROLLBACK, ts)
    if instant is None:
        rollbacks = [i.timestamp for i in inv.table.timeline.filter([ROLLBACK], completed=True)]
        raise HoodieTimelineError(f"no completed rollback {ts} in {inv.table.name}; its rollbacks: {rollbacks}")
    meta = instant_metadata(inv.table, instant)
    targets = java_list(meta["commitsRollback"])
    rows = [(meta["startRollbackTime"], targets, partition, name, ok)
            for partition, pm in sorted((meta.get("partitionMetadata") or {}).items())
            for files, ok in ((pm.get("successDeleteFiles") or [], True), (pm.get("failedDeleteFiles") or [], False))
            for name in files]
    return rows[:inv.args["limit"]]


def show_table_properties(inv: Invocation) -> list[tuple]:
    return sorted(inv.table.props.items())[:inv.args["limit"]]
