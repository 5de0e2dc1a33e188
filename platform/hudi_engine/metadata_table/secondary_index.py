"""The secondary index's entries, computed as Hudi 1.x computes them (``SecondaryIndexRecordGenerationUtils``,
``SecondaryIndexKeyUtils``), and its lookups.

An entry is keyed ``<secondary value>$<record key>`` (both escaped) and holds only ``isDeleted``: it
says nothing of where the record lives, so compaction and clustering leave it alone, and a query
finds the file groups through the record index. The secondary value is the string of the column's
Avro value: a date is its epoch day, a timestamp its epoch micros (or millis), a double Java's
``Double.toString``; a null value is escaped as NUL. A write changes entries by comparing, per key,
the value before (the file slices it touches) with the value after: a new key or a changed value
adds ``new$key``, a deleted key or a changed value tombstones ``old$key`` (``isDeleted=true``).

Index version 2 (Hudi 1.1, table version 9) puts all entries of one secondary value in one file
group (the hash of ``<escaped value>$``), so a lookup reads one file group; version 1 hashes the
whole key and a lookup reads them all.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieConfigError
from .keys import file_group_indexes

ENTRY_SCHEMA = pa.schema([("value", pa.string()), ("key", pa.string())])   # escaped value, record key
CHANGE_SCHEMA = pa.schema([("si_key", pa.string()), ("prefix", pa.string()), ("deleted", pa.bool_())])
_NUL = "\0"


def check_indexable(column: str, typ: pa.DataType) -> None:
    """``HoodieIndexUtils.isSecondaryIndexSupportedType``: strings, ints and longs (dates, times,
    timestamps included) and doubles; anything else is refused."""
    ok = (pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ)
          or pa.types.is_date32(typ) or pa.types.is_timestamp(typ) or pa.types.is_float64(typ)
          or (pa.types.is_time32(typ) and typ.unit == "ms") or (pa.types.is_time64(typ) and typ.unit == "us"))
    if not ok:
        raise HoodieConfigError(
            f"a secondary index cannot index column '{column}' of type {typ}: Hudi indexes string, int, "
            "long, date, time, timestamp and double columns; index another column")


def java_double_string(x: float) -> str:
    """``Double.toString``: plain decimals in [1e-3, 1e7), else ``<d.ddd>E<exp>``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        return repr(x)          # the shortest digits that read back, as Java's
    mantissa, exp = np.format_float_scientific(x, unique=True, trim="0").split("e")
    return f"{mantissa}E{int(exp)}"


def value_strings(values: pa.Array) -> pa.Array:
    """The secondary key of each value (null stays null), as Hudi writes it."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    typ = values.type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return values.cast(pa.string())
    if pa.types.is_float64(typ):
        return pa.array([None if v is None else java_double_string(v) for v in values.to_pylist()], pa.string())
    if pa.types.is_date32(typ) or pa.types.is_time32(typ):
        values = values.cast(pa.int32())
    elif pa.types.is_timestamp(typ) or pa.types.is_time64(typ):
        values = values.cast(pa.int64())
    return values.cast(pa.string())


def escape(values: pa.Array) -> pa.Array:
    """``escapeSpecialChars`` over an array: ``\\``, ``$`` and NUL get a ``\\``; null becomes NUL."""
    out = values
    for c in ("\\", "$", _NUL):
        out = pc.replace_substring(out, c, "\\" + c)
    return pc.fill_null(out, _NUL)


def entries(record_keys: pa.Array, values: pa.Array) -> pa.Table:
    """(escaped secondary value, record key) of each row: what the index holds for these rows."""
    return pa.table([escape(value_strings(values)), record_keys.cast(pa.string())], schema=ENTRY_SCHEMA)


def changes(before: pa.Table, after: pa.Table) -> pa.Table:
    """The entries a change of rows makes (CHANGE_SCHEMA): pairs only ``after`` has are added, pairs
    only ``before`` has are tombstoned; an unchanged value writes nothing."""
    old = set(zip(before.column("value").to_pylist(), before.column("key").to_pylist()))  # a slice's rows
    new = set(zip(after.column("value").to_pylist(), after.column("key").to_pylist()))
    rows = sorted([(v, k, True) for v, k in old - new] + [(v, k, False) for v, k in new - old])
    return change_rows(pa.array([r[0] for r in rows], pa.string()), pa.array([r[1] for r in rows], pa.string()),
                       pa.array([r[2] for r in rows], pa.bool_()))


def change_rows(values: pa.Array, record_keys: pa.Array, deleted: pa.Array) -> pa.Table:
    """CHANGE_SCHEMA rows from escaped values, record keys and deleted flags: the key is
    ``<value>$<escaped record key>`` and ``prefix`` is ``<value>$``, which file group version 2 hashes."""
    prefix = pc.binary_join_element_wise(values, "", "$")
    return pa.table([pc.binary_join_element_wise(prefix, escape(record_keys), ""), prefix, deleted], schema=CHANGE_SCHEMA)


def entry_file_groups(table: pa.Table, count: int, index_version: int) -> pa.Array:
    """The file group of each CHANGE_SCHEMA row (``secondary_index_file_group`` over an array)."""
    hashed = table.column("prefix" if index_version >= 2 else "si_key").combine_chunks()
    return pa.array(file_group_indexes(hashed, count), pa.int32())


def lookup_prefixes(values: Iterable) -> list[str]:
    """The key prefixes (``<escaped value>$``) of the values a query looks for."""
    strings = value_strings(pa.array(list(values)))
    return [p + "$" for p in escape(strings).to_pylist()]
