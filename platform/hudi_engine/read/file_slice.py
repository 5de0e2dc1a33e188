"""Reading one file slice into Arrow, with no engine: the unit of work of merge-on-read queries,
the ``hudi`` data source's tasks and compaction. One task holds one file group's merge."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import groupby
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..file_group.base_file import parquet_file, read_base_file
from ..file_group.fs_view import FileSlice
from ..file_group.log_file import BlockType, LogBlock, avro_blocks_records, data_block_records, delete_block_keys
from ..file_group.log_scanner import Visibility, read_valid_blocks
from ..keygen import KeyGenerator
from ..merge.keep_values import absent_masks, with_absent
from ..merge.record_merger import IS_DELETED, OP_COLUMN, MergeSpec, merge
from ..schema.arrow import conform
from ..schema.meta_fields import COMMIT_TIME, RECORD_KEY
from ..storage import Storage
from .log_merge import DATA, DELETES, LogPart, combine_log_records, merge_slice, unmerged_slice


@dataclass(frozen=True)
class SliceMerge:
    """How a query combines a slice's base file and log files."""
    visibility: Visibility
    spec: MergeSpec
    skip_merge: bool = False       # hoodie.datasource.merge.type=skip_merge
    keygen: KeyGenerator | None = None   # tables without meta columns derive keys from the data


def read_file_slice(storage: Storage, file_slice: FileSlice, schema: pa.Schema,
                    commit_times: tuple[str, ...] | None = None,
                    how: SliceMerge | None = None) -> pa.Table:
    """The slice's rows in ``schema``; with ``how`` its log files are merged in, without it (read
    optimized, copy-on-write) the base file alone is read."""
    table = slice_rows(storage, file_slice, schema, how).rows
    if table is None:
        return schema.empty_table()
    if commit_times is not None and COMMIT_TIME in table.column_names:
        table = table.filter(pc.is_in(table[COMMIT_TIME], value_set=pa.array(commit_times, pa.string())))
    return conform(table, schema)


class SliceRows(NamedTuple):
    rows: pa.Table | None          # the slice's rows; None when it has none
    base: pa.Table | None          # its base file's rows
    parts: list[LogPart]           # the log records merged into them


def slice_rows(storage: Storage, file_slice: FileSlice, schema: pa.Schema,
               how: SliceMerge | None) -> SliceRows:
    work = _work_schema(schema, how)
    base = None
    if file_slice.base_file is not None:
        base = conform(read_base_file(storage, file_slice.base_file.path), work)
        base = _with_keys(base, how)
    if how is None or not file_slice.log_files:
        return SliceRows(base, base, [])
    parts = log_parts(storage, file_slice, work, how)
    rows = unmerged_slice(base, parts) if how.skip_merge else merge_slice(base, parts, how.spec)
    return SliceRows(rows, base, parts)


def combined_log(storage: Storage, file_slice: FileSlice, schema: pa.Schema, how: SliceMerge) -> pa.Table | None:
    """The slice's log as one record per key (deletes marked in ``OP_COLUMN``), in ``schema`` plus
    the record key: what the log does to the base file's rows."""
    return combine_log_records(log_parts(storage, file_slice, _work_schema(schema, how), how), how.spec)


def logged_rows(storage: Storage, file_slice: FileSlice, schema: pa.Schema, how: SliceMerge) -> pa.Table:
    """The rows the slice's log writes over its base file (updates and inserts, less those an older
    ordering value loses), in ``schema``: with the base rows the log leaves, the slice's snapshot.
    Only the base file's keys and ordering values are read, and only under event-time merging,
    and the columns partial records lack."""
    log = combined_log(storage, file_slice, schema, how)
    if log is None or log.num_rows == 0:
        return schema.empty_table()
    spec, base = how.spec, None
    lacking = absent_masks(log)
    if file_slice.base_file is not None and (spec.ordered or lacking):
        columns = _merge_columns(log, spec)
        # Partial records take the columns they lack from their base rows.
        columns = pa.schema(list(columns) + [log.schema.field(n) for n in lacking if n not in columns.names])
        base = _base_columns(storage, file_slice.base_file.path, columns)
    written = merge(base, log, replace(spec, dedup=False)).written
    return conform(written.drop_columns([OP_COLUMN]), schema)


def replaced_positions(storage: Storage, file_slice: FileSlice, schema: pa.Schema, how: SliceMerge) -> np.ndarray:
    """The row numbers in the slice's base file of the rows its log replaces or deletes: what a
    snapshot leaves out of the base file, by the rule of ``merge`` (its stored rows not kept).
    Only what merging compares is read: the record key, the ordering fields and delete markers
    of the log, the key and ordering fields of the base file."""
    if file_slice.base_file is None:
        return np.empty(0, np.int64)
    log = combine_log_records(log_parts(storage, file_slice, _merge_schema(schema, how), how), how.spec)
    if log is None or log.num_rows == 0:
        return np.empty(0, np.int64)
    base = _base_columns(storage, file_slice.base_file.path, _merge_columns(log, how.spec))
    base = base.append_column(_POSITION, pa.array(np.arange(base.num_rows, dtype=np.int64)))
    kept = merge(base, log, replace(how.spec, dedup=False)).kept[_POSITION].to_numpy()
    left = np.ones(base.num_rows, dtype=bool)
    left[kept] = False
    return np.flatnonzero(left)


