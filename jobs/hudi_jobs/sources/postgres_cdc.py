"""A PostgreSQL table's changes by logical decoding (``PostgresCdcSource``), as Debezium-shaped
events that :func:`.debezium.flatten` turns into rows to upsert or delete: Debezium's Postgres
connector without Kafka.

How a batch stays exactly once: the replication slot keeps every change the Hudi table has not
committed. A fetch first moves the slot up to the checkpoint (the WAL end of the last transaction
committed to the table), then *peeks* at the changes after it, up to a WAL position fixed on the
driver, so a retried task reads the same transactions. Nothing is consumed until the next fetch
shows the batch was committed; a killed batch is read again.

On the first run the table's current rows are read (op ``r``) after the slot exists, so no change
falls between the two. Their ordering value ``_event_lsn`` is 0 (Debezium gives the snapshot's
position): any captured change of a row is newer than the snapshot's copy of it, so replaying the
changes that overlap the snapshot leaves each row as PostgreSQL has it.

Rows are read inside a Spark task, never on the driver; the driver asks only for positions and the
table's columns.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import LongType, StringType, StructField, StructType

from hudi_engine import config as C
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError

from ..keys import postgres_cdc as K
from .base import Batch, ErrorReason
from .debezium import LSN_COLUMN, POSTGRES_META, flatten
from .kafka import MESSAGE, RAW, REASON, split_errors
from .pgoutput import (UNCHANGED_TOAST, Begin, Commit, Delete, Insert, Relation, Truncate, Update, decode,
                       format_lsn, parse_lsn)
from .postgres_connection import PostgresSettings, parse_url, with_login
from .postgres_types import COLUMNS_QUERY, PARSE_ERRORS, PgColumn, struct_of, text_parser

log = logging.getLogger(__name__)

END_LSN = "__pg_end_lsn"               # set on one marker row per transaction: where the next batch starts
_ROWS_PER_BATCH = 5000                 # rows a reading task hands back at a time
_SOURCE = StructType([StructField(name, t) for name, t in (
    ("version", StringType()), ("connector", StringType()), ("name", StringType()), ("ts_ms", LongType()),
    ("snapshot", StringType()), ("db", StringType()), ("schema", StringType()), ("table", StringType()),
    ("txId", LongType()), ("lsn", LongType()), ("xmin", LongType()))])


@dataclass(frozen=True)
class Capture:
    """What a reading task needs: where to connect, which table and slot, and the columns the
    driver found in the catalog (the batch's schema)."""
    settings: PostgresSettings
    schema: str
    table: str
    slot: str
    publication: str
    columns: tuple[PgColumn, ...]

    def envelope(self) -> StructType:
        image = struct_of(list(self.columns))
        return StructType([StructField("op", StringType()), StructField("ts_ms", LongType()),
                           StructField("source", _SOURCE), StructField("before", image),
                           StructField("after", image), StructField(REASON, StringType()),
                           StructField(MESSAGE, StringType()), StructField(RAW, StringType()),
                           StructField(END_LSN, LongType())])


class PostgresCdcSource:
    ordering_field = LSN_COLUMN

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        cfg = HoodieConfig(props)
        url = cfg.require(K.URL, "PostgresCdcSource reads that database")
        self.settings = with_login(parse_url(url, K.URL.key), cfg.get_str(K.USER), cfg.get_str(K.PASSWORD),
                                   cfg.get_str(K.PASSWORD_FILE), K.PASSWORD_FILE.key)
        self.schema, self.table = _split_table(cfg.require(K.TABLE, "PostgresCdcSource captures that table"))
        self.qualified = f"{self.schema}.{self.table}"
        default_name = _identifier(f"hudi_{self.settings.dbname}_{self.schema}_{self.table}")
        self.slot = cfg.get_str(K.SLOT) or default_name
        self.publication = cfg.get_str(K.PUBLICATION) or default_name
        self.snapshot = cfg.get_str(K.SNAPSHOT_MODE) == K.SNAPSHOT_INITIAL
        self.max_changes = cfg.get(K.MAX_CHANGES)
        self.idle_advance = cfg.get(K.IDLE_ADVANCE_BYTES)
        self.record_key = cfg.get_list(C.RECORDKEY_FIELDS)
        self._checked = False

    # --- the batch ---------------------------------------------------------------------------------
    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        with self.settings.connect() as conn:
            if not self._checked:
                self._check_server(conn)
                self._checked = True
            # The batch's columns are read after its upper bound: a column added before it is in them.
            upper = parse_lsn(conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0])
            if checkpoint is None:
                capture = self._capture(conn)
                start = self._start(conn)
                if self.snapshot:
                    return self._batch(spark, capture, _snapshot_reader(capture, time.time_ns() // 1_000_000),
                                       format_lsn(start), f"snapshot of {self.qualified}")
                checkpoint = format_lsn(start)
            start = self._resume(conn, checkpoint)
            position = f"{self.qualified} changes after {checkpoint}"
            if not self._has_changes(conn, upper):         # an idle round: no catalog query, no Spark job
                moved = format_lsn(upper) if upper - start >= self.idle_advance else checkpoint
                return Batch(None, moved, lag_records=0, lag_seconds=0.0, position=position)
            capture = self._capture(conn)
        nchanges = limit if limit > 0 else self.max_changes
        return self._batch(spark, capture, _change_reader(capture, format_lsn(upper), nchanges), checkpoint, position)

    def _has_changes(self, conn, upper: int) -> bool:
        """Whether a transaction of the table waits before ``upper``: decoded on the server up to the
        first one, so an idle round costs no Spark job."""
        return conn.execute("SELECT count(*) FROM pg_logical_slot_peek_binary_changes(%s, %s::pg_lsn, 1, "
                            "'proto_version', '1', 'publication_names', %s)",
                            (self.slot, format_lsn(upper), self.publication)).fetchone()[0] > 0

    def _batch(self, spark: SparkSession, capture: Capture, reader, checkpoint: str, position: str) -> Batch:
        envelope = capture.envelope()
        events = spark.range(1, numPartitions=1).mapInArrow(reader, envelope).localCheckpoint(eager=True)
        end = events.agg(F.max(END_LSN)).first()[0]
        rows = flatten(events.where(F.col("op").isNotNull()).drop(END_LSN), POSTGRES_META, False)
        at = F.concat(F.lit(f"postgres:{self.qualified}@"), F.coalesce(F.col(LSN_COLUMN).cast("string"),
                                                                             F.lit("?")))
        data, errors = split_errors(rows, at)
        next_checkpoint = format_lsn(end) if end is not None else checkpoint
        return Batch(data, next_checkpoint, errors, lag_records=None, position=position, stable=True)

    # --- the server, the table, the slot -----------------------------------------------------------
    def _check_server(self, conn) -> None:
        where = self.settings.describe()
        wal_level = conn.execute("SHOW wal_level").fetchone()[0]
        if wal_level != "logical":
            raise HoodieConfigError(f"{where} has wal_level={wal_level}; change capture needs logical decoding: "
                                    "run ALTER SYSTEM SET wal_level = logical and restart the server")
        user, allowed = conn.execute("SELECT current_user, rolsuper OR rolreplication FROM pg_roles "
                                     "WHERE rolname = current_user").fetchone()
        if not allowed:
            raise HoodieConfigError(f"{where}: user {user} may not read replication slots; run ALTER ROLE "
                                    f"{user} REPLICATION (or connect as a user that has it, {K.USER.key})")

    def _capture(self, conn) -> Capture:
        return Capture(self.settings, self.schema, self.table, self.slot, self.publication, self._columns(conn))

    def _columns(self, conn) -> tuple[PgColumn, ...]:
        found = conn.execute("SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n "
                             "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
                             (self.schema, self.table)).fetchone()
        if found is None:
            raise HoodieConfigError(f"{K.TABLE.key}: table {self.schema}.{self.table} does not exist in "
                                    f"{self.settings.describe()}")
        oid, identity = found
        columns = tuple(PgColumn(*row) for row in conn.execute(COLUMNS_QUERY, (oid,)).fetchall())
        keys = [c.name for c in columns if c.primary_key]
        if identity == "n":
            raise HoodieConfigError(f"table {self.qualified} has REPLICA IDENTITY NOTHING, so its updates and deletes "
                                    f"cannot be captured: ALTER TABLE {self.qualified} REPLICA IDENTITY DEFAULT (with "
                                    "a primary key) or FULL")
        if not keys and identity != "f":
            raise HoodieConfigError(f"table {self.qualified} has no primary key, so its changes cannot be matched to "
                                    f"Hudi records: add a primary key (ALTER TABLE {self.qualified} ADD PRIMARY KEY "
                                    f"(...)), or set REPLICA IDENTITY FULL and {C.RECORDKEY_FIELDS.key} to "
                                    "columns that identify a row")
        if self.record_key and keys and sorted(self.record_key) != sorted(keys) and identity != "f":
            raise HoodieConfigError(f"{C.RECORDKEY_FIELDS.key}={','.join(self.record_key)} is not the primary "
                                    f"key of {self.qualified} ({','.join(keys)}): deletes carry only the primary key, "
                                    "so the record key must be it (or set REPLICA IDENTITY FULL on the table)")
        return columns

    def _start(self, conn) -> int:
        """The slot's position, creating the publication and the slot when missing."""
        self._ensure_publication(conn)
        slot = self._slot(conn)
        if slot is None:
            lsn = conn.execute("SELECT lsn::text FROM pg_create_logical_replication_slot(%s, 'pgoutput')",
                               (self.slot,)).fetchone()[0]
            log.info(f"created replication slot {self.slot} at {lsn}")
            return parse_lsn(lsn)
        log.info(f"replication slot {self.slot} exists; capturing from its position {format_lsn(slot)}")
        return slot

    def _resume(self, conn, checkpoint: str) -> int:
        """Moves the slot up to the committed checkpoint; refuses when changes after it are gone."""
        try:
            at = parse_lsn(checkpoint)
        except ValueError:
            raise HoodieConfigError(f"checkpoint {checkpoint!r} is not a WAL position of {K.SLOT.key}; was the "
                                    "table written by another source?") from None
        slot = self._slot(conn)
        if slot is None:
            raise HoodieConfigError(f"replication slot {self.slot} no longer exists, so the changes of {self.qualified} "
                                    f"after checkpoint {checkpoint} are lost to this pipeline; nothing was "
                                    "written. Rebuild the table from a new snapshot: delete the Hudi table (or "
                                    "give the pipeline a new one) and run again")
        if slot > at:
            raise HoodieConfigError(f"replication slot {self.slot} is at {format_lsn(slot)}, past the table's "
                                    f"checkpoint {checkpoint}: another consumer took the changes in between. "
                                    f"Give each pipeline its own slot ({K.SLOT.key}); rebuild this table from a "
                                    "new snapshot")
        if slot < at:
            conn.execute("SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (self.slot, checkpoint))
        if not self._publication_exists(conn):
            raise HoodieConfigError(f"publication {self.publication} was dropped; the slot cannot decode without "
                                    f"it. Recreate it (CREATE PUBLICATION {self.publication} FOR TABLE "
                                    f"{self.qualified}) only if no change was made meanwhile, else rebuild the table")
        return at

    def _slot(self, conn) -> int | None:
        row = conn.execute("SELECT plugin, database, confirmed_flush_lsn::text FROM pg_replication_slots "
                           "WHERE slot_name = %s", (self.slot,)).fetchone()
        if row is None:
            return None
        plugin, database, position = row
        if plugin != "pgoutput" or database != self.settings.dbname:
            raise HoodieConfigError(f"replication slot {self.slot} exists but decodes {database} with {plugin}; "
                                    f"this pipeline needs one of its own with pgoutput: set {K.SLOT.key}")
        return parse_lsn(position)

    def _publication_exists(self, conn) -> bool:
        return conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (self.publication,)).fetchone() is not None

    def _ensure_publication(self, conn) -> None:
        import psycopg
        from psycopg import sql

        if self._publication_exists(conn):
            if not conn.execute("SELECT 1 FROM pg_publication_tables WHERE pubname = %s AND schemaname = %s "
                                "AND tablename = %s", (self.publication, self.schema, self.table)).fetchone():
                raise HoodieConfigError(f"publication {self.publication} does not include {self.qualified}: run ALTER "
                                        f"PUBLICATION {self.publication} ADD TABLE {self.qualified}, or set "
                                        f"{K.PUBLICATION.key}")
            return
        try:
            conn.execute(sql.SQL("CREATE PUBLICATION {} FOR TABLE {}").format(
                sql.Identifier(self.publication), sql.Identifier(self.schema, self.table)))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise HoodieConfigError(f"cannot create publication {self.publication} ({exc.diag.message_primary}): "
                                    "creating one takes the table's ownership and CREATE on the database; "
                                    f"grant those, or have an owner run CREATE PUBLICATION {self.publication} "
                                    f"FOR TABLE {self.qualified}") from None
        log.info(f"created publication {self.publication} for {self.qualified}")


# --- reading tasks (they run in Spark's Python workers) -------------------------------------------
class _Rows:
    """Envelope rows collected into Arrow record batches of bounded size."""

    def __init__(self, capture: Capture):
        self.capture = capture
        self.schema = to_arrow_schema(capture.envelope())
        self.parsers = {c.name: (c.spark_type, text_parser(c.spark_type)) for c in capture.columns}
        self.pending: list[dict[str, Any]] = []

    def source(self, ts_ms: int, lsn: int, tx_id: int | None, snapshot: str) -> dict[str, Any]:
        c = self.capture
        return {"version": None, "connector": "postgresql", "name": c.settings.dbname, "ts_ms": ts_ms,
                "snapshot": snapshot, "db": c.settings.dbname, "schema": c.schema, "table": c.table,
                "txId": tx_id, "lsn": lsn, "xmin": None}

    def add(self, op: str | None, ts_ms: int | None, source: dict | None, before: dict | None = None,
            after: dict | None = None, problem: tuple[str, Any] | None = None, end_lsn: int | None = None):
        row = {"op": op, "ts_ms": ts_ms, "source": source, "before": before, "after": after,
               REASON: None, MESSAGE: None, RAW: None, END_LSN: end_lsn}
        if problem is not None:
            row.update({REASON: ErrorReason.INVALID_RECORD_SCHEMA.value, MESSAGE: problem[0],
                        RAW: json.dumps(problem[1], default=str)})
            row["before"] = row["after"] = None
        self.pending.append(row)

    def image(self, names: list[str], values: tuple) -> dict[str, Any]:
        """Text values by column name → typed values of the batch's columns (a column the batch
        does not know, e.g. dropped since, is left out); raises ValueError naming the column."""
        image: dict[str, Any] = {}
        for name, text in zip(names, values):
            if name not in self.parsers or text is None:
                continue
            data_type, parse = self.parsers[name]
            try:
                image[name] = parse(text)
            except PARSE_ERRORS:
                raise ValueError(f"column {name}: {str(text)[:100]!r} is not a {data_type.simpleString()}") from None
        return image

    def full(self) -> bool:
        return len(self.pending) >= _ROWS_PER_BATCH

    def flush(self) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_pylist(self.pending, schema=self.schema)
        self.pending = []
        return batch


def _snapshot_reader(capture: Capture, ts_ms: int):
    def read(_: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from psycopg import sql

        rows = _Rows(capture)
        names = [c.name for c in capture.columns]
        query = sql.SQL("COPY (SELECT {} FROM {}) TO STDOUT").format(
            sql.SQL(", ").join(map(sql.Identifier, names)), sql.Identifier(capture.schema, capture.table))
        with capture.settings.connect() as conn, conn.cursor().copy(query) as copy:
            source = rows.source(ts_ms, 0, None, "true")
            for values in copy.rows():
                try:
                    rows.add("r", ts_ms, source, after=rows.image(names, values))
                except ValueError as exc:
                    rows.add("r", ts_ms, source, problem=(str(exc), dict(zip(names, values))))
                if rows.full():
                    yield rows.flush()
        yield rows.flush()
    return read


def _change_reader(capture: Capture, upper: str, nchanges: int):
    def read(_: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = _Rows(capture)
        relations: dict[int, Relation] = {}
        begin: Begin | None = None
        with capture.settings.connect(autocommit=False) as conn, conn.cursor(name="hudi_cdc") as cur:
            cur.itersize = 2000
            cur.execute("SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes(%s, %s::pg_lsn, %s, "
                        "'proto_version', '1', 'publication_names', %s)",
                        (capture.slot, upper, nchanges, capture.publication))
            for lsn_text, data in cur:
                message = decode(data)
                if isinstance(message, Relation):
                    relations[message.oid] = message
                elif isinstance(message, Begin):
                    begin = message
                elif isinstance(message, Commit):
                    rows.add(None, None, None, end_lsn=message.end_lsn)
                elif begin is not None and isinstance(message, (Insert, Update, Delete, Truncate)):
                    _add_change(rows, capture, relations, begin, parse_lsn(lsn_text), message)
                if rows.full():
                    yield rows.flush()
            conn.rollback()
        yield rows.flush()
    return read


def _add_change(rows: _Rows, capture: Capture, relations: dict[int, Relation], begin: Begin, lsn: int,
                message) -> None:
    ts_ms = begin.commit_time_us // 1000
    source = rows.source(ts_ms, lsn, begin.xid, "false")
    if isinstance(message, Truncate):
        if any(_ours(relations.get(oid), capture) for oid in message.relation_oids):
            rows.add("t", ts_ms, source)
        return
    relation = relations.get(message.relation_oid)
    if not _ours(relation, capture):
        return
    names = [c.name for c in relation.columns]
    op = {Insert: "c", Update: "u", Delete: "d"}[type(message)]
    try:
        if isinstance(message, Insert):
            rows.add(op, ts_ms, source, after=rows.image(names, message.new))
        elif isinstance(message, Update):
            new = _fill_unchanged(names, message.new, None if message.old_is_key_only else message.old)
            before = rows.image(names, message.old) if message.old is not None else None
            rows.add(op, ts_ms, source, before=before, after=rows.image(names, new))
        else:
            rows.add(op, ts_ms, source, before=rows.image(names, message.old))
    except ValueError as exc:
        images = {"old": getattr(message, "old", None), "new": getattr(message, "new", None)}
        rows.add(op, ts_ms, source, problem=(str(exc), {"columns": names, **images}))


def _ours(relation: Relation | None, capture: Capture) -> bool:
    return relation is not None and (relation.namespace, relation.name) == (capture.schema, capture.table)


def _fill_unchanged(names: list[str], new: tuple, old: tuple | None) -> tuple:
    """The new row with each large value PostgreSQL did not resend taken from the old row (which it
    sends in full under REPLICA IDENTITY FULL)."""
    filled = []
    for i, value in enumerate(new):
        if value is UNCHANGED_TOAST:
            if old is None or old[i] is UNCHANGED_TOAST:
                raise ValueError(f"column {names[i]}: the update left this large (TOASTed) value unchanged and "
                                 "PostgreSQL does not resend it; set REPLICA IDENTITY FULL on the table to "
                                 "capture such updates")
            value = old[i]
        filled.append(value)
    return tuple(filled)


# --- names -----------------------------------------------------------------------------------------
def _split_table(name: str) -> tuple[str, str]:
    parts = name.strip().split(".")
    if len(parts) == 1 and parts[0]:
        return "public", parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise HoodieConfigError(f"{K.TABLE.key}={name!r}: write schema.table, or table for schema public")


def _identifier(name: str) -> str:
    """A slot or publication name PostgreSQL accepts: lower-case letters, digits and '_', at most 63."""
    cleaned = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in name.lower())
    return cleaned[:63]
