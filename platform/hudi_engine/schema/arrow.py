"""Arrow tables shaped for the files Hudi writes: base files and log blocks share these rules."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


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
    return pc.fill_null(pa.nulls(n, pa.string()), value)


def parquet_codec(name: str) -> str:
    return {"uncompressed": "none"}.get(name.lower(), name.lower())
