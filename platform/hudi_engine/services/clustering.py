"""Clustering: schedule a plan, execute it to a replacecommit, recover one that died.

Scheduling writes ``<ts>.replacecommit.requested`` holding a clustering plan (groups of small file
slices per partition). Execution moves it to inflight, reads each group's slices (merged with
their logs on merge-on-read tables), orders the rows (linear sort, z-order or hilbert curve on the
sort columns), writes them into ``numOutputFileGroups`` new file groups cut at the target file
size, and completes the replacecommit naming the file groups it replaced. Records keep their
commit time and sequence number (Hudi preserves them), so incremental queries do not see them
again. A run killed half way leaves an inflight instant: the next run rolls it back to requested
and executes the plan again. Pending clusterings own their file groups: writers do not add
inserts to them and refuse updates (see the writer).
"""
from __future__ import annotations

import json
import logging
import posixpath
from dataclasses import dataclass
from functools import reduce
from typing import Iterator

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType

from .. import config as C
from ..concurrency.locks import check_lock_held, locked_table
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieError
from ..file_group.base_file import BaseFileWriter, WriteContext
from ..file_group.fs_view import FileSlice
from ..file_group.log_scanner import Visibility
from ..file_group.naming import new_file_id, parse_base_file_name, parse_log_file_name
from ..file_group.tasks import STAT_SCHEMA, stats_batch, task_identity
from ..index.consistent_hashing import is_consistent_hashing
from ..index.consistent_meta import has_consistent_metadata
from ..metadata_table.reader import table_view
from ..read.file_slice import SliceMerge
from ..read.plan import ReadPlan, merge_spec, table_schema
from ..read.reader import scan
from ..schema.avro import add_meta_fields, arrow_to_avro, to_json
from ..schema.meta_fields import META_FIELDS, without_meta_fields
from ..table.meta_client import HoodieTable
from ..table.pending import (completed_clusterings, pending_clustering_groups, pending_clusterings,
                             pending_compaction_groups)
from ..timeline.avro_models import REQUESTED_REPLACE_METADATA, encode_instant_avro
from ..timeline.commit_metadata import commit_metadata
from ..timeline.instant import CLUSTERING, REPLACE_COMMIT, Instant, State, new_instant_time
from ..transaction.transaction import Transaction
from ..write.tasks import BULK_BUFFER_BYTES
from .clustering_plan import (
    clustering_due,
    commits_since_clustering,
    is_consistent_bucket_plan,
    plan_clustering,
    sort_columns,
)
from .compaction import operation_slice
from .consistent_clustering import (
    commit_resized,
    hash_fields_of,
    prepare_resize,
    resize_frame,
    resized_metadata,
    save_resized,
    schedule_resize,
)
from .execution import run_pending
from .layout import CURVE_KEY, LINEAR, curve_key, layout_strategy

log = logging.getLogger(__name__)


def schedule_clustering(table: HoodieTable, options: dict | None = None, force: bool = False,
                        extra_metadata: dict[str, str] | None = None) -> Instant | None:
    """Write a clustering plan when one is due (``force``: whenever a group is worth rewriting).
    With several writers the plan is made under the table lock, from the timeline as it is then."""
    cfg = HoodieConfig({**(options or {}), **table.props})
    with locked_table(table, cfg, "scheduling a clustering") as table:
        return _schedule(table, cfg, force, extra_metadata)


def _schedule(table: HoodieTable, cfg: HoodieConfig, force: bool,
              extra_metadata: dict[str, str] | None) -> Instant | None:
    timeline = table.timeline
    if not force and not clustering_due(commits_since_clustering(timeline.instants, completed_clusterings(table)),
                                        cfg):
        return None
    _check_sort_columns(table, sort_columns(cfg))
    excluded = set(pending_compaction_groups(table)) | set(pending_clustering_groups(table))
    if is_consistent_hashing(cfg):
        requested_replace = schedule_resize(table, cfg, excluded, extra_metadata)
    else:
        if has_consistent_metadata(table.storage):
            raise HoodieConfigError(
                f"table {table.name} is indexed by consistent-hashing buckets; size-based clustering would move "
                f"its records out of their buckets. Pass {C.INDEX_TYPE.key}=BUCKET and "
                f"{C.BUCKET_INDEX_ENGINE.key}=CONSISTENT_HASHING to cluster it (which resizes its buckets)")
        requested_replace = plan_clustering(table_view(table).latest_file_slices(), cfg, table.storage.uri,
                                            excluded, extra_metadata)
    if requested_replace is None:
        return None
    # Hudi 1.x (table version 8+) plans clustering as its own action, which completes as a replacecommit.
    action = CLUSTERING if table.version >= 8 else REPLACE_COMMIT
    instant = Instant(new_instant_time(timeline.last_instant_time), action, State.REQUESTED)
    check_lock_held(table.storage.base_uri, cfg)
    timeline.create_requested(instant, encode_instant_avro(REQUESTED_REPLACE_METADATA, requested_replace))
    groups = requested_replace["clusteringPlan"]["inputGroups"]
    log.info(f"scheduled clustering {instant.timestamp}: {sum(len(g['slices']) for g in groups)} file "
              f"groups in {len(groups)} clustering groups → {sum(g['numOutputFileGroups'] for g in groups)} "
              "new file groups")
    return instant


