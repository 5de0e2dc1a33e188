"""Arrow data as Avro binary datums, encoded a column at a time for all rows at once.

Hudi's Avro data and delete blocks hold one Avro datum per record, as Java's GenericDatumWriter
writes it. Encoding row by row in Python costs seconds per 100k rows, so every column is encoded
for all rows with numpy (numbers) and Arrow kernels (joining), giving one ``large_binary`` value
per row; a record's datum is its fields' values joined.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...schema.avro import avro_to_arrow
from ...write.base_file import conform

BINARY = pa.large_binary()
_NOTHING = pa.scalar(b"", BINARY)
_END_OF_BLOCKS = pa.scalar(b"\x00", BINARY)   # a zero count closes an Avro array or map


def encode_records(table: pa.Table, schema: Mapping[str, Any] | str) -> pa.Array:
    """One datum per row of ``table`` for the Avro record ``schema``; columns are matched by
    name and cast to the schema's Arrow types, missing ones are null."""
    schema = json.loads(schema) if isinstance(schema, str) else schema
    parsed, named = parse_schema(schema)
    table = conform(table, avro_to_arrow(schema))
    rows = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                      names=table.column_names)
    return _encode(rows, parsed, named, "") if table.num_columns else constant(b"", table.num_rows)


def encode_column(values: pa.Array, avro_type: Any) -> pa.Array:
    """The Avro encoding of each value of ``values`` as ``avro_type`` (parsed JSON)."""
    parsed, named = parse_schema(avro_type)
    return _encode(values, parsed, named, "value")


def join(*columns: pa.Array) -> pa.Array:
    """Row-wise concatenation of encoded columns."""
    return pc.binary_join_element_wise(*columns, _NOTHING) if len(columns) > 1 else columns[0]


def varint(values: Any) -> pa.Array:
    """Avro ``long`` encoding (zigzag, then 7 bits per byte, low bits first) of each value."""
    v = np.asarray(values, dtype=np.int64)
    z = ((v << 1) ^ (v >> 63)).view(np.uint64)[:, None]
    shifts = np.arange(0, 70, 7, dtype=np.uint64)
    nbytes = 1 + (z >> shifts[1:] != 0).sum(axis=1)
    more = np.arange(10) < (nbytes - 1)[:, None]
    groups = ((z >> shifts) & np.uint64(0x7F)).astype(np.uint8) | (more.astype(np.uint8) << 7)
    data = groups[np.arange(10) < nbytes[:, None]]
    return _binary(np.concatenate([[0], np.cumsum(nbytes)]), data)


def encode_long(value: int) -> bytes:
    return varint([value])[0].as_py()


def constant(value: bytes, n: int) -> pa.Array:
    return fixed_width(np.tile(np.frombuffer(value, np.uint8), (n, 1)))


def concatenated(encoded: pa.Array) -> bytes:
    """All values of an encoded column back to back."""
    offsets = np.frombuffer(encoded.buffers()[1], np.int64)[encoded.offset:encoded.offset + len(encoded) + 1]
    data = encoded.buffers()[2]
    return data[offsets[0]:offsets[-1]].to_pybytes() if data is not None and len(encoded) else b""


def parse_schema(schema: Any) -> tuple[Any, dict]:
    """fastavro's parse of a (JSON-decoded) schema: references to named types become full names,
    resolvable in the returned dict."""
    named: dict = {}
    return fastavro.parse_schema(schema, named_schemas=named), named


def _binary(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(BINARY, len(offsets) - 1, [
        None, pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int64)),
        pa.py_buffer(np.ascontiguousarray(data, dtype=np.uint8))])


def fixed_width(matrix: np.ndarray) -> pa.Array:
    n, width = matrix.shape
    return _binary(np.arange(n + 1, dtype=np.int64) * width, matrix.reshape(-1))


def _encode(arr: pa.Array, t: Any, named: dict, path: str) -> pa.Array:
    if isinstance(t, str) and t in named:
        t = named[t]
    if isinstance(t, list):
        return _union(arr, t, named, path)
    if isinstance(t, dict) and (not isinstance(t["type"], str) or t["type"] in named):
        return _encode(arr, t["type"], named, path)
    if arr.null_count:
        raise ValueError(f"column {path!r} holds nulls but its Avro type {t!r} is not nullable")
    kind = t if isinstance(t, str) else t["type"]
    encoder = _ENCODERS.get(kind)
    if encoder is None:
        raise ValueError(f"column {path!r}: unknown Avro type {kind!r}")
    return encoder(arr, t, named, path)


def _union(arr: pa.Array, branches: list, named: dict, path: str) -> pa.Array:
    values = [i for i, b in enumerate(branches) if b != "null"]
    if len(values) != 1:
        raise NotImplementedError(f"column {path!r}: Avro unions of several non-null types are not supported")
    if_null = encode_long(branches.index("null")) if "null" in branches else None
    return _tagged(arr, values[0], branches[values[0]], named, path, if_null)


def encode_tagged(values: pa.Array, branch: int, avro_type: Any, if_null: bytes) -> pa.Array:
    """Values as branch ``branch`` (of type ``avro_type``) of some union, nulls as ``if_null``."""
    parsed, named = parse_schema(avro_type)
    return _tagged(values, branch, parsed, named, "value", if_null)


