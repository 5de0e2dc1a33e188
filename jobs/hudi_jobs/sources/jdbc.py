"""A database table as streamer batches (Hudi's JdbcSource): the whole table on the first run, then,
with ``incr.pull``, the rows whose incremental column has grown past the checkpoint.

PostgreSQL is read with psycopg, so no JDBC driver JAR is needed. The driver only plans: it asks
the catalog for the columns and fixes the batch's upper bound, the largest incremental value among
the next ``limit`` rows. One Spark task then streams exactly the rows up to that bound with COPY
and hands them back as bounded Arrow batches, so a retried task reads the same rows and no table
sits in one Python list. All rows sharing the bound's value are in the batch: a limit never
splits them (Hudi's plain ``LIMIT`` can, losing the rest). Any other database is read as Hudi
reads it, by Spark's JDBC reader with the configured driver class.

A batch is read once and kept (``localCheckpoint``) until written. Its checkpoint is its largest
incremental value as text, as Hudi stores it; with ``incr.pull=false`` the checkpoint is empty and
every run reads the whole table.
"""
from __future__ import annotations

import logging
from typing import Iterator, Mapping

import psycopg
import pyarrow as pa
from psycopg import sql
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieError

from ..keys import jdbc as K
from .base import Batch
from .postgres_connection import (JDBC_PREFIX, SCHEMES, PostgresSettings, PostgresUnavailableError, parse_url,
                                  read_password_file, with_login)
from .postgres_types import COLUMNS_QUERY, PARSE_ERRORS, PgColumn, struct_of, text_parser

log = logging.getLogger(__name__)

FETCH_SIZE_OPTION = "fetchsize"     # the one extra option that applies to PostgreSQL
DEFAULT_FETCH_SIZE = 10_000         # rows per Arrow batch a reading task hands back
_LIMIT_SCHEMES = ("mysql", "postgresql", "h2")   # where Hudi's queries add ORDER BY ... LIMIT


class IncrementalQueryError(HoodieError):
    """The incremental query failed; ``incr.fallback.to.full.fetch`` turns it into a full fetch."""


# --- options -------------------------------------------------------------------------------------

def scheme(url: str) -> str:
    """The database kind of a URL (``postgresql`` of jdbc:postgresql://...)."""
    text = url.strip()
    text = text[len(JDBC_PREFIX):] if text.startswith(JDBC_PREFIX) else text
    return text.split(":", 1)[0].lower()


def is_postgres(url: str) -> bool:
    return scheme(url) in SCHEMES


def incremental_pull(cfg: HoodieConfig) -> bool:
    """``incr.pull``, which Hudi requires: a whole-table copy every run and an incremental pull
    differ too much to pick one silently."""
    value = cfg.get_str(K.IS_INCREMENTAL)
    if value is None:
        raise HoodieConfigError(
            f"{K.IS_INCREMENTAL.key} is required, as in Hudi: true pulls only the rows whose "
            f"{K.INCREMENTAL_COLUMN.key} grew past the checkpoint, false reads the whole table every run")
    return value.lower() == "true"


def extra_options(props: Mapping[str, str]) -> dict[str, str]:
    """The ``extra.options.*`` properties without their prefix (the newer spelling wins)."""
    options: dict[str, str] = {}
    for prefix in reversed(K.EXTRA_OPTIONS_PREFIXES):
        options.update({k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix) and v})
    return options


def fetch_size(options: Mapping[str, str]) -> int:
    """Rows per Arrow batch when reading PostgreSQL: Spark JDBC's ``fetchsize``, the one extra
    option that means something without Spark's reader (the others are reported and ignored)."""
    ignored = sorted(k for k in options if k.lower() != FETCH_SIZE_OPTION)
    if ignored:
        log.warning(f"{', '.join(K.EXTRA_OPTIONS_PREFIX + k for k in ignored)}: Spark JDBC options, not used "
                    f"when PostgreSQL is read without a driver (only {FETCH_SIZE_OPTION} is)")
    value = next((v for k, v in options.items() if k.lower() == FETCH_SIZE_OPTION), None)
    if value is None:
        return DEFAULT_FETCH_SIZE
    if not value.strip().isdigit() or int(value) < 1:
        raise HoodieConfigError(f"{K.EXTRA_OPTIONS_PREFIX}{FETCH_SIZE_OPTION}={value!r} must be a positive "
                                "number of rows")
    return int(value)


def storage_level(name: str) -> StorageLevel:
    """Spark's level of a Hudi name; PySpark's levels are serialized already, so *_SER is the same."""
    return getattr(StorageLevel, name.upper().replace("_SER", ""))


