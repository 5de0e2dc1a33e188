"""Small Arrow helpers the key generator modules share: column lookup, masks, row descriptions."""
from __future__ import annotations

from typing import Callable, Sequence, Union

import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..errors import HoodieValidationError

Batch = Union[pa.RecordBatch, pa.Table]


def _column(batch: Batch, name: str) -> pa.Array:
    col = batch.column(name)
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    return col


def _resolve(batch: Batch, path: str, role: str) -> pa.Array:
    """Column ``a`` or nested ``a.b.c`` (a null parent gives null), as HoodieAvroUtils reads it."""
    parts = path.split(".")
    names = batch.schema.names
    option = (C.RECORDKEY_FIELDS if role == "record key" else C.PARTITION_FIELDS).alternatives[0]
    if parts[0] not in names:
        near = [n for n in names if n.lower() == parts[0].lower()]
        hint = f" (did you mean {near[0]!r}? names are case-sensitive)" if near else ""
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise HoodieValidationError(
            f"{role.capitalize()} field {path!r} is not in the input{hint}; columns are: {shown}. "
            f"Add the column or set {option} to existing field(s).")
    arr = _column(batch, parts[0])
    for depth, part in enumerate(parts[1:], start=1):
        t = arr.type
        if not pa.types.is_struct(t) or t.get_field_index(part) < 0:
            parent = ".".join(parts[:depth])
            children = [t.field(i).name for i in range(t.num_fields)] if pa.types.is_struct(t) else []
            raise HoodieValidationError(
                f"{role.capitalize()} field {path!r} is not in the input: {parent!r} "
                + (f"has fields {children}" if children else f"is {t}, not a struct")
                + f". Fix {option}.")
        arr = pc.struct_field(arr, part)
    return arr


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(pc.fill_null(mask, False), min_count=0).as_py())


def _all(mask: pa.Array) -> bool:
    return bool(pc.all(pc.fill_null(mask, False), min_count=0).as_py())


def _first_true(mask: pa.Array) -> int:
    return pc.index(pc.fill_null(mask, False), True).as_py()


def _describe_row(batch: Batch, row: int, fields: Sequence[str], limit: int = 8) -> dict:
    """The bad record as a short dict: key/partition columns first, long values cut."""
    names = batch.schema.names
    first = [f.split(".")[0] for f in fields]
    order = list(dict.fromkeys([f for f in first if f in names] + names))[:limit]
    out = {}
    for name in order:
        value = _column(batch, name)[row].as_py()
        text = repr(value)
        out[name] = value if len(text) <= 40 else text[:37] + "..."
    if len(names) > limit:
        out["..."] = f"{len(names) - limit} more columns"
    return out


def _floor_divmod(values: pa.Array, n: int) -> tuple[pa.Array, pa.Array]:
    q = pc.divide(values, n)
    r = pc.subtract(values, pc.multiply(q, n))
    neg = pc.fill_null(pc.less(r, 0), False)
    return pc.if_else(neg, pc.subtract(q, 1), q), pc.if_else(neg, pc.add(r, n), r)


def _map_rare(values: pa.Array, mask: pa.Array, fn: Callable[[str], str],
              keys: pa.Array | None = None) -> pa.Array:
    """Replace ``values[mask]`` by ``fn(key)`` (key defaults to the value), once per distinct key."""
    mask = pc.fill_null(mask, False)
    if not _any(mask):
        return values
    keys = values if keys is None else keys
    distinct = pc.unique(pc.filter(keys, mask))
    mapped = pa.array([fn(v) for v in distinct.to_pylist()], pa.string())
    return pc.if_else(mask, pc.take(mapped, pc.index_in(keys, value_set=distinct)), values)


def _is_string_view(t: pa.DataType) -> bool:
    fn = getattr(pa.types, "is_string_view", None)
    return bool(fn and fn(t))


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t)
