"""``read(spark, base_path, options)``: Hudi queries as Spark DataFrames.

Base files with nothing to merge are plain parquet, so Spark's own vectorized reader scans them
where its Hadoop layer opens the storage (Arrow does elsewhere: :mod:`hudi_engine.spark_files`);
file slices with log files are merged by one task each, in Arrow (:mod:`.file_slice`). The plan
(which files, which commit window, how to merge) is Hudi's and comes from :mod:`.plan`.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..expr.skipping import predicates, to_expression
from ..schema.meta_fields import COMMIT_TIME
from ..spark_files import parquet_frame, task_indexes
from ..spark_jobs import storage_scope
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .cdc import read_cdc
from .file_slice import read_file_slice
from .plan import ReadPlan, is_cdc_query, plan_read


def read(spark: SparkSession, base_path: str, options: dict | None = None, filters=None) -> DataFrame:
    """A query of the table. ``filters``: ``(column, op, value)`` triples (as hudi-rs takes them),
    all of which rows must satisfy; they also prune what is read (partitions, and with the metadata
    table, file groups by record index and files by column stats)."""
    with storage_scope(spark, options):
        table = HoodieTable.load(base_path)
        if is_cdc_query(options):
            return read_cdc(spark, table, options)
        plan = plan_read(table, options, filters)
        df = scan(spark, table, plan)
    for pred in predicates(filters, plan.schema):
        df = df.filter(to_expression(pred))
    return df


def scan(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> DataFrame:
    schema = from_arrow_schema(plan.schema)
    df = _merged_scan(spark, table, plan) if plan.merged_slices else None
    if not plan.base_paths:
        return df if df is not None else spark.createDataFrame([], schema)
    for read_schema, casts, paths in _scan_groups(table, plan):
        part = parquet_frame(spark, table.storage, paths, read_schema)
        if casts:
            part = part.select(*[F.col(f.name).cast(schema[f.name].dataType).alias(f.name)
                                 if f.name in casts else F.col(f.name) for f in plan.schema])
        df = part if df is None else df.unionByName(part)
    if plan.commit_times is not None:
        df = df.filter(F.col(COMMIT_TIME).isin(list(plan.commit_times)))
    return df


class _ReadSlices:
    """Executor side of a merged scan: each task reads the slices whose indexes it receives."""

    def __init__(self, storage: Storage, plan: ReadPlan):
        self.storage, self.plan = storage, plan

    def __call__(self, batches):
        storage, plan = self.storage, self.plan
        slices = plan.merged_slices
        for batch in batches:
            for index in batch.column(0).to_pylist():
                table = read_file_slice(storage, slices[index], plan.schema, plan.commit_times, plan.merge)
                yield from table.to_batches()


def _merged_scan(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> DataFrame:
    return task_indexes(spark, len(plan.merged_slices)).mapInArrow(_ReadSlices(table.storage, plan), from_arrow_schema(plan.schema))


def _scan_groups(table: HoodieTable, plan: ReadPlan) -> list[tuple[pa.Schema, set[str], list[str]]]:
    """Base files grouped by how they store the table's columns, one Spark scan per group.

    Some writers store a column with another primitive type than the table schema declares (Hudi
    1.x declares a timestamp-keygen partition field as string, yet older files keep the long);
    readers return the declared type, so each group scans its stored type and casts. Files of one
    commit share a writer schema, so one footer per commit tells: metadata only, no rows."""
    by_instant: dict[str, list[str]] = {}
    for s in plan.slices:
        if s.base_file and not plan.merges(s):
            by_instant.setdefault(s.base_instant, []).append(s.base_file.path)
    groups: dict[tuple, tuple[pa.Schema, set[str], list[str]]] = {}
    for paths in by_instant.values():
        stored = pq.read_schema(table.storage.full(paths[0]), filesystem=table.storage.fs)
        fields, casts = [], set()
        for field in plan.schema:
            index = stored.get_field_index(field.name)
            kept = stored.field(index) if index >= 0 else None
            if (kept is not None and kept.type != field.type and not pa.types.is_nested(kept.type)
                    and not pa.types.is_nested(field.type)):
                fields.append(pa.field(field.name, kept.type))
                casts.add(field.name)
            else:
                fields.append(field)
        key = tuple((f.name, str(f.type)) for f in fields if f.name in casts)
        groups.setdefault(key, (pa.schema(fields), casts, []))[2].extend(paths)
    return list(groups.values())
