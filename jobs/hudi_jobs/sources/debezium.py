"""Debezium change events from Kafka as rows to upsert or delete (Hudi's PostgresDebeziumSource and
MySqlDebeziumSource).

Each event becomes one row: the ``after`` image for creates, updates and snapshot reads (ops c, u,
r), the ``before`` image for deletes (op d), flagged ``_hoodie_is_deleted = true`` so the writer
deletes the key. Hudi's Debezium metadata columns come along, among them the ordering value that
decides which of two changes of a key is newer: the Postgres LSN, or the MySQL binlog position.

Values are Avro in the Confluent wire format (Hudi's default, KafkaAvroDeserializer; the envelope
schema comes from the schema provider or, as Hudi does, from the registry's latest version), or
JSON (``...value.deserializer.class=...StringDeserializer``), with or without Kafka Connect's
``{"schema": ..., "payload": ...}`` wrapper, parsed with the provider's schema or one inferred from
the batch. Tombstones (the null values Debezium sends after a delete, for compaction) are skipped.

Events that cannot become a row go to the error records: ops without a row image (truncate 't',
message 'm'), a create without ``after`` or a delete without ``before``, and MySQL events without a
binlog position to order them by.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StringType, StructField, StructType

from hudi_engine.api import IS_DELETED

from ..schema_provider import spark_struct
from .base import ErrorReason
from .kafka import (
    CORRUPT,
    INTERNAL,
    RECORD,
    VALUE,
    AvroValues,
    KafkaSource,
    TextValues,
    flag_errors,
    infer_json_schema,
    value_deserializer,
)
from .kafka_offsets import Plan

# Hudi's DebeziumConstants: the envelope's fields and the flattened columns.
OP, TS_MS, BEFORE, AFTER, SOURCE, PAYLOAD = "op", "ts_ms", "before", "after", "source", "payload"
ROW_OPS = ("c", "u", "r")
DELETE_OP = "d"
OP_COLUMN = "_change_operation_type"
UPSTREAM_TS_COLUMN = "_upstream_event_processed_ts_ms"
SHARD_COLUMN = "db_shard_source_partition"
SCHEMA_COLUMN = "db_schema_source_partition"
ORIGIN_TS_COLUMN = "_event_origin_ts_ms"
TX_ID_COLUMN = "_event_tx_id"
LSN_COLUMN = "_event_lsn"
XMIN_COLUMN = "_event_xmin"
BIN_FILE_COLUMN = "_event_bin_file"
POS_COLUMN = "_event_pos"
ROW_COLUMN = "_event_row"
SEQ_COLUMN = "_event_seq"


@dataclass(frozen=True)
class Meta:
    """One metadata column: its name, where it is in the envelope, and its type."""
    column: str
    path: str
    type: str


_COMMON = (Meta(OP_COLUMN, OP, "string"), Meta(UPSTREAM_TS_COLUMN, TS_MS, "bigint"),
           Meta(SHARD_COLUMN, "source.name", "string"))
POSTGRES_META = (*_COMMON, Meta(SCHEMA_COLUMN, "source.schema", "string"),
                 Meta(ORIGIN_TS_COLUMN, "source.ts_ms", "bigint"), Meta(TX_ID_COLUMN, "source.txId", "bigint"),
                 Meta(LSN_COLUMN, "source.lsn", "bigint"), Meta(XMIN_COLUMN, "source.xmin", "bigint"))
MYSQL_META = (*_COMMON, Meta(ORIGIN_TS_COLUMN, "source.ts_ms", "bigint"),
              Meta(BIN_FILE_COLUMN, "source.file", "string"), Meta(POS_COLUMN, "source.pos", "bigint"),
              Meta(ROW_COLUMN, "source.row", "int"))


def mysql_event_seq(bin_file: str | None, pos: int | None) -> str | None:
    """The MySQL ordering value: binlog file number and position, as Hudi's ``<file number>.<pos>``
    (which Hudi's MySqlDebeziumAvroPayload parses and compares as two numbers), each zero-padded
    to 19 digits so that comparing the text, as this writer does, orders the same way."""
    if not bin_file or pos is None or pos < 0:
        return None
    number = bin_file.rsplit(".", 1)[-1]
    if not number.isdigit():
        return None
    return f"{int(number):019d}.{pos:019d}"


def mysql_event_seq_column(bin_file: Column, pos: Column) -> Column:
    """:func:`mysql_event_seq` as a Spark expression (null where that gives None)."""
    number = F.substring_index(bin_file, ".", -1)
    valid = number.rlike(r"^[0-9]+$") & pos.isNotNull() & (pos >= 0)
    return F.when(valid, F.format_string("%019d.%019d", number.cast("bigint"), pos.cast("bigint")))


def _field(schema: StructType, path: str) -> DataType | None:
    current: DataType = schema
    for name in path.split("."):
        if not isinstance(current, StructType) or name not in current.fieldNames():
            return None
        current = current[name].dataType
    return current


def row_fields(envelope: StructType) -> list[StructField]:
    """The table's columns: those of the ``after`` image, then any only the ``before`` image has
    (with an inferred schema, a batch of deletes only knows ``before``)."""
    fields: dict[str, StructField] = {}
    for image in (AFTER, BEFORE):
        image_type = _field(envelope, image)
        if isinstance(image_type, StructType):
            for f in image_type.fields:
                fields.setdefault(f.name, f)
    return list(fields.values())


def flatten(events: DataFrame, meta: tuple[Meta, ...], with_seq: bool) -> DataFrame:
    """Envelope rows (columns op, ts_ms, source, before, after, plus the reader's internal columns)
    → one row per event: metadata columns, the row image's columns, ``_hoodie_is_deleted`` (and
    ``_event_seq`` for MySQL); events that cannot be applied get an error reason instead."""
    schema = events.schema
    op = F.col(OP) if _field(schema, OP) is not None else F.lit(None).cast("string")
    is_delete = op == DELETE_OP
    columns = [(F.col(m.path) if _field(schema, m.path) is not None else F.lit(None)).cast(m.type).alias(m.column)
               for m in meta]
    for f in row_fields(schema):
        after = F.col(f"{AFTER}.{f.name}") if _field(schema, f"{AFTER}.{f.name}") else F.lit(None)
        before = F.col(f"{BEFORE}.{f.name}") if _field(schema, f"{BEFORE}.{f.name}") else F.lit(None)
        columns.append(F.when(is_delete, before.cast(f.dataType)).otherwise(after.cast(f.dataType)).alias(f.name))
    columns.append(F.coalesce(is_delete, F.lit(False)).alias(IS_DELETED))
    seq = None
    if with_seq:
        seq = mysql_event_seq_column(F.col("source.file") if _field(schema, "source.file") else F.lit(None),
                                     F.col("source.pos") if _field(schema, "source.pos") else F.lit(None))
        columns.append(seq.alias(SEQ_COLUMN))
    after_missing = F.col(AFTER).isNull() if _field(schema, AFTER) is not None else F.lit(True)
    before_missing = F.col(BEFORE).isNull() if _field(schema, BEFORE) is not None else F.lit(True)
    problem = (F.when(op.isNull(), F.lit("not a Debezium change event: it has no 'op'"))
               .when(~op.isin(*ROW_OPS, DELETE_OP),
                     F.concat(F.lit("Debezium op '"), op, F.lit("' (e.g. a truncate) has no row to apply")))
               .when(op.isin(*ROW_OPS) & after_missing,
                     F.concat(F.lit("Debezium op '"), op, F.lit("' without the 'after' image of the row")))
               .when(is_delete & before_missing,
                     F.lit("Debezium delete without the 'before' image of the row: without the key it "
                           "cannot be applied (Postgres: set the table's REPLICA IDENTITY)")))
    if seq is not None:
        problem = problem.when(seq.isNull(), F.lit("MySQL Debezium event without a binlog position "
                                                   "(source.file, source.pos) to order it by"))
    kept = [c for c in events.columns if c in INTERNAL and c != RECORD]
    envelope = [F.col(c) for c in events.columns if c not in INTERNAL]
    as_read = F.col(VALUE) if VALUE in events.columns else F.to_json(F.struct(*envelope))
    return flag_errors(events, problem.isNotNull(), F.lit(ErrorReason.INVALID_RECORD_SCHEMA.value), problem,
                       as_read).select(*columns, *kept)


def parse_envelopes(raw: DataFrame, envelope: StructType) -> DataFrame:
    """JSON text → envelope columns, with or without Kafka Connect's schema/payload wrapper: one
    parse with the envelope's fields at the top and inside ``payload`` serves both."""
    both = StructType([*envelope.fields, StructField(PAYLOAD, envelope), StructField(CORRUPT, StringType())])
    parsed = F.from_json(F.col(VALUE), both, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT})
    rows = flag_errors(raw.withColumn(RECORD, parsed),
                       F.col(RECORD).isNull() | F.col(f"{RECORD}.{CORRUPT}").isNotNull(),
                       F.lit(ErrorReason.JSON_ROW_DESERIALIZATION_FAILURE.value),
                       F.lit("the value is not a Debezium JSON event that fits the envelope schema"), F.col(VALUE))
    wrapped = F.col(f"{RECORD}.{PAYLOAD}").isNotNull()
    fields = [F.when(wrapped, F.col(f"{RECORD}.{PAYLOAD}.{f.name}")).otherwise(F.col(f"{RECORD}.{f.name}"))
              .alias(f.name) for f in envelope.fields]
    return rows.select(*fields, *[c for c in rows.columns if c in INTERNAL and c != RECORD])


