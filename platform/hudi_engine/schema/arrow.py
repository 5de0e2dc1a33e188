"""Arrow tables shaped for the files Hudi writes: base files and log blocks share these rules."""
from __future__ import annotations

from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieValidationError

Rows = TypeVar("Rows", pa.Table, pa.Array)


def conform(batch: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """Columns of ``schema`` in its order and types; columns the batch lacks become nulls."""
    table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
    columns = []
    for field in schema:
        if field.name in table.column_names:
            col = table[field.name]
            col = col if col.type == field.type else col.cast(field.type)
            if _has_required_children(field.type):
                col = pa.chunked_array([_settle(chunk, field.name) for chunk in col.chunks], field.type)
            columns.append(col)
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _has_required_children(t: pa.DataType) -> bool:
    if pa.types.is_struct(t):
        return any(not f.nullable or _has_required_children(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_required_children(t.value_type)
    return False


def _settle(array: pa.Array, path: str) -> pa.Array:
    """``array`` with a value in every non-nullable field under a null struct. Spark hands over a
    null struct with nulls in its fields, which Parquet writers refuse for a required field even
    though no reader ever sees them; a null in a required field of a present struct is bad input."""
    t = array.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        start, end = array.offsets[0].as_py(), array.offsets[-1].as_py()   # a slice sees part of its values
        values = _settle(array.values.slice(start, end - start), f"{path}.element")
        return type(array).from_arrays(pc.subtract(array.offsets, start), values, type=t, mask=array.is_null())
    if not pa.types.is_struct(t):
        return array
    absent = array.is_null()
    children = []
    for i, field in enumerate(t):
        child = _settle(array.field(i), f"{path}.{field.name}")
        if not field.nullable and child.null_count:
            bad = pc.and_(child.is_null(), pc.invert(absent))
            if pc.any(bad).as_py():
                raise HoodieValidationError(
                    f"field '{path}.{field.name}' is declared non-nullable but is null in row "
                    f"{pc.index(bad, True).as_py()} of its batch; make the field nullable or give it a value")
            child = pc.if_else(child.is_null(), pa.repeat(_zero(field.type), len(child)), child)
        children.append(child)
    return pa.StructArray.from_arrays(children, fields=list(t), mask=absent)


def _zero(t: pa.DataType) -> pa.Scalar:
    """A placeholder value of ``t`` for slots no reader sees."""
    if pa.types.is_struct(t):
        return pa.scalar({f.name: _zero(f.type).as_py() for f in t}, t)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        return pa.scalar([], t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pa.scalar(b"\0" * getattr(t, "byte_width", 0), t)
    if pa.types.is_boolean(t):
        return pa.scalar(False)
    return pa.array([0], t)[0]


def repeat_string(value: str, n: int) -> pa.Array:
    """``value`` n times, built straight from buffers (the meta columns repeat one string per file)."""
    data = value.encode()
    offsets = np.arange(n + 1, dtype=np.int64) * len(data)
    kind = pa.StringArray if offsets[-1] < 2**31 else pa.LargeStringArray
    if kind is pa.StringArray:
        offsets = offsets.astype(np.int32)
    return kind.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data * n))


def split_by_value(table: Rows, values: pa.Array | pa.ChunkedArray) -> list[tuple[str, Rows]]:
    """``table``'s rows (or an array's values) grouped by ``values`` (one string per row, no nulls), groups in sorted
    order, rows in arrival order within each: a stable counting sort on dictionary codes, one
    ``take``, no string sort."""
    encoded = pc.dictionary_encode(values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values)
    names = encoded.dictionary.to_pylist()
    if len(names) <= 1:
        return [(names[0], table)] if names else []
    rank = np.empty(len(names), np.int64)
    rank[np.argsort(np.array(names, object))] = np.arange(len(names))
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    counts = np.bincount(codes, minlength=len(names))
    table = table.take(pa.array(np.argsort(codes, kind="stable")))
    out, start = [], 0
    for name, count in zip(sorted(names), counts.tolist()):
        out.append((name, table.slice(start, count)))
        start += count
    return out


def parquet_codec(name: str) -> str:
    return {"uncompressed": "none"}.get(name.lower(), name.lower())
