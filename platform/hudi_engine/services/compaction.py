"""Compaction of merge-on-read tables: schedule a plan, execute it to a commit, recover one that died.

Scheduling writes ``<ts>.compaction.requested`` (a ``HoodieCompactionPlan``); execution moves it to
inflight, has one Spark task per file group merge its base file and log files into a new base file
at the compaction instant, and completes it as ``<ts>.commit``. A compaction killed half way is
rolled back to requested by the next run and executed again from its plan.
"""
from __future__ import annotations

import json
import logging
import posixpath
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession

from ..cdc import diff
from ..concurrency.locks import check_lock_held, locked_table
from ..concurrency.settings import concurrency
from ..config import HoodieConfig
from ..errors import HoodieError
from ..file_group.base_file import BaseFileWriter, WriteContext
from ..file_group.fs_view import BaseFile, FileSlice, LogFile
from ..file_group.log_scanner import Visibility
from ..file_group.naming import parse_log_file_name
from ..file_group.tasks import STAT_SCHEMA, stats_batch, task_identity
from ..metadata_table.reader import table_view
from ..read.file_slice import SliceMerge, slice_rows
from ..read.log_merge import DELETES
from ..read.plan import merge_spec, table_schema
from ..schema.arrow import conform
from ..schema.avro import add_meta_fields, arrow_to_avro, to_json
from ..schema.meta_fields import RECORD_KEY, without_meta_fields
from ..spark_files import received_indexes
from ..table.meta_client import HoodieTable
from ..table.pending import pending_clustering_groups, pending_compaction_groups, requested_plan
from ..timeline.avro_models import COMPACTION_PLAN, encode_instant_avro
from ..timeline.commit_metadata import commit_metadata
from ..timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State, new_instant_time
from ..transaction.transaction import Transaction
from ..write.cdc_log import cdc_mode, write_cdc_log
from .compaction_plan import plan_compaction, should_schedule_compaction
from .execution import run_pending

log = logging.getLogger(__name__)


def schedule_compaction(table: HoodieTable, options: dict | None = None, force: bool = False,
                        extra_metadata: dict[str, str] | None = None) -> Instant | None:
    """Write a compaction plan when one is due (``force``: whenever there is something to compact)."""
    if table.table_type != "MERGE_ON_READ":
        raise HoodieError(f"table {table.name} is {table.table_type}; only merge-on-read tables compact")
    cfg = HoodieConfig({**(options or {}), **table.props})
    with locked_table(table, cfg, "scheduling a compaction") as table:
        return _schedule_compaction(table, cfg, concurrency(cfg).occ, force, extra_metadata)


def _schedule_compaction(table: HoodieTable, cfg: HoodieConfig, occ: bool, force: bool,
                         extra_metadata: dict[str, str] | None) -> Instant | None:
    timeline = table.timeline
    instant_time = new_instant_time(timeline.last_instant_time)
    if not force and not should_schedule_compaction(timeline.instants, instant_time, cfg):
        return None
    # Several writers: plan the completed slices anyway, as Hudi does; a pending write that
    # appended to a planned file group fails its conflict check when it commits.
    writes = [] if occ else timeline.pending([COMMIT, DELTA_COMMIT, REPLACE_COMMIT])
    if writes:
        raise HoodieError(
            f"cannot schedule a compaction of {table.name} while write {writes[0]} is pending: its "
            "log blocks would be missed. Let it finish, or run a write (it rolls failed ones back)")
    excluded = set(pending_compaction_groups(table)) | set(pending_clustering_groups(table))
    plan = plan_compaction(table_view(table).latest_file_slices(), cfg, excluded, extra_metadata)
    if plan is None:
        return None
    requested = Instant(instant_time, COMPACTION, State.REQUESTED)
    check_lock_held(table.storage.base_uri, cfg)
    timeline.create_requested(requested, encode_instant_avro(COMPACTION_PLAN, plan))
    log.info(f"scheduled compaction {instant_time} of {len(plan['operations'])} file groups")
    return requested


def compact_inline(spark: SparkSession | None, table: HoodieTable, options: dict, execute: bool) -> list[str]:
    """After a write (``hoodie.compact.inline`` / ``hoodie.compact.schedule.inline``): plan a
    compaction if one is due and, when executing (with Spark), run every pending one."""
    schedule_compaction(table, options)
    return run_compactions(spark, table.reload(), options=options) if execute and spark is not None else []


