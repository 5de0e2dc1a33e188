"""Keeping the partition_stats partition in step (Hudi 1.x's ``PartitionStatsIndexer``).

Whenever an action writes or replaces files of data partitions, each of them is recomputed, tight,
over every file of its latest file slices as they are once the action completes: the ranges of the
files the action wrote (just read from their footers and log blocks) and those column_stats holds
for the others, as Hudi does while the column_stats index is there to read (and partition stats
are only kept with it). A partition left without files (dropped, or overwritten by nothing) gets
tombstones. Cleans and rollbacks of failed writes change no latest slice, and write no record.
"""
from __future__ import annotations

from typing import Iterable

import pyarrow as pa

from ... import config as C
from ...file_group.fs_view import FileSlice, FileSystemView
from ...file_group.log_scanner import Visibility
from ...metadata_table.layout import COLUMN_STATS
from ...metadata_table.partition_stats import partition_stats_records
from ...metadata_table.reader import MetadataReader
from ...metadata_table.records import ColumnStats
from ...metadata_table.stats import ColumnRange
from ...schema.avro import avro_to_arrow
from ...schema.meta_fields import META_SCHEMA
from ...table.meta_client import HoodieTable
from .changes import Changes
from .commit_view import CommitView


def initial_records(table: HoodieTable, columns: list[str], instant: str, spark=None) -> list[dict]:
    """Building the partition: every data partition over its latest slices' files, read directly."""
    timeline = table.timeline
    slices = FileSystemView(table.storage, timeline).latest_file_slices()
    changes = Changes([COLUMN_STATS])
    visible = Visibility(frozenset(i.timestamp for i in timeline.completed_writes()), timeline.start)
    changes.file_stats(table.storage, [p for s in slices for p in _paths(s)], columns, instant, visible, spark)
    return _records(slices, changes.ranges, columns, table.version)


def commit_records(table: HoodieTable, meta: dict, changes: Changes, columns: list[str], reader: MetadataReader,
                   view: CommitView) -> list[dict]:
    """A write, compaction or clustering: the partitions it wrote to or replaced file groups in."""
    touched = set(view.touched)
    if not touched:
        return []
    slices = view.after_slices()
    types = _column_types(meta, table)
    ranges: dict[str, list[ColumnRange]] = {}
    indexed = reader.files_column_stats(columns, (p for s in slices for p in _paths(s)))
    for path, stats in indexed.items():
        ranges[path] = [_range(s, types[s.column_name]) for s in stats if s.column_name in types]
    for path, written in changes.ranges.items():     # a log file appended to keeps its older ranges
        ranges[path] = ranges.get(path, []) + written
    records = _records(slices, ranges, columns, table.version)
    emptied = touched - {s.partition for s in slices}
    return records + [r for p in sorted(emptied) for r in partition_stats_records(p, columns, [],
                                                                                 table_version=table.version)]


def _records(slices: list[FileSlice], ranges: dict[str, list[ColumnRange]], columns: list[str],
             table_version: int) -> list[dict]:
    """Each partition's records from its files' ranges. A base file without a range for a column
    (its footer states none) leaves that column unbounded; a log file without ranges holds no
    data block that counts (a failed write's, or only deletes) and adds nothing."""
    by_partition: dict[str, list[FileSlice]] = {}
    for s in slices:
        by_partition.setdefault(s.partition, []).append(s)
    records = []
    for partition, group in sorted(by_partition.items()):
        unbounded: set[str] = set()
        found: list[ColumnRange] = []
        for s in group:
            if s.base_file is not None:
                unbounded |= set(columns) - {r.column for r in ranges.get(s.base_file.path, [])}
            for path in _paths(s):
                found += ranges.get(path, [])
        found = [r for r in found if r.column not in unbounded]
        records += partition_stats_records(partition, columns, found, table_version=table_version)
    return records


def _paths(file_slice: FileSlice) -> list[str]:
    base = [file_slice.base_file.path] if file_slice.base_file is not None else []
    return base + [f.path for f in file_slice.log_files]


def _column_types(meta: dict, table: HoodieTable) -> dict[str, pa.DataType]:
    """Arrow type of each column (meta columns included), from the action's schema or the table's."""
    schema = ((meta.get("extraMetadata") or {}).get("schema") or table.timeline.latest_schema()
              or table.props.get(C.CREATE_SCHEMA.key))
    fields: Iterable[pa.Field] = list(META_SCHEMA) + (list(avro_to_arrow(schema)) if schema else [])
    return {f.name: f.type for f in fields}


def _range(s: ColumnStats, arrow_type: pa.DataType) -> ColumnRange:
    return ColumnRange(s.column_name, arrow_type, s.min_value, s.max_value, s.null_count or 0, s.value_count or 0,
                       s.total_size or 0, s.total_uncompressed_size or 0)
