"""When a merge-on-read table is due for compaction, and which file slices the plan takes.

Pure logic (no I/O, no Spark) following Hudi 1.x's ScheduleCompactionActionExecutor, its
CompactionStrategy classes and BaseHoodieCompactionPlanGenerator: for the same timeline and file
slices we schedule when Hudi would and produce the plan Hudi would, a record for
``avro_models.COMPACTION_PLAN`` to be saved as ``<ts>.compaction.requested``.
"""
from __future__ import annotations

import datetime as _dt
from typing import AbstractSet, Iterable, Mapping

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..file_group.fs_view import FileSlice
from ..table.pending import TOTAL_IO_MB, TOTAL_LOG_FILES_SIZE, compaction_operation, delta_commits_since_compaction
from ..timeline.instant import Instant, parse_instant_time

# --- when: trigger strategies (hoodie.compact.inline.trigger.strategy) --------------------------

NUM_COMMITS = "NUM_COMMITS"
NUM_COMMITS_AFTER_LAST_REQUEST = "NUM_COMMITS_AFTER_LAST_REQUEST"
TIME_ELAPSED = "TIME_ELAPSED"
NUM_AND_TIME = "NUM_AND_TIME"
NUM_OR_TIME = "NUM_OR_TIME"
TRIGGER_STRATEGIES = (NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME)


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

COMPACTION_PLAN_VERSION = 2  # version 2: file names, not paths, in operations


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