def run_compactions(spark: SparkSession, table: HoodieTable, instant_time: str | None = None,
                    options: dict | None = None) -> list[str]:
    """Execute pending compactions (one, or all oldest first); returns the completed instants.
    ``options`` are the writer's settings for the new base files (codec, bloom filter, ...)."""
    return run_pending("compaction", table, [(i, None) for i in table.timeline.pending([COMPACTION])],
                       instant_time, options,
                       lambda t, requested, _: _execute(spark, t, requested, options))


def _execute(spark: SparkSession, table: HoodieTable, requested: Instant, options: dict | None) -> str:
    timeline = table.timeline
    plan = requested_plan(table.timeline, requested)
    operations = plan.get("operations") or []
    schema = table_schema(table)
    data_schema = without_meta_fields(schema)
    avro = arrow_to_avro(data_schema, table.name)
    ctx = WriteContext(table.storage, requested.timestamp, data_schema, to_json(add_meta_fields(avro)),
                       {**(options or {}), **table.props})
    visibility = Visibility(frozenset(i.timestamp for i in timeline.completed_writes(until=requested.timestamp)),
                            timeline.start, requested.timestamp)
    task = CompactFileGroup(ctx, tuple(operations), SliceMerge(visibility, merge_spec(table)))
    txn = Transaction.resume(table, requested, HoodieConfig(ctx.options), spark)
    txn.inflight()
    log.info(f"compaction {requested.timestamp}: merging {len(operations)} file groups")
    with txn.spark_jobs(f"hudi compaction {requested.timestamp}"):
        indexes = spark.range(len(operations), numPartitions=max(1, len(operations)))
        stats = [json.loads(r[0]) for r in indexes.mapInArrow(task, STAT_SCHEMA).collect()]
    meta = commit_metadata(stats, "compact", to_json(avro), plan.get("extraMetadata") or {})
    meta["compacted"] = True
    txn.commit(meta)
    log.info(f"committed compaction {requested.timestamp}: {sum(s['numWrites'] for s in stats)} records "
              f"in {len(stats)} files")
    return requested.timestamp


def operation_slice(op: dict) -> FileSlice:
    """The file slice a plan operation names (file names in the plan, the partition says where)."""
    partition = op.get("partitionPath") or ""

    def rel(name: str) -> str:
        return posixpath.join(partition, name) if partition else name
    base = None
    if op.get("dataFilePath"):
        base = BaseFile(rel(op["dataFilePath"]), op["fileId"], op["baseInstantTime"], 0)
    logs = []
    for name in op.get("deltaFilePaths") or []:
        parsed = parse_log_file_name(name)
        logs.append(LogFile(rel(name), op["fileId"], parsed.instant, parsed.version, 0, parsed.write_token or ""))
    return FileSlice(partition, op["fileId"], op["baseInstantTime"], base, logs)


@dataclass(frozen=True)
class CompactFileGroup:
    """Executor side: a file group's base file and logs merged into its next base file."""
    ctx: WriteContext
    operations: tuple[dict, ...]
    merge: SliceMerge

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_partition, token = task_identity()
        for index in received_indexes(batches):
            yield stats_batch([self._compact(self.operations[index], task_partition, token)])

    def _compact(self, op: dict, task_partition: int, token: str) -> dict:
        file_slice = operation_slice(op)
        schema = self.ctx.file_schema
        rows, base, parts = slice_rows(self.ctx.storage, file_slice, schema, self.merge)
        rows = conform(rows, schema) if rows is not None else schema.empty_table()
        writer = BaseFileWriter(self.ctx, file_slice.partition, file_slice.file_id, token, "CREATE",
                                op["baseInstantTime"])
        written = writer.write(rows, stamp=False, task_partition=task_partition)
        log_records = sum(p.records.num_rows for p in parts)
        deletes = sum(p.records.num_rows for p in parts if p.kind == DELETES)
        stat = writer.close(0, log_records - deletes, deletes)
        if cdc_mode(self.ctx) is not None:
            # What the logs changed, for changelog readers (Hudi's Spark CDC reader infers it).
            keys = pa.concat_arrays([p.records[RECORD_KEY].combine_chunks() for p in parts]) if parts else None
            stat["cdcStats"] = write_cdc_log(self.ctx, file_slice.partition, file_slice.file_id, token,
                                             diff(base, conform(written, schema), keys))
        stat.update({"totalLogRecords": log_records, "totalLogBlocks": len(parts),
                     "totalLogFilesCompacted": len(file_slice.log_files),
                     "totalLogSizeCompacted": int((op.get("metrics") or {}).get("TOTAL_LOG_FILES_SIZE", 0)),
                     "totalUpdatedRecordsCompacted": log_records - deletes})
        return stat