def next_checkpoint(incremental: bool, upper: str | None, previous: str | None) -> str:
    """The checkpoint after a batch that read rows, as Hudi sets it: the largest incremental value
    read, else the previous checkpoint; always empty without incr.pull."""
    if not incremental:
        return ""
    return upper if upper is not None else previous or ""


# --- the source ----------------------------------------------------------------------------------

class JdbcSource:
    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        """``schema_avro`` is not used: rows keep the table's column types, as in Hudi."""
        cfg = HoodieConfig(props)
        url = cfg.require(K.URL, "JdbcSource reads from that database (jdbc:postgresql://host:5432/db, ...)")
        table = cfg.require(K.TABLE_NAME, "JdbcSource pulls that table (table or schema.table)")
        self.incremental = incremental_pull(cfg)
        self.column = cfg.get_str(K.INCREMENTAL_COLUMN)
        if self.incremental and not self.column:
            raise HoodieConfigError(
                f"{K.INCREMENTAL_COLUMN.key} is required with {K.IS_INCREMENTAL.key}=true: the column whose "
                f"growing values mark new rows (an id, an updated-at timestamp)")
        self.fallback = cfg.get(K.FALLBACK_TO_FULL_FETCH)
        self.storage_level = storage_level(cfg.get_str(K.STORAGE_LEVEL))
        user, password = cfg.get_str(K.USER), cfg.get_str(K.PASSWORD)
        password_file = cfg.get_str(K.PASSWORD_FILE)
        options = extra_options(props)
        if is_postgres(url):
            settings = with_login(parse_url(url, K.URL.key), user, password, password_file, K.PASSWORD_FILE.key)
            self.reader = PostgresReader(settings, table, self.column, fetch_size(options))
        elif url.strip().startswith(JDBC_PREFIX):
            driver = cfg.require(K.DRIVER_CLASS, f"Spark's JDBC reader loads that driver for {url} "
                                                 "(its JAR must be in spark.jars)")
            if password is None:
                password = read_password_file(password_file, K.PASSWORD_FILE.key)
            login = {"user": user, "password": password}
            self.reader = SparkJdbcReader(url, table, self.column, driver,
                                          {**options, **{k: v for k, v in login.items() if v is not None}})
        else:
            raise HoodieConfigError(f"{K.URL.key}={url!r} is not a JDBC URL: write jdbc:<database>://..., "
                                    "e.g. jdbc:postgresql://host:5432/shop")

    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        """``limit`` counts rows (Hudi's sourceLimit); <= 0 reads everything there is."""
        after = checkpoint if self.incremental and checkpoint else None
        try:
            rows, upper, position = self.reader.read(spark, after, limit)
        except IncrementalQueryError as exc:
            if not self.fallback:
                raise
            log.warning(f"{exc}; falling back to a full fetch ({K.FALLBACK_TO_FULL_FETCH.key}=true)")
            rows, upper, position = self.reader.read(spark, None, limit)
        if rows is None:
            return Batch(None, checkpoint, lag_records=0, position=position)
        rows = rows.localCheckpoint(eager=True, storageLevel=self.storage_level)
        if upper is None and self.incremental:      # not planned (Spark's reader): take it from the rows
            count, upper = rows.agg(F.count(F.lit(1)), F.max(self.column).cast("string")).first()
            empty = count == 0
        else:
            empty = rows.isEmpty()
        if empty:
            return Batch(None, checkpoint, lag_records=0, position=position)
        return Batch(rows, next_checkpoint(self.incremental, upper, checkpoint), position=position)


# --- PostgreSQL: the driver plans, one task streams ------------------------------------------------

def upper_query(relation: str, column: str, after: str | None, limit: int) -> tuple[str, tuple]:
    """The largest incremental value among the next ``limit`` rows after ``after`` (all rows for
    a limit <= 0; from the start for ``after`` None), as text; NULL when there are none."""
    col = sql.Identifier(column)
    where = sql.SQL(" WHERE {} > %s").format(col) if after is not None else sql.SQL("")
    params = (after,) if after is not None else ()
    if limit <= 0:
        query = sql.SQL("SELECT max({c})::text FROM {t}{w}").format(c=col, t=sql.SQL(relation), w=where)
    else:
        query = sql.SQL("SELECT max({c})::text FROM (SELECT {c} FROM {t}{w} ORDER BY {c} LIMIT {n}) AS next_rows"
                        ).format(c=col, t=sql.SQL(relation), w=where, n=sql.Literal(limit))
    return query.as_string(), params


