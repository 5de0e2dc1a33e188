"""Debezium change events → rows: each op, both JSON envelopes (plain and Kafka Connect's
schema/payload wrapper), Hudi's metadata columns and the ordering values, without Kafka (the rows
the Kafka reader would hand over are built here)."""
import json

import pytest

from hudi_jobs.sources import debezium as D
from hudi_jobs.sources import kafka as KS
from hudi_jobs.sources.kafka import infer_json_schema
from hudi_jobs.schema_provider import spark_struct
from pyspark.sql.types import LongType, StringType, StructField, StructType

IS_DELETED = "_hoodie_is_deleted"


# --- pure pieces -------------------------------------------------------------------------------------------

def test_mysql_event_seq_text_order_is_hudis_numeric_binlog_order():
    positions = [("mysql-bin.000010", 4), ("mysql-bin.000002", 99999), ("mysql-bin.000002", 120),
                 ("mysql-bin.1000000", 1), ("mysql-bin.000010", 1234)]
    by_text = sorted(positions, key=lambda p: D.mysql_event_seq(*p))
    by_number = sorted(positions, key=lambda p: (int(p[0].rsplit(".", 1)[1]), p[1]))
    assert by_text == by_number
    assert D.mysql_event_seq("mysql-bin.000003", 154) == "0000000000000000003.0000000000000000154"


@pytest.mark.parametrize("bin_file, pos", [(None, 1), ("", 1), ("mysql-bin.000003", None),
                                           ("mysql-bin.000003", -1), ("mysql-bin.abc", 5)])
def test_mysql_event_seq_is_none_without_a_valid_binlog_position(bin_file, pos):
    assert D.mysql_event_seq(bin_file, pos) is None


def test_row_fields_come_from_after_then_before():
    row = StructType([StructField("id", LongType()), StructField("name", StringType())])
    only_before = StructType([StructField("before", row), StructField("after", StringType())])
    assert [f.name for f in D.row_fields(only_before)] == ["id", "name"]
    wider = StructType([StructField("before", StructType([*row.fields, StructField("old", StringType())])),
                        StructField("after", row)])
    assert [f.name for f in D.row_fields(wider)] == ["id", "name", "old"]


# --- events through Spark ----------------------------------------------------------------------------------

def pg_event(op, before, after, lsn, tx=700, ts=1_700_000_000_000):
    return {"before": before, "after": after, "op": op, "ts_ms": ts + 50,
            "source": {"version": "2.5.0.Final", "connector": "postgresql", "name": "pgserver", "ts_ms": ts,
                       "db": "shop", "schema": "public", "table": "customers", "txId": tx, "lsn": lsn,
                       "xmin": None}}


def mysql_event(op, before, after, file, pos, row=0, ts=1_700_000_000_000):
    return {"before": before, "after": after, "op": op, "ts_ms": ts + 50,
            "source": {"version": "2.5.0.Final", "connector": "mysql", "name": "mysqlserver", "ts_ms": ts,
                       "db": "shop", "table": "customers", "server_id": 1, "file": file, "pos": pos, "row": row}}


def wrapped(event):
    """Kafka Connect's JsonConverter with schemas.enable=true (schema abbreviated)."""
    return {"schema": {"type": "struct", "name": "pgserver.public.customers.Envelope", "optional": False,
                       "fields": [{"field": "op", "type": "string"}]}, "payload": event}


def raw_frame(spark, values):
    """What KafkaSource.read hands over for text values: one row per message."""
    schema = StructType([StructField(KS.PARTITION, StringType()), StructField(KS.OFFSET, LongType()),
                         StructField(KS.TIMESTAMP, LongType()), StructField(KS.KEY, StringType()),
                         StructField(KS.VALUE, StringType()), StructField(KS.REASON, StringType()),
                         StructField(KS.MESSAGE, StringType()), StructField(KS.RAW, StringType())])
    rows = [("0", i, 0, None, v if isinstance(v, str) else json.dumps(v), None, None, None)
            for i, v in enumerate(values)]
    df = spark.createDataFrame(rows, schema)
    return df.withColumn(KS.PARTITION, df[KS.PARTITION].cast("int"))


