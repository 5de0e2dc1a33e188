"""pgoutput messages (protocol version 1) as PostgreSQL lays them out, decoded; WAL positions; and
PostgreSQL's text form of values turned into the batch's types."""
import struct
from datetime import date, datetime, timezone
from decimal import Decimal

import pytest
from pyspark.sql.types import DecimalType, IntegerType, StringType, TimestampType

from hudi_jobs.sources.pgoutput import (PG_EPOCH_US, UNCHANGED_TOAST, Begin, Commit, Delete, Insert, PgOutputError,
                                        Relation, Truncate, Update, decode, format_lsn, parse_lsn)
from hudi_jobs.sources.postgres_types import NUMERIC, PARSE_ERRORS, spark_type, text_parser


def tuple_data(*values):
    out = struct.pack("!h", len(values))
    for v in values:
        if v is None:
            out += b"n"
        elif v is UNCHANGED_TOAST:
            out += b"u"
        else:
            raw = v.encode()
            out += b"t" + struct.pack("!i", len(raw)) + raw
    return out


def test_transaction_messages():
    begin = decode(b"B" + struct.pack("!QqI", 0x16B374D848, 1_000_000, 731))
    assert begin == Begin(0x16B374D848, 1_000_000 + PG_EPOCH_US, 731)
    assert decode(b"C" + struct.pack("!BQQq", 0, 10, 58, 2)) == Commit(10, 58, 2 + PG_EPOCH_US)


def test_relation_and_row_messages():
    relation = decode(b"R" + struct.pack("!I", 16384) + b"public\0orders\0d" + struct.pack("!h", 2)
                      + b"\x01id\0" + struct.pack("!Ii", 23, -1) + b"\x00amount\0" + struct.pack("!Ii", 1700, 655366))
    assert isinstance(relation, Relation) and relation.replica_identity == "d"
    assert [(c.name, c.type_oid, c.is_key) for c in relation.columns] == [("id", 23, True), ("amount", 1700, False)]
    assert decode(b"I" + struct.pack("!I", 16384) + b"N" + tuple_data("1", None)) == Insert(16384, ("1", None))
    update = decode(b"U" + struct.pack("!I", 16384) + b"O" + tuple_data("1", "9.50") + b"N"
                    + tuple_data("1", UNCHANGED_TOAST))
    assert update == Update(16384, ("1", "9.50"), ("1", UNCHANGED_TOAST), old_is_key_only=False)
    plain = decode(b"U" + struct.pack("!I", 16384) + b"N" + tuple_data("1", "2"))
    assert plain.old is None and plain.new == ("1", "2")
    assert decode(b"D" + struct.pack("!I", 16384) + b"K" + tuple_data("1", None)) == Delete(16384, ("1", None), True)
    assert decode(b"T" + struct.pack("!iB", 2, 0) + struct.pack("!II", 5, 6)) == Truncate((5, 6))


@pytest.mark.parametrize("data, error", [
    (b"", "empty"), (b"X", "unknown message kind"), (b"B\x00", "ends after"),
    (b"I" + struct.pack("!I", 1) + b"N" + struct.pack("!h", 1) + b"b", "only text values"),
    (b"D" + struct.pack("!I", 1) + b"N", "old key")])
def test_bytes_that_are_not_a_message(data, error):
    with pytest.raises(PgOutputError, match=error):
        decode(data)


def test_wal_positions_round_trip():
    assert format_lsn(0x16B374D848) == "16/B374D848" and parse_lsn("16/B374D848") == 0x16B374D848
    assert parse_lsn(format_lsn(0)) == 0
    with pytest.raises(ValueError):
        parse_lsn("16B374D848")


def test_text_values_become_the_columns_types():
    money = spark_type(NUMERIC, ((10 << 16) | 2) + 4)
    assert money == DecimalType(10, 2) and text_parser(money)("12.5") == Decimal("12.50")
    assert spark_type(NUMERIC, -1) == StringType()                  # no precision: kept exactly, as text
    assert text_parser(TimestampType())("2026-11-27 03:04:05.5+00") == datetime(2026, 11, 27, 3, 4, 5, 500000,
                                                                                 tzinfo=timezone.utc)
    assert text_parser(spark_type(1082, -1))("2026-11-27") == date(2026, 11, 27)
    assert text_parser(spark_type(17, -1))("\\x0102") == b"\x01\x02"
    assert text_parser(spark_type(16, -1))("t") is True
    for data_type, text in ((IntegerType(), "5000000000"), (money, "NaN"), (spark_type(1082, -1), "infinity")):
        with pytest.raises(PARSE_ERRORS):
            text_parser(data_type)(text)