def envelope_of(inferred: StructType) -> StructType:
    """The envelope in a schema inferred from whole messages: inside ``payload`` when they carry
    Kafka Connect's wrapper."""
    payload = _field(inferred, PAYLOAD)
    if isinstance(payload, StructType):
        return payload
    return StructType([f for f in inferred.fields if f.name != "schema"])


class DebeziumSource(KafkaSource):
    """What the Postgres and MySQL sources share; they differ in their metadata columns."""
    meta: tuple[Meta, ...] = ()
    with_seq = False
    ordering_field = ""

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        super().__init__(props, schema_avro)
        self.json = value_deserializer(self.cfg, ("KafkaAvroDeserializer", "KafkaAvroSchemaDeserializer",
                                                  "StringDeserializer")) == "StringDeserializer"
        self.registry_client = None if self.json else self.registry()

    def _rows(self, spark: SparkSession, plan: Plan) -> DataFrame:
        if self.json:
            raw = self.read(spark, plan, TextValues())
            if self.schema_avro:
                envelope = spark_struct(self.schema_avro)
            else:
                raw = raw.localCheckpoint(eager=True)
                envelope = envelope_of(infer_json_schema(spark, raw))
            events = parse_envelopes(raw, envelope)
        else:
            values = AvroValues(self.source_schema("the Debezium envelope"), True, self.registry_client)
            raw = self.read(spark, plan, values)
            events = raw.select(*[F.col(f"{RECORD}.{f.name}").alias(f.name) for f in values.spark_type.fields],
                                *[c for c in raw.columns if c != RECORD])
        return flatten(events, self.meta, self.with_seq)


class PostgresDebeziumSource(DebeziumSource):
    """Changes of a Postgres table, ordered by the WAL position (``_event_lsn``)."""
    meta = POSTGRES_META
    ordering_field = LSN_COLUMN


class MySqlDebeziumSource(DebeziumSource):
    """Changes of a MySQL table, ordered by binlog file and position (``_event_seq``)."""
    meta = MYSQL_META
    with_seq = True
    ordering_field = SEQ_COLUMN