def _check_sort_columns(table: HoodieTable, columns: list[str]) -> None:
    if not columns:
        return
    names = [f.name for f in table_schema(table)]
    missing = [c for c in columns if c not in names]
    if missing:
        raise HoodieError(f"{C.CLUSTERING_SORT_COLUMNS.key} names {missing}, which table {table.name} "
                          f"does not have; its columns are {[n for n in names if n not in META_FIELDS]}")


def cluster_inline(spark: SparkSession, table: HoodieTable, options: dict) -> list[str]:
    """After a write: ``hoodie.clustering.inline`` plans when due and runs every pending clustering;
    ``hoodie.clustering.schedule.inline`` only plans (a standalone job executes)."""
    cfg = HoodieConfig(options)
    inline, schedule_only = cfg.get(C.CLUSTERING_INLINE), cfg.get(C.CLUSTERING_SCHEDULE_INLINE)
    if not (inline or schedule_only):
        return []
    schedule_clustering(table, options)
    return run_clusterings(spark, table.reload(), options=options) if inline else []


def run_clusterings(spark: SparkSession, table: HoodieTable, instant_time: str | None = None,
                    options: dict | None = None) -> list[str]:
    """Execute pending clusterings (one, or all oldest first); returns the completed instants."""
    return run_pending("clustering", table, pending_clusterings(table), instant_time, options,
                       lambda t, requested, plan: _execute(spark, t, requested, plan, options or {}))


def slice_of(info: dict) -> FileSlice:
    """The file slice a plan's ``HoodieSliceInfo`` names (full paths there; found by file name
    under the partition, so a moved table still runs its plans)."""
    base_name = posixpath.basename(info.get("dataFilePath") or "")
    logs = [posixpath.basename(p) for p in info.get("deltaFilePaths") or []]
    if base_name:
        base_instant = parse_base_file_name(base_name).instant
    else:
        base_instant = parse_log_file_name(logs[0]).instant
    return operation_slice({"partitionPath": info.get("partitionPath") or "", "fileId": info["fileId"],
                            "dataFilePath": base_name or None, "deltaFilePaths": logs,
                            "baseInstantTime": base_instant})


def _execute(spark: SparkSession, table: HoodieTable, requested: Instant, requested_replace: dict,
             options: dict) -> str:
    plan = requested_replace["clusteringPlan"]
    groups = plan.get("inputGroups") or []
    cfg = HoodieConfig({**options, **table.props})
    columns = [c for c in ((plan.get("strategy") or {}).get("strategyParams") or {})
               .get(C.CLUSTERING_SORT_COLUMNS.key, "").split(",") if c.strip()]
    _check_sort_columns(table, columns)
    strategy = layout_strategy(cfg.get_str(C.LAYOUT_OPTIMIZE_STRATEGY)) if columns else LINEAR
    resize = prepare_resize(table, groups) if is_consistent_bucket_plan(plan) else None
    schema = table_schema(table)
    data_schema = without_meta_fields(schema)
    avro = arrow_to_avro(data_schema, table.name)
    ctx = WriteContext(table.storage, requested.timestamp, data_schema, to_json(add_meta_fields(avro)),
                       {**options, **table.props})
    timeline = table.timeline
    merge = None
    if table.table_type == "MERGE_ON_READ":
        visibility = Visibility(frozenset(i.timestamp for i in timeline.completed_writes(until=requested.timestamp)),
                                timeline.start, requested.timestamp)
        merge = SliceMerge(visibility, merge_spec(table))
    txn = Transaction.resume(table, requested, cfg, spark)
    txn.inflight()
    target = cfg.get(C.CLUSTERING_TARGET_FILE_MAX_BYTES)
    slices = sum(len(g.get("slices") or []) for g in groups)
    log.info(f"clustering {requested.timestamp}: rewriting {slices} file groups in {len(groups)} groups "
              f"({strategy}{' on ' + ','.join(columns) if columns else ''})")
    with txn.spark_jobs(f"hudi clustering {requested.timestamp}"):
        if resize is not None:
            frames = [resize_frame(spark, table, ctx, group, tuple(slice_of(i) for i in group.get("slices") or []),
                                   merge, resize, hash_fields_of(cfg), columns) for group in groups]
        else:
            frames = [_group_frame(spark, table, ctx, group, merge, columns, strategy, target) for group in groups]
        stats = [json.loads(r[0]) for r in reduce(DataFrame.unionByName, frames).collect()]
    replaced: dict[str, list[str]] = {}
    for group in groups:
        for info in group.get("slices") or []:
            replaced.setdefault(info.get("partitionPath") or "", []).append(info["fileId"])
    meta = commit_metadata(stats, "cluster", to_json(avro), plan.get("extraMetadata") or {}, replaced)
    new_rings = resized_metadata(resize, requested.timestamp) if resize is not None else []
    save_resized(table, new_rings)
    # Writers that started before the plan fail their own conflict check on its file groups, and
    # later ones are refused them: completing needs the lock only to order the timeline.
    txn.commit(meta)
    commit_resized(table, new_rings)
    log.info(f"committed clustering {requested.timestamp}: {sum(s['numWrites'] for s in stats)} records "
              f"in {len(stats)} files, replacing {slices} file groups")
    return requested.timestamp


