"""A data file's column ranges from its Parquet footer, as Hudi's ``ParquetUtils`` reads them for the
column_stats index (``readColumnStatsFromMetadata``), ready for :func:`.records.column_stats_record`.

Per column chunk Hudi takes min/max (Parquet's statistics), the null count, the value count, and the compressed and
uncompressed chunk sizes; the row groups of a file are then folded (min of mins, max of maxes,
sums of the rest). Columns are named by their dotted Parquet path. Pure logic over a
``pyarrow.parquet.FileMetaData``: reading the footer is the caller's business.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from .schema import LATEST_TABLE_VERSION


@dataclass(frozen=True)
class ColumnRange:
    """``HoodieColumnRangeMetadata`` of one column in one file."""
    column: str
    arrow_type: pa.DataType
    min_value: object
    max_value: object
    null_count: int
    value_count: int
    total_size: int
    total_uncompressed_size: int


def _leaf_type(schema: pa.Schema, path: str) -> pa.DataType | None:
    parts = path.split(".")
    if parts[0] not in schema.names:
        return None
    t = schema.field(parts[0]).type
    for part in parts[1:]:
        if not pa.types.is_struct(t) or t.get_field_index(part) < 0:
            return None                    # inside a list or map: no stats kept
        t = t.field(part).type
    return None if pa.types.is_nested(t) else t


def parquet_column_ranges(metadata: pq.FileMetaData, columns: Iterable[str] | None = None) -> list[ColumnRange]:
    """Column ranges of a Parquet file (``columns``: dotted paths to keep, in the order given;
    ``None``: every primitive column in file order). Columns under lists/maps are skipped."""
    schema = metadata.schema.to_arrow_schema()
    wanted = list(columns) if columns is not None else None
    folded: dict[str, list] = {}
    unknown: set[str] = set()
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            path = chunk.path_in_schema
            if (wanted is not None and path not in wanted) or _leaf_type(schema, path) is None:
                continue
            s = chunk.statistics
            if s is None or not s.has_null_count or (not s.has_min_max and s.null_count != chunk.num_values):
                # Hudi would count such a chunk as all nulls; a range we cannot state is left out
                # instead, so data skipping never drops a file on a guess.
                unknown.add(path)
                continue
            has_range = s.has_min_max
            lo, hi = (s.min, s.max) if has_range else (None, None)
            nulls = s.null_count
            entry = [lo, hi, nulls, chunk.num_values, chunk.total_compressed_size, chunk.total_uncompressed_size]
            if path not in folded:
                folded[path] = entry
                continue
            prev = folded[path]
            prev[0] = lo if prev[0] is None else (prev[0] if lo is None else min(prev[0], lo))
            prev[1] = hi if prev[1] is None else (prev[1] if hi is None else max(prev[1], hi))
            for i in range(2, 6):
                prev[i] += entry[i]
    order = wanted if wanted is not None else list(folded)
    return [ColumnRange(path, _leaf_type(schema, path), *folded[path]) for path in order
            if path in folded and path not in unknown]


def arrow_column_ranges(table: pa.Table, columns: Iterable[str]) -> list[ColumnRange]:
    """Column ranges of the records a log file's data blocks hold, as Hudi keeps them for a log
    file (``HoodieDeltaWriteStat``'s column stats): min, max, null and value counts; no sizes.
    Columns the records lack, or of nested types, are left out."""
    import pyarrow.compute as pc

    out = []
    for column in columns:
        if column not in table.column_names or pa.types.is_nested(table.schema.field(column).type):
            continue
        values = table.column(column)
        bounds = pc.min_max(values) if len(values) > values.null_count else None
        out.append(ColumnRange(column, values.type, bounds["min"].as_py() if bounds else None,
                               bounds["max"].as_py() if bounds else None, values.null_count, len(values), 0, 0))
    return out


def column_stats_records(partition: str, file_name: str, ranges: Iterable[ColumnRange], *,
                         table_version: int = LATEST_TABLE_VERSION) -> list[dict]:
    """One column-stats record per range of a data file."""
    from .records import column_stats_record
    return [column_stats_record(partition, file_name, r.column, arrow_type=r.arrow_type, min_value=r.min_value,
                                max_value=r.max_value, null_count=r.null_count, value_count=r.value_count,
                                total_size=r.total_size, total_uncompressed_size=r.total_uncompressed_size,
                                table_version=table_version)
            for r in ranges]
