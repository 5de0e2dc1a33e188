"""Arrow data as Avro binary datums, encoded a column at a time for all rows at once.

Hudi's Avro data and delete blocks hold one Avro datum per record, as Java's GenericDatumWriter
writes it. Encoding row by row in Python costs seconds per 100k rows, so a schema is encoded into
"pieces": ``large_binary`` columns with one value per row (null meaning nothing) whose row-wise
concatenation is the datum. Primitives, union tags included, are built as byte matrices in numpy;
strings and bytes reuse the Arrow values; one Arrow join per record assembles the datums.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...schema.arrow import conform
from ...schema.avro import avro_to_arrow
from .avro_schema import nullable_branch, parse_schema, resolve

BINARY = pa.large_binary()
_NOTHING = pa.scalar(b"", BINARY)
_END_OF_BLOCKS = pa.scalar(b"\x00", BINARY)   # a zero count closes an Avro array or map
_SHIFTS = np.arange(0, 70, 7, dtype=np.uint64)


def encode_records(table: pa.Table, schema: Mapping[str, Any] | str) -> pa.Array:
    """One datum per row of ``table`` for the Avro record ``schema``; columns are matched by
    name and cast to the schema's Arrow types, missing ones are null."""
    schema = json.loads(schema) if isinstance(schema, str) else schema
    parsed, named = parse_schema(schema)
    table = conform(table, avro_to_arrow(schema))
    rows = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                      names=table.column_names)
    return join(*_pieces(rows, parsed, named, ""), n=table.num_rows)


def encode_column(values: pa.Array, avro_type: Any) -> pa.Array:
    """The Avro encoding of each value of ``values`` as ``avro_type`` (JSON-decoded)."""
    parsed, named = parse_schema(avro_type)
    return join(*_pieces(values, parsed, named, "value"), n=len(values))


def encode_tagged(values: pa.Array, branch: int, avro_type: Any, if_null: bytes) -> pa.Array:
    """Values as branch ``branch`` (of type ``avro_type``) of some union, nulls as ``if_null``."""
    parsed, named = parse_schema(avro_type)
    return join(*_tagged(values, branch, parsed, named, "value", if_null), n=len(values))


def join(*pieces: pa.Array, n: int | None = None) -> pa.Array:
    """Row-wise concatenation of encoded pieces (a null adds nothing); ``n`` rows if no pieces."""
    if not pieces:
        return constant(b"", n)
    return pc.binary_join_element_wise(*pieces, _NOTHING, null_handling="skip")


def varint(values: Any) -> pa.Array:
    """Avro ``long`` encoding (zigzag, then 7 bits per byte, low bits first) of each value."""
    return _rows(*_varints(np.asarray(values, dtype=np.int64)))


def encode_long(value: int) -> bytes:
    return varint([value])[0].as_py()


def constant(value: bytes, n: int) -> pa.Array:
    return fixed_width(np.tile(np.frombuffer(value, np.uint8), (n, 1)))


def fixed_width(matrix: np.ndarray) -> pa.Array:
    n, width = matrix.shape
    return _binary(np.arange(n + 1, dtype=np.int64) * width, matrix.reshape(-1))


def concatenated(encoded: pa.Array) -> bytes:
    """All values of an encoded column back to back."""
    offsets = np.frombuffer(encoded.buffers()[1], np.int64)[encoded.offset:encoded.offset + len(encoded) + 1]
    data = encoded.buffers()[2]
    return data[offsets[0]:offsets[-1]].to_pybytes() if data is not None and len(encoded) else b""


def _binary(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(BINARY, len(offsets) - 1, [
        None, pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int64)),
        pa.py_buffer(np.ascontiguousarray(data, dtype=np.uint8))])


