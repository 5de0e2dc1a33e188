"""Merge-on-read snapshots merged by Spark itself: base files are scanned by Spark's parquet reader,
so a query's columns and filters reach them (a count, or a few columns, reads what a parquet scan
would), and Python reads only the logs. Per file slice Python gives

- each key the log touches, with its ordering value and whether the log deletes it, and
- the rows the log writes (:func:`.file_slice.logged_rows`);

Spark keeps the base rows the log leaves (a join on base file name and record key) and adds the
logged rows. A base row survives when the log has no record for its key, or, under event-time
merging, only an update with a smaller ordering value: the rule of
:func:`hudi_engine.merge.record_merger.merge`, which merges the same slices in Arrow (the tests hold
both to the same rows).
"""
from __future__ import annotations

import posixpath
from typing import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..merge.record_merger import is_delete, ordering_struct
from ..schema.meta_fields import RECORD_KEY
from ..spark_files import received_indexes, spark_opens, task_indexes
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .file_slice import combined_log, logged_rows
from .plan import ReadPlan

BASE_FILE = "_hoodie_merge_base_file"     # the base file's name, on base rows and logged keys alike
DELETED = "_hoodie_merge_deleted"
LOGGED_ORDERING = "_hoodie_merge_ordering"
# Spark merges while the slices' logs are at most this big, so their keys are broadcast to the base
# files' tasks (a logged key takes about what its log record does), and at most this share of their
# base files: each log is read twice (keys, rows), and the logged rows cross from Python as the
# Arrow merge's rows do. Measured on bench-mor's 5M rows, both merges in one session: with 1% of
# the rows logged a narrow query took 0.66x the Arrow merge's time and an all-columns one 1.1x;
# with 20% logged (past both limits) they took 1.45x and 1.75x.
MAX_LOG_BYTES = 64 << 20
MAX_LOG_SHARE = 0.1


def merges_in_spark(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> bool:
    """Whether Spark merges the slices with logs: their base files carry the record key (meta
    columns), the ordering field is a column, the logs are small beside the base files, and
    Spark's Hadoop layer opens the storage. Partial updates and CUSTOM mergers take columns from
    the base rows they update, which only the Arrow merge has in hand."""
    how = plan.merge
    if (how is None or how.skip_merge or how.keygen is not None or how.spec.partial or how.spec.custom
            or RECORD_KEY not in plan.schema.names):
        return False
    if how.spec.ordered and not set(how.spec.ordering_fields) <= set(plan.schema.names):
        return False
    slices = plan.merged_slices
    names = [posixpath.basename(s.base_file.path) for s in slices if s.base_file]
    if len(set(names)) < len(names):
        # The join tells base files apart by name. Hudi's NBCC buckets share their file id across
        # partitions, so one compaction task (one write token) can name two partitions' base files alike.
        return False
    logs = sum(f.size for s in slices for f in s.log_files)
    bases = sum(s.base_file.size for s in slices if s.base_file)
    return logs <= min(MAX_LOG_BYTES, MAX_LOG_SHARE * bases) and spark_opens(spark, table.storage)


def merged_frame(spark: SparkSession, table: HoodieTable, plan: ReadPlan, base: DataFrame | None) -> DataFrame:
    """The merged slices' snapshot rows; ``base`` scans their base files in ``plan.schema`` with
    each row's file name in :data:`BASE_FILE` (None when no merged slice has a base file)."""
    slices = plan.merged_slices
    logged = task_indexes(spark, len(slices)).mapInArrow(
        _LoggedRows(table.storage, plan), from_arrow_schema(_nullable(plan.schema)))
    if base is None:
        return logged
    with_base = [s for s in slices if s.base_file is not None]
    keys_schema = _keys_schema(plan)
    keys = task_indexes(spark, len(with_base)).mapInArrow(
        _LoggedKeys(table.storage, plan, tuple(with_base), keys_schema), from_arrow_schema(keys_schema))
    keys = F.broadcast(keys)
    survives = F.col(DELETED).isNull()
    fields = plan.merge.spec.ordering_fields
    if LOGGED_ORDERING in keys_schema.names:
        # An update, or a delete carrying its ordering value, older than the base row leaves it; a
        # delete without one (null) removes it. Spark compares structs field by field, as Hudi does.
        stored = F.col(fields[0]) if len(fields) == 1 else F.struct(*[F.col(f) for f in fields])
        survives = survives | (F.col(LOGGED_ORDERING) < stored)
    kept = (base.join(keys, [BASE_FILE, RECORD_KEY], "left_outer")
            .filter(F.coalesce(survives, F.lit(False)))
            .select(*plan.schema.names))
    return kept.unionByName(logged)


def _keys_schema(plan: ReadPlan) -> pa.Schema:
    spec = plan.merge.spec
    fields = [pa.field(BASE_FILE, pa.string()), pa.field(RECORD_KEY, pa.string()), pa.field(DELETED, pa.bool_())]
    if spec.ordered:
        types = [plan.schema.field(name).type for name in spec.ordering_fields]
        fields.append(pa.field(LOGGED_ORDERING, types[0] if len(types) == 1 else
                               pa.struct(list(zip(spec.ordering_fields, types)))))
    return pa.schema(fields)


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


class _LoggedKeys:
    """Executor side: the keys each slice's log touches, a slice per index received."""

    def __init__(self, storage: Storage, plan: ReadPlan, slices: tuple, schema: pa.Schema):
        self.storage, self.plan, self.slices, self.schema = storage, plan, slices, schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fields = self.plan.merge.spec.ordering_fields
        for index in received_indexes(batches):
            file_slice = self.slices[index]
            log = combined_log(self.storage, file_slice, self.plan.schema, self.plan.merge)
            if log is None or log.num_rows == 0:
                continue
            name = posixpath.basename(file_slice.base_file.path)
            columns = [pa.array([name] * log.num_rows, pa.string()), log[RECORD_KEY].combine_chunks(),
                       pa.array(is_delete(log))]
            if LOGGED_ORDERING in self.schema.names:
                columns.append(log[fields[0]].combine_chunks() if len(fields) == 1 else
                               ordering_struct(log, fields))
            yield from pa.table(columns, schema=self.schema).to_batches()


class _LoggedRows:
    """Executor side: the rows each slice's log writes, a slice per index received."""

    def __init__(self, storage: Storage, plan: ReadPlan):
        self.storage, self.plan = storage, plan
        self.schema = _nullable(plan.schema)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        slices = self.plan.merged_slices
        for index in received_indexes(batches):
            rows = logged_rows(self.storage, slices[index], self.plan.schema, self.plan.merge)
            yield from rows.cast(self.schema).to_batches()
