"""Avro binary datums back to Arrow, one field of every record at a time.

The datums of a block are independent and their starts are known (each has a length prefix), so
the decoder keeps one cursor per record and reads a field for all records in one numpy step: a
record of k fields costs about k vectorized reads whatever the number of rows. Unions split the
cursors by branch; arrays and maps advance item by item across all records still holding items,
so they cost one step per item of the longest collection. Columns come out typed by
``schema.avro.avro_to_arrow``.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Collection, Mapping

import numpy as np
import pyarrow as pa

from ...schema.avro import avro_to_arrow
from .avro_schema import nullable_branch, parse_schema, resolve


def decode_records(data: bytes, starts: np.ndarray, lengths: np.ndarray,
                   schema: Mapping[str, Any] | str, columns: Collection[str] | None = None) -> pa.Table:
    """The datums at ``data[starts[i]:starts[i] + lengths[i]]``, records of ``schema``. With
    ``columns``, only those top-level fields are built (in the schema's order); the others are
    stepped over, which costs a varint read per record for a string and nothing for a number."""
    target, parsed, named = _schema(schema) if isinstance(schema, str) else _parts(schema)
    starts = np.asarray(starts, np.int64)
    reader = _Reader(data, named)
    wanted = None if columns is None else set(columns)
    out, pos = [], starts
    for f, field in zip(parsed["fields"], target):
        if wanted is None or field.name in wanted:
            values, pos = reader.decode(f["type"], field.type, pos)
            out.append((field, values))
        else:
            pos = reader.skip(f["type"], pos)
    if np.any(pos > starts + np.asarray(lengths, np.int64)):
        raise ValueError("Avro datums run past their records: the data does not match the schema")
    if not out:    # no field asked for: the records still count
        return pa.table({"_": pa.nulls(len(starts))}).drop_columns(["_"])
    return pa.Table.from_arrays([v for _, v in out], schema=pa.schema([f for f, _ in out]))


@lru_cache(maxsize=64)
def _schema(text: str) -> tuple[pa.Schema, Any, dict]:
    """A writer schema's Arrow form and parse, once per schema text (every block carries its own)."""
    return _parts(json.loads(text))


def _parts(schema: Mapping[str, Any]) -> tuple[pa.Schema, Any, dict]:
    parsed, named = parse_schema(schema)
    return avro_to_arrow(schema), parsed, named


class _Reader:
    def __init__(self, data: bytes, named: dict):
        self.end = len(data)
        self.buf = np.frombuffer(data + bytes(10), np.uint8)   # room for a varint window at the end
        self.named = named

    def decode(self, t: Any, target: pa.DataType, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
        """Values of Avro type ``t`` at the cursors ``pos`` and the cursors after them."""
        t = resolve(t, self.named)
        if isinstance(t, list):
            return self._union(t, target, pos)
        kind = t if isinstance(t, str) else t["type"]
        if kind not in _DECODERS:
            raise ValueError(f"unknown Avro type {kind!r}")
        if pos.size and pos.max() > self.end:
            raise ValueError("Avro datums run past the block")
        return _DECODERS[kind](self, t, target, pos)

    def skip(self, t: Any, pos: np.ndarray) -> np.ndarray:
        """The cursors after values of Avro type ``t`` at ``pos``, building nothing for scalars."""
        t = resolve(t, self.named)
        if isinstance(t, list):
            branch, present, pos = self._branch(t, pos)
            if present.all():
                return self.skip(t[branch], pos)
            pos = pos.copy()
            pos[present] = self.skip(t[branch], pos[present])
            return pos
        kind = t if isinstance(t, str) else t["type"]
        if pos.size and pos.max() > self.end:
            raise ValueError("Avro datums run past the block")
        if kind == "null":
            return pos
        if kind == "boolean":
            return pos + 1
        if kind in ("int", "long", "enum"):
            return self.long(pos)[1]
        if kind in ("float", "double"):
            return pos + (4 if kind == "float" else 8)
        if kind in ("bytes", "string"):
            lengths, pos = self.long(pos)
            if np.any(lengths < 0):
                raise ValueError("Avro bytes run past the block")
            return pos + lengths
        if kind == "fixed":
            return pos + t["size"]
        if kind in ("record", "error"):
            for f in t["fields"]:
                pos = self.skip(f["type"], pos)
            return pos
        if kind == "array":
            return self._skip_blocks(pos, [t["items"]])
        if kind == "map":
            return self._skip_blocks(pos, ["string", t["values"]])
        raise ValueError(f"unknown Avro type {kind!r}")

    def _skip_blocks(self, pos: np.ndarray, parts: list) -> np.ndarray:
        """Arrays and maps stepped over item by item, as :meth:`_blocks` reads them."""
        pos = pos.copy()
        remaining, pos = self._block_count(pos)
        active = np.flatnonzero(remaining)
        while active.size:
            at = pos[active]
            for t in parts:
                at = self.skip(t, at)
            pos[active] = at
            remaining[active] -= 1
            done = active[remaining[active] == 0]
            if done.size:
                remaining[done], pos[done] = self._block_count(pos[done])
            active = np.flatnonzero(remaining)
        return pos

    def long(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Avro varints at the cursors; most are one byte, so later bytes only touch the rest."""
        byte = self.buf[pos]
        z = (byte & 0x7F).astype(np.uint64)
        nbytes = np.ones(len(pos), np.int64)
        todo = np.flatnonzero(byte >= 0x80)
        for k in range(1, 10):
            if not todo.size:
                break
            byte = self.buf[pos[todo] + k]
            z[todo] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
            nbytes[todo] += 1
            todo = todo[byte >= 0x80]
        else:
            if todo.size:
                raise ValueError("malformed Avro varint")
        return (z >> np.uint64(1)).astype(np.int64) ^ -(z & np.uint64(1)).astype(np.int64), pos + nbytes

    def _branch(self, branches: list, pos: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """A nullable union's value branch, which records hold it (not null), the cursors after the tag."""
        branch, null = nullable_branch(branches, "")
        tag, pos = self.long(pos)
        present = tag == branch
        if not (present | (tag == (-1 if null is None else null))).all():
            raise ValueError("Avro union branch out of range")
        return branch, present, pos

    def _union(self, branches: list, target, pos):
        branch, present, pos = self._branch(branches, pos)
        if present.all():
            return self.decode(branches[branch], target, pos)
        found, found_pos = self.decode(branches[branch], target, pos[present])
        pos = pos.copy()
        pos[present] = found_pos
        return found.take(pa.array(np.cumsum(present) - 1, mask=~present)), pos

    def _null(self, t, target, pos):
        return pa.nulls(len(pos), target), pos

    def _boolean(self, t, target, pos):
        return pa.array(self.buf[pos] != 0), pos + 1

    def _int(self, t, target, pos):
        values, pos = self.long(pos)
        storage = pa.int32() if target.bit_width == 32 else pa.int64()   # int32, date32, time32
        return pa.array(values.astype(storage.to_pandas_dtype())).cast(target), pos

    def _float(self, t, target, pos):
        return pa.array(self._matrix(pos, 4).view("<f4").ravel()), pos + 4

    def _double(self, t, target, pos):
        return pa.array(self._matrix(pos, 8).view("<f8").ravel()), pos + 8

    def _bytes(self, t, target, pos):
        lengths, pos = self.long(pos)
        ends = pos + lengths
        if np.any(lengths < 0) or np.any(ends > self.end) or np.any(ends[:-1] > pos[1:]):
            raise ValueError("Avro bytes run past the block")
        if pa.types.is_decimal(target):
            offsets = np.concatenate([[0], np.cumsum(lengths)])
            return _decimals(offsets, self.buf[np.repeat(pos - offsets[:-1], lengths) + np.arange(offsets[-1])],
                             target), ends
        # The values lie in cursor order without overlap, so the whole buffer with offsets
        # start0, end0, start1, end1, ... holds them at the even positions (gaps in between).
        bounds = np.column_stack([pos, ends]).ravel()
        spans = pa.Array.from_buffers(pa.large_binary(), max(len(bounds) - 1, 0),
                                      [None, pa.py_buffer(bounds), pa.py_buffer(self.buf)])
        return spans.take(pa.array(np.arange(0, len(bounds) - 1, 2))).cast(target), ends

    def _fixed(self, t, target, pos):
        size = t["size"]
        if np.any(pos + size > self.end):
            raise ValueError("Avro fixed runs past the block")
        data = self._matrix(pos, size).ravel()
        if pa.types.is_decimal(target):
            return _decimals(np.arange(len(pos) + 1) * size, data, target), pos + size
        return pa.Array.from_buffers(target, len(pos), [None, pa.py_buffer(data)]), pos + size

    def _enum(self, t, target, pos):
        index, pos = self.long(pos)
        return pa.array(t["symbols"], pa.string()).take(pa.array(index)).cast(target), pos

    def _record(self, t, target, pos):
        children = []
        for f, field in zip(t["fields"], target):
            child, pos = self.decode(f["type"], field.type, pos)
            children.append(child)
        return pa.StructArray.from_arrays(children, fields=list(target)), pos

    def _array(self, t, target, pos):
        offsets, (items,), pos = self._blocks(
            pos, lambda p: self._items([(t["items"], target.value_type)], p), [target.value_type])
        return pa.ListArray.from_arrays(offsets, items, type=target), pos

    def _map(self, t, target, pos):
        parts = [("string", target.key_type), (t["values"], target.item_type)]
        offsets, (keys, items), pos = self._blocks(
            pos, lambda p: self._items(parts, p), [target.key_type, target.item_type])
        return pa.MapArray.from_arrays(offsets, keys, items, type=target), pos

    def _items(self, parts: list, pos):
        out = []
        for t, target in parts:
            values, pos = self.decode(t, target, pos)
            out.append(values)
        return out, pos

    def _blocks(self, pos, read_item, types):
        """Arrays and maps: blocks of items (a negative count is followed by the block's byte
        size) until a zero count. Returns list offsets, the item columns, the cursors after."""
        pos = pos.copy()
        remaining, pos = self._block_count(pos)
        counts = remaining.copy()
        rounds, rows = [], []
        active = np.flatnonzero(remaining)
        while active.size:
            items, pos[active] = read_item(pos[active])
            rounds.append(items)
            rows.append(active)
            remaining[active] -= 1
            done = active[remaining[active] == 0]
            if done.size:
                more, pos[done] = self._block_count(pos[done])
                remaining[done] = more
                counts[done] += more
            active = np.flatnonzero(remaining)
        # rounds hold the i-th item of each row; a stable sort by row restores each row's order
        order = pa.array(np.argsort(np.concatenate(rows), kind="stable")) if rows else pa.array([], pa.int64())
        columns = [pa.concat_arrays([r[i] for r in rounds] or [pa.array([], t)]).take(order)
                   for i, t in enumerate(types)]
        return pa.array(np.concatenate([[0], np.cumsum(counts)]), pa.int32()), columns, pos

    def _block_count(self, pos):
        count, pos = self.long(pos)
        sized = count < 0
        if sized.any():
            count = np.abs(count)
            _, pos[sized] = self.long(pos[sized])
        return count, pos

    def _matrix(self, pos, width):
        return np.ascontiguousarray(self.buf[pos[:, None] + np.arange(width)])


_DECODERS = {
    "null": _Reader._null, "boolean": _Reader._boolean, "int": _Reader._int, "long": _Reader._int,
    "float": _Reader._float, "double": _Reader._double, "bytes": _Reader._bytes,
    "string": _Reader._bytes, "fixed": _Reader._fixed, "enum": _Reader._enum,
    "record": _Reader._record, "error": _Reader._record, "array": _Reader._array, "map": _Reader._map,
}


def _decimals(offsets: np.ndarray, data: np.ndarray, target: pa.DataType) -> pa.Array:
    """Big-endian two's complement values (Avro's decimal), ``data[offsets[i]:offsets[i+1]]``,
    as an Arrow decimal column."""
    n, width = len(offsets) - 1, target.byte_width
    starts, lengths = offsets[:-1], np.diff(offsets)
    if n and lengths.max() > width:
        raise ValueError(f"decimal value wider than {target}")
    first = np.zeros(n, np.uint8)
    first[lengths > 0] = data[starts[lengths > 0]]
    out = np.zeros((n, width), np.uint8)
    out[first >= 0x80] = 0xFF   # sign extension of negative values
    # each value's bytes go right-aligned into its row
    out[np.repeat(np.arange(n), lengths),
        np.arange(len(data)) - np.repeat(starts, lengths) + np.repeat(width - lengths, lengths)] = data
    return pa.Array.from_buffers(target, n, [None, pa.py_buffer(np.ascontiguousarray(out[:, ::-1]))])
