"""An expression index's records (Hudi 1.x's ``expr_index_<name>`` partitions,
``SparkMetadataWriterUtils.getExpressionIndexRecordsUsing{ColumnStats,BloomFilter}``). Pure.

Each data file, a base file or one log file read alone, gets one record of the expression's values
over the file's rows: for ``column_stats``, a column-stats record under the source column's name
with the range of the expression (its type the function's result type), the null and value counts,
and the file's size as total size (twice it as uncompressed size, as Hudi approximates it); for
``bloom_filters``, a bloom filter of the non-null values' strings (Java's ``toString``), built with
the index's ``filtertype`` / ``numentries`` / ``fpp`` / ``maxentries`` options or the writer's
bloom settings. A deleted file's records are tombstoned as column_stats and bloom_filters do.

A ``column_stats`` index also holds a record per data partition (Hudi's partition stats of the
expression, keyed under ``__partition_stat__``): the range over the files of the partition's latest
slices, or a tombstone when one of them has no bounded range (or the partition has no files), so
a reader never skips a partition on a range that leaves values out.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from ..bloom import create_bloom_filter
from ..expr.functions import evaluate, exact
from .index_defs import IndexDefinition
from .partition_stats import partition_stats_records
from .records import bloom_filter_record, bloom_filter_tombstone, column_stats_record, column_stats_tombstone
from .stats import ColumnRange

COLUMN_STATS = "column_stats"
BLOOM_FILTERS = "bloom_filters"
PARTITION_STAT_PREFIX = "__partition_stat__"      # Hudi's HOODIE_EXPRESSION_INDEX_PARTITION_STAT_PREFIX


@dataclass(frozen=True)
class BloomSettings:
    """The bloom filter an index builds per file (index options over the writer's settings)."""
    filter_type: str
    num_entries: int
    fpp: float
    max_entries: int

    @classmethod
    def of(cls, options: Mapping[str, str], defaults: "BloomSettings") -> "BloomSettings":
        return cls(options.get("filtertype", defaults.filter_type).upper(),
                   int(options.get("numentries", defaults.num_entries)), float(options.get("fpp", defaults.fpp)),
                   int(options.get("maxentries", defaults.max_entries)))


def expression_range(column: str, values: pa.Array, file_size: int) -> ColumnRange:
    """The range of a file's expression values, named by the source column."""
    non_null = len(values) - values.null_count
    bounds = pc.min_max(values) if non_null else None
    return ColumnRange(column, values.type, bounds["min"].as_py() if bounds else None,
                       bounds["max"].as_py() if bounds else None, values.null_count, len(values), file_size,
                       file_size * 2)


def java_strings(values: pa.Array) -> list[str]:
    """Java's ``toString`` of each non-null value (strings, integers, dates)."""
    out = []
    for v in values.drop_null().to_pylist():
        out.append(v.isoformat() if isinstance(v, _dt.date) else str(v))
    return out


def bloom_of(values: pa.Array, settings: BloomSettings) -> str:
    bloom = create_bloom_filter(settings.num_entries, settings.fpp, settings.filter_type, settings.max_entries)
    for s in java_strings(values):
        bloom.add(s)
    return bloom.serialize()


@dataclass(frozen=True)
class FileValues:
    """What a task computes for one data file: its range (column_stats) or its bloom filter."""
    path: str                       # relative to the table
    range: ColumnRange | None = None
    bloom: str | None = None


def file_values(definition: IndexDefinition, path: str, source: pa.Array, file_size: int,
                bloom: BloomSettings | None) -> FileValues:
    """One file's values of the index's expression, reduced to what its record holds. Values Arrow
    may not give as Spark does (years past 9999 formatted, text that did not parse) leave the range
    unbounded and the file without a bloom filter, so no read skips it."""
    values = evaluate(definition.function, definition.options, source)
    faithful = exact(definition.function, source, values)
    if not faithful and values.null_count > source.null_count:
        return FileValues(path)         # text Spark may read: its nulls are unknown too, so no record
    if definition.index_type == BLOOM_FILTERS:
        assert bloom is not None
        return FileValues(path, bloom=bloom_of(values, bloom) if faithful else None)
    found = expression_range(definition.source_fields[0], values, file_size)
    if not faithful:
        found = ColumnRange(found.column, found.arrow_type, None, None, found.null_count, found.value_count,
                            found.total_size, found.total_uncompressed_size)
    return FileValues(path, range=found)


def _split(path: str) -> tuple[str, str]:
    partition, _, name = path.rpartition("/")
    return partition, name


def file_records(definition: IndexDefinition, found: FileValues, instant: str, table_version: int,
                 bloom_type: str = "DYNAMIC_V0") -> list[dict]:
    partition, name = _split(found.path)
    if found.bloom is not None:
        return [bloom_filter_record(partition, name, instant, found.bloom, bloom_type)]
    r = found.range
    if r is None:           # no bloom filter could be made: no record, the file is always read
        return []
    return [column_stats_record(partition, name, r.column, arrow_type=r.arrow_type, min_value=r.min_value,
                                max_value=r.max_value, null_count=r.null_count, value_count=r.value_count,
                                total_size=r.total_size, total_uncompressed_size=r.total_uncompressed_size,
                                table_version=table_version)]


def file_tombstones(definition: IndexDefinition, path: str, instant: str, table_version: int) -> list[dict]:
    partition, name = _split(path)
    if definition.index_type == BLOOM_FILTERS:
        return [bloom_filter_tombstone(partition, name, instant)]
    return [column_stats_tombstone(partition, name, definition.source_fields[0], table_version)]


def _bounded(r: ColumnRange | None) -> bool:
    return r is not None and (r.min_value is not None or r.value_count <= r.null_count)


def partition_records(definition: IndexDefinition, partition: str, ranges: list[ColumnRange | None],
                      table_version: int) -> list[dict]:
    """A ``column_stats`` index's record of one data partition from the ranges of the files of its
    latest slices (None: a file without a record, never skipped); bloom_filters indexes have none."""
    if definition.index_type != COLUMN_STATS:
        return []
    column = definition.source_fields[0]
    found = [r for r in ranges if r is not None] if all(_bounded(r) for r in ranges) else []
    return partition_stats_records(partition, [column], found, table_version=table_version,
                                   key_prefix=PARTITION_STAT_PREFIX)
