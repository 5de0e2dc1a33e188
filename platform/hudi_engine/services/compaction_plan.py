"""When a merge-on-read table is due for compaction, and which file slices the plan takes.

Pure logic (no I/O, no Spark) following Hudi 1.x's ScheduleCompactionActionExecutor, its
CompactionStrategy classes and BaseHoodieCompactionPlanGenerator: for the same timeline and file
slices we schedule when Hudi would and produce the plan Hudi would, a record for
``avro_models.COMPACTION_PLAN`` to be saved as ``<ts>.compaction.requested``.
"""
from __future__ import annotations

import datetime as _dt
import posixpath
from dataclasses import dataclass
from typing import AbstractSet, Iterable, Mapping

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..file_group.fs_view import FileSlice
from ..timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, Instant, parse_instant_time

# --- when: trigger strategies (hoodie.compact.inline.trigger.strategy) --------------------------

NUM_COMMITS = "NUM_COMMITS"
NUM_COMMITS_AFTER_LAST_REQUEST = "NUM_COMMITS_AFTER_LAST_REQUEST"
TIME_ELAPSED = "TIME_ELAPSED"
NUM_AND_TIME = "NUM_AND_TIME"
NUM_OR_TIME = "NUM_OR_TIME"
TRIGGER_STRATEGIES = (NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME)


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


_EPOCH = _dt.datetime(1970, 1, 1)


def elapsed_seconds(since: str, until: str) -> int:
    """Seconds between two instant times, each cut to whole seconds first as Hudi does."""
    def seconds(ts: str) -> int:
        return (parse_instant_time(ts) - _EPOCH) // _dt.timedelta(seconds=1)
    return seconds(until) - seconds(since)


def compaction_due(strategy: str, max_delta_commits: int, max_delta_seconds: int,
                   delta_commits: int, seconds_elapsed: int) -> bool:
    """One trigger strategy applied to the counts; thresholds are inclusive, as in Hudi."""
    by_count = delta_commits >= max_delta_commits
    by_time = seconds_elapsed >= max_delta_seconds
    name = strategy.upper()
    if name in (NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST):
        return by_count
    if name == TIME_ELAPSED:
        return by_time
    if name == NUM_AND_TIME:
        return by_count and by_time
    if name == NUM_OR_TIME:
        return by_count or by_time
    raise HoodieConfigError(f"{C.COMPACT_TRIGGER_STRATEGY.key}={strategy!r} is not valid; "
                            f"use one of {', '.join(TRIGGER_STRATEGIES)}")


def should_schedule_compaction(instants: Iterable[Instant], compaction_time: str, cfg: HoodieConfig) -> bool:
    """Whether Hudi would plan a compaction at ``compaction_time`` on this timeline (its needCompact)."""
    instants = list(instants)
    info = delta_commits_since_compaction(instants)
    if info is None:
        return False
    strategy = cfg.get(C.COMPACT_TRIGGER_STRATEGY).upper()
    if strategy == NUM_COMMITS_AFTER_LAST_REQUEST:
        info = delta_commits_since_compaction(instants, after_last_request=True)
    return compaction_due(strategy, cfg.get(C.COMPACT_MAX_DELTA_COMMITS), cfg.get(C.COMPACT_MAX_DELTA_SECONDS),
                          info.count, elapsed_seconds(info.since, compaction_time))


# --- what: plan strategies (hoodie.compaction.strategy) -----------------------------------------

STRATEGY_PACKAGE = "org.apache.hudi.table.action.compact.strategy"
LOG_FILE_SIZE_BASED = "LogFileSizeBasedCompactionStrategy"
LOG_FILE_NUM_BASED = "LogFileNumBasedCompactionStrategy"
BOUNDED_IO = "BoundedIOCompactionStrategy"
UNBOUNDED = "UnBoundedCompactionStrategy"
STRATEGIES = (LOG_FILE_SIZE_BASED, LOG_FILE_NUM_BASED, BOUNDED_IO, UNBOUNDED)

# Metric names of a compaction operation, in the order Java's HashMap iterates them: Hudi's plans
# list them so, and keeping it makes our plan bytes equal to Hudi's.
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"

COMPACTION_PLAN_VERSION = 2  # version 2: file names, not paths, in operations
_MB = 1024 * 1024


