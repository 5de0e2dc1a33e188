"""Running Hudi's index DDL (``sql/index_statements.py``) over the API: CREATE INDEX (a secondary
index when no type is given, as Hudi 1.x makes it), DROP INDEX and SHOW INDEXES."""
from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from ..services.indexes import create_index, drop_index, show_indexes
from .catalog import CatalogTable
from .index_statements import CreateIndex, DropIndex, IndexStatement

SHOW_INDEXES_SCHEMA = StructType([StructField(n, StringType(), False) for n in ("index_name", "col_name", "index_type")])


def result_schema(stmt: IndexStatement) -> StructType:
    return StructType([]) if isinstance(stmt, (CreateIndex, DropIndex)) else SHOW_INDEXES_SCHEMA


def run_index_statement(spark: SparkSession, stmt: IndexStatement, entry: CatalogTable,
                        options: dict[str, str]) -> DataFrame:
    if isinstance(stmt, CreateIndex):
        create_index(spark, entry.path, stmt.name, list(stmt.columns), stmt.index_type or "secondary_index",
                     {**options, **stmt.options}, stmt.if_not_exists, index_options=stmt.options)
    elif isinstance(stmt, DropIndex):
        drop_index(entry.path, stmt.name, stmt.if_exists, options)
    else:
        rows = [(r["index_name"], r["col_name"], r["index_type"]) for r in show_indexes(entry.path)]
        return spark.createDataFrame(rows, SHOW_INDEXES_SCHEMA)
    return spark.createDataFrame([], StructType([]))