def rows_statement(relation: str, names: list[str], column: str | None, after: str | None, upper: str | None,
                   limit: int) -> tuple[str, tuple]:
    """The COPY statement a task streams. Bounded by ``upper`` when there is an incremental
    column: (after, upper], or on a full fetch everything up to it plus the rows whose column is
    NULL, which no incremental pull can see. Without a column a limit is a plain LIMIT, as in Hudi."""
    select = sql.SQL("SELECT {} FROM {}").format(sql.SQL(", ").join(map(sql.Identifier, names)), sql.SQL(relation))
    params: tuple = ()
    if column is not None and upper is not None:
        col = sql.Identifier(column)
        if after is not None:
            select += sql.SQL(" WHERE {c} > %s AND {c} <= %s").format(c=col)
            params = (after, upper)
        else:
            select += sql.SQL(" WHERE {c} <= %s OR {c} IS NULL").format(c=col)
            params = (upper,)
    elif column is None and limit > 0:
        select += sql.SQL(" LIMIT {}").format(sql.Literal(limit))
    return sql.SQL("COPY ({}) TO STDOUT").format(select).as_string(), params


def find_column(column: str, names: list[str], relation: str) -> str:
    """The table's column ``column`` names: as spelled, or folded to lower case as PostgreSQL folds
    unquoted names."""
    for candidate in (column, column.lower()):
        if candidate in names:
            return candidate
    raise HoodieConfigError(f"{K.INCREMENTAL_COLUMN.key}={column}: {relation} has no such column; its columns: "
                            f"{', '.join(names)}")


class PostgresReader:
    def __init__(self, settings: PostgresSettings, table: str, column: str | None, fetch_size: int):
        self.settings, self.table, self.column, self.fetch_size = settings, table, column, fetch_size

    def read(self, spark: SparkSession, after: str | None, limit: int) -> tuple[DataFrame | None, str | None, str]:
        """(the rows as a lazy DataFrame or None when nothing is new, the upper bound, a description)."""
        with self.settings.connect() as conn:
            try:
                relation, columns = self._describe(conn)
                names = [c.name for c in columns]
                column = find_column(self.column, names, relation) if self.column else None
                upper = self._upper(conn, relation, columns[names.index(column)], after, limit) if column else None
            except psycopg.OperationalError as exc:
                raise PostgresUnavailableError(f"{self.settings.describe()}: {exc}") from None
        position = (f"{relation} rows with {column} in ({after}, {upper}]" if after is not None
                    else f"{relation} rows with {column} <= {upper} or null" if upper is not None
                    else f"{relation} (full fetch)")
        if after is not None and upper is None:
            return None, None, position
        statement, params = rows_statement(relation, names, column, after, upper, limit)
        log.info(f"JdbcSource: reading {position} from {self.settings.describe()}")
        struct = struct_of(columns)
        task = CopyRows(self.settings, statement, params, struct, self.fetch_size, relation)
        return spark.range(0, 1, 1, 1).mapInArrow(task, struct), upper, position

    def _describe(self, conn) -> tuple[str, list[PgColumn]]:
        """The table's name as PostgreSQL quotes it, and its columns."""
        try:
            relation = conn.execute("SELECT to_regclass(%s)::text", (self.table,)).fetchone()[0]
        except (psycopg.ProgrammingError, psycopg.NotSupportedError) as exc:
            raise HoodieConfigError(f"{K.TABLE_NAME.key}={self.table!r} is not a table name: {exc}; "
                                    "write table or schema.table") from None
        if relation is None:
            raise HoodieConfigError(f"{K.TABLE_NAME.key}={self.table}: no such table or view in "
                                    f"{self.settings.describe()} (or the user may not see it); check the name "
                                    "(table or schema.table) and the URL's database")
        return relation, [PgColumn(*row) for row in conn.execute(COLUMNS_QUERY, (relation,))]

    def _upper(self, conn, relation: str, column: PgColumn, after: str | None, limit: int) -> str | None:
        query, params = upper_query(relation, column.name, after, limit)
        try:
            return conn.execute(query, params).fetchone()[0]
        except psycopg.errors.UndefinedFunction:
            raise HoodieConfigError(f"{K.INCREMENTAL_COLUMN.key}={column.name}: a column of type "
                                    f"{conn.execute('SELECT %s::regtype::text', (column.type_oid,)).fetchone()[0]} "
                                    "has no order to pull by; use a number, text, date or timestamp column") from None
        except (psycopg.DataError, psycopg.ProgrammingError) as exc:
            if after is None:
                raise
            raise IncrementalQueryError(
                f"the incremental query of {relation} failed for checkpoint {after!r} ({str(exc).splitlines()[0]}); "
                f"set {K.FALLBACK_TO_FULL_FETCH.key}=true to read the whole table instead, or restart from a "
                f"value of {column.name} with --checkpoint") from exc


