"""``read(spark, base_path, options)``: Hudi queries as Spark DataFrames.

Base files are plain parquet, so Spark's own vectorized reader scans them where its Hadoop layer
opens the storage (Arrow does elsewhere: :mod:`hudi_engine.spark_files`), those of file slices with
log files too, with the logs merged in by Spark (:mod:`.merged_scan`); where Spark cannot scan them,
each such slice is merged by one task in Arrow (:mod:`.file_slice`). The plan (which files, which
commit window, how to merge) is Hudi's and comes from :mod:`.plan`.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..config import report_unknown
from ..expr.skipping import Predicate, lenient_predicates, predicates, time_zone_safe, to_expression
from ..schema.meta_fields import COMMIT_TIME
from ..spark_files import parquet_frame, received_indexes, task_indexes
from ..spark_jobs import storage_scope
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .cdc import read_cdc
from .file_slice import read_file_slice
from .merged_scan import BASE_FILE, ROW_INDEX, merged_frame, merges_in_spark
from .plan import ReadPlan, is_cdc_query, plan_read, table_schema


def read(spark: SparkSession, base_path: str, options: dict | None = None, filters=None, *,
         pruning_filters=None) -> DataFrame:
    """A query of the table. ``filters``: ``(column, op, value)`` triples (as hudi-rs takes them;
    the column may be a function of one, ``"from_unixtime(ts, 'yyyy-MM-dd')"``), all of which rows
    must satisfy; they also prune what is read (partitions, and with the metadata table, file groups
    by record index, files by column stats and expression indexes). ``pruning_filters``: more that
    only prune, the caller filtering rows itself (a SQL query's WHERE); ones that do not apply to
    the table are ignored. Filters on date and time functions prune only in a UTC session."""
    report_unknown(options)
    with storage_scope(spark, options):
        table = HoodieTable.load(base_path)
        if is_cdc_query(options):
            return read_cdc(spark, table, options)
        plan = plan_read(table, options, _pruning(spark, table, filters, pruning_filters))
        df = scan(spark, table, plan)
    for pred in predicates(filters, plan.schema):
        df = df.filter(to_expression(pred))
    return df


def _pruning(spark: SparkSession, table: HoodieTable, filters, pruning_filters) -> list[Predicate] | None:
    if not filters and not pruning_filters:
        return None
    schema = table_schema(table)
    preds = predicates(filters, schema) + lenient_predicates(pruning_filters, schema)
    # Without a default, Spark answers the zone in effect (the JVM's when the session sets none).
    return time_zone_safe(preds, spark.conf.get("spark.sql.session.timeZone")) or None


def scan(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> DataFrame:
    schema = from_arrow_schema(plan.schema)
    df = None
    if plan.merged_slices:
        if merges_in_spark(spark, table, plan):
            paths = [s.base_file.path for s in plan.merged_slices if s.base_file]
            df = merged_frame(spark, table, plan, _base_frame(spark, table, plan, paths, with_file=True))
        else:
            df = _merged_scan(spark, table, plan)
    base = _base_frame(spark, table, plan, plan.base_paths)
    if base is not None:
        df = base if df is None else df.unionByName(base)
    if df is None:
        return spark.createDataFrame([], schema)
    if plan.commit_times is not None:
        df = df.filter(F.col(COMMIT_TIME).isin(list(plan.commit_times)))
    return df


def _base_frame(spark: SparkSession, table: HoodieTable, plan: ReadPlan, paths: list[str],
                with_file: bool = False) -> DataFrame | None:
    """The rows of these base files in the plan's columns (None for no files); ``with_file`` adds
    each row's file name and row number as :data:`.merged_scan.BASE_FILE` and :data:`.merged_scan.ROW_INDEX`."""
    schema = from_arrow_schema(plan.schema)
    extra = ([F.col("_metadata.file_name").alias(BASE_FILE), F.col("_metadata.row_index").alias(ROW_INDEX)]
             if with_file else [])
    df = None
    for read_schema, casts, group in _scan_groups(table, plan, paths):
        part = parquet_frame(spark, table.storage, group, read_schema)
        part = part.select(*[F.col(f.name).cast(schema[f.name].dataType).alias(f.name)
                             if f.name in casts else F.col(f.name) for f in plan.schema], *extra)
        df = part if df is None else df.unionByName(part)
    return df


class _ReadSlices:
    """Executor side of a merged scan: each task reads the slices whose indexes it receives."""

    def __init__(self, storage: Storage, plan: ReadPlan):
        self.storage, self.plan = storage, plan

    def __call__(self, batches):
        storage, plan = self.storage, self.plan
        slices = plan.merged_slices
        for index in received_indexes(batches):
            table = read_file_slice(storage, slices[index], plan.schema, plan.commit_times, plan.merge)
            yield from table.to_batches()


def _merged_scan(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> DataFrame:
    return task_indexes(spark, len(plan.merged_slices)).mapInArrow(_ReadSlices(table.storage, plan), from_arrow_schema(plan.schema))


def _scan_groups(table: HoodieTable, plan: ReadPlan, paths: list[str]) -> list[tuple[pa.Schema, set[str], list[str]]]:
    """Base files grouped by how they store the table's columns, one Spark scan per group.

    Some writers store a column with another primitive type than the table schema declares (Hudi
    1.x declares a timestamp-keygen partition field as string, yet older files keep the long);
    readers return the declared type, so each group scans its stored type and casts. Files of one
    commit share a writer schema, so one footer per commit tells: metadata only, no rows."""
    by_instant: dict[str, list[str]] = {}
    instants = {s.base_file.path: s.base_instant for s in plan.slices if s.base_file}
    for path in paths:
        by_instant.setdefault(instants[path], []).append(path)
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
