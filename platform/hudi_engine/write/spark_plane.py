"""A write's data steps as Spark jobs: executors tag, route, merge and write; the driver sees only
counts and write stats."""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from ..file_group.tasks import STAT_SCHEMA
from ..index.tagging import BUCKET_COLUMN, tag
from ..keygen.spark_columns import key_columns
from ..merge.record_merger import OP_COLUMN
from ..schema.meta_fields import PARTITION_PATH, RECORD_KEY
from .planner import GroupKey, InsertBucket, Target
from .routing import assign_inserts
from .tasks import NULL_ORDERING_ADVICE, TARGET, BulkInsert, Prepare

if TYPE_CHECKING:
    from .writer import WriteJob


class SparkPlane:
    def __init__(self, job: "WriteJob", df: DataFrame):
        self.job, self.df, self.spark = job, df, df.sparkSession
        self._held: list[DataFrame] = []     # the tagging's persisted input, until tagged rows are cached
        # Prepared rows that cost less to compute again than to cache: keys made in the JVM from an
        # input Spark already holds in its cache (the streamer's batch, a cached frame).
        self._recomputable: list[DataFrame] = []

    def prepared(self, prepare: Prepare) -> DataFrame:
        """The input with its keys: made by Spark expressions where they equal the Python
        generator's text (``keygen.spark_columns``), else by a Python pass over every row."""
        prepared = self._jvm_prepared(prepare)
        if prepared is None:
            return self.df.mapInArrow(prepare, self._internal_schema())
        if _reads_cache(self.df):
            self._recomputable.append(prepared)
        return prepared

    def _jvm_prepared(self, prepare: Prepare) -> DataFrame | None:
        df = self.df
        data = [f for f in df.schema.fields if f.name != OP_COLUMN]
        ordering = prepare.ordering_fields if prepare.ordering_fields and not prepare.delete_op else ()
        if any(f not in {d.name for d in data} for f in ordering):
            return None         # a nested ordering field: the Python pass refuses it by name
        op = (F.coalesce(F.col(OP_COLUMN), F.lit("U")) if OP_COLUMN in df.columns
              else F.lit(prepare.default_op))
        checks = []
        for field in ordering:
            null = _column(field).isNull()
            if OP_COLUMN in df.columns:
                null = null & (op != "D")
            checks.append((null, f"ordering field '{field}' is null in record ", "; " + NULL_ORDERING_ADVICE))
        keys = key_columns(prepare.keygen, StructType(data), checks)
        if keys is None:
            return None
        return df.select(*[_column(f.name) for f in data], keys.key.alias(RECORD_KEY),
                         keys.path.alias(PARTITION_PATH), op.alias(OP_COLUMN))

    def _internal_schema(self) -> StructType:
        fields = [f for f in self.df.schema.fields if f.name != OP_COLUMN]
        return StructType(fields + [StructField(RECORD_KEY, StringType()),
                                                   StructField(PARTITION_PATH, StringType()),
                                                   StructField(OP_COLUMN, StringType())])

    def tag(self, prepared: DataFrame) -> DataFrame:
        job = self.job
        if not self._is_recomputable(prepared):
            prepared = prepared.persist()
            self._held.append(prepared)
        with job.step("keys and partitions of the input"):
            return tag(self.spark, job.table.storage, job.latest, prepared, job.cfg, TARGET)

    def untagged(self, prepared: DataFrame) -> DataFrame:
        return self._like(prepared, prepared.withColumn(TARGET, F.lit(None).cast("string")))

    def found(self, tagged: DataFrame, stored: bool) -> DataFrame:
        return self._like(tagged, tagged.filter(F.col(TARGET).isNotNull() if stored else F.col(TARGET).isNull()))

    def _is_recomputable(self, rows: DataFrame) -> bool:
        return any(rows is r for r in self._recomputable)

    def _like(self, source: DataFrame, derived: DataFrame) -> DataFrame:
        """``derived``, recomputable if ``source`` is (a projection or filter of it)."""
        if self._is_recomputable(source):
            self._recomputable.append(derived)
        return derived

    @contextmanager
    def kept(self, rows: DataFrame) -> Iterator[DataFrame]:
        if self._is_recomputable(rows):
            # Each later step reads the cached input again and makes the keys anew, in the JVM.
            try:
                yield rows
            finally:
                self._release()
            return
        rows = rows.persist()
        try:
            yield rows
        finally:
            rows.unpersist()
            self._release()

    def _release(self) -> None:
        for df in self._held:
            df.unpersist()
        self._held.clear()

    def count_by(self, rows: DataFrame, columns: list[str]) -> list[tuple]:
        with self.job.step("index lookup" if TARGET in columns else "keys and partitions of the input"):
            counts = [tuple(r) for r in rows.groupBy(*columns).count().collect()]
        self._release()   # the counted rows are cached now and hold what later steps read
        return counts

    def distinct(self, rows: DataFrame, column: str) -> list:
        return [r[0] for r in rows.select(column).distinct().collect()]

    def dedup(self, prepared: DataFrame) -> DataFrame:
        from pyspark.sql.window import Window

        if self.job.partial or self.job.custom:
            # Partial updates and CUSTOM mergers combine a key's versions, in each file group's
            # merge task (all of a key's records go to one), not by a window that keeps only one.
            return prepared
        order = [F.col(name).desc() for name in self.job.ordering]
        w = Window.partitionBy(RECORD_KEY, PARTITION_PATH).orderBy(*order, F.monotonically_increasing_id().desc())
        return prepared.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").drop("_rn")

    def assign_inserts(self, inserts: DataFrame, buckets: Sequence[InsertBucket]) -> DataFrame:
        return assign_inserts(self.spark, inserts.drop(TARGET), buckets)

    def union(self, first: DataFrame, second: DataFrame) -> DataFrame:
        return first.unionByName(second)

    def with_buckets(self, prepared: DataFrame, adder: Callable) -> DataFrame:
        # A copy: PySpark caches a DataFrame's schema, and ``add`` would change it in place.
        return prepared.mapInArrow(adder, StructType(prepared.schema.fields + [StructField(BUCKET_COLUMN, IntegerType())]))

    def routed(self, bucketed: DataFrame, routes: list[tuple[str, int, str]]) -> DataFrame:
        route_df = self.spark.createDataFrame(routes, f"{PARTITION_PATH} string, {BUCKET_COLUMN} int, {TARGET} string")
        return bucketed.join(F.broadcast(route_df), [PARTITION_PATH, BUCKET_COLUMN], "inner").drop(BUCKET_COLUMN)

    def merge_groups(self, rows: DataFrame, targets: dict[GroupKey, Target], appends: dict) -> list[dict]:
        fn = self.job.file_group_writer(targets, appends)
        # One task per file group, as Hudi's partitioner gives each bucket its own: merging is the
        # costly part and its shuffle is small, so Spark's size-based coalescing would leave cores idle.
        # A file group is its partition and file id (the same id names a bucket in every partition
        # under non-blocking concurrency control).
        by_group = rows.repartition(len(targets) + len(appends), PARTITION_PATH, TARGET)
        with self.job.step("merge and write file groups"):
            # PySpark counts a callable object's `self` as an argument: hand it a plain (key, data) function.
            grouped = by_group.groupBy(PARTITION_PATH, TARGET)
            return _collect(grouped.applyInArrow(lambda key, data: fn(key, data), STAT_SCHEMA))

    def bulk_insert(self, prepare: Prepare, sort_mode: str, parallelism: int) -> list[dict]:
        job = self.job
        if not job.combine() and sort_mode == "NONE":
            # Keys are made in the writing task itself: one pass of the rows through Python.
            source = self.df.repartition(parallelism) if parallelism > 0 else self.df
            with job.step("write new file groups"):
                return _collect(source.mapInArrow(BulkInsert(job.ctx, prepare), STAT_SCHEMA))
        prepared = self.prepared(prepare)
        if job.combine():
            prepared = self.dedup(prepared)
        if sort_mode == "GLOBAL_SORT":
            prepared = prepared.orderBy(PARTITION_PATH, RECORD_KEY)
        elif sort_mode == "PARTITION_SORT":
            prepared = prepared.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
        elif parallelism > 0:
            prepared = prepared.repartition(parallelism)
        with job.step("write new file groups"):
            return _collect(prepared.mapInArrow(BulkInsert(job.ctx), STAT_SCHEMA))


def _column(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


# Logical operators that only pick columns or rows, as a cached frame's projections and filters have.
_CHEAP_NODES = ("Project", "Filter", "SubqueryAlias")


def _reads_cache(df: DataFrame) -> bool:
    """Whether ``df`` is Spark's cache of rows, or columns and rows picked from it by deterministic
    JVM expressions: computing it again is a scan of the cache."""
    try:
        execution = df._jdf.queryExecution()
    except AttributeError:          # Spark Connect: no plan to look at
        return False
    node = execution.withCachedData()
    while node.getClass().getSimpleName() != "InMemoryRelation":
        if (node.getClass().getSimpleName() not in _CHEAP_NODES or not node.deterministic()
                or node.children().size() != 1):
            return False
        node = node.children().apply(0)
    # A Python UDF in a projection would run again: Spark plans it as its own EvalPython operator.
    return "EvalPython" not in execution.sparkPlan().toString()


def _collect(stats_df: DataFrame) -> list[dict]:
    return [json.loads(r[0]) for r in stats_df.collect()]
