"""When clustering is due and which file slices a plan groups, as Hudi 1.x's size-based plan
strategy does (SparkSizeBasedClusteringPlanStrategy over PartitionAwareClusteringPlanStrategy).

Pure logic: a timeline's instants and the latest file slices in, a ``HoodieClusteringPlan`` record
(inside a ``HoodieRequestedReplaceMetadata``) out. Candidates are slices whose base file is below
the small-file limit; per partition they are taken largest first into groups of at most
``max.bytes.per.group``, each to be rewritten as ceil(size / target file size) file groups.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import AbstractSet, Iterable, Mapping

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..file_group.fs_view import FileSlice
from ..index.consistent_hashing import is_consistent_hashing
from ..table.pending import CLUSTER_OPERATION, slice_metrics
from ..timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Instant
from .layout import layout_strategy

CLUSTERING_PLAN_VERSION = 1
SIZE_BASED_STRATEGY = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SORT_AND_SIZE_EXECUTION = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
CONSISTENT_BUCKET_STRATEGY = "org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy"
CONSISTENT_BUCKET_EXECUTION = "org.apache.hudi.client.clustering.run.strategy.SparkConsistentBucketClusteringExecutionStrategy"
SINGLE_JOB_CONSISTENT_EXECUTION = \
    "org.apache.hudi.client.clustering.run.strategy.SingleSparkJobConsistentHashingExecutionStrategy"
NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING = "NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"


def commits_since_clustering(instants: Iterable[Instant], clusterings: AbstractSet[str]) -> int:
    """Completed writes after the last completed clustering (``clusterings``: the timestamps of
    replacecommits that are clusterings), as Hudi counts for its max.commits triggers."""
    ordered = sorted((i for i in instants if i.is_completed), key=lambda i: i.timestamp)
    last = max((i.timestamp for i in ordered if i.timestamp in clusterings), default="")
    return sum(1 for i in ordered if i.action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
               and i.timestamp > last and i.timestamp not in clusterings)


def clustering_due(commits_since: int, cfg: HoodieConfig) -> bool:
    """Hudi's scheduling gate: inline clustering waits for ``inline.max.commits`` commits, async
    or schedule-only clustering for ``async.max.commits``; a standalone run always plans."""
    if cfg.get(C.CLUSTERING_INLINE) and commits_since < cfg.get(C.CLUSTERING_INLINE_MAX_COMMITS):
        return False
    if ((cfg.get(C.CLUSTERING_ASYNC_ENABLED) or cfg.get(C.CLUSTERING_SCHEDULE_INLINE))
            and commits_since < cfg.get(C.CLUSTERING_ASYNC_MAX_COMMITS)):
        return False
    return True


def filter_partitions(partitions: Iterable[str], cfg: HoodieConfig) -> list[str]:
    """Partitions a plan looks at: ``partition.selected``, else all matching the regex, then the
    partition filter mode (ClusteringPlanPartitionFilter)."""
    selected = cfg.get_list(C.CLUSTERING_PARTITION_SELECTED)
    if selected:
        chosen = selected
    else:
        chosen = sorted(partitions)
        pattern = cfg.get_str(C.CLUSTERING_PARTITION_REGEX)
        if pattern:
            try:
                rx = re.compile(pattern)
            except re.error as exc:
                raise HoodieConfigError(f"{C.CLUSTERING_PARTITION_REGEX.key}={pattern!r} is not a "
                                        f"valid regular expression: {exc}") from None
            chosen = [p for p in chosen if rx.fullmatch(p)]
    mode = cfg.get(C.CLUSTERING_PARTITION_FILTER_MODE).upper()
    if mode == RECENT_DAYS:
        skip = cfg.get(C.CLUSTERING_SKIP_LATEST_PARTITIONS)
        newest_first = sorted(chosen, reverse=True)
        return newest_first[skip:skip + cfg.get(C.CLUSTERING_LOOKBACK_PARTITIONS)]
    if mode == SELECTED_PARTITIONS:
        begin = cfg.get_str(C.CLUSTERING_BEGIN_PARTITION)
        end = cfg.get_str(C.CLUSTERING_END_PARTITION)
        if not begin or not end:
            raise HoodieConfigError(
                f"{C.CLUSTERING_PARTITION_FILTER_MODE.key}=SELECTED_PARTITIONS needs "
                f"{C.CLUSTERING_BEGIN_PARTITION.key} and {C.CLUSTERING_END_PARTITION.key}")
        return [p for p in chosen if begin <= p <= end]
    if mode == DAY_ROLLING:
        raise HoodieConfigError(f"{C.CLUSTERING_PARTITION_FILTER_MODE.key}=DAY_ROLLING is not supported "
                                "here; use RECENT_DAYS or SELECTED_PARTITIONS")
    return chosen


def slice_info(file_slice: FileSlice, uri) -> dict:
    """A ``HoodieSliceInfo``: full paths, as Hudi writes them (``uri`` maps a table-relative path)."""
    logs = sorted(file_slice.log_files, key=lambda f: (f.instant, f.version))
    return {
        "dataFilePath": uri(file_slice.base_file.path) if file_slice.base_file else "",
        "deltaFilePaths": [uri(f.path) for f in logs],
        "fileId": file_slice.file_id,
        "partitionPath": file_slice.partition,
        "bootstrapFilePath": "",
        "version": 1,
    }


def group_metrics(slices: list[FileSlice], default_base_size: int) -> dict[str, float]:
    """Hudi's FileSliceMetricUtils totals over a group's slices."""
    total: dict[str, float] = defaultdict(float)
    for s in slices:
        for name, value in slice_metrics(s, default_base_size).items():
            total[name] += value
    return dict(total)


def _groups_of_partition(slices: list[FileSlice], cfg: HoodieConfig) -> list[tuple[list[FileSlice], int]]:
    default_size = cfg.get(C.PARQUET_MAX_FILE_SIZE)
    max_group = cfg.get(C.CLUSTERING_MAX_BYTES_PER_GROUP)
    target = cfg.get(C.CLUSTERING_TARGET_FILE_MAX_BYTES)
    max_groups = cfg.get(C.CLUSTERING_MAX_NUM_GROUPS)

    def size(s: FileSlice) -> int:
        return s.base_file.size if s.base_file is not None else default_size

    groups: list[tuple[list[FileSlice], int]] = []
    current: list[FileSlice] = []
    total = 0
    for s in sorted(slices, key=size, reverse=True):     # stable, like Java's sort
        if current and total + size(s) > max_group:
            groups.append((current, math.ceil(total / target)))
            current, total = [], 0
            if len(groups) >= max_groups:
                return groups
        current.append(s)
        total += size(s)
    if current and (len(current) > 1 or cfg.get(C.CLUSTERING_SINGLE_GROUP)):
        groups.append((current, math.ceil(total / target)))
    return groups


def sort_columns(cfg: HoodieConfig) -> list[str]:
    return cfg.get_list(C.CLUSTERING_SORT_COLUMNS)


def strategies(cfg: HoodieConfig) -> tuple[str, str]:
    """The plan and execution strategy classes. As HoodieClusteringConfig does, their defaults
    switch to the consistent-bucket ones when the index is the consistent-hashing bucket index,
    which takes no other."""
    consistent = is_consistent_hashing(cfg)
    plan_default = CONSISTENT_BUCKET_STRATEGY if consistent else SIZE_BASED_STRATEGY
    exec_default = SINGLE_JOB_CONSISTENT_EXECUTION if consistent else SORT_AND_SIZE_EXECUTION
    plan = cfg.get_str(C.CLUSTERING_PLAN_STRATEGY_CLASS) if cfg.contains(C.CLUSTERING_PLAN_STRATEGY_CLASS) \
        else plan_default
    execution = cfg.get_str(C.CLUSTERING_EXECUTION_STRATEGY_CLASS) \
        if cfg.contains(C.CLUSTERING_EXECUTION_STRATEGY_CLASS) else exec_default
    short = lambda name: name.rsplit(".", 1)[-1]  # noqa: E731
    if consistent:
        if short(plan) != short(CONSISTENT_BUCKET_STRATEGY):
            raise HoodieConfigError(f"Consistent hashing bucket index only supports clustering plan strategy: "
                                    f"{CONSISTENT_BUCKET_STRATEGY} ({C.CLUSTERING_PLAN_STRATEGY_CLASS.key}={plan!r})")
        if short(execution) not in (short(CONSISTENT_BUCKET_EXECUTION), short(SINGLE_JOB_CONSISTENT_EXECUTION)):
            raise HoodieConfigError(f"Consistent hashing bucket index only supports clustering execution strategy: "
                                    f"{CONSISTENT_BUCKET_EXECUTION} or {SINGLE_JOB_CONSISTENT_EXECUTION} "
                                    f"({C.CLUSTERING_EXECUTION_STRATEGY_CLASS.key}={execution!r})")
        return plan, execution
    for value, prop, supported in ((plan, C.CLUSTERING_PLAN_STRATEGY_CLASS, SIZE_BASED_STRATEGY),
                                   (execution, C.CLUSTERING_EXECUTION_STRATEGY_CLASS, SORT_AND_SIZE_EXECUTION)):
        if short(value) in (short(CONSISTENT_BUCKET_STRATEGY), short(CONSISTENT_BUCKET_EXECUTION),
                            short(SINGLE_JOB_CONSISTENT_EXECUTION)):
            raise HoodieConfigError(f"{prop.key}={value!r} is only applicable to a table with the consistent hash "
                                    f"index ({C.INDEX_TYPE.key}=BUCKET, {C.BUCKET_INDEX_ENGINE.key}=CONSISTENT_HASHING)")
        if short(value) != short(supported):
            raise HoodieConfigError(f"{prop.key}={value!r} is not supported; use {supported}")
    return plan, execution


def is_consistent_bucket_plan(plan: Mapping) -> bool:
    """Whether a clustering plan resizes consistent-hashing buckets (its groups carry child nodes)."""
    name = ((plan.get("strategy") or {}).get("strategyClassName") or "").rsplit(".", 1)[-1]
    return name in (CONSISTENT_BUCKET_EXECUTION.rsplit(".", 1)[-1], SINGLE_JOB_CONSISTENT_EXECUTION.rsplit(".", 1)[-1])


def check_strategies(cfg: HoodieConfig) -> None:
    strategies(cfg)
    strategy = layout_strategy(cfg.get_str(C.LAYOUT_OPTIMIZE_STRATEGY))
    if strategy != "linear" and not sort_columns(cfg):
        raise HoodieConfigError(f"{C.LAYOUT_OPTIMIZE_STRATEGY.key}={strategy} orders rows on "
                                f"{C.CLUSTERING_SORT_COLUMNS.key}; set the columns")


def plan_clustering(file_slices: Iterable[FileSlice], cfg: HoodieConfig, uri,
                    excluded: AbstractSet[tuple[str, str]] = frozenset(),
                    extra_metadata: Mapping[str, str] | None = None) -> dict | None:
    """The ``HoodieRequestedReplaceMetadata`` of a clustering of the latest file slices, or None
    when no group is worth rewriting. ``excluded``: file groups of pending compactions and
    clusterings; ``uri`` turns a table-relative path into the full path the plan records."""
    check_strategies(cfg)
    by_partition: dict[str, list[FileSlice]] = defaultdict(list)
    limit = cfg.get(C.CLUSTERING_SMALL_FILE_LIMIT)
    for s in file_slices:
        base_size = s.base_file.size if s.base_file is not None else 0
        if (s.partition, s.file_id) not in excluded and base_size < limit:
            by_partition[s.partition].append(s)
    max_groups = cfg.get(C.CLUSTERING_MAX_NUM_GROUPS)
    default_size = cfg.get(C.PARQUET_MAX_FILE_SIZE)
    groups = []
    for partition in filter_partitions(by_partition, cfg):
        for slices, outputs in _groups_of_partition(by_partition.get(partition, []), cfg):
            if len(groups) >= max_groups:
                break
            groups.append({"slices": [slice_info(s, uri) for s in slices],
                           "metrics": group_metrics(slices, default_size),
                           "numOutputFileGroups": outputs, "extraMetadata": None, "version": 1})
    return requested_replace(groups, cfg, strategies(cfg)[1], extra_metadata)


def requested_replace(groups: list[dict], cfg: HoodieConfig, execution_class: str,
                      extra_metadata: Mapping[str, str] | None) -> dict | None:
    """The ``HoodieRequestedReplaceMetadata`` of a clustering with these input groups (None: no
    group, so no plan)."""
    if not groups:
        return None
    columns = sort_columns(cfg)
    params = {C.CLUSTERING_SORT_COLUMNS.key: ",".join(columns)} if columns else {}
    plan = {
        "inputGroups": groups,
        "strategy": {"strategyClassName": execution_class, "strategyParams": params, "version": 1},
        "extraMetadata": dict(extra_metadata or {}),
        "version": CLUSTERING_PLAN_VERSION,
        "preserveHoodieMetadata": True,
    }
    return {"operationType": CLUSTER_OPERATION, "clusteringPlan": plan, "extraMetadata": {}, "version": 1}