_POSITION = "_hoodie_merge_position"


def _merge_schema(schema: pa.Schema, how: SliceMerge) -> pa.Schema:
    """Of the query's columns, those merging compares: record key, ordering fields, delete marker
    (all of them where the keys are made from the data)."""
    if how.keygen is not None:
        return _work_schema(schema, how)
    wanted = {RECORD_KEY, IS_DELETED, *how.spec.ordering_fields}
    return _work_schema(pa.schema([f for f in schema if f.name in wanted]), how)


def _merge_columns(log: pa.Table, spec: MergeSpec) -> pa.Schema:
    """The base file's columns an event-time merge compares with ``log``: key and ordering fields."""
    ordering = [log.schema.field(name) for name in spec.ordering_fields] if spec.ordered else []
    return pa.schema([pa.field(RECORD_KEY, pa.string())] + ordering)


def _base_columns(storage: Storage, rel: str, columns: pa.Schema) -> pa.Table:
    """Some columns of a base file; one it lacks (added to the table later) reads as nulls."""
    with parquet_file(storage, rel) as f:
        names = [n for n in columns.names if n in f.schema_arrow.names]
        return conform(f.read(columns=names), columns)


def log_parts(storage: Storage, file_slice: FileSlice, work: pa.Schema, how: SliceMerge) -> list[LogPart]:
    """The records of the slice's valid log blocks, in log order, in the ``work`` schema. Avro
    blocks in a row with one writer schema are decoded together, as one part."""
    parts = []
    for (kind, _, _), run in groupby(read_valid_blocks(storage, file_slice.log_files, how.visibility),
                                     key=_decoded_with):
        blocks = list(run)
        if kind == BlockType.DELETE_BLOCK:
            parts += [LogPart(DELETES, _deleted_keys(delete_block_keys(b), work, how.spec)) for b in blocks]
        elif kind == BlockType.AVRO_DATA_BLOCK:
            parts.append(_data_part(avro_blocks_records(blocks, work.names), blocks[0], work, how))
        elif kind == BlockType.PARQUET_DATA_BLOCK:
            parts += [_data_part(data_block_records(b, work.names), b, work, how) for b in blocks]
    return parts


def _data_part(records: pa.Table, block: LogBlock, work: pa.Schema, how: SliceMerge) -> LogPart:
    """A data block's records in ``work``; those of a partial block say which columns they lack."""
    rows = _with_keys(conform(records, work), how)
    if block.is_partial:
        carried = _schema_fields(block.schema or "")
        rows = with_absent(rows, [n for n in work.names if n not in carried])
    return LogPart(DATA, rows)


@lru_cache(maxsize=64)
def _schema_fields(avro_schema_json: str) -> frozenset[str]:
    return frozenset(f["name"] for f in json.loads(avro_schema_json).get("fields", ()))


def _decoded_with(block: LogBlock) -> tuple:
    """Blocks decoded as one have equal values: Avro data blocks of one writer schema, partial or not."""
    if block.block_type != BlockType.AVRO_DATA_BLOCK:
        return (block.block_type, id(block), False)
    return (block.block_type, block.schema, block.is_partial)


def _work_schema(schema: pa.Schema, how: SliceMerge | None) -> pa.Schema:
    """The query's columns plus what merging needs: the record key and the ordering field."""
    if how is None:
        return schema
    fields = list(schema)
    if RECORD_KEY not in schema.names:
        fields.append(pa.field(RECORD_KEY, pa.string()))
    return pa.schema(fields)


def _with_keys(table: pa.Table, how: SliceMerge | None) -> pa.Table:
    """Tables written without meta columns: make the record key from the data, as Hudi does."""
    if how is None or how.keygen is None:
        return table
    keys = how.keygen.record_keys(table)
    return table.set_column(table.schema.get_field_index(RECORD_KEY), RECORD_KEY, keys)


def _deleted_keys(keys: pa.Table, work: pa.Schema, spec: MergeSpec) -> pa.Table:
    """The deleted keys with their ordering values in the ordering fields' columns (a struct of
    several fields' values, Hudi's ArrayWrapper, split back into them); missing ones are null."""
    columns = {RECORD_KEY: keys["record_key"]}
    fields = [f for f in spec.ordering_fields if f in work.names]
    if len(fields) < len(spec.ordering_fields) or "ordering_value" not in keys.column_names:
        return pa.table(columns)
    value = keys["ordering_value"].combine_chunks()
    struct = pa.types.is_struct(value.type)
    if struct != (len(fields) > 1) or (struct and value.type.num_fields != len(fields)):
        parts = [pa.nulls(keys.num_rows)] * len(fields)     # written under other ordering fields
    elif struct:
        valid = value.is_valid()
        parts = [pc.if_else(valid, value.field(i), pa.nulls(keys.num_rows, value.field(i).type))
                 for i in range(len(fields))]
    else:
        parts = [value]
    for name, part in zip(fields, parts):
        try:
            columns[name] = part.cast(work.field(name).type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            columns[name] = pa.nulls(keys.num_rows, work.field(name).type)
    return pa.table(columns)