def _rows(head: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """Row i is the first ``lengths[i]`` bytes of ``head[i]``."""
    data = head[np.arange(head.shape[1]) < lengths[:, None]]
    return _binary(np.concatenate([[0], np.cumsum(lengths)]), data)


def _varints(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Varint bytes as a matrix only as wide as the longest value needs, and each row's length."""
    z = ((v << 1) ^ (v >> 63)).view(np.uint64)
    nbytes = np.ones(len(z), np.int64)
    for shift in _SHIFTS[1:]:
        longer = z >> shift != 0
        if not longer.any():
            break
        nbytes += longer
    width = int(nbytes.max()) if len(z) else 1
    more = np.arange(width) < (nbytes - 1)[:, None]
    return ((z[:, None] >> _SHIFTS[:width]) & np.uint64(0x7F)).astype(np.uint8) | (more.astype(np.uint8) << 7), nbytes


@dataclass
class _Leaf:
    """A primitive's encoding: per row the first ``lengths`` bytes of ``head``, then ``tail``."""
    head: np.ndarray
    lengths: np.ndarray
    tail: pa.Array | None = None


def _kind(t: Any, path: str) -> str:
    kind = t if isinstance(t, str) else t["type"]
    if kind not in _LEAVES and kind not in _NESTED:
        raise ValueError(f"column {path!r}: unknown Avro type {kind!r}")
    return kind


def _pieces(arr: pa.Array, t: Any, named: dict, path: str) -> list[pa.Array]:
    t = resolve(t, named)
    if isinstance(t, list):
        branch, null = nullable_branch(t, path)
        return _tagged(arr, branch, t[branch], named, path, None if null is None else encode_long(null))
    if arr.null_count:
        raise ValueError(f"column {path!r} holds nulls but its Avro type {t!r} is not nullable")
    kind = _kind(t, path)
    if kind in _LEAVES:
        leaf = _LEAVES[kind](arr, t)
        return [_rows(leaf.head, leaf.lengths)] + ([leaf.tail] if leaf.tail is not None else [])
    return _NESTED[kind](arr, t, named, path)


def _tagged(arr: pa.Array, branch: int, t: Any, named: dict, path: str, if_null: bytes | None) -> list[pa.Array]:
    """A union value: the branch's tag then its encoding; a null row is ``if_null`` alone."""
    if arr.null_count and if_null is None:
        raise ValueError(f"column {path!r} holds nulls but its Avro union has no null branch")
    t = resolve(t, named)
    tag, if_null = np.frombuffer(encode_long(branch), np.uint8), np.frombuffer(if_null or b"", np.uint8)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    if isinstance(t, str) or t["type"] in _LEAVES:
        leaf = _LEAVES[_kind(t, path)](arr, t)   # null rows get placeholder bytes, dropped here
        head = np.zeros((len(arr), max(len(tag) + leaf.head.shape[1], len(if_null))), np.uint8)
        head[:, :len(tag)] = tag
        head[:, len(tag):len(tag) + leaf.head.shape[1]] = leaf.head
        head[~valid, :len(if_null)] = if_null
        lengths = np.where(valid, len(tag) + leaf.lengths, len(if_null))
        tail = [] if leaf.tail is None else [
            leaf.tail if not arr.null_count else pc.if_else(arr.is_valid(), leaf.tail, pa.scalar(None, BINARY))]
        return [_rows(head, lengths)] + tail
    encoded = join(*_pieces(arr.filter(valid), t, named, path), n=int(valid.sum()))
    tags = np.zeros((len(arr), max(len(tag), len(if_null))), np.uint8)
    tags[valid, :len(tag)] = tag
    tags[~valid, :len(if_null)] = if_null
    return [_rows(tags, np.where(valid, len(tag), len(if_null))),
            encoded.take(pa.array(np.cumsum(valid) - 1, mask=~valid))]


# --- primitives: nulls may occur (under a union) and get placeholder bytes --------------------------

def _null(arr, t):
    return _Leaf(np.zeros((len(arr), 0), np.uint8), np.zeros(len(arr), np.int64))


def _boolean(arr, t):
    return _fixed(arr.fill_null(False).to_numpy(zero_copy_only=False).astype(np.uint8)[:, None])


def _integer(arr, t):
    if pa.types.is_temporal(arr.type):   # dates, times and timestamps are stored as their counts
        arr = arr.cast(pa.int32() if arr.type.bit_width == 32 else pa.int64())
    return _Leaf(*_varints(arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)))


def _float(arr, t):
    return _fixed(arr.fill_null(0).to_numpy(zero_copy_only=False).astype("<f4").view(np.uint8).reshape(-1, 4))


def _double(arr, t):
    return _fixed(arr.fill_null(0).to_numpy(zero_copy_only=False).astype("<f8").view(np.uint8).reshape(-1, 8))


def _bytes(arr, t):
    if isinstance(t, dict) and t.get("logicalType") == "decimal":
        return _minimal_decimal(_big_endian(_as_decimal(arr, t)))
    values = arr.cast(BINARY)
    lengths = pc.binary_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    return _Leaf(*_varints(lengths.astype(np.int64)), tail=values)


def _string(arr, t):
    return _bytes(arr.cast(pa.large_string()), "bytes")


def _fixed_type(arr, t):
    size = t["size"]
    if t.get("logicalType") != "decimal":
        raw = np.frombuffer(arr.cast(pa.binary(size)).buffers()[1], np.uint8)
        return _fixed(raw[arr.offset * size:(arr.offset + len(arr)) * size].reshape(-1, size))
    be = _big_endian(_as_decimal(arr, t))
    width = be.shape[1]
    if size <= width:
        return _fixed(be[:, width - size:])
    sign = np.where(be[:, :1] >= 0x80, 0xFF, 0).astype(np.uint8)
    return _fixed(np.hstack([np.repeat(sign, size - width, axis=1), be]))


def _enum(arr, t):
    index = pc.index_in(arr, value_set=pa.array(t["symbols"]))
    if index.null_count > arr.null_count:
        raise ValueError(f"values that are not symbols of Avro enum {t['name']}")
    return _Leaf(*_varints(index.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)))


