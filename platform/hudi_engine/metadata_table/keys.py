"""Metadata-table partitions, record keys and file groups, computed as Hudi computes them.

A reader finds a record by recomputing its key and the file group holding it, so these must match
Hudi bit for bit (``HoodieTableMetadataUtil``, ``HoodieMetadataPayload``, ``MetadataPartitionType``):

* ``files``: key = partition identifier (the relative partition path, ``"."`` for a
  non-partitioned table), plus the one ``__all_partitions__`` record listing them all.
* ``column_stats``: key = ColumnIndexID + PartitionIndexID + FileIndexID (Base64 of xxHash64,
  xxHash64 and MD5, see :mod:`.hashing`): 12 + 12 + 24 characters.
* ``bloom_filters``: key = PartitionIndexID + FileIndexID (36 characters).
* ``partition_stats``: key = ColumnIndexID + PartitionIndexID.
* ``record_index``: key = the data record key.

Records land in file group ``mapRecordKeyToFileGroupIndex(key, count)``: Java ``String.hashCode``
(UTF-16 units, int overflow) then ``abs(abs(h) % count)``; file groups are named
``<prefix><index:04d>-0`` (``files-0000-0``, ``col-stats-0001-0``, ``record-index-0009-0``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

from ..java_hash import java_string_hashes
from .hashing import column_index_id, file_index_id, partition_index_id

NON_PARTITIONED_NAME = "."
EMPTY_PARTITION_NAME = ""
ALL_PARTITIONS_KEY = "__all_partitions__"


@dataclass(frozen=True)
class PartitionType:
    """One ``MetadataPartitionType``: its folder under ``.hoodie/metadata``, file-id prefix and the
    ``type`` its records carry."""
    name: str
    path: str
    file_id_prefix: str
    record_type: int


FILES = PartitionType("FILES", "files", "files-", 2)
ALL_PARTITIONS = PartitionType("ALL_PARTITIONS", "files", "files-", 1)  # a record type of `files`
COLUMN_STATS = PartitionType("COLUMN_STATS", "column_stats", "col-stats-", 3)
BLOOM_FILTERS = PartitionType("BLOOM_FILTERS", "bloom_filters", "bloom-filters-", 4)
RECORD_INDEX = PartitionType("RECORD_INDEX", "record_index", "record-index-", 5)
PARTITION_STATS = PartitionType("PARTITION_STATS", "partition_stats", "partition-stats-", 6)
SECONDARY_INDEX = PartitionType("SECONDARY_INDEX", "secondary_index_", "secondary-index-", 7)
# Its records are column_stats or bloom_filters records: no record type of its own (Hudi's -1).
EXPRESSION_INDEX = PartitionType("EXPRESSION_INDEX", "expr_index_", "expr-index-", -1)

PARTITION_TYPES = (FILES, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX, PARTITION_STATS, SECONDARY_INDEX,
                   ALL_PARTITIONS)
_BY_RECORD_TYPE = {p.record_type: p for p in PARTITION_TYPES}


def partition_type_of_record(record_type: int) -> PartitionType:
    """``MetadataPartitionType.get(type)``."""
    try:
        return _BY_RECORD_TYPE[record_type]
    except KeyError:
        raise ValueError(f"no metadata partition type for record type {record_type}") from None


def partition_identifier(relative_partition_path: str) -> str:
    """The name a data partition has inside metadata records: ``"."`` for the non-partitioned ``""``."""
    return NON_PARTITIONED_NAME if relative_partition_path == EMPTY_PARTITION_NAME else relative_partition_path


def partition_path_of_identifier(identifier: str) -> str:
    """Back from :func:`partition_identifier` to the relative path (as Hudi's readers do)."""
    return EMPTY_PARTITION_NAME if identifier == NON_PARTITIONED_NAME else identifier


def files_key(relative_partition_path: str) -> str:
    """Key of a partition's file-list record in ``files``."""
    return partition_identifier(relative_partition_path)


def column_stats_key(column: str, relative_partition_path: str, file_name: str) -> str:
    """``getColumnStatsIndexKey``: ColumnIndexID + PartitionIndexID + FileIndexID (file name only)."""
    return (column_index_id(column) + partition_index_id(partition_identifier(relative_partition_path))
            + file_index_id(_base_name(file_name)))


def column_stats_key_prefix(column: str, relative_partition_path: str | None = None) -> str:
    """Prefix shared by a column's keys (optionally within one partition), for prefix lookups."""
    prefix = column_index_id(column)
    if relative_partition_path is not None:
        prefix += partition_index_id(partition_identifier(relative_partition_path))
    return prefix


def bloom_filter_key(relative_partition_path: str, file_name: str) -> str:
    """``getBloomFilterIndexKey``: PartitionIndexID + FileIndexID."""
    return partition_index_id(partition_identifier(relative_partition_path)) + file_index_id(_base_name(file_name))


def partition_stats_key(relative_partition_path: str, column: str, prefix: str | None = None) -> str:
    """``getPartitionStatsIndexKey``: ColumnIndexID + PartitionIndexID; with ``prefix`` (an
    expression index's partition-level records) ColumnIndexID + PartitionIndexID of the prefix +
    PartitionIndexID."""
    scope = partition_index_id(partition_identifier(prefix)) if prefix is not None else ""
    return column_index_id(column) + scope + partition_index_id(partition_identifier(relative_partition_path))


def _base_name(file_name: str) -> str:
    return file_name.rsplit("/", 1)[-1]


@lru_cache(maxsize=1 << 16)
def java_string_hash(value: str) -> int:
    """Java ``String.hashCode()`` as a signed 32-bit int (over UTF-16 code units). Cached: every
    commit orders the same file names and keys again (``records.java_map_order``, file group routing),
    and the loop is a Python step per character."""
    h = 0
    units = value.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _java_abs(v: int) -> int:
    """``Math.abs`` on an int: ``Integer.MIN_VALUE`` stays negative."""
    return v if v == -(1 << 31) else abs(v)


def _java_rem(a: int, n: int) -> int:
    """Java ``%``: the sign follows the dividend."""
    r = abs(a) % n
    return -r if a < 0 else r


def file_group_index(record_key: str, num_file_groups: int) -> int:
    """``mapRecordKeyToFileGroupIndex``: which of ``num_file_groups`` file groups holds ``record_key``."""
    if num_file_groups <= 0:
        raise ValueError("num_file_groups must be positive")
    return _java_abs(_java_rem(_java_abs(java_string_hash(record_key)), num_file_groups))


def file_group_indexes(record_keys: pa.Array, num_file_groups: int) -> np.ndarray:
    """:func:`file_group_index` of every key of an Arrow string array (nulls are not allowed)."""
    if num_file_groups <= 0:
        raise ValueError("num_file_groups must be positive")
    h = java_string_hashes(record_keys).astype(np.int64)
    h = np.where(h >= 1 << 31, h - (1 << 32), h)                 # signed int
    a = np.where(h == -(1 << 31), h, np.abs(h))                  # Math.abs keeps MIN_VALUE
    r = np.abs(a) % num_file_groups * np.sign(a)                 # Java remainder
    return np.abs(r).astype(np.int64)


def file_group_id(partition_type: PartitionType, index: int, partition_name: str | None = None) -> str:
    """``getFileIDForFileGroup``: ``<prefix><index:04d>-0``. Secondary (and expression) indexes use
    their own partition name, ``_`` turned into ``-``, as prefix."""
    if partition_type in (SECONDARY_INDEX, EXPRESSION_INDEX):   # equal, not identical: it may come pickled
        if not partition_name:
            raise ValueError(f"a {partition_type.path}* file group needs its partition name")
        return f"{partition_name.replace('_', '-')}-{index:04d}-0"
    return f"{partition_type.file_id_prefix}{index:04d}-0"


def file_group_index_of_id(file_id: str) -> int:
    """``getFileGroupIndexFromFileId``: the ``NNNN`` of ``<prefix>NNNN-<n>``."""
    head = file_id.rsplit("-", 1)[0]
    return int(head.rsplit("-", 1)[1])


# --- secondary index ("<secondary key>$<record key>", SecondaryIndexKeyUtils) ----------------------
_SEPARATOR, _ESCAPE, _NULL = "$", "\\", "\0"


def escape_secondary_key_part(value: str | None) -> str:
    """``escapeSpecialChars``: ``\\``, ``$`` and NUL get a ``\\`` in front; ``None`` becomes NUL."""
    if value is None:
        return _NULL
    return "".join(_ESCAPE + c if c in (_ESCAPE, _SEPARATOR, _NULL) else c for c in value)


def unescape_secondary_key_part(value: str) -> str | None:
    """``unescapeSpecialChars``: the inverse of :func:`escape_secondary_key_part`."""
    if value == _NULL:
        return None
    out, escaped = [], False
    for c in value:
        if escaped:
            out.append(c)
            escaped = False
        elif c == _ESCAPE:
            escaped = True
        else:
            out.append(c)
    return "".join(out)


def secondary_index_key(secondary_key: str | None, record_key: str) -> str:
    """``constructSecondaryIndexKey``: escaped secondary key, ``$``, escaped record key."""
    return escape_secondary_key_part(secondary_key) + _SEPARATOR + escape_secondary_key_part(record_key)


def _separator_position(key: str) -> int:
    escaped = False
    for i, c in enumerate(key):
        if c == _ESCAPE and not escaped:
            escaped = True
        elif c == _SEPARATOR and not escaped:
            return i
        else:
            escaped = False
    raise ValueError(f"invalid secondary index key {key!r}: no unescaped '$'")


def split_secondary_index_key(key: str) -> tuple[str | None, str | None]:
    """(secondary key, record key) of a secondary-index key."""
    i = _separator_position(key)
    return unescape_secondary_key_part(key[:i]), unescape_secondary_key_part(key[i + 1:])


def secondary_index_file_group(key: str, num_file_groups: int, index_version: int = 2) -> int:
    """File group of a secondary-index key. Index version 2 (Hudi 1.1) hashes the escaped secondary
    key with its ``$`` so all entries of one secondary key share a file group; version 1 (Hudi 1.0)
    hashes the whole key."""
    if index_version >= 2:
        key = key[:_separator_position(key) + 1]
    return file_group_index(key, num_file_groups)
