"""Where inserts go (Hudi's UpsertPartitioner): first into a partition's small files, then into new
file groups sized from the average record size. Pure: counts, file sizes and commit totals in,
buckets out."""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Container, Iterable

from .. import config as C
from ..config import HoodieConfig
from ..file_group.fs_view import FileSlice
from ..file_group.naming import new_file_id
from ..timeline.commit_metadata import totals
from ..timeline.timeline import Timeline

# Hudi's hoodie.record.size.estimation.threshold: a commit counts for the estimate only when it
# wrote at least this fraction of the small file limit.
RECORD_SIZE_ESTIMATION_THRESHOLD = 1.0


# A write's file group: (partition, file id). File ids alone do not tell file groups apart: Hudi's
# non-blocking concurrency control names a bucket's file group the same in every partition.
GroupKey = tuple[str, str]


@dataclass(frozen=True)
class SmallFile:
    file_id: str
    path: str           # base file, relative to the table's base path
    size: int
    base_instant: str


@dataclass(frozen=True)
class Target:
    """A file group this write produces a new base file for."""
    partition: str
    file_id: str
    base_path: str | None       # current base file to merge with; None for a new file group
    prev_commit: str | None

    @property
    def group(self) -> GroupKey:
        return self.partition, self.file_id


@dataclass(frozen=True)
class InsertBucket:
    partition: str
    file_id: str
    lo: float                   # inserts whose key hash falls in [lo, hi) go here
    hi: float
    records: int


@dataclass(frozen=True)
class SizingPolicy:
    max_file_size: int
    small_file_limit: int
    record_size_estimate: int
    insert_split_size: int
    auto_split: bool


def sizing_policy(cfg: HoodieConfig) -> SizingPolicy:
    return SizingPolicy(cfg.get(C.PARQUET_MAX_FILE_SIZE), cfg.get(C.PARQUET_SMALL_FILE_LIMIT),
                        cfg.get(C.COPY_ON_WRITE_RECORD_SIZE_ESTIMATE), cfg.get(C.COPY_ON_WRITE_INSERT_SPLIT_SIZE),
                        cfg.get(C.COPY_ON_WRITE_AUTO_SPLIT_INSERTS))


def timeline_record_size(timeline: Timeline, policy: SizingPolicy) -> int:
    """:func:`average_record_size` over the timeline's completed writes, newest first."""
    commits = (totals(timeline.commit_metadata(i)) for i in reversed(timeline.completed_writes()))
    return average_record_size(commits, policy)


def small_files(latest: Iterable[FileSlice], cfg: HoodieConfig, clustering: Container[tuple[str, str]],
                compacting: Container[tuple[str, str]], is_mor: bool) -> dict[str, list[SmallFile]]:
    """Base files that take inserts, per partition: below the small-file limit and not under a
    pending clustering. Merge-on-read: only groups with no log files and no pending compaction,
    the smallest few per partition (Hudi's delta commit partitioner)."""
    limit = cfg.get(C.PARQUET_SMALL_FILE_LIMIT)
    small: dict[str, list[SmallFile]] = defaultdict(list)
    for s in latest:
        group = (s.partition, s.file_id)
        if (s.base_file and s.base_file.size < limit and group not in clustering
                and not (is_mor and (s.log_files or group in compacting))):
            small[s.partition].append(SmallFile(s.file_id, s.base_file.path, s.base_file.size, s.base_instant))
    if is_mor:
        keep = cfg.get(C.SMALL_FILE_GROUP_CANDIDATES_LIMIT)
        small = defaultdict(list, {p: sorted(files, key=lambda f: f.size)[:keep] for p, files in small.items()})
    return small


def average_record_size(commit_stats: Iterable[tuple[int, int]], policy: SizingPolicy) -> int:
    """Bytes per record from the newest commit that wrote enough bytes, as Hudi estimates it.

    ``commit_stats`` yields (total bytes written, total records written) per commit, newest first;
    it is consumed only up to the commit that decides, so it can read commit metadata lazily."""
    threshold = policy.small_file_limit * RECORD_SIZE_ESTIMATION_THRESHOLD
    for total_bytes, total_records in commit_stats:
        if total_bytes > threshold and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return policy.record_size_estimate


def plan_inserts(inserts_per_partition: dict[str, int], small_files: dict[str, list[SmallFile]],
                 avg_record_size: int, policy: SizingPolicy) -> list[InsertBucket]:
    """Insert buckets per partition; their [lo, hi) ranges tile [0, 1) in each partition."""
    buckets: list[InsertBucket] = []
    for partition in sorted(inserts_per_partition):
        total = inserts_per_partition[partition]
        if total <= 0:
            continue
        sized: list[tuple[str, int]] = []
        unassigned = total
        if policy.small_file_limit > 0:
            for sf in sorted(small_files.get(partition, []), key=lambda f: f.size):
                if unassigned <= 0 or sf.size >= policy.small_file_limit:
                    continue
                room = (policy.max_file_size - sf.size) // avg_record_size
                take = min(room, unassigned)
                if take > 0:
                    sized.append((sf.file_id, take))
                    unassigned -= take
        if unassigned > 0:
            per_bucket = (max(1, policy.max_file_size // avg_record_size) if policy.auto_split
                          else policy.insert_split_size)
            count = math.ceil(unassigned / per_bucket)
            for i in range(count):
                records = min(per_bucket, unassigned - i * per_bucket)
                sized.append((new_file_id(), records))
        lo = 0.0
        for i, (file_id, records) in enumerate(sized):
            hi = 1.0 if i == len(sized) - 1 else lo + records / total
            buckets.append(InsertBucket(partition, file_id, lo, hi, records))
            lo = hi
    return buckets


def shuffle_parallelism(configured: int, input_partitions: int, cores: int) -> int:
    """Spark partitions of a write's lookup and routing shuffles, as Hudi deduces them: the
    ``hoodie.*.shuffle.parallelism`` the user set, else the input's partitions, but never fewer
    than the cores (a one-partition input would otherwise run its join on one core). A session's
    ``spark.sql.shuffle.partitions`` (200 by default) plays no part: 200 tasks over a handful of
    file groups cost more in scheduling than the join itself."""
    return configured if configured > 0 else max(1, input_partitions, cores)
