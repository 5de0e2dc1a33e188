"""CDC images as JSON text, the way Hudi's Spark CDC reader prints a row
(InternalRowToJsonStringConverter: Jackson over Spark's internal values), one way for every
inference case and logging mode.

Fields come in schema order, compact (``{"a":1,"b":"x"}``). Spark's internal values show through:
a date is its day number since 1970-01-01, a timestamp (any unit, with or without zone) its
microseconds since the epoch, a time its raw integer; doubles and floats print as Java does
(``1.0E10``), NaN and infinities as the strings Jackson writes; binary is Base64; decimals are
plain JSON numbers with their scale (Java ``BigDecimal.toString``); nested structs and maps are
objects (map keys as text), arrays are arrays, nulls are ``null``.
"""
from __future__ import annotations

import base64
import datetime as _dt
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema.avro import _java_double, _json_string

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=_dt.timezone.utc)
_MICRO = _dt.timedelta(microseconds=1)
# Control characters Jackson escapes (quote and backslash go first, in ``_strings``).
_CONTROL = [chr(c) for c in range(0x20)]


def to_json(images: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Each struct value of ``images`` as a JSON object; null images stay null."""
    if isinstance(images, pa.ChunkedArray):
        images = images.combine_chunks()
    pieces: list[Any] = []
    for i, (field, values) in enumerate(zip(images.type, images.flatten())):
        pieces += [("{" if i == 0 else ",") + _json_string(field.name) + ":", _values(values)]
    if not pieces:
        pieces = ["{"]
    joined = pc.binary_join_element_wise(*pieces, "}", "")
    return pc.if_else(images.is_valid(), joined, pa.scalar(None, pa.string()))


def _values(arr: pa.Array) -> pa.Array:
    """JSON text of each value of a column; vectorized for the common flat types."""
    t = arr.type
    if isinstance(t, pa.DictionaryType):
        return _values(arr.dictionary_decode())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        text = _strings(arr.cast(pa.string()))
    elif pa.types.is_boolean(t):
        text = pc.if_else(arr, "true", "false")
    elif pa.types.is_integer(t):
        text = arr.cast(pa.string())
    elif pa.types.is_date(t):
        text = arr.cast(pa.date32()).cast(pa.int32()).cast(pa.string())
    elif pa.types.is_timestamp(t):
        text = arr.cast(pa.timestamp("us", t.tz), safe=False).cast(pa.int64()).cast(pa.string())
    elif pa.types.is_time(t):
        text = arr.cast(pa.int32() if pa.types.is_time32(t) else pa.int64()).cast(pa.string())
    else:
        text = pa.array([_value(v, t) for v in arr.to_pylist()], pa.string())
    return pc.fill_null(text, "null")


def _strings(arr: pa.Array) -> pa.Array:
    text = pc.replace_substring(pc.replace_substring(arr, "\\", "\\\\"), '"', '\\"')
    if pc.any(pc.match_substring_regex(arr, "[\\x00-\\x1f]")).as_py():
        for c in _CONTROL:
            text = pc.replace_substring(text, c, _json_string(c)[1:-1])
    return pc.binary_join_element_wise('"', text, '"', "")


def _value(v: Any, t: pa.DataType) -> str:
    """JSON text of one value of type ``t`` (the general, per-value path)."""
    if v is None:
        return "null"
    if isinstance(t, pa.DictionaryType):
        return _value(v, t.value_type)
    if pa.types.is_struct(t):
        return "{" + ",".join(f"{_json_string(f.name)}:{_value(v[f.name], f.type)}" for f in t) + "}"
    if pa.types.is_map(t):
        return "{" + ",".join(f"{_key(k, t.key_type)}:{_value(x, t.item_type)}" for k, x in v) + "}"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return "[" + ",".join(_value(x, t.value_type) for x in v) + "]"
    if pa.types.is_floating(t):
        return _float(v, pa.types.is_float32(t) or pa.types.is_float16(t))
    if pa.types.is_decimal(t):
        return str(v)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return '"' + base64.b64encode(v).decode("ascii") + '"'
    if pa.types.is_timestamp(t):
        return str((v - (_EPOCH if v.tzinfo is None else _EPOCH_UTC)) // _MICRO)
    if pa.types.is_date(t):
        return str((v - _EPOCH.date()).days)
    if pa.types.is_time(t):
        micros = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        return str(micros // 1000 if pa.types.is_time32(t) else micros)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _json_string(v)
    return str(v)


def _key(k: Any, t: pa.DataType) -> str:
    """Jackson writes map keys as text whatever their type."""
    text = _value(k, t)
    return text if text.startswith('"') else _json_string(text)


def _float(v: float, single: bool) -> str:
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    # Float.toString prints a float's own shortest digits, not those of the double it widens to.
    return _java_double(float(str(np.float32(v))) if single else v)
