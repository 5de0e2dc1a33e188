"""Reading one file slice into Arrow, with no engine: used by the ``hudi`` data source's tasks and
by in-process reads."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..file_group.fs_view import FileSlice
from ..schema.avro import META_FIELDS
from ..storage import Storage
from ..write.base_file import conform


def read_file_slice(storage: Storage, file_slice: FileSlice, schema: pa.Schema,
                    commit_times: tuple[str, ...] | None = None) -> pa.Table:
    if file_slice.base_file is None:
        return schema.empty_table()
    table = pq.read_table(storage.full(file_slice.base_file.path), filesystem=storage.fs)
    if commit_times is not None:
        table = table.filter(pc.is_in(table[META_FIELDS[0]], value_set=pa.array(commit_times, pa.string())))
    return conform(table, schema)