def compaction_strategy(cfg: HoodieConfig) -> str:
    """The configured strategy's simple class name; full and simple names are accepted."""
    value = cfg.get(C.COMPACTION_STRATEGY).strip()
    prefix = STRATEGY_PACKAGE + "."
    name = value[len(prefix):] if value.startswith(prefix) else value
    if name in STRATEGIES:
        return name
    raise HoodieConfigError(
        f"{C.COMPACTION_STRATEGY.key}={value!r} is not supported; use one of "
        f"{', '.join(prefix + s for s in STRATEGIES)} (or the name without the package)")


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


def _bounded_io(operations: list[dict], target_io_mb: int) -> tuple[list[dict], list[str]]:
    """Take operations in order while IO budget remains (the last one may overrun it); the
    partitions of the rest are left for a later plan."""
    kept, left = [], []
    remaining = target_io_mb
    for op in operations:
        if remaining > 0:
            remaining -= int(op["metrics"][TOTAL_IO_MB])
            kept.append(op)
        else:
            left.append(op["partitionPath"])
    return kept, left


# Strategies that rank file groups by a measure (largest first) after dropping those below a threshold.
_RANKED = {
    LOG_FILE_SIZE_BASED: (C.COMPACTION_LOGFILE_SIZE_THRESHOLD, lambda op: op["metrics"][TOTAL_LOG_FILES_SIZE]),
    LOG_FILE_NUM_BASED: (C.COMPACTION_LOGFILE_NUM_THRESHOLD, lambda op: len(op["deltaFilePaths"])),
}


def order_and_filter(strategy: str, operations: list[dict], cfg: HoodieConfig) -> tuple[list[dict], list[str]]:
    """The strategy's pick among candidate operations, and the partitions of those it left out."""
    if strategy == UNBOUNDED:
        return list(operations), []
    if strategy == BOUNDED_IO:
        return _bounded_io(list(operations), cfg.get(C.COMPACTION_TARGET_IO))
    threshold_prop, measure = _RANKED[strategy]
    threshold = cfg.get(threshold_prop)
    below = [op["partitionPath"] for op in operations if measure(op) < threshold]
    # Python's sort is stable like Java's: ties keep the listing order.
    ranked = sorted((op for op in operations if measure(op) >= threshold), key=lambda op: -int(measure(op)))
    kept, left = _bounded_io(ranked, cfg.get(C.COMPACTION_TARGET_IO))
    return kept, below + left


def plan_compaction(file_slices: Iterable[FileSlice], cfg: HoodieConfig,
                    excluded: AbstractSet[tuple[str, str]] = frozenset(),
                    extra_metadata: Mapping[str, str] | None = None) -> dict | None:
    """The ``HoodieCompactionPlan`` record for the latest file slices, or None when there is
    nothing to compact (Hudi then writes no instant).

    Candidates are slices with log files whose file group is not in ``excluded`` (file groups of
    pending compactions and clusterings, see ``planned_file_groups``). Slices must hold committed
    files only: Hudi leaves out logs of delta commits not completed before the compaction instant.
    ``extra_metadata`` is what the scheduling write passes on (Spark's inline compaction passes the
    write's own extra metadata).
    """
    strategy = compaction_strategy(cfg)
    default_base_size = cfg.get(C.PARQUET_MAX_FILE_SIZE)
    candidates = [compaction_operation(s, default_base_size) for s in file_slices
                  if s.log_files and (s.partition, s.file_id) not in excluded]
    operations, left_out = order_and_filter(strategy, candidates, cfg)
    if not operations:
        return None
    return {
        "operations": operations,
        "extraMetadata": dict(extra_metadata or {}),
        "version": COMPACTION_PLAN_VERSION,
        "strategy": None,
        "preserveHoodieMetadata": False,
        # Hudi 1.x (incremental table services, on by default) records partitions it did not finish
        # so the next incremental plan looks at them again.
        "missingSchedulePartitions": list(dict.fromkeys(left_out)),
    }


def planned_file_groups(plan: Mapping) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups a pending plan holds: a compaction plan record, or the
    requested-replace record of a clustering. A new compaction plan must leave them out."""
    if "clusteringPlan" in plan:
        groups = (plan["clusteringPlan"] or {}).get("inputGroups") or []
        members = [s for g in groups for s in g.get("slices") or []]
    else:
        members = plan.get("operations") or []
    return {(m["partitionPath"], m["fileId"]) for m in members}
