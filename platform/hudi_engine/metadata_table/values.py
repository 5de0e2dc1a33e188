"""Column-stats min/max values: which wrapper record carries them, and back to Python values.

Hudi 1.1 (table version 9) stores each value as its *primitive* (``ValueType``'s wrapper: a date
as days in an ``IntWrapper``, a decimal as unscaled two's-complement bytes in a ``BytesWrapper``, a
timestamp as a long in its unit) and says what it is in ``valueType`` (``HoodieValueTypeInfo``:
the ``ValueType`` ordinal, plus ``"precision,scale"`` for decimals). Hudi 1.0 (table version 8,
"V1") picks the wrapper from the Java type of the Parquet statistic: ``DecimalWrapper`` (scale
15), ``DateWrapper``, and timestamps as plain longs.

The column's Arrow type decides; values are what ``pyarrow``'s Parquet statistics return (``int``,
``float``, ``str``, ``bytes``, ``date``, ``datetime``, ``time``, ``Decimal``), or raw primitives.
A wrapped value is a fastavro union tuple ``(full wrapper name, {"value": v})``.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import uuid
from dataclasses import dataclass

import pyarrow as pa

from .schema import NAMESPACE

BOOLEAN_W, INT_W, LONG_W, FLOAT_W, DOUBLE_W, BYTES_W, STRING_W = (
    f"{NAMESPACE}.{n}" for n in ("BooleanWrapper", "IntWrapper", "LongWrapper", "FloatWrapper",
                                 "DoubleWrapper", "BytesWrapper", "StringWrapper"))
DATE_W, DECIMAL_W, TIME_MICROS_W, TIMESTAMP_MICROS_W, LOCAL_DATE_W, ARRAY_W = (
    f"{NAMESPACE}.{n}" for n in ("DateWrapper", "DecimalWrapper", "TimeMicrosWrapper",
                                 "TimestampMicrosWrapper", "LocalDateWrapper", "ArrayWrapper"))

# org.apache.hudi.stats.ValueType, in ordinal order.
VALUE_TYPES = ("V1", "NULL", "BOOLEAN", "INT", "LONG", "FLOAT", "DOUBLE", "STRING", "BYTES", "FIXED",
               "DECIMAL", "UUID", "DATE", "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS",
               "TIMESTAMP_MICROS", "TIMESTAMP_NANOS", "LOCAL_TIMESTAMP_MILLIS", "LOCAL_TIMESTAMP_MICROS",
               "LOCAL_TIMESTAMP_NANOS")
ORDINAL = {name: i for i, name in enumerate(VALUE_TYPES)}
_PRIMITIVE_WRAPPER = {
    "BOOLEAN": BOOLEAN_W, "INT": INT_W, "LONG": LONG_W, "FLOAT": FLOAT_W, "DOUBLE": DOUBLE_W,
    "STRING": STRING_W, "BYTES": BYTES_W, "FIXED": BYTES_W, "DECIMAL": BYTES_W, "UUID": STRING_W,
    "DATE": INT_W, "TIME_MILLIS": INT_W, "TIME_MICROS": LONG_W, "TIMESTAMP_MILLIS": LONG_W,
    "TIMESTAMP_MICROS": LONG_W, "TIMESTAMP_NANOS": LONG_W, "LOCAL_TIMESTAMP_MILLIS": LONG_W,
    "LOCAL_TIMESTAMP_MICROS": LONG_W, "LOCAL_TIMESTAMP_NANOS": LONG_W}
_UNIT_DIVISOR = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DAY = _dt.date(1970, 1, 1)
DECIMAL_WRAPPER_SCALE, DECIMAL_WRAPPER_PRECISION = 15, 30


@dataclass(frozen=True)
class ValueType:
    """A column's ``ValueType`` and its additional info (``"p,s"`` for decimals)."""
    name: str
    additional_info: str | None = None

    @property
    def ordinal(self) -> int:
        return ORDINAL[self.name]

    def as_avro(self) -> dict:
        return {"typeOrdinal": self.ordinal, "additionalInfo": self.additional_info}


def value_type_of(arrow_type: pa.DataType) -> ValueType:
    """``ValueType`` of a column from its Arrow type (as Parquet annotates it)."""
    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_boolean(t):
        return ValueType("BOOLEAN")
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_uint8(t) \
            or pa.types.is_uint16(t):
        return ValueType("INT")
    if pa.types.is_int64(t) or pa.types.is_uint32(t) or pa.types.is_uint64(t):
        return ValueType("LONG")
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return ValueType("FLOAT")
    if pa.types.is_float64(t):
        return ValueType("DOUBLE")
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return ValueType("STRING")
    if pa.types.is_fixed_size_binary(t):
        return ValueType("FIXED")
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return ValueType("BYTES")
    if pa.types.is_decimal(t):
        return ValueType("DECIMAL", f"{t.precision},{t.scale}")
    if pa.types.is_date(t):
        return ValueType("DATE")
    if pa.types.is_time32(t):
        return ValueType("TIME_MILLIS")
    if pa.types.is_time64(t):
        return ValueType("TIME_MICROS")
    if pa.types.is_timestamp(t):
        unit = {"s": "MILLIS", "ms": "MILLIS", "us": "MICROS", "ns": "NANOS"}[t.unit]
        return ValueType(("TIMESTAMP_" if t.tz is not None else "LOCAL_TIMESTAMP_") + unit)
    raise ValueError(f"column stats are not kept for columns of type {arrow_type}")


def java_unscaled_bytes(unscaled: int) -> bytes:
    """``BigInteger.toByteArray``: minimal big-endian two's complement."""
    size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    return unscaled.to_bytes(size, "big", signed=True)


