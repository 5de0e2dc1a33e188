"""CREATE TABLE ... USING hudi (with columns, AS SELECT, or over an existing table's LOCATION),
DROP TABLE and ALTER TABLE ... ADD COLUMNS, as Hudi's Spark SQL does them: the table on storage
and its entry in the session's catalog (a ``hudi`` data source table) kept together."""
from __future__ import annotations

import logging
from typing import Callable

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from .. import config as C
from ..api.writes import write
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..keygen import partition_field_names
from ..read.plan import table_schema
from ..schema.meta_fields import META_FIELDS, without_meta_fields
from ..storage import Storage
from ..table.meta_client import HoodieTable
from ..write.writer import create_table as create_on_storage
from . import catalog
from .statements import AddColumns, CreateTable, DropTable
from .table_options import hoodie_options

log = logging.getLogger(__name__)
SparkSql = Callable[[str], DataFrame]


def create(spark: SparkSession, stmt: CreateTable, spark_sql: SparkSql, query: SparkSql) -> None:
    """``spark_sql`` runs Spark's own statements (the catalog entry); ``query`` runs the CTAS query
    as the router does, so it may read Hudi tables by name."""
    if spark.catalog.tableExists(stmt.name):
        if stmt.if_not_exists:
            return
        raise HoodieConfigError(f"table {stmt.name} already exists; use CREATE TABLE IF NOT EXISTS, or DROP it first")
    database, table = _split(spark, stmt.name)
    location = stmt.location or catalog.default_location(spark, stmt.name)
    existing = HoodieTable.exists(location)
    if existing and stmt.query is not None:
        raise HoodieConfigError(f"CREATE TABLE {stmt.name} AS SELECT: {location} already holds a Hudi table; "
                                "create the table over it without AS SELECT, then INSERT INTO it")
    rows = query(stmt.query) if stmt.query is not None else None
    if existing:
        hudi = HoodieTable.load(location)
        schema = without_meta_fields(table_schema(hudi))
        _check_declared(stmt, schema, location)
        options = hudi.props
        properties = {**_declared_identity(hudi), **stmt.properties}
        partitions = partition_field_names(hudi.config.get_list(C.PARTITION_FIELDS))
    else:
        schema = _schema(spark, stmt, rows)
        options = hoodie_options({**stmt.options, **stmt.properties}, table, database, stmt.partitioned_by)
        properties = dict(stmt.properties)
        partitions = stmt.partitioned_by
    spark_sql(_catalog_ddl(stmt, schema, properties, partitions, location if stmt.location else None))
    if existing:
        return
    try:
        if rows is not None:
            write(rows, location, {**options, C.OPERATION.key: "bulk_insert"})
        else:
            create_on_storage(location, HoodieConfig(options), schema)
    except Exception:
        spark_sql(f"DROP TABLE IF EXISTS {_quoted(database, table)}")
        raise


def drop(spark: SparkSession, stmt: DropTable, entry: catalog.CatalogTable, spark_sql: SparkSql) -> None:
    """Hudi's meaning: a managed table's files go with it, an external one's stay unless PURGE."""
    if entry.managed or stmt.purge:
        Storage(entry.path).delete_dir("")
        log.info("dropped %s and its files at %s", entry.name, entry.path)
    spark_sql(f"DROP TABLE {_quoted(entry.database, entry.table)}")


def add_columns(spark: SparkSession, stmt: AddColumns, entry: catalog.CatalogTable, spark_sql: SparkSql,
                options: dict[str, str]) -> None:
    """New nullable columns at the end, as Hudi's schema evolution adds them: an empty commit whose
    schema has them, then the catalog entry."""
    current = without_meta_fields(table_schema(HoodieTable.load(entry.path)))
    taken = {n.lower() for n in current.names}
    clash = [c.name for c in stmt.columns if c.name.lower() in taken]
    if clash:
        raise HoodieConfigError(f"ALTER TABLE {stmt.name} ADD COLUMNS: {', '.join(clash)} already exist(s)")
    added = StructType.fromDDL(", ".join(_column_ddl(c.name, c.type, c.comment) for c in stmt.columns))
    schema = pa.schema([*current, *(f.with_nullable(True) for f in to_arrow_schema(added))])
    empty = spark.createDataFrame([], from_arrow_schema(schema))
    write(empty, entry.path, {**options, C.OPERATION.key: "upsert"})
    catalog.add_columns(spark, entry, added)


