"""Which files a clean deletes, as Hudi's CleanPlanner decides; pure (timeline and file groups in, paths out).

Every policy keeps the latest slice of each live file group, savepointed slices, and slices a pending
compaction or clustering still reads. KEEP_LATEST_COMMITS and KEEP_LATEST_BY_HOURS find the earliest
commit to retain and keep, per file group, the newest slice older than it (what a query at that
commit reads); older slices go. KEEP_LATEST_FILE_VERSIONS keeps the newest N slices. File groups a
replacecommit replaced go whole once the replacement is older than the retained window.
"""
from __future__ import annotations

import datetime as _dt
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..file_group.fs_view import FileGroup, FileSlice, LogFile
from ..table.retention import KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS
from ..timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    Instant,
    format_instant_time,
)

# The commits timeline Hudi counts for retention (compactions complete as commits).
COMMIT_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)



GroupId = tuple[str, str]


@dataclass(frozen=True)
class Retention:
    policy: str = KEEP_LATEST_COMMITS
    commits: int = 10
    file_versions: int = 3
    hours: int = 24


@dataclass(frozen=True)
class TableState:
    """What must survive a clean besides the retention window."""
    savepointed_files: frozenset[str] = frozenset()          # file names (base and log)
    compaction_bases: Mapping[GroupId, str] = field(default_factory=dict)  # group → base instant read
    clustering_groups: frozenset[GroupId] = frozenset()
    replaced: Mapping[GroupId, str] = field(default_factory=dict)          # group → replace instant


def earliest_commit_to_retain(instants: Iterable[Instant], retention: Retention,
                              now: _dt.datetime) -> Instant | None:
    """Hudi's getEarliestCommitToRetain: None when the window still holds every commit (or the
    policy keeps versions, not commits). Never later than the earliest pending write, whose
    readers-to-be may need older slices."""
    instants = list(instants)
    completed = [i for i in instants if i.is_completed and i.action in COMMIT_ACTIONS]
    earliest: Instant | None = None
    if retention.policy == KEEP_LATEST_COMMITS:
        if len(completed) > retention.commits:
            earliest = completed[len(completed) - retention.commits]
    elif retention.policy == KEEP_LATEST_BY_HOURS:
        cutoff = format_instant_time(now - _dt.timedelta(hours=retention.hours))
        earliest = next((i for i in completed if i.timestamp >= cutoff), None)
    else:
        return None
    pending = [i for i in instants if not i.is_completed
               and i.action in COMMIT_ACTIONS + (COMPACTION, CLUSTERING)]
    if earliest is not None and pending and pending[0].timestamp < earliest.timestamp:
        earliest = pending[0]
    return earliest


def clean_due(instants: Iterable[Instant], max_commits: int) -> bool:
    """NUM_COMMITS trigger: at least ``max_commits`` completed commits since the last clean."""
    instants = list(instants)
    cleans = [i.timestamp for i in instants if i.action == CLEAN and i.is_completed]
    last = cleans[-1] if cleans else ""
    return sum(1 for i in instants if i.is_completed and i.action in COMMIT_ACTIONS
               and i.timestamp > last) >= max_commits


def _slice_files(s: FileSlice, cdc_logs: Iterable[LogFile]) -> list[str]:
    files = [s.base_file.path] if s.base_file else []
    return files + [f.path for f in s.log_files] + [f.path for f in cdc_logs]


def _is_savepointed(s: FileSlice, state: TableState) -> bool:
    names = [f.path for f in s.log_files] + ([s.base_file.path] if s.base_file else [])
    return any(posixpath.basename(n) in state.savepointed_files for n in names)


def _needed_by_compaction(group: FileGroup, s: FileSlice, state: TableState) -> bool:
    base = state.compaction_bases.get((group.partition, group.file_id))
    return base is not None and s.base_instant >= base


def files_to_clean(groups: Iterable[FileGroup], retention: Retention, earliest: str | None,
                   state: TableState,
                   cdc_logs: Mapping[GroupId, Mapping[str, list[LogFile]]] | None = None
                   ) -> dict[str, list[str]]:
    """Paths (relative to the base path) to delete, by partition. ``groups`` holds every committed
    slice of every file group, replaced ones included; ``cdc_logs`` maps a group's slice (by base
    instant) to the CDC log files written with it, which go with the slice."""
    cdc_logs = cdc_logs or {}
    by_commits = retention.policy != KEEP_LATEST_FILE_VERSIONS
    if by_commits and earliest is None:
        return {}
    out: dict[str, list[str]] = defaultdict(list)
    for group in groups:
        gid = (group.partition, group.file_id)
        if gid in state.clustering_groups:
            continue
        newest_first = sorted(group.slices, key=lambda s: s.base_instant, reverse=True)
        replaced_at = state.replaced.get(gid)
        if replaced_at is not None:
            if by_commits and replaced_at >= earliest:
                continue
            doomed = newest_first
        elif by_commits:
            doomed = _older_than_window(newest_first, earliest)
        else:
            doomed = _beyond_versions(group, newest_first, retention.file_versions, state)
        for s in doomed:
            if _is_savepointed(s, state) or _needed_by_compaction(group, s, state):
                continue
            out[group.partition].extend(
                _slice_files(s, cdc_logs.get(gid, {}).get(s.base_instant, [])))
    return {p: sorted(files) for p, files in sorted(out.items()) if files}


def _older_than_window(newest_first: list[FileSlice], earliest: str) -> list[FileSlice]:
    """Slices before ``earliest`` except the latest slice and the newest one before it (what a
    query at ``earliest`` reads)."""
    before = [s for s in newest_first if s.base_instant < earliest]
    kept = {newest_first[0].base_instant} | ({before[0].base_instant} if before else set())
    return [s for s in before if s.base_instant not in kept]


def _beyond_versions(group: FileGroup, newest_first: list[FileSlice], keep: int,
                     state: TableState) -> list[FileSlice]:
    if (group.partition, group.file_id) in state.compaction_bases:
        keep -= 1  # the pending compaction's coming slice counts as a version, as in Hudi
    kept, doomed = 0, []
    for s in newest_first:
        if _is_savepointed(s, state):
            continue
        if kept < keep:
            kept += 1
        else:
            doomed.append(s)
    return doomed


def cleaner_plan(files: Mapping[str, list[str]], retention: Retention, earliest: Instant | None,
                 root_uri: str) -> dict:
    """The ``HoodieCleanerPlan`` record: full paths per partition, as Hudi 0.14+ writes it."""
    return {
        "earliestInstantToRetain": None if earliest is None else {
            "timestamp": earliest.timestamp, "action": earliest.action, "state": earliest.state.name},
        "policy": retention.policy,
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            p: [{"filePath": f"{root_uri.rstrip('/')}/{path}", "isBootstrapBaseFile": False}
                for path in paths] for p, paths in files.items()},
        "partitionsToBeDeleted": [],
    }