def _unscaled(value, scale: int) -> int:
    if isinstance(value, int):
        return value
    d = decimal.Decimal(value)
    scaled = d.scaleb(scale)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{value} has more than {scale} decimal places")
    return int(scaled)


def _epoch_units(value, per_second: int) -> int:
    """An instant (aware, or naive = UTC wall time) as an integer count of 1/per_second seconds."""
    if isinstance(value, int):
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        delta = value - _EPOCH
        units = (delta.days * 86_400 + delta.seconds) * per_second + delta.microseconds * per_second // 1_000_000
        nanos = getattr(value, "nanosecond", 0)                       # pandas.Timestamp
        return units + nanos * per_second // 1_000_000_000
    raise TypeError(f"not a timestamp: {value!r}")


def _time_units(value, per_second: int) -> int:
    if isinstance(value, int):
        return value
    micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    return micros * per_second // 1_000_000


def _days(value) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, _dt.datetime):
        value = value.date()
    return (value - _EPOCH_DAY).days


def primitive_of(value, vt: ValueType):
    """The primitive Hudi 1.1 stores for a Python value of the given ``ValueType``."""
    name = vt.name
    if value is None:
        return None
    if name == "DECIMAL":
        return java_unscaled_bytes(_unscaled(value, int(vt.additional_info.split(",")[1])))
    if name == "DATE":
        return _days(value)
    if name == "TIME_MILLIS":
        return _time_units(value, 1_000)
    if name == "TIME_MICROS":
        return _time_units(value, 1_000_000)
    if name.endswith(("TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "TIMESTAMP_NANOS")):
        per_second = {"MILLIS": 1_000, "MICROS": 1_000_000, "NANOS": 1_000_000_000}[name.rsplit("_", 1)[1]]
        return _epoch_units(value, per_second)
    if name in ("STRING", "UUID"):
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)
    if name in ("BYTES", "FIXED"):
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    if name == "BOOLEAN":
        return bool(value)
    if name in ("INT", "LONG"):
        return int(value)
    return float(value)


def wrap(value, vt: ValueType, table_version: int = 9):
    """The ``minValue``/``maxValue`` union member for ``value`` (``None`` stays ``None``)."""
    if value is None:
        return None
    if table_version >= 9:
        return (_PRIMITIVE_WRAPPER[vt.name], {"value": primitive_of(value, vt)})
    return _wrap_v1(value, vt)


def _wrap_v1(value, vt: ValueType):
    """Hudi 1.0: the wrapper of the Java value the Parquet footer statistics turn into."""
    name = vt.name
    if name == "DECIMAL":
        d = decimal.Decimal(value) if not isinstance(value, int) else \
            decimal.Decimal(value).scaleb(-int(vt.additional_info.split(",")[1]))
        unscaled = _unscaled(d, DECIMAL_WRAPPER_SCALE)               # tryUpcastDecimal: setScale(15)
        if len(str(abs(unscaled))) > DECIMAL_WRAPPER_PRECISION:
            raise ValueError(f"{value} does not fit decimal({DECIMAL_WRAPPER_PRECISION},{DECIMAL_WRAPPER_SCALE})")
        return (DECIMAL_W, {"value": java_unscaled_bytes(unscaled)})
    if name == "DATE":
        return (DATE_W, {"value": _days(value)})
    return (_PRIMITIVE_WRAPPER[name], {"value": primitive_of(value, vt)})


def unwrap(wrapped, value_type: dict | None = None):
    """A stored min/max back to a Python value, using ``valueType`` when the record has one."""
    if wrapped is None:
        return None
    name, body = wrapped if isinstance(wrapped, tuple) else (None, wrapped)
    if name == ARRAY_W:
        return [unwrap(v) for v in (body.get("wrappedValues") or [])]
    raw = body["value"]
    if value_type is not None and value_type.get("typeOrdinal", 0) > 1:
        return from_primitive(raw, ValueType(VALUE_TYPES[value_type["typeOrdinal"]],
                                             value_type.get("additionalInfo")))
    if name in (DATE_W, LOCAL_DATE_W) and isinstance(raw, int):
        return _EPOCH_DAY + _dt.timedelta(days=raw)
    if name == DECIMAL_W and isinstance(raw, bytes):
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-DECIMAL_WRAPPER_SCALE)
    if name == TIMESTAMP_MICROS_W and isinstance(raw, int):
        return _EPOCH + _dt.timedelta(microseconds=raw)
    if name == TIME_MICROS_W and isinstance(raw, int):
        return (_dt.datetime.min + _dt.timedelta(microseconds=raw)).time()
    return raw


def from_primitive(raw, vt: ValueType):
    """Hudi 1.1's primitive back to a Python value (nanosecond timestamps stay integers)."""
    name = vt.name
    if raw is None:
        return None
    if name == "DECIMAL":
        scale = int(vt.additional_info.split(",")[1])
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-scale)
    if name == "DATE":
        return _EPOCH_DAY + _dt.timedelta(days=raw)
    if name == "UUID":
        return uuid.UUID(raw)
    if name in ("TIME_MILLIS", "TIME_MICROS"):
        micros = raw * 1000 if name == "TIME_MILLIS" else raw
        return (_dt.datetime.min + _dt.timedelta(microseconds=micros)).time()
    if name.endswith(("_MILLIS", "_MICROS")) and "TIMESTAMP" in name:
        micros = raw * 1000 if name.endswith("_MILLIS") else raw
        moment = _EPOCH + _dt.timedelta(microseconds=micros)
        return moment.replace(tzinfo=None) if name.startswith("LOCAL_") else moment
    return raw