def _group_frame(spark: SparkSession, table: HoodieTable, ctx: WriteContext, group: dict,
                 merge: SliceMerge | None, columns: list[str], strategy: str, target: int) -> DataFrame:
    """One clustering group: its slices read as a query reads them (base files by Spark's parquet
    reader, slices with logs merged by a task each), range-partitioned into its output file groups
    on the sort order, each output partition written as one file group by one task."""
    slices = tuple(slice_of(info) for info in group.get("slices") or [])
    rows = scan(spark, table, ReadPlan(slices, ctx.file_schema, None, merge))
    curve = strategy != LINEAR
    if curve:
        # Only the sort columns travel to Python for the key (an Arrow UDF), not whole rows.
        rows = rows.withColumn(CURVE_KEY, _curve_key_column(tuple(columns), strategy))
    order = [CURVE_KEY] if curve else list(columns)
    outputs = max(1, int(group.get("numOutputFileGroups") or 1))
    if order:
        rows = rows.repartitionByRange(outputs, *order) if outputs > 1 else rows.coalesce(1)
        rows = rows.sortWithinPartitions(*order)
    else:
        rows = rows.repartition(outputs) if outputs > 1 else rows.coalesce(1)
    if curve:
        rows = rows.drop(CURVE_KEY)        # a projection keeps each task's sorted order
    partition = slices[0].partition if slices else ""
    return rows.mapInArrow(WriteClusteredFiles(ctx, partition, target), STAT_SCHEMA)


def _curve_key_column(columns: tuple[str, ...], strategy: str) -> Column:
    """Each row's position on the layout's curve over the sort columns, computed on the executors."""
    def key(*arrays: pa.Array) -> pa.Array:
        return curve_key(pa.table(dict(zip(columns, arrays))), list(columns), strategy)

    return F.arrow_udf(key, BinaryType())(*[F.col(c) for c in columns])


@dataclass(frozen=True)
class WriteClusteredFiles:
    """Executor side: a task's rows (one output of one group, in order) into new file groups of
    the partition, a new one each time the target size is reached; commit times are kept."""
    ctx: WriteContext
    partition: str
    target_bytes: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_partition, token = task_identity()
        stats: list[dict] = []
        writer: BaseFileWriter | None = None
        buffer: list[pa.RecordBatch] = []
        buffered = 0

        def flush() -> None:
            nonlocal writer, buffer, buffered
            if writer is None:
                writer = BaseFileWriter(self.ctx, self.partition, new_file_id(), token, "CREATE", None)
            rows = pa.Table.from_batches(buffer)
            writer.write(rows, stamp=False, task_partition=task_partition)
            buffer, buffered = [], 0
            if writer.bytes_written >= self.target_bytes:
                stats.append(writer.close(writer.num_written, 0, 0))
                writer = None

        for batch in batches:
            if batch.num_rows:
                buffer.append(batch)
                buffered += batch.nbytes
            if buffered >= min(BULK_BUFFER_BYTES, self.target_bytes):
                flush()
        if buffer:
            flush()
        if writer is not None:
            stats.append(writer.close(writer.num_written, 0, 0))
        if stats:
            yield stats_batch(stats)

