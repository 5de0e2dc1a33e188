"""Hudi's Spark SQL through plain ``spark.sql(...)``: ``register`` (``hudi_engine.spark``) installs
this router on a classic session. A statement about a Hudi table (DDL, DML, CALL, time travel,
``hudi_table_changes``, a read by name) runs here, over the engine; any other statement goes to
Spark unchanged, and so does one Spark must parse itself (parameterized queries).

Sessions this process never saw (``spark.newSession()``, Spark Connect's) reach the same router
through the session extension (``jvm_router``): Spark's parser asks :meth:`Router.route` and runs a
Hudi statement with :meth:`Router.run`. While the router works on a statement, the statements it
hands Spark itself are not routed again (``routing``: py4j gives each Python thread a JVM thread of
its own, where the extension keeps count)."""
from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType
from py4j.protocol import Py4JError

from ..read.reader import read
from . import catalog, ddl, dml, indexes
from .index_statements import parse_index_statement
from .queries import plan_reads
from .statements import (AddColumns, Call, CreateTable, Delete, DropTable, Insert, Merge, ShowCreateTable, Statement, Update,
                         is_call, parse, parse_tree, statement)
from .table_options import catalog_options

log = logging.getLogger(__name__)
ROUTED = "_hudi_sql_router"
QUERY = "query"


@contextmanager
def routing(spark: SparkSession) -> Iterator[None]:
    """This thread works on a statement for the router: what it hands Spark meanwhile is Spark's."""
    bridge = _bridge(spark)
    if bridge is None:
        yield
        return
    bridge.enter()
    try:
        yield
    finally:
        bridge.exit()


def _bridge(spark: SparkSession):
    """The extension's ``lakehouse.hudi.HudiSql`` when ``jvm_router`` installed a handler in this JVM."""
    return BRIDGED.get(id(spark.sparkContext._jvm))


# The py4j JVM views jvm_router installed a handler in, and their ``lakehouse.hudi.HudiSql``
# (looked up once: each py4j class lookup is a round trip to the JVM).
BRIDGED: dict[int, Any] = {}


def install(spark: SparkSession) -> None:
    """Route ``spark.sql`` of this session (a Spark Connect session has no JVM here: left as it is)."""
    if getattr(spark, "_jsparkSession", None) is None or getattr(spark.sql, ROUTED, False):
        return
    spark_sql = spark.sql

    def sql(sqlQuery: str, args: Any = None, **kwargs: Any) -> DataFrame:
        if args is not None or kwargs:
            return spark_sql(sqlQuery, args, **kwargs)
        return Router(spark, spark_sql).run(sqlQuery)

    sql.__doc__ = spark_sql.__doc__
    setattr(sql, ROUTED, True)
    spark.sql = sql  # type: ignore[method-assign]