class CopyRows:
    """``mapInArrow`` function over a one-row range: streams the COPY statement's rows and hands
    them back ``fetch_size`` at a time as Arrow record batches of ``struct``."""

    def __init__(self, settings: PostgresSettings, statement: str, params: tuple, struct: StructType,
                 fetch_size: int, relation: str):
        self.settings, self.statement, self.params = settings, statement, params
        self.struct, self.fetch_size, self.relation = struct, fetch_size, relation

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if not sum(b.num_rows for b in batches):
            return
        schema = to_arrow_schema(self.struct)
        parsers = [text_parser(f.dataType) for f in self.struct.fields]
        with self.settings.connect() as conn, conn.cursor() as cursor:
            with cursor.copy(self.statement, self.params) as copy:
                chunk: list[tuple] = []
                for row in copy.rows():
                    chunk.append(row)
                    if len(chunk) >= self.fetch_size:
                        yield self._batch(chunk, schema, parsers)
                        chunk = []
                if chunk:
                    yield self._batch(chunk, schema, parsers)

    def _batch(self, rows: list[tuple], schema: pa.Schema, parsers: list) -> pa.RecordBatch:
        arrays = []
        for i, (field, parse) in enumerate(zip(self.struct.fields, parsers)):
            try:
                arrays.append(pa.array([None if r[i] is None else parse(r[i]) for r in rows], schema.field(i).type))
            except (*PARSE_ERRORS, pa.ArrowException) as exc:
                raise HoodieError(f"column {field.name} of {self.relation}: a value does not fit "
                                  f"{field.dataType.simpleString()} ({exc})") from None
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


# --- any other database: Spark's JDBC reader, as Hudi reads it --------------------------------------

def spark_query(table: str, column: str | None, after: str | None, limit: int, url: str) -> str:
    """Hudi's JdbcSource query (as ``dbtable``): rows after the checkpoint, and ORDER BY ... LIMIT
    for the databases Hudi adds it for."""
    query = f"SELECT * FROM {table}"
    if after is not None:
        query += f" WHERE {column} > '{after.replace(chr(39), chr(39) * 2)}'"
    if limit > 0 and scheme(url) in _LIMIT_SCHEMES:
        query += (f" ORDER BY {column}" if column else "") + f" LIMIT {limit}"
    return f"({query}) rdbms_table"


class SparkJdbcReader:
    def __init__(self, url: str, table: str, column: str | None, driver: str, options: Mapping[str, str]):
        self.url, self.table, self.column, self.driver, self.options = url, table, column, driver, options

    def read(self, spark: SparkSession, after: str | None, limit: int) -> tuple[DataFrame, None, str]:
        columns = self._load(spark, self.table).columns
        if self.column and self.column.lower() not in [c.lower() for c in columns]:
            raise HoodieConfigError(f"{K.INCREMENTAL_COLUMN.key}={self.column}: {self.table} has no such column; "
                                    f"its columns: {', '.join(columns)}")
        query = spark_query(self.table, self.column, after, limit, self.url)
        log.info(f"JdbcSource: reading {query} from {self.url}")
        try:
            rows = self._load(spark, query)
        except Exception as exc:
            if after is None:
                raise
            raise IncrementalQueryError(
                f"the incremental query {query} failed ({_first_line(exc)}); set {K.FALLBACK_TO_FULL_FETCH.key}=true "
                "to read the whole table instead, or restart from a value of the column with --checkpoint") from exc
        where = f" rows with {self.column} > {after}" if after is not None else " (whole table)"
        return rows, None, f"{self.table}{where}"

    def _load(self, spark: SparkSession, dbtable: str) -> DataFrame:
        reader = (spark.read.format("jdbc").options(**self.options)
                  .option("url", self.url).option("driver", self.driver).option("dbtable", dbtable))
        try:
            return reader.load()
        except Exception as exc:
            if "ClassNotFoundException" in _first_line(exc):
                raise HoodieConfigError(
                    f"{K.DRIVER_CLASS.key}={self.driver}: the JDBC driver is not on Spark's classpath; add its "
                    "JAR with spark.jars (or --jars), or use a jdbc:postgresql:// URL, which needs no driver") \
                    from None
            raise


def _first_line(exc: Exception) -> str:
    """The Java exception's own line of a Py4J error (its text carries the whole stack)."""
    java = getattr(exc, "java_exception", None)
    text = (java.toString() if java is not None else str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
