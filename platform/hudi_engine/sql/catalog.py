"""Hudi tables in the session's catalog (Spark's in-memory one, or the Hive Metastore in a
Hive-enabled session): a name to its base path and properties. Tables made by SQL and by
hive-sync alike are ``hudi`` data source tables there."""
from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlparse

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from ..errors import HoodieConfigError


@dataclass(frozen=True)
class CatalogTable:
    database: str
    table: str
    path: str
    properties: dict[str, str]
    managed: bool
    schema: StructType
    partition_columns: tuple[str, ...]
    comment: str | None

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"


def _session_catalog(spark: SparkSession):
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        raise HoodieConfigError("Hudi SQL statements need a classic SparkSession (not a Spark Connect client)")
    state = jsession.sessionState()
    return state, state.catalog()


def identifier(spark: SparkSession, name: str):
    state, _ = _session_catalog(spark)
    return state.sqlParser().parseTableIdentifier(name)


def lookup(spark: SparkSession, name: str) -> CatalogTable | None:
    """The Hudi table ``name`` names, or None (no such table, a temporary view, another format)."""
    state, catalog = _session_catalog(spark)
    ident = state.sqlParser().parseTableIdentifier(name)
    if catalog.isTempView(ident) or not catalog.tableExists(ident):
        return None
    meta = catalog.getTableMetadata(ident)
    provider = meta.provider()
    if not provider.isDefined() or provider.get().lower() != "hudi":
        return None
    converters = spark._jvm.scala.jdk.javaapi.CollectionConverters
    properties = dict(converters.asJava(meta.properties()))
    storage = dict(converters.asJava(meta.storage().properties()))
    path = storage.get("path") or meta.location().toString()
    comment = meta.comment()
    return CatalogTable(meta.identifier().database().get(), meta.identifier().table(), local_path(path),
                        properties, meta.tableType().name() == "MANAGED", StructType.fromJson(json.loads(meta.schema().json())),
                        tuple(converters.asJava(meta.partitionColumnNames())), comment.get() if comment.isDefined() else None)


def require(spark: SparkSession, name: str) -> CatalogTable:
    table = lookup(spark, name)
    if table is None:
        raise HoodieConfigError(f"{name} is not a Hudi table in this session's catalog "
                                "(CREATE TABLE ... USING hudi, or CREATE TABLE ... USING hudi LOCATION '<base path>')")
    return table


def add_columns(spark: SparkSession, table: CatalogTable, added: StructType) -> None:
    """New columns at the end of the entry's data columns (before its partition columns, which
    Spark keeps last): Spark's own ALTER TABLE puts them after those for a Python data source."""
    _, session_catalog = _session_catalog(spark)
    fields = table.schema.fields
    partitions = [f for f in fields if f.name in table.partition_columns]
    data = [f for f in fields if f.name not in table.partition_columns]
    jtype = spark._jvm.org.apache.spark.sql.types.DataType.fromJson(StructType(data + added.fields + partitions).json())
    session_catalog.alterTableSchema(identifier(spark, table.name), jtype)


def default_location(spark: SparkSession, name: str) -> str:
    """Where Spark puts a managed table of this name (under ``spark.sql.warehouse.dir``)."""
    _, catalog = _session_catalog(spark)
    ident = identifier(spark, name)
    return local_path(catalog.defaultTablePath(ident).toString())


def current_database(spark: SparkSession) -> str:
    return spark.catalog.currentDatabase()


def local_path(uri: str) -> str:
    """Spark's ``file:`` URIs as plain paths; other schemes (s3://, ...) as given."""
    parsed = urlparse(uri)
    return parsed.path if parsed.scheme == "file" else uri