def flattened(spark, values, meta=D.POSTGRES_META, with_seq=False, envelope=None):
    raw = raw_frame(spark, values)
    envelope = envelope or D.envelope_of(infer_json_schema(spark, raw))
    out = D.flatten(D.parse_envelopes(raw, envelope), meta, with_seq)
    rows = sorted((r.asDict() for r in out.collect()), key=lambda r: r[KS.OFFSET])
    return out, [r for r in rows if r[KS.REASON] is None], [r for r in rows if r[KS.REASON] is not None]


def pick(rows, *names):
    return [tuple(r[n] for n in names) for r in rows]


PG_EVENTS = [
    pg_event("r", None, {"id": 1, "name": "ann"}, lsn=100),
    pg_event("c", None, {"id": 2, "name": "bob"}, lsn=200),
    pg_event("u", {"id": 2, "name": "bob"}, {"id": 2, "name": "bobby"}, lsn=300),
    pg_event("d", {"id": 1, "name": "ann"}, None, lsn=400, tx=701),
]


@pytest.mark.spark
@pytest.mark.parametrize("envelope", ["plain", "schema/payload wrapper"])
def test_postgres_ops_give_after_rows_and_flagged_before_rows(spark, envelope):
    events = PG_EVENTS if envelope == "plain" else [wrapped(e) for e in PG_EVENTS]
    out, good, bad = flattened(spark, events)
    assert bad == []
    assert pick(good, "id", "name", D.OP_COLUMN, IS_DELETED, D.LSN_COLUMN) == [
        (1, "ann", "r", False, 100), (2, "bob", "c", False, 200), (2, "bobby", "u", False, 300),
        (1, "ann", "d", True, 400)]
    first = good[0]
    assert (first[D.UPSTREAM_TS_COLUMN], first[D.ORIGIN_TS_COLUMN]) == (1_700_000_000_050, 1_700_000_000_000)
    assert (first[D.SHARD_COLUMN], first[D.SCHEMA_COLUMN], first[D.TX_ID_COLUMN], first[D.XMIN_COLUMN]) == \
        ("pgserver", "public", 700, None)
    assert good[3][D.TX_ID_COLUMN] == 701
    types = dict(out.dtypes)
    assert {c: types[c] for c in (D.LSN_COLUMN, D.TX_ID_COLUMN, D.XMIN_COLUMN, D.UPSTREAM_TS_COLUMN,
                                  D.ORIGIN_TS_COLUMN, D.OP_COLUMN, IS_DELETED)} == {
        D.LSN_COLUMN: "bigint", D.TX_ID_COLUMN: "bigint", D.XMIN_COLUMN: "bigint", D.UPSTREAM_TS_COLUMN: "bigint",
        D.ORIGIN_TS_COLUMN: "bigint", D.OP_COLUMN: "string", IS_DELETED: "boolean"}
    assert D.PostgresDebeziumSource.ordering_field == D.LSN_COLUMN


@pytest.mark.spark
def test_batch_of_deletes_only_still_has_the_row_columns(spark):
    _, good, bad = flattened(spark, [pg_event("d", {"id": 7, "name": "zed"}, None, lsn=5)])
    assert bad == [] and pick(good, "id", "name", IS_DELETED) == [(7, "zed", True)]


