"""Reading the metadata table: a partition's records, merged over each file group's base HFile and
the log blocks of trusted instants (HoodieBackedTableMetadata's reader), on the driver.

The files partition replaces directory listings; column_stats answers data skipping; the record
index answers key lookups by reading only the file group a key hashes to, and in the base HFile
only the block that can hold it.
"""
from __future__ import annotations

import posixpath
import threading
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

from ..expr.skipping import ColumnRange
from ..file_group.fs_view import FileSlice, FileSystemView
from ..file_group.log_file import BlockType, hfile_block_reader
from ..file_group.log_scanner import read_valid_blocks
from ..storage import FileInfo, Storage
from ..table.meta_client import HoodieTable
from .codec import base_values, block_values, raw_entries
from ..hfile import HFileReader
from .keys import (
    bloom_filter_key,
    ALL_PARTITIONS_KEY,
    column_stats_key,
    column_stats_key_prefix,
    file_group_index,
    files_key,
    partition_path_of_identifier,
    partition_stats_key,
)
from .layout import COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX, open_mdt, table_partitions, valid_instants
from .merge import combine, is_live
from .records import (
    BloomFilterInfo,
    ColumnStats,
    Delete,
    bloom_filter_of,
    column_stats_of,
    files_of,
    partitions_of,
    record_location_of,
)


