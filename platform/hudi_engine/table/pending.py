"""Plans of pending table services, read from the timeline: which file groups a pending
compaction or clustering holds, so writers, cleaning and new plans keep away from them; and the
parts of those plans that the data table's and the metadata table's compactions share."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterable, Mapping

from ..errors import HoodieTimelineError
from ..file_group.fs_view import FileSlice
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import CLUSTERING, COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from ..timeline.timeline import Timeline
from .meta_client import HoodieTable

CLUSTER_OPERATION = "CLUSTER"        # operationType of a clustering's requested replace metadata
_MB = 1024 * 1024

# Metric names of a compaction operation, in the order Java's HashMap iterates them: Hudi's plans
# list them so, and keeping it makes our plan bytes equal to Hudi's.
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"


@dataclass(frozen=True)
class DeltaCommitInfo:
    """Delta commits counted from ``since``: the last compaction's instant time, or the first delta
    commit's when there was no compaction yet (elapsed time is measured from it too)."""
    count: int
    since: str


def delta_commits_since_compaction(instants: Iterable[Instant],
                                   after_last_request: bool = False) -> DeltaCommitInfo | None:
    """Hudi's delta-commit count behind a trigger; None when the timeline has nothing to count.

    ``instants`` holds one Instant per instant time in its latest state, as ``Timeline`` does.
    Normally completed delta commits after the last completed compaction count (a compaction
    completes as a ``commit``; clustering's replacecommits do not reset the count). With
    ``after_last_request`` the count starts at the last pending compaction when there is one and
    takes delta commits in any state, as Hudi's NUM_COMMITS_AFTER_LAST_REQUEST does.
    """
    ordered = sorted(instants, key=lambda i: i.timestamp)
    deltas = [i for i in ordered if i.action == DELTA_COMMIT and (after_last_request or i.is_completed)]
    starts = [i for i in ordered if i.action == COMMIT and i.is_completed]
    if after_last_request:
        starts = [i for i in ordered if i.action == COMPACTION and not i.is_completed] or starts
    if starts:
        since = starts[-1].timestamp
        return DeltaCommitInfo(sum(1 for d in deltas if d.timestamp > since), since)
    if deltas:
        return DeltaCommitInfo(len(deltas), deltas[0].timestamp)
    return None


def slice_metrics(file_slice: FileSlice, default_base_size: int) -> dict[str, float]:
    """What compacting a slice costs, as Hudi's FileSliceMetricUtils computes it: MB are whole
    (truncated), and a slice without a base file is charged a full-size base file of writing."""
    log_size = sum(f.size for f in file_slice.log_files)
    base_size = file_slice.base_file.size if file_slice.base_file is not None else 0
    read_mb = (base_size + log_size) // _MB
    write_mb = (base_size if base_size > 0 else default_base_size) // _MB
    return {TOTAL_LOG_FILES: float(len(file_slice.log_files)), TOTAL_IO_MB: float(read_mb + write_mb),
            TOTAL_IO_READ_MB: float(read_mb), TOTAL_LOG_FILES_SIZE: float(log_size),
            TOTAL_IO_WRITE_MB: float(write_mb)}


def compaction_operation(file_slice: FileSlice, default_base_size: int) -> dict:
    """A ``HoodieCompactionOperation`` record: files by name (the partition says where), logs in order."""
    logs = sorted(file_slice.log_files, key=lambda f: (f.instant, f.version))
    base = file_slice.base_file
    return {
        "baseInstantTime": file_slice.base_instant,
        "deltaFilePaths": [posixpath.basename(f.path) for f in logs],
        "dataFilePath": posixpath.basename(base.path) if base is not None else None,
        "fileId": file_slice.file_id,
        "partitionPath": file_slice.partition,
        "metrics": slice_metrics(file_slice, default_base_size),
        "bootstrapFilePath": None,
    }


def is_clustering(requested_replace: Mapping | None) -> bool:
    """Whether a replacecommit's requested metadata is a clustering (not insert-overwrite)."""
    return bool(requested_replace) and (requested_replace.get("operationType") == CLUSTER_OPERATION
                                        or requested_replace.get("clusteringPlan") is not None)


def planned_file_groups(plan: Mapping) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups a pending plan holds: a compaction plan record, or the
    requested-replace record of a clustering. A new compaction plan must leave them out."""
    if "clusteringPlan" in plan:
        groups = (plan["clusteringPlan"] or {}).get("inputGroups") or []
        members = [s for g in groups for s in g.get("slices") or []]
    else:
        members = plan.get("operations") or []
    return {(m["partitionPath"], m["fileId"]) for m in members}

def requested_plan(timeline: Timeline, instant: Instant) -> dict:
    """The Avro record of an instant's ``.requested`` file ({} when the file is empty). A completed
    instant's is the requested file it completed from: a clustering's is ``.clustering.requested``
    from version 8 on, though it completes as a replacecommit."""
    requested = Instant(instant.timestamp, instant.action, State.REQUESTED)
    if instant.is_completed:
        requested = next((f for f in timeline.files_of(instant) if f.state == State.REQUESTED), requested)
    data = timeline.read_details(requested)
    return decode_instant_avro(data) if data else {}


def pending_clusterings(table: HoodieTable) -> list[tuple[Instant, dict]]:
    """Pending replacecommits that are clusterings (not insert-overwrites), oldest first, with
    their requested replace metadata."""
    found = []
    for instant in table.timeline.pending([REPLACE_COMMIT, CLUSTERING]):
        try:
            plan = requested_plan(table.timeline, instant)
        except HoodieTimelineError:   # requested file gone: an insert-overwrite being rolled back
            continue
        if is_clustering(plan):
            found.append((instant, plan))
    return found


def completed_clusterings(table: HoodieTable) -> frozenset[str]:
    """Instant times of the completed replacecommits that are clusterings: the last of them is where
    Hudi starts counting commits for its clustering triggers."""
    timeline = table.timeline
    return frozenset(i.timestamp for i in timeline.filter([REPLACE_COMMIT], completed=True)
                     if timeline.commit_metadata(i).get("operationType") == CLUSTER_OPERATION)


def pending_clustering_groups(table: HoodieTable) -> dict[tuple[str, str], str]:
    """(partition, file id) → instant of every file group a pending clustering is rewriting."""
    return {group: instant.timestamp for instant, plan in pending_clusterings(table)
            for group in planned_file_groups(plan)}


def pending_compaction_groups(table: HoodieTable) -> dict[tuple[str, str], str]:
    """(partition, file id) → instant of every file group a pending compaction is rewriting."""
    return {group: instant.timestamp for instant in table.timeline.pending([COMPACTION])
            for group in planned_file_groups(requested_plan(table.timeline, instant))}
