"""``read(spark, base_path, options)``: Hudi queries as Spark DataFrames.

Copy-on-write slices are plain parquet, so Spark's own vectorized reader scans them; the plan
(which files, which commit window) is Hudi's and comes from :mod:`.plan`.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..schema.avro import META_FIELDS
from ..table.meta_client import HoodieTable
from .plan import ReadPlan, plan_read

COMMIT_TIME = META_FIELDS[0]


def read(spark: SparkSession, base_path: str, options: dict | None = None) -> DataFrame:
    table = HoodieTable.load(base_path)
    plan = plan_read(table, options)
    return scan(spark, table, plan)


def scan(spark: SparkSession, table: HoodieTable, plan: ReadPlan) -> DataFrame:
    schema = from_arrow_schema(plan.schema)
    paths = [table.storage.uri(p) for p in plan.base_paths]
    if not paths:
        return spark.createDataFrame([], schema)
    df = spark.read.schema(schema).parquet(*paths)
    if plan.begin is not None:
        df = df.filter((F.col(COMMIT_TIME) > F.lit(plan.begin)) & (F.col(COMMIT_TIME) <= F.lit(plan.end)))
    return df

