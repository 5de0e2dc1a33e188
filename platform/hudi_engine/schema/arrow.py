"""Arrow tables shaped for the files Hudi writes: base files and log blocks share these rules."""
from __future__ import annotations

import numpy as np
import pyarrow as pa


def conform(batch: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """Columns of ``schema`` in its order and types; columns the batch lacks become nulls."""
    table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
    columns = []
    for field in schema:
        if field.name in table.column_names:
            col = table[field.name]
            columns.append(col if col.type == field.type else col.cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def repeat_string(value: str, n: int) -> pa.Array:
    """``value`` n times, built straight from buffers (the meta columns repeat one string per file)."""
    data = value.encode()
    offsets = np.arange(n + 1, dtype=np.int64) * len(data)
    kind = pa.StringArray if offsets[-1] < 2**31 else pa.LargeStringArray
    if kind is pa.StringArray:
        offsets = offsets.astype(np.int32)
    return kind.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data * n))


def parquet_codec(name: str) -> str:
    return {"uncompressed": "none"}.get(name.lower(), name.lower())
