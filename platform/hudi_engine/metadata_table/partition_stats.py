"""Partition stats: each indexed column's range over a whole data partition (Hudi 1.x's
``partition_stats`` index, ``collectAndProcessColumnMetadata``), folded from the column ranges of the
files of the partition's latest file slices. Pure: the caller brings the ranges.

Records are written *tight* (``isTightBound``), as Hudi writes them while the column_stats index
is there to read: each commit recomputes a touched partition from every file of its latest slices,
and the metadata table's merge lets a newer tight record replace the older. A loose record would
widen the older one instead (min of mins, max of maxes, sums: :func:`.merge.combine_column_stats`).
"""
from __future__ import annotations

import decimal
from typing import Iterable

from .records import partition_stats_record, partition_stats_tombstone
from .schema import LATEST_TABLE_VERSION
from .stats import ColumnRange
from .values import primitive_of, value_type_of


def _order_key(value, range_: ColumnRange):
    """A value as it sorts: ranges of one column may come as Python values (footers, log blocks)
    or as stored primitives (a version 8 timestamp is a long); decimals compare as numbers."""
    vt = value_type_of(range_.arrow_type)
    if vt.name == "DECIMAL":
        return decimal.Decimal(value)
    return primitive_of(value, vt)


def fold(ranges: Iterable[ColumnRange]) -> ColumnRange:
    """``getColumnRangeInPartition``: one column's ranges over several files as one, min of mins
    and max of maxes (nulls ignored), counts and sizes summed."""
    ranges = list(ranges)
    if not ranges or len({r.column for r in ranges}) != 1:
        raise ValueError("fold takes the ranges of one column, at least one")
    lows = [r for r in ranges if r.min_value is not None]
    highs = [r for r in ranges if r.max_value is not None]
    low = min(lows, key=lambda r: _order_key(r.min_value, r)) if lows else None
    high = max(highs, key=lambda r: _order_key(r.max_value, r)) if highs else None
    return ColumnRange(ranges[0].column, ranges[0].arrow_type, low.min_value if low else None,
                       high.max_value if high else None,
                       sum(r.null_count for r in ranges), sum(r.value_count for r in ranges),
                       sum(r.total_size for r in ranges), sum(r.total_uncompressed_size for r in ranges))


def partition_stats_records(partition: str, columns: Iterable[str], ranges: Iterable[ColumnRange], *,
                            table_version: int = LATEST_TABLE_VERSION, key_prefix: str | None = None) -> list[dict]:
    """The tight records of one partition from the ranges of its files. A column no file has a
    range for (a dropped partition has no files; a base file whose footer states no range for the
    column cannot be bounded, and the caller leaves the column's ranges out) gets a tombstone, so a
    reader never skips the partition on a stale range."""
    by_column: dict[str, list[ColumnRange]] = {}
    for r in ranges:
        by_column.setdefault(r.column, []).append(r)
    records = []
    for column in columns:
        if column not in by_column:
            records.append(partition_stats_tombstone(partition, column, table_version, key_prefix))
            continue
        r = fold(by_column[column])
        records.append(partition_stats_record(
            partition, column, arrow_type=r.arrow_type, min_value=r.min_value, max_value=r.max_value,
            null_count=r.null_count, value_count=r.value_count, total_size=r.total_size,
            total_uncompressed_size=r.total_uncompressed_size, is_tight_bound=True, table_version=table_version,
            key_prefix=key_prefix))
    return records
