"""Merge-on-read snapshots merged by Spark itself: base files are scanned by Spark's parquet reader,
so a query's columns and filters reach them (a count, or a few columns, reads what a parquet scan
would), and Python reads only the logs. Per file slice Python gives

- the row numbers of the base rows the log replaces or deletes (:func:`.file_slice.replaced_positions`),
  from the log's keys, ordering values and delete markers and the base file's keys and ordering
  values, by the rule of :func:`hudi_engine.merge.record_merger.merge`, and
- the rows the log writes (:func:`.file_slice.logged_rows`);

Spark leaves the replaced rows out of its base scan (an anti join on base file name and row number,
the positions broadcast, so no key column is read by Spark) and adds the logged rows. The same
slices merged in Arrow give the same rows (the tests hold both to them).
"""
from __future__ import annotations

import posixpath
from typing import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..schema.meta_fields import RECORD_KEY
from ..spark_files import received_indexes, spark_opens, task_indexes
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .file_slice import logged_rows, replaced_positions
from .plan import ReadPlan

BASE_FILE = "_hoodie_merge_base_file"     # the base file's name, on base rows and replaced positions alike
ROW_INDEX = "_hoodie_merge_row_index"     # a base row's number in its file (Spark's _metadata.row_index)
# Spark merges while the slices' logs are at most this big: the positions of the base rows they
# replace are broadcast to the base files' tasks (about half a log record's bytes each).
MAX_LOG_BYTES = 256 << 20
_POSITIONS = pa.schema([pa.field(BASE_FILE, pa.string()), pa.field(ROW_INDEX, pa.int64())])


def merges_in_spark(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> bool:
    """Whether Spark merges the slices with logs: their base files carry the record key (meta
    columns), the ordering field is a column, the logs are not too big to broadcast what they
    replace, and Spark's Hadoop layer opens the storage. Partial updates and CUSTOM mergers take
    columns from the base rows they update, which only the Arrow merge has in hand."""
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
    return logs <= MAX_LOG_BYTES and spark_opens(spark, table.storage)


def merged_frame(spark: SparkSession, table: HoodieTable, plan: ReadPlan, base: DataFrame | None) -> DataFrame:
    """The merged slices' snapshot rows; ``base`` scans their base files in ``plan.schema`` with
    each row's file name in :data:`BASE_FILE` and row number in :data:`ROW_INDEX` (None when no
    merged slice has a base file)."""
    slices = plan.merged_slices
    logged = task_indexes(spark, len(slices)).mapInArrow(
        _LoggedRows(table.storage, plan), from_arrow_schema(_nullable(plan.schema)))
    if base is None:
        return logged
    with_base = tuple(s for s in slices if s.base_file is not None)
    replaced = task_indexes(spark, len(with_base)).mapInArrow(
        _ReplacedRows(table.storage, plan, with_base), from_arrow_schema(_POSITIONS))
    kept = base.join(F.broadcast(replaced), [BASE_FILE, ROW_INDEX], "left_anti").select(*plan.schema.names)
    return kept.unionByName(logged)


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


class _ReplacedRows:
    """Executor side: the base rows each slice's log replaces or deletes, a slice per index received."""

    def __init__(self, storage: Storage, plan: ReadPlan, slices: tuple):
        self.storage, self.plan, self.slices = storage, plan, slices

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for index in received_indexes(batches):
            file_slice = self.slices[index]
            positions = replaced_positions(self.storage, file_slice, self.plan.schema, self.plan.merge)
            if len(positions):
                name = posixpath.basename(file_slice.base_file.path)
                yield pa.record_batch([pa.array([name] * len(positions), pa.string()), pa.array(positions)],
                                      schema=_POSITIONS)


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
