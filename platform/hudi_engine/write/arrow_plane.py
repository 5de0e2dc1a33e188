"""A write's data steps in this process, on Arrow tables: a small change is tagged, routed,
merged and written here, file groups on threads, with no Spark stage (``plane``).

The rows of the change are in memory (few, by the choice of this plane); a file group's stored
rows are read only while it is merged, one per thread, as an executor task would. When the base
files to rewrite are larger than ``hoodie.write.in.process.max.merge.bytes`` and Spark is at hand,
the merge goes to Spark's executors instead.
"""
from __future__ import annotations

import json
import logging
import threading
from contextlib import nullcontext
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from .. import progress
from ..file_group.naming import write_token
from ..index.lookup import tag_rows
from ..index.tagging import BUCKET_COLUMN
from ..java_hash import java_string_hashes
from ..merge.record_merger import MergeSpec, deduplicate
from ..schema.arrow import split_by_value
from ..schema.meta_fields import PARTITION_PATH, RECORD_KEY
from ..spark_jobs import ARROW_BATCH_ROWS as BATCH_ROWS
from ..threads import parallel_map, workers
from .planner import GroupKey, InsertBucket, Target
from .tasks import TARGET, BulkInsert, Prepare

if TYPE_CHECKING:
    from .writer import WriteJob

log = logging.getLogger(__name__)