class Router:
    def __init__(self, spark: SparkSession, spark_sql):
        self.spark, self.spark_sql = spark, spark_sql

    def route(self, text: str) -> str | None:
        """What :meth:`run` would do with ``text``, without doing it: None when Spark runs it as it
        is, ``QUERY`` for a read of Hudi tables, else the JSON schema of the rows it returns."""
        with routing(self.spark):
            return self._route(text)

    def _route(self, text: str) -> str | None:
        if is_call(text):
            from .procedures import procedure
            call = parse(text)
            assert isinstance(call, Call)
            return procedure(call.procedure).output.json()
        index_stmt = parse_index_statement(text)
        if index_stmt is not None:
            return indexes.result_schema(index_stmt).json() if self._lookup(index_stmt.table) is not None else None
        tree = parse_tree(text)
        stmt = statement(tree) if tree is not None else None
        if isinstance(stmt, ShowCreateTable):
            return ddl.SHOW_CREATE_SCHEMA.json() if self._lookup(stmt.name) is not None else None
        if isinstance(stmt, CreateTable) or (stmt is not None and self._lookup(stmt.name) is not None):
            return StructType([]).json()
        if tree is not None and plan_reads(tree, self.locate, "__hudi_route_") is not None:
            return QUERY
        return None

    def run(self, text: str) -> DataFrame:
        with routing(self.spark):
            return self._run(text)

    def _run(self, text: str) -> DataFrame:
        if is_call(text):
            from .procedures import call_procedure     # only a CALL needs the procedures
            call = parse(text)
            assert isinstance(call, Call)
            return call_procedure(self.spark, call, self.locate_required)
        index_stmt = parse_index_statement(text)
        if index_stmt is not None:
            entry = catalog.require(self.spark, index_stmt.table)
            return indexes.run_index_statement(self.spark, index_stmt, entry, self._options(entry))
        tree = parse_tree(text)
        stmt = statement(tree) if tree is not None else None
        if isinstance(stmt, ShowCreateTable):
            entry = self._lookup(stmt.name)
            if entry is not None:
                return ddl.show_create(self.spark, entry)
        elif stmt is not None and self._execute(stmt):
            return self._empty()
        return self.query(text, tree)

    def query(self, text: str, tree=None) -> DataFrame:
        """``text`` run by Spark, with reads of Hudi tables turned into views over ``read()``."""
        with routing(self.spark):
            return self._query(text, tree)

    def _query(self, text: str, tree=None) -> DataFrame:
        tree = tree if tree is not None else parse_tree(text)
        planned = plan_reads(tree, self.locate, f"__hudi_{uuid.uuid4().hex[:12]}_") if tree is not None else None
        if planned is None:
            return self.spark_sql(text)
        rewritten, views = planned
        try:
            for view, table_read in views.items():
                read(self.spark, table_read.path, table_read.options,
                     pruning_filters=table_read.filters).createOrReplaceTempView(view)
            log.debug("Hudi reads as views: %s", rewritten)
            return self.spark_sql(rewritten)
        finally:
            for view in views:
                self.spark.catalog.dropTempView(view)

    def _execute(self, stmt: Statement) -> bool:
        """Run ``stmt`` when it is about a Hudi table; False leaves it to Spark."""
        assert not isinstance(stmt, (Call, ShowCreateTable))
        if isinstance(stmt, CreateTable):
            ddl.create(self.spark, stmt, self.spark_sql, self.query)
            return True
        entry = self._lookup(stmt.name)
        if entry is None:
            return False
        if isinstance(stmt, DropTable):
            ddl.drop(self.spark, stmt, entry, self.spark_sql)
            return True
        options = self._options(entry)
        if isinstance(stmt, AddColumns):
            ddl.add_columns(self.spark, stmt, entry, self.spark_sql, options)
            return True
        target = dml.Target(entry, options)
        if isinstance(stmt, Insert):
            dml.insert(self.spark, stmt, target, self.query)
        elif isinstance(stmt, Update):
            dml.update(self.spark, stmt, target)
        elif isinstance(stmt, Delete):
            dml.delete(self.spark, stmt, target)
        elif isinstance(stmt, Merge):
            dml.merge(self.spark, stmt, target, self.query)
        return True

    def _options(self, entry: catalog.CatalogTable) -> dict[str, str]:
        """The table's catalog properties, then the session's ``SET hoodie.*`` values, as Hudi reads them."""
        session = {k: v for k, v in self.spark.conf.getAll.items() if k.startswith("hoodie.")}
        return {**catalog_options(entry.properties, entry.table, entry.database), **session}

    def _lookup(self, name: str) -> catalog.CatalogTable | None:
        try:
            return catalog.lookup(self.spark, name)
        except Py4JError as e:       # a name Spark cannot read as a table identifier: Spark reports it
            log.debug("catalog lookup of %s failed: %s", name, e)
            return None

    def locate(self, name: str) -> str | None:
        entry = self._lookup(name)
        return entry.path if entry is not None else None

    def locate_required(self, name: str) -> str:
        return catalog.require(self.spark, name).path

    def _empty(self) -> DataFrame:
        return self.spark.createDataFrame([], StructType([]))
