"""PostgreSQL column types as Spark types, and values in PostgreSQL's text form (what logical
decoding and ``COPY ... TO STDOUT`` give) as Python values of those types.

A type with no faithful Spark counterpart (json, uuid, arrays, enums, time, interval, numeric
without a precision, ...) is kept as its exact text: nothing is rounded or guessed. Sessions use
:data:`.postgres_connection.SESSION_SETTINGS`, so timestamps come in UTC and ISO spelling.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Callable

from pyspark.sql.types import (BinaryType, BooleanType, DataType, DateType, DecimalType, DoubleType, FloatType,
                               IntegerType, LongType, StringType, StructField, StructType, TimestampType)

BOOL, BYTEA, INT8, INT2, INT4, OID, FLOAT4, FLOAT8 = 16, 17, 20, 21, 23, 26, 700, 701
DATE, TIMESTAMP, TIMESTAMPTZ, NUMERIC = 1082, 1114, 1184, 1700
MAX_DECIMAL_PRECISION = 38

# name, base type (a domain's own type), type modifier, NOT NULL, part of the primary key.
COLUMNS_QUERY = """
SELECT a.attname, COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)::int,
       CASE WHEN t.typbasetype <> 0 THEN t.typtypmod ELSE a.atttypmod END,
       a.attnotnull, COALESCE(a.attnum = ANY(i.indkey), false)
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""


@dataclass(frozen=True)
class PgColumn:
    name: str
    type_oid: int
    type_modifier: int
    not_null: bool
    primary_key: bool

    @property
    def spark_type(self) -> DataType:
        return spark_type(self.type_oid, self.type_modifier)


def spark_type(type_oid: int, type_modifier: int) -> DataType:
    simple = {BOOL: BooleanType(), BYTEA: BinaryType(), INT2: IntegerType(), INT4: IntegerType(),
              INT8: LongType(), OID: LongType(), FLOAT4: FloatType(), FLOAT8: DoubleType(), DATE: DateType(),
              TIMESTAMP: TimestampType(), TIMESTAMPTZ: TimestampType()}
    if type_oid in simple:
        return simple[type_oid]
    if type_oid == NUMERIC and type_modifier >= 4:
        precision, scale = ((type_modifier - 4) >> 16) & 0xFFFF, (type_modifier - 4) & 0xFFFF
        if precision <= MAX_DECIMAL_PRECISION:
            return DecimalType(precision, scale)
    return StringType()


def struct_of(columns: list[PgColumn]) -> StructType:
    return StructType([StructField(c.name, c.spark_type, True) for c in columns])


def _timestamp(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _decimal(scale: int) -> Callable[[str], Decimal]:
    quantum = Decimal(1).scaleb(-scale)

    def parse(text: str) -> Decimal:
        value = Decimal(text)
        if not value.is_finite():
            raise ValueError(f"{text} has no decimal value")
        return value.quantize(quantum)
    return parse


def _int32(text: str) -> int:
    value = int(text)
    if not -2**31 <= value < 2**31:
        raise ValueError(f"{text} does not fit a 32-bit integer")
    return value


def _bytea(text: str) -> bytes:
    if not text.startswith("\\x"):
        raise ValueError("bytea not in hex form")
    return bytes.fromhex(text[2:])


def text_parser(data_type: DataType) -> Callable[[str], Any]:
    """A function from PostgreSQL's text form of a value to the Python value of ``data_type``;
    it raises ValueError (or InvalidOperation) for text that does not fit."""
    if isinstance(data_type, BooleanType):
        return lambda text: {"t": True, "f": False}[text]
    if isinstance(data_type, IntegerType):
        return _int32
    if isinstance(data_type, LongType):
        return int
    if isinstance(data_type, (FloatType, DoubleType)):
        return float
    if isinstance(data_type, DecimalType):
        return _decimal(data_type.scale)
    if isinstance(data_type, DateType):
        return date.fromisoformat
    if isinstance(data_type, TimestampType):
        return _timestamp
    if isinstance(data_type, BinaryType):
        return _bytea
    return str


PARSE_ERRORS = (ValueError, KeyError, InvalidOperation, OverflowError)