class ArrowPlane:
    def __init__(self, job: "WriteJob", rows: pa.Table, spark=None):
        self.job, self.rows, self.spark = job, rows, spark

    def prepared(self, prepare: Prepare) -> pa.Table:
        return _run(prepare, self.rows)       # Prepare yields a batch per batch: never None

    def tag(self, prepared: pa.Table) -> pa.Table:
        job = self.job
        return tag_rows(job.table.storage, job.latest, prepared, job.cfg, TARGET)

    def untagged(self, prepared: pa.Table) -> pa.Table:
        return prepared.append_column(TARGET, pa.nulls(prepared.num_rows, pa.string()))

    def found(self, tagged: pa.Table, stored: bool) -> pa.Table:
        return tagged.filter(pc.is_valid(tagged[TARGET]) if stored else pc.is_null(tagged[TARGET]))

    def kept(self, rows: pa.Table):
        return nullcontext(rows)

    def count_by(self, rows: pa.Table, columns: list[str]) -> list[tuple]:
        counted = rows.select(columns).group_by(columns).aggregate([([], "count_all")])
        return list(zip(*[counted[c].to_pylist() for c in columns + ["count_all"]]))

    def distinct(self, rows: pa.Table, column: str) -> list:
        return pc.unique(rows[column]).to_pylist()

    def dedup(self, prepared: pa.Table) -> pa.Table:
        spec = MergeSpec(self.job.ordering, True, False, self.job.partial, self.job.custom)
        return deduplicate(prepared, spec, by=(RECORD_KEY, PARTITION_PATH))

    def assign_inserts(self, inserts: pa.Table, buckets: Sequence[InsertBucket]) -> pa.Table:
        """Each insert to the bucket of its partition whose [lo, hi) holds its key's hash (any hash
        does that sends equal keys to one file group and spreads similar keys apart)."""
        if TARGET in inserts.column_names:
            inserts = inserts.drop_columns([TARGET])
        hashes = _mix(java_string_hashes(inserts[RECORD_KEY].combine_chunks())) / float(1 << 64)
        partitions = inserts[PARTITION_PATH].to_numpy(zero_copy_only=False)
        file_ids = np.full(inserts.num_rows, None, object)
        by_partition: dict[str, list[InsertBucket]] = {}
        for b in buckets:
            by_partition.setdefault(b.partition, []).append(b)
        for partition, planned in by_partition.items():
            rows = partitions == partition
            planned = sorted(planned, key=lambda b: b.lo)
            bounds = np.array([b.hi for b in planned[:-1]])
            chosen = np.searchsorted(bounds, hashes[rows], side="right")
            file_ids[rows] = np.array([b.file_id for b in planned], object)[chosen]
        routed = inserts.append_column(TARGET, pa.array(file_ids, pa.string()))
        return routed.filter(pc.is_valid(routed[TARGET]))

    def union(self, first: pa.Table, second: pa.Table) -> pa.Table:
        return pa.concat_tables([first, second.select(first.column_names)])

    def with_buckets(self, prepared: pa.Table, adder: Callable) -> pa.Table:
        return _run(adder, prepared)

    def routed(self, bucketed: pa.Table, routes: list[tuple[str, int, str]]) -> pa.Table:
        pairs = pc.binary_join_element_wise(bucketed[PARTITION_PATH], pc.cast(bucketed[BUCKET_COLUMN], pa.string()),
                                            "\x00")
        known = pa.array([f"{p}\x00{b}" for p, b, _ in routes], pa.string())
        at = pc.index_in(pairs, value_set=known)
        rows = bucketed.append_column(TARGET, pa.array([fid for *_, fid in routes], pa.string()).take(at))
        return rows.filter(pc.is_valid(rows[TARGET])).drop_columns([BUCKET_COLUMN])

    def merge_groups(self, rows: pa.Table, targets: dict[GroupKey, Target], appends: dict) -> list[dict]:
        job = self.job
        sizes = {(s.partition, s.file_id): s.base_file.size for s in job.latest if s.base_file}
        rewrite = sum(sizes.get(group, 0) for group in targets)
        if self.spark is not None and rewrite > job.cfg.get(C.IN_PROCESS_MAX_MERGE_BYTES):
            from .spark_plane import SparkPlane

            log.info(f"{job.operation} {job.instant.timestamp}: {rewrite} bytes of base files to rewrite; "
                     "merging on Spark's executors")
            df = self.spark.createDataFrame(rows)
            return SparkPlane(job, df).merge_groups(df, targets, appends)
        fn = job.file_group_writer(targets, appends)
        slices = group_slices(rows)
        slices.sort(key=lambda s: -sizes.get(s[0], 0))     # the biggest rewrites first

        def write(i: int) -> list[dict]:
            group, part = slices[i]
            out = fn(group, part.drop_columns([TARGET]), task=(i, write_token(i, 0, 0)))
            return [json.loads(s) for s in out.column("stat").to_pylist()]

        log.info(f"{job.operation} {job.instant.timestamp}: merging {len(slices)} file groups in this process")
        return self._tasks(write, len(slices))

    def bulk_insert(self, prepare: Prepare, sort_mode: str, parallelism: int) -> list[dict]:
        """The rows in up to ``parallelism`` (else one per core) contiguous shares, each written
        into its own new file groups on a thread, as Spark's tasks would."""
        job = self.job
        prepared = self.prepared(prepare)
        if job.combine():
            prepared = self.dedup(prepared)
        if sort_mode in ("GLOBAL_SORT", "PARTITION_SORT"):
            prepared = prepared.take(pc.sort_indices(prepared, sort_keys=[(PARTITION_PATH, "ascending"),
                                                                          (RECORD_KEY, "ascending")]))
        shares = max(1, min(parallelism or workers(), -(-prepared.num_rows // BATCH_ROWS)))
        size = -(-prepared.num_rows // shares)

        def write(i: int) -> list[dict]:
            out = _run(BulkInsert(job.ctx, task=(i, write_token(i, 0, 0))), prepared.slice(i * size, size))
            return [json.loads(s) for s in out.column("stat").to_pylist()] if out is not None else []

        return self._tasks(write, shares)

    def _tasks(self, fn: Callable[[int], list[dict]], count: int) -> list[dict]:
        """``fn(0..count-1)`` on threads, their write stats joined; each one done is reported to
        the progress sink as a Spark task would be (``spark_jobs.SparkTaskProgress``)."""
        report, what = progress.sink(), f"{self.job.operation} {self.job.instant.timestamp}"
        done, lock = [0], threading.Lock()

        def task(i: int) -> list[dict]:
            stats = fn(i)
            if report is not None:
                with lock:
                    done[0] += 1
                    report(what, done[0], count)
            return stats

        results = parallel_map(task, range(count))
        if report is not None and count:
            report(what, count, count, True)
        return [s for stats in results for s in stats]


def group_slices(rows: pa.Table) -> list[tuple[GroupKey, pa.Table]]:
    """The routed rows of each file group, (partition path, ``TARGET``), in arrival order, groups
    sorted by both: one stable counting sort on the dictionary codes of the pair (no string sort)."""
    pairs = pc.binary_join_element_wise(rows[PARTITION_PATH], rows[TARGET], _SEP)
    out = []
    for pair, part in split_by_value(rows, pairs):
        partition, file_id = pair.split(_SEP)
        out.append(((partition, file_id), part))
    return out


_SEP = "\x00"      # in no partition path or file id


def _mix(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer: Java's String hash of similar keys (k1, k2, ...) is
    sequential, and would put them all in one bucket's range."""
    h = h.astype(np.uint64)
    for shift, factor in ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53)):
        h ^= h >> np.uint64(shift)
        h *= np.uint64(factor)
    return h ^ (h >> np.uint64(33))


def _run(fn: Callable, rows: pa.Table) -> pa.Table | None:
    """An executor's batch function (``mapInArrow``'s kind) over ``rows``; None if it yields nothing."""
    batches = rows.to_batches(max_chunksize=BATCH_ROWS) or [pa.RecordBatch.from_pylist([], schema=rows.schema)]
    out = list(fn(iter(batches)))
    return pa.Table.from_batches(out) if out else None
