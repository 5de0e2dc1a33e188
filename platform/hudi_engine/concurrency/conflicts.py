"""Conflicts between concurrent writers, as Hudi's SimpleConcurrentFileWritesConflictResolutionStrategy.

Two writes conflict when both wrote (or replaced) one file group, ``(partition, fileId)``. At commit
time a writer compares the file groups it wrote with those of every write, replace or compaction
that completed since it started, and of every compaction or clustering planned since it started
(their new slice would not contain its files). New file groups have fresh ids, so inserts into
new file groups never conflict; two writers that add inserts to the same small file do.

The functions here are pure (instants, commit metadata and plans in; conflicts out); the few that
read the timeline or markers say so and stay thin.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterable, Mapping

from ..errors import HoodieTimelineError, HoodieWriteConflictError
from ..file_group.naming import parse_base_file_name, parse_log_file_name
from ..index.bucket import bucket_of
from ..storage import Storage
from ..table.pending import is_clustering, planned_file_groups, requested_plan
from ..timeline.instant import CLUSTERING, COMMIT, COMPACTION, DELTA_COMMIT, LOG_COMPACTION, REPLACE_COMMIT, Instant
from ..timeline.timeline import Timeline

GroupId = tuple[str, str]
# Completed actions whose files a concurrent writer may have overwritten (compactions complete as
# commits, clusterings as replacecommits).
COMMITS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
PLANS = (COMPACTION, LOG_COMPACTION, CLUSTERING, REPLACE_COMMIT)

COMPLETED_SINCE_START = "completed after this write started"
PLANNED_SINCE_START = "was planned after this write started and rewrites"
IN_FLIGHT = "is in flight (its markers) and writes"


@dataclass(frozen=True)
class Touch:
    """What another instant wrote or plans to rewrite."""
    instant: Instant
    file_groups: frozenset[GroupId]
    why: str


@dataclass(frozen=True)
class Conflict:
    instant: Instant
    file_groups: frozenset[GroupId]
    why: str


def written_file_groups(metadata: Mapping) -> set[GroupId]:
    """File groups a commit's metadata says it wrote or replaced."""
    groups: set[GroupId] = set()
    for partition, stats in (metadata.get("partitionToWriteStats") or {}).items():
        for stat in stats or []:
            if stat.get("fileId"):
                groups.add((stat.get("partitionPath") if stat.get("partitionPath") is not None else partition,
                            stat["fileId"]))
    for partition, ids in (metadata.get("partitionToReplaceFileIds") or {}).items():
        groups.update((partition, fid) for fid in ids)
    return groups


def our_file_groups(stats: Iterable[Mapping], replaced: Mapping[str, Iterable[str]] | None) -> set[GroupId]:
    """File groups this write wrote (its write stats) or replaces."""
    groups = {(s.get("partitionPath") or "", s["fileId"]) for s in stats if s.get("fileId")}
    for partition, ids in (replaced or {}).items():
        groups.update((partition, fid) for fid in ids)
    return groups


def candidates(instants: Iterable[Instant], known_at_start: Mapping[str, bool], ours: str) -> list[Instant]:
    """Instants that may conflict with write ``ours``: writes that completed since it started, and
    compaction/clustering plans that appeared since. ``known_at_start`` maps the instant times of
    the timeline this write started from to whether they were completed then (an instant that
    started earlier but completed later is a candidate too: start times alone would miss it)."""
    out = []
    for i in instants:
        if i.timestamp == ours:
            continue
        if i.is_completed:
            if i.action in COMMITS and not known_at_start.get(i.timestamp, False):
                out.append(i)
        elif i.action in PLANS and i.timestamp not in known_at_start:
            out.append(i)
    return out


def find_conflicts(ours: Iterable[GroupId], touches: Iterable[Touch], by_bucket: bool = False) -> list[Conflict]:
    """Touches that share a file group with ours. Under the bucket index file groups are compared
    by (partition, bucket), as Hudi's BucketIndexConcurrentFileWritesConflictResolutionStrategy
    does: two writers creating one new bucket pick different file ids for it."""
    key = _bucket_key if by_bucket else (lambda g: g)
    mine: dict[tuple, GroupId] = {key(g): g for g in ours}
    found = []
    for t in touches:
        hit = frozenset(mine[k] for k in {key(g) for g in t.file_groups} if k in mine)
        if hit:
            found.append(Conflict(t.instant, hit, t.why))
    return found


def _bucket_key(group: GroupId) -> tuple:
    bucket = bucket_of(group[1])
    return group if bucket is None else (group[0], bucket)


def conflict_error(table_name: str, ours: str, conflicts: list[Conflict], rolled_back: bool = True) -> HoodieWriteConflictError:
    first = conflicts[0]
    groups = sorted(g for c in conflicts for g in c.file_groups)
    shown = ", ".join(f"{p or '<no partition>'}/{fid}" for p, fid in groups[:10])
    more = f" and {len(groups) - 10} more" if len(groups) > 10 else ""
    others = "; ".join(f"{c.instant.action} {c.instant.timestamp} {c.why} {len(c.file_groups)} of them"
                       for c in conflicts)
    return HoodieWriteConflictError(
        f"write {ours} to table {table_name} conflicts with {first.instant.action} "
        f"{first.instant.timestamp}: both changed file group(s) {shown}{more} ({others}). "
        + ("This write was rolled back and left nothing behind; " if rolled_back else "")
        + "retry it: it will start from the table as the other write left it")


# --- what other instants touch (reads the timeline and markers) ----------------------------------
def touch_of(timeline: Timeline, instant: Instant) -> Touch | None:
    """What a candidate instant wrote (completed) or plans to rewrite (pending plan)."""
    if instant.is_completed:
        return Touch(instant, frozenset(written_file_groups(timeline.commit_metadata(instant))),
                     COMPLETED_SINCE_START)
    try:
        plan = requested_plan(timeline, instant)
    except (HoodieTimelineError, ValueError, EOFError, KeyError):
        return None  # an unreadable requested file: nothing to judge by before it completes
    if instant.action == REPLACE_COMMIT and not is_clustering(plan):
        return None
    return Touch(instant, frozenset(planned_file_groups(plan)), PLANNED_SINCE_START)


def marker_file_groups(marker_names: Iterable[str]) -> set[GroupId]:
    """File groups named by marker paths relative to the instant's marker folder
    (``<partition>/<data file name>.marker.<IO type>``)."""
    groups: set[GroupId] = set()
    for rel in marker_names:
        data_path = rel.rsplit(".marker.", 1)[0]
        name = posixpath.basename(data_path)
        parsed = parse_base_file_name(name) or parse_log_file_name(name)
        if parsed is not None:
            groups.add((posixpath.dirname(data_path), parsed.file_id))
    return groups


def markers_of(storage: Storage, instant: str) -> set[GroupId]:
    from ..file_group.markers import marker_dir

    root = marker_dir(instant)
    return marker_file_groups(m.path[len(root) + 1:] for m in storage.list(root, recursive=True))