class MetadataReader:
    def __init__(self, table: HoodieTable, mdt: HoodieTable | None = None, partitions: list[str] | None = None):
        self.table = table
        self.available = table_partitions(table) if partitions is None else partitions
        self.mdt = mdt or (open_mdt(table) if self.available else None)
        if self.mdt is None:
            self.available = []

    def has(self, partition: str) -> bool:
        return partition in self.available

    # --- what the data table needs -------------------------------------------------------------
    def data_partitions(self) -> list[str]:
        record = self.records(FILES, keys=[ALL_PARTITIONS_KEY]).get(ALL_PARTITIONS_KEY)
        return partitions_of(record) if record else []

    def file_listing(self) -> list[FileInfo]:
        """Every data file the files partition lists (paths relative to the table's base path)."""
        partitions = self.data_partitions()
        records = self.records(FILES, keys=[files_key(p) for p in partitions])
        listing = []
        for p in partitions:
            record = records.get(files_key(p))
            for name, size in sorted(files_of(record).items()) if record else ():
                listing.append(FileInfo(posixpath.join(p, name) if p else name, size))
        return listing

    def file_column_stats(self, columns: Iterable[str], partitions: Iterable[str],
                          index_partition: str = COLUMN_STATS) -> dict[str, list[ColumnStats]]:
        """data partition → the live column stats of its files, for the columns asked for (from
        column_stats, or the expression index ``index_partition``, which keys them alike)."""
        partitions = list(partitions)
        prefixes = [column_stats_key_prefix(c, p) for c in columns for p in partitions]
        by_prefix = {column_stats_key_prefix(c, p): p for c in columns for p in partitions}
        out: dict[str, list[ColumnStats]] = defaultdict(list)
        for key, record in self.records(index_partition, prefixes=prefixes).items():
            out[by_prefix[key[:_COLUMN_PARTITION_PREFIX]]].append(column_stats_of(record))
        return dict(out)

    def files_column_stats(self, columns: Iterable[str], files: Iterable[str],
                           index_partition: str = COLUMN_STATS) -> dict[str, list[ColumnStats]]:
        """file path (relative to the table) → its live column stats, for the columns asked for:
        looked up by key, so only these files' records are read and decoded (a partition's prefix
        holds every file version the cleaner has not removed yet)."""
        columns = list(columns)
        by_key = {}
        for path in files:
            partition, _, name = path.rpartition("/")
            by_key.update({column_stats_key(c, partition, name): path for c in columns})
        out: dict[str, list[ColumnStats]] = defaultdict(list)
        for key, record in self.records(index_partition, keys=sorted(by_key)).items():
            out[by_key[key]].append(column_stats_of(record))
        return dict(out)

    def column_ranges(self, columns: Iterable[str], partitions: Iterable[str],
                      index_partition: str = COLUMN_STATS) -> dict[str, dict[str, ColumnRange]]:
        """file name → column → range, for the columns and data partitions asked for."""
        out: dict[str, dict[str, ColumnRange]] = defaultdict(dict)
        for stats in self.file_column_stats(columns, partitions, index_partition).values():
            for s in stats:
                out[s.file_name][s.column_name] = _skipping_range(s)
        return dict(out)

    def bloom_filters(self, index_partition: str, files: Iterable[tuple[str, str]]) -> dict[tuple[str, str], BloomFilterInfo]:
        """(data partition, file name) → its live bloom filter record in ``index_partition``."""
        by_key = {bloom_filter_key(p, name): (p, name) for p, name in files}
        found = self.records(index_partition, keys=sorted(by_key))
        return {by_key[k]: bloom_filter_of(record) for k, record in found.items()}

    def partition_ranges(self, columns: Iterable[str], partitions: Iterable[str]) -> dict[str, dict[str, ColumnRange]]:
        """data partition → column → its range over the partition, from partition_stats."""
        keys = [partition_stats_key(p, c) for c in columns for p in partitions]
        out: dict[str, dict[str, ColumnRange]] = defaultdict(dict)
        for record in self.records(PARTITION_STATS, keys=keys).values():
            s = column_stats_of(record)
            out[s.file_name][s.column_name] = _skipping_range(s)
        return dict(out)

    def record_locations(self, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
        """record key → (data partition, file id) from the record index."""
        found = self.records(RECORD_INDEX, keys=sorted(set(keys)))
        out = {}
        for key, record in found.items():
            loc = record_location_of(record)
            out[key] = (partition_path_of_identifier(loc.partition), loc.file_id)
        return out

    # --- merged records ------------------------------------------------------------------------
    @cached_property
    def _slices(self) -> dict[str, list[FileSlice]]:
        by_partition: dict[str, list[FileSlice]] = defaultdict(list)
        for s in self.mdt.fs_view().latest_file_slices():
            by_partition[s.partition].append(s)
        for slices in by_partition.values():
            slices.sort(key=lambda s: s.file_id)
        return by_partition

    def file_slices(self, partition: str) -> list[FileSlice]:
        """The latest slice of each of a partition's file groups, in file group order."""
        return self._slices.get(partition, [])

    def records(self, partition: str, keys: list[str] | None = None,
                prefixes: list[str] | None = None) -> dict[str, dict]:
        """Live merged records of a metadata partition: all, or those with the given keys / key
        prefixes."""
        if not self.has(partition):
            return {}
        slices = self._slices.get(partition, [])
        if keys is not None and slices:
            wanted: dict[int, list[str]] = defaultdict(list)
            for key in keys:
                wanted[file_group_index(key, len(slices))].append(key)
            chosen = [(slices[i], ks) for i, ks in sorted(wanted.items())]
        else:
            chosen = [(s, None) for s in slices]
        merged: dict[str, dict] = {}
        for file_slice, slice_keys in chosen:
            for k, v in self._read_slice(file_slice, slice_keys, prefixes).items():
                if not isinstance(v, Delete) and is_live(v):
                    merged[k] = v
        return merged

    @cached_property
    def slice_reader(self) -> "SliceReader":
        return SliceReader(self.mdt.storage, frozenset(i.timestamp for i in self.mdt.timeline.completed_writes()),
                           frozenset(i.timestamp for i in self.table.timeline.instants if i.is_completed),
                           self.table.timeline.start)

    def _read_slice(self, file_slice: FileSlice, keys: list[str] | None,
                    prefixes: list[str] | None) -> dict[str, dict | Delete]:
        return self.slice_reader.read(file_slice, keys, prefixes)


@dataclass(frozen=True)
class SliceReader:
    """Merges one metadata file slice (base HFile, then trusted log blocks in order); picklable, so
    compaction runs it in Spark tasks."""
    storage: Storage
    mdt_completed: frozenset[str]
    data_completed: frozenset[str]
    data_start: str | None = None

    @cached_property
    def _trusted(self):
        return valid_instants(self.data_completed, self.data_start)

    def visible(self, instant: str) -> bool:
        return instant in self.mdt_completed and self._trusted(instant)

    def read(self, file_slice: FileSlice, keys: list[str] | None = None,
             prefixes: list[str] | None = None, stats: ReadStats | None = None) -> dict[str, dict | Delete]:
        """Merged values of the slice (all, or the given keys / key prefixes), deletes included.
        Given keys, only the base file's blocks that may hold them are read from storage; ``stats``
        adds up what was read."""
        values: dict[str, dict | Delete] = {}
        wanted = set(keys) if keys is not None else None

        def take(key: str, value) -> None:
            if wanted is not None and key not in wanted:
                return
            if prefixes is not None and not key.startswith(tuple(prefixes)):
                return
            values[key] = combine(values.get(key), value)

        if file_slice.base_file is not None:
            path = file_slice.base_file.path
            # Point lookups read by range; scans read the file at once (one request, not one a block).
            with (HFileReader.open(self.storage, path) if keys is not None
                  else HFileReader(self.storage.read_bytes(path), path=path)) as base:
                for k, v in base_values(base, path, keys, prefixes):
                    take(k, v)
            if stats is not None:
                stats.add(base.blocks_read, base.bytes_read)
        for block in read_valid_blocks(self.storage, file_slice.log_files, self.visible):
            reader = hfile_block_reader(block) if block.block_type == BlockType.HFILE_DATA_BLOCK else None
            for k, v in block_values(block, keys, prefixes, reader):
                take(k, v)
            if stats is not None and reader is not None:
                stats.add_logs(reader.blocks_read)
        if stats is not None:
            stats.add_logs(0, sum(f.size for f in file_slice.log_files))
        return {k: v for k, v in values.items() if v is not None}


    def read_replacing(self, file_slice: FileSlice) -> list[tuple[bytes, bytes]] | None:
        """The slice merged as the record index merges (a newer value replaces the older, a delete
        removes it), as sorted HFile entries, no value decoded; None when a file or block was
        written with another schema than this engine's (``read`` decodes those)."""
        entries: dict[bytes, bytes | None] = {}
        sources: list = []
        if file_slice.base_file is not None:
            path = file_slice.base_file.path
            sources.append(HFileReader(self.storage.read_bytes(path), path=path))
        for source in sources + list(read_valid_blocks(self.storage, file_slice.log_files, self.visible)):
            stored = raw_entries(source)
            if stored is None:
                return None
            entries.update(stored)
        return sorted((k, v) for k, v in entries.items() if v is not None)


class ReadStats:
    """What lookups took from storage: base-file data blocks decoded and bytes read, HFile data
    blocks decoded in log blocks and log bytes (log files are read whole); safe to add to from threads."""

    def __init__(self) -> None:
        self.base_blocks = self.base_bytes = self.log_blocks = self.log_bytes = 0
        self._lock = threading.Lock()

    def add(self, blocks: int, size: int) -> None:
        with self._lock:
            self.base_blocks += blocks
            self.base_bytes += size

    def add_logs(self, blocks: int, size: int = 0) -> None:
        with self._lock:
            self.log_blocks += blocks
            self.log_bytes += size


_COLUMN_PARTITION_PREFIX = 24       # ColumnIndexID + PartitionIndexID, Base64 of two xxHash64


def _skipping_range(s: ColumnStats) -> ColumnRange:
    return ColumnRange(s.min_value, s.max_value, s.null_count or 0, s.value_count or 0)


def table_view(table: HoodieTable) -> FileSystemView:
    """The table's files: from the metadata table's files partition when it has one (no directory
    listing), else listed. The listing is read once per table snapshot."""
    if "listing" not in table.derived:
        reader = metadata_reader(table)
        table.derived["listing"] = reader.file_listing() if reader is not None and reader.has(FILES) else None
    return table.fs_view(table.derived["listing"])


def metadata_reader(table: HoodieTable) -> MetadataReader | None:
    reader = MetadataReader(table)
    return reader if reader.available else None