@pytest.mark.spark
def test_events_that_cannot_be_applied_become_error_records(spark):
    events = [pg_event("c", None, {"id": 1, "name": "a"}, lsn=1),
              pg_event("t", None, None, lsn=2),
              pg_event("d", None, None, lsn=3),
              pg_event("c", None, None, lsn=4),
              {"hello": "world"},
              "not json at all"]
    _, good, bad = flattened(spark, events)
    assert pick(good, "id") == [(1,)]
    assert [(b[KS.OFFSET], b[KS.REASON]) for b in bad] == [
        (1, "INVALID_RECORD_SCHEMA"), (2, "INVALID_RECORD_SCHEMA"), (3, "INVALID_RECORD_SCHEMA"),
        (4, "INVALID_RECORD_SCHEMA"), (5, "JSON_ROW_DESERIALIZATION_FAILURE")]
    messages = [b[KS.MESSAGE] for b in bad]
    assert "op 't'" in messages[0] and "'before' image" in messages[1] and "'after' image" in messages[2]
    assert "no 'op'" in messages[3]
    assert [json.loads(b[KS.RAW]) for b in bad[:4]] == events[1:5]
    assert bad[4][KS.RAW] == "not json at all"


@pytest.mark.spark
def test_mysql_rows_carry_binlog_metadata_and_the_sequence_to_order_by(spark):
    events = [mysql_event("c", None, {"id": 1, "v": "a"}, "mysql-bin.000009", 99_000),
              mysql_event("u", {"id": 1, "v": "a"}, {"id": 1, "v": "b"}, "mysql-bin.000010", 4, row=1),
              mysql_event("d", {"id": 1, "v": "b"}, None, "mysql-bin.000010", 1_200),
              mysql_event("c", None, {"id": 2, "v": "x"}, None, None)]
    out, good, bad = flattened(spark, events, D.MYSQL_META, with_seq=True)
    assert pick(good, "id", "v", IS_DELETED, D.BIN_FILE_COLUMN, D.POS_COLUMN, D.ROW_COLUMN) == [
        (1, "a", False, "mysql-bin.000009", 99_000, 0), (1, "b", False, "mysql-bin.000010", 4, 1),
        (1, "b", True, "mysql-bin.000010", 1_200, 0)]
    seqs = [r[D.SEQ_COLUMN] for r in good]
    assert seqs == [D.mysql_event_seq("mysql-bin.000009", 99_000), D.mysql_event_seq("mysql-bin.000010", 4),
                    D.mysql_event_seq("mysql-bin.000010", 1_200)]
    assert seqs == sorted(seqs)
    assert [(b[KS.OFFSET], "binlog position" in b[KS.MESSAGE]) for b in bad] == [(3, True)]
    assert dict(out.dtypes)[D.ROW_COLUMN] == "int" and D.MySqlDebeziumSource.ordering_field == D.SEQ_COLUMN
    assert D.SCHEMA_COLUMN not in out.columns and D.LSN_COLUMN not in out.columns


@pytest.mark.spark
def test_given_envelope_schema_parses_both_forms_and_flags_type_mismatches(spark):
    row = {"type": "record", "name": "Value", "fields": [{"name": "id", "type": "int"},
                                                         {"name": "name", "type": ["null", "string"]}]}
    source = {"type": "record", "name": "Source", "fields": [
        {"name": "name", "type": "string"}, {"name": "ts_ms", "type": "long"},
        {"name": "txId", "type": ["null", "long"]}, {"name": "lsn", "type": ["null", "long"]}]}
    envelope = {"type": "record", "name": "Envelope", "namespace": "pgserver.public.customers", "fields": [
        {"name": "before", "type": ["null", row]}, {"name": "after", "type": ["null", "Value"]},
        {"name": "source", "type": source}, {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"]}]}
    bad_type = pg_event("c", None, {"id": "one", "name": "x"}, lsn=3)
    _, good, bad = flattened(spark, [PG_EVENTS[1], wrapped(PG_EVENTS[2]), bad_type],
                             envelope=spark_struct(json.dumps(envelope)))
    assert pick(good, "id", "name", D.LSN_COLUMN, D.SCHEMA_COLUMN, D.XMIN_COLUMN) == [
        (2, "bob", 200, None, None), (2, "bobby", 300, None, None)]
    assert [(b[KS.OFFSET], b[KS.REASON]) for b in bad] == [(2, "JSON_ROW_DESERIALIZATION_FAILURE")]