def _tagged(arr: pa.Array, branch: int, t: Any, named: dict, path: str, if_null: bytes | None) -> pa.Array:
    tag = pa.scalar(encode_long(branch), BINARY)
    if not arr.null_count:
        return join(tag, _encode(arr, t, named, path))
    if if_null is None:
        raise ValueError(f"column {path!r} holds nulls but its Avro union has no null branch")
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    encoded = _encode(arr.filter(valid), t, named, path)
    spread = encoded.take(pa.array(np.cumsum(valid) - 1, mask=~valid))
    return pc.fill_null(join(tag, spread), pa.scalar(if_null, BINARY))


def _null(arr, t, named, path):
    return constant(b"", len(arr))


def _boolean(arr, t, named, path):
    return fixed_width(arr.to_numpy(zero_copy_only=False).astype(np.uint8)[:, None])


def _integer(arr, t, named, path):
    if pa.types.is_temporal(arr.type):   # dates, times and timestamps are stored as their counts
        arr = arr.cast(pa.int32() if arr.type.bit_width == 32 else pa.int64())
    return varint(arr.to_numpy(zero_copy_only=False))


def _float(arr, t, named, path):
    return fixed_width(arr.to_numpy(zero_copy_only=False).astype("<f4").view(np.uint8).reshape(-1, 4))


def _double(arr, t, named, path):
    return fixed_width(arr.to_numpy(zero_copy_only=False).astype("<f8").view(np.uint8).reshape(-1, 8))


def _bytes(arr, t, named, path):
    if isinstance(t, dict) and t.get("logicalType") == "decimal":
        return _minimal_decimal(_big_endian(_as_decimal(arr, t)))
    values = arr.cast(BINARY)
    return join(varint(pc.binary_length(values).to_numpy(zero_copy_only=False)), values)


def _fixed(arr, t, named, path):
    size = t["size"]
    if t.get("logicalType") != "decimal":
        return fixed_width(np.frombuffer(arr.cast(pa.binary(size)).buffers()[1], np.uint8)
                            [arr.offset * size:(arr.offset + len(arr)) * size].reshape(-1, size))
    be = _big_endian(_as_decimal(arr, t))
    width = be.shape[1]
    if size <= width:
        return fixed_width(be[:, width - size:])
    sign = np.where(be[:, :1] >= 0x80, 0xFF, 0).astype(np.uint8)
    return fixed_width(np.hstack([np.repeat(sign, size - width, axis=1), be]))


def _as_decimal(arr: pa.Array, t: Mapping) -> pa.Array:
    precision, scale = t["precision"], t.get("scale", 0)
    return arr.cast(pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale))


def _big_endian(arr: pa.Array) -> np.ndarray:
    """Unscaled decimal values as big-endian two's complement rows of the Arrow width."""
    width = arr.type.byte_width
    raw = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * width:(arr.offset + len(arr)) * width]
    return raw.reshape(-1, width)[:, ::-1]


def _minimal_decimal(be: np.ndarray) -> pa.Array:
    """Length-prefixed shortest two's complement, as Java's BigInteger.toByteArray gives it."""
    width = be.shape[1]
    # A leading byte is redundant when it only repeats the sign of the byte after it.
    redundant = ((be[:, :-1] == 0) & (be[:, 1:] < 0x80)) | ((be[:, :-1] == 0xFF) & (be[:, 1:] >= 0x80))
    skip = np.cumprod(redundant, axis=1).sum(axis=1)
    data = be[np.arange(width) >= skip[:, None]]
    lengths = width - skip
    return join(varint(lengths), _binary(np.concatenate([[0], np.cumsum(lengths)]), data))


def _string(arr, t, named, path):
    return _bytes(arr.cast(pa.large_string()).cast(BINARY), "bytes", named, path)


def _enum(arr, t, named, path):
    index = pc.index_in(arr, value_set=pa.array(t["symbols"]))
    if index.null_count:
        raise ValueError(f"column {path!r} holds values that are not symbols of its Avro enum")
    return varint(index.to_numpy(zero_copy_only=False))


def _record(arr, t, named, path):
    fields = [_encode(arr.field(f["name"]), f["type"], named, f"{path}.{f['name']}".lstrip("."))
              for f in t["fields"]]
    return join(*fields) if fields else constant(b"", len(arr))


def _array(arr, t, named, path):
    lengths = arr.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
    return _blocks(lengths, _encode(arr.flatten(), t["items"], named, f"{path}[]"))


def _map(arr, t, named, path):
    offsets = arr.offsets.to_numpy()
    start, count = offsets[0], offsets[-1] - offsets[0]
    keys = _encode(arr.keys.slice(start, count), "string", named, f"{path}.key")
    values = _encode(arr.items.slice(start, count), t["values"], named, f"{path}.value")
    return _blocks(np.diff(offsets).astype(np.int64), join(keys, values))


def _blocks(lengths: np.ndarray, items: pa.Array) -> pa.Array:
    """Arrays and maps as Java writes them: one block (count, items) then a zero count."""
    grouped = pa.LargeListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(lengths)])), items)
    full = join(varint(lengths), pc.binary_join(grouped, _NOTHING), _END_OF_BLOCKS)
    return pc.if_else(pa.array(lengths == 0), _END_OF_BLOCKS, full)


_ENCODERS = {
    "null": _null, "boolean": _boolean, "int": _integer, "long": _integer, "float": _float,
    "double": _double, "bytes": _bytes, "string": _string, "fixed": _fixed, "enum": _enum,
    "record": _record, "error": _record, "array": _array, "map": _map,
}