def _split(spark: SparkSession, name: str) -> tuple[str, str]:
    parts = name.split(".")
    return (parts[-2] if len(parts) > 1 else catalog.current_database(spark)), parts[-1]


def _schema(spark: SparkSession, stmt: CreateTable, rows: DataFrame | None) -> pa.Schema:
    if rows is not None:
        if stmt.columns:
            raise HoodieConfigError(f"CREATE TABLE {stmt.name} AS SELECT takes its columns from the query; "
                                    "drop the column list")
        return without_meta_fields(to_arrow_schema(rows.schema))
    if not stmt.columns:
        raise HoodieConfigError(f"CREATE TABLE {stmt.name} USING hudi needs columns, AS SELECT, or the "
                                "LOCATION of an existing Hudi table")
    ddl = ", ".join(f"`{c.name}` {c.type}" for c in stmt.columns)
    return to_arrow_schema(StructType.fromDDL(ddl))


def _check_declared(stmt: CreateTable, schema: pa.Schema, location: str) -> None:
    declared = [c.name.lower() for c in stmt.columns]
    actual = [n.lower() for n in schema.names]
    if declared and declared != actual:
        raise HoodieConfigError(f"CREATE TABLE {stmt.name}: the columns given ({', '.join(declared)}) are not the "
                                f"table's at {location} ({', '.join(actual)}); leave the column list out")


def _declared_identity(table: HoodieTable) -> dict[str, str]:
    """An existing table's identity as TBLPROPERTIES, so SHOW CREATE TABLE states it."""
    cfg = table.config
    props = {"primaryKey": cfg.get_str(C.RECORDKEY_FIELDS) or "",
             "type": "mor" if table.table_type == "MERGE_ON_READ" else "cow"}
    if cfg.get_str(C.PRECOMBINE_FIELD):
        props["preCombineField"] = cfg.get_str(C.PRECOMBINE_FIELD) or ""
    return props


def _catalog_ddl(stmt: CreateTable, schema: pa.Schema, properties: dict[str, str], partitions: tuple[str, ...],
                 location: str | None) -> str:
    """Spark's own CREATE TABLE for the catalog entry: the meta columns first, as Hudi's tables show
    them; a table made without LOCATION stays managed (Spark places it where it was written)."""
    comments = {c.name.lower(): c.comment for c in stmt.columns}
    columns = [(m, "string", None) for m in META_FIELDS] + [
        (f.name, f.dataType.simpleString(), comments.get(f.name.lower())) for f in from_arrow_schema(schema).fields]
    return _table_ddl(stmt.name, columns, tuple(p for p in partitions if p in schema.names), stmt.comment,
                      location, properties)


def show_create(spark: SparkSession, entry: catalog.CatalogTable) -> DataFrame:
    """SHOW CREATE TABLE from the catalog entry (Spark shows a Python data source's table without
    its location or properties)."""
    columns = [(f.name, f.dataType.simpleString(), f.metadata.get("comment")) for f in entry.schema.fields]
    properties = {k: v for k, v in entry.properties.items() if not k.lower().startswith(_SPARK_INTERNAL)}
    text = _table_ddl(_quoted(entry.database, entry.table), columns, entry.partition_columns, entry.comment,
                      None if entry.managed else entry.path, properties)
    return spark.createDataFrame([(text,)], SHOW_CREATE_SCHEMA)


SHOW_CREATE_SCHEMA = StructType([StructField("createtab_stmt", StringType())])


_SPARK_INTERNAL = ("transient_lastddltime", "spark.sql.")


def _table_ddl(name: str, columns: list[tuple[str, str, str | None]], partitions: tuple[str, ...],
               comment: str | None, location: str | None, properties: dict[str, str]) -> str:
    parts = [f"CREATE TABLE {name} ({', '.join(_column_ddl(*c) for c in columns)}) USING hudi"]
    if partitions:
        parts.append(f"PARTITIONED BY ({', '.join(f'`{p}`' for p in partitions)})")
    if comment:
        parts.append(f"COMMENT {_string(comment)}")
    if location:
        parts.append(f"LOCATION {_string(location)}")
    if properties:
        parts.append("TBLPROPERTIES (" + ", ".join(f"{_string(k)} = {_string(v)}" for k, v in properties.items()) + ")")
    return " ".join(parts)


def _column_ddl(name: str, type_: str, comment: str | None) -> str:
    return f"`{name}` {type_}" + (f" COMMENT {_string(comment)}" if comment else "")


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _quoted(database: str, table: str) -> str:
    return f"`{database}`.`{table}`"