def _fixed(matrix: np.ndarray) -> _Leaf:
    return _Leaf(matrix, np.full(len(matrix), matrix.shape[1], np.int64))


def _as_decimal(arr: pa.Array, t: Mapping) -> pa.Array:
    precision, scale = t["precision"], t.get("scale", 0)
    return arr.cast(pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale))


def _big_endian(arr: pa.Array) -> np.ndarray:
    """Unscaled decimal values as big-endian two's complement rows of the Arrow width."""
    width = arr.type.byte_width
    raw = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * width:(arr.offset + len(arr)) * width]
    return raw.reshape(-1, width)[:, ::-1]


def _minimal_decimal(be: np.ndarray) -> _Leaf:
    """Length-prefixed shortest two's complement, as Java's BigInteger.toByteArray gives it."""
    width = be.shape[1]
    # A leading byte is redundant when it only repeats the sign of the byte after it.
    redundant = ((be[:, :-1] == 0) & (be[:, 1:] < 0x80)) | ((be[:, :-1] == 0xFF) & (be[:, 1:] >= 0x80))
    lengths = width - np.cumprod(redundant, axis=1).sum(axis=1)
    data = be[np.arange(width) >= (width - lengths)[:, None]]
    return _Leaf(*_varints(lengths), tail=_binary(np.concatenate([[0], np.cumsum(lengths)]), data))


_LEAVES = {
    "null": _null, "boolean": _boolean, "int": _integer, "long": _integer, "float": _float,
    "double": _double, "bytes": _bytes, "string": _string, "fixed": _fixed_type, "enum": _enum,
}


# --- nested types -----------------------------------------------------------------------------------

def _record(arr, t, named, path):
    return [piece for f in t["fields"]
            for piece in _pieces(arr.field(f["name"]), f["type"], named, f"{path}.{f['name']}".lstrip("."))]


def _array(arr, t, named, path):
    lengths = arr.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
    values = arr.flatten()
    return [_blocks(lengths, join(*_pieces(values, t["items"], named, f"{path}[]"), n=len(values)))]


def _map(arr, t, named, path):
    offsets = arr.offsets.to_numpy()
    start, count = offsets[0], offsets[-1] - offsets[0]
    pieces = (_pieces(arr.keys.slice(start, count), "string", named, f"{path}.key")
              + _pieces(arr.items.slice(start, count), t["values"], named, f"{path}.value"))
    return [_blocks(np.diff(offsets).astype(np.int64), join(*pieces, n=int(count)))]


def _blocks(lengths: np.ndarray, items: pa.Array) -> pa.Array:
    """Arrays and maps as Java writes them: one block (count, items) then a zero count."""
    grouped = pa.LargeListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(lengths)])), items)
    full = join(varint(lengths), pc.binary_join(grouped, _NOTHING), _END_OF_BLOCKS)
    return pc.if_else(pa.array(lengths == 0), _END_OF_BLOCKS, full)


_NESTED = {"record": _record, "error": _record, "array": _array, "map": _map}
