"""What one data-table action changes in the small metadata partitions (files, column_stats,
bloom_filters), from its completed metadata and the footers of the base files it wrote. Only file
names, sizes and footers are read here: the driver never sees a row.
"""
from __future__ import annotations

import posixpath
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable


from ...bloom import FOOTER_KEY, TYPE_CODE_KEY
from ...file_group.base_file import read_footer
from ...file_group.naming import parse_base_file_name
from ...metadata_table.layout import BLOOM_FILTERS, COLUMN_STATS, FILES
from ...metadata_table.records import (
    bloom_filter_record,
    bloom_filter_tombstone,
    column_stats_tombstone,
    files_record,
    partition_list_record,
)
from ...metadata_table.stats import column_stats_records, parquet_column_ranges
from ...storage import Storage


class Changes:
    """Metadata records of one instant, by metadata partition."""

    def __init__(self, partitions: Iterable[str]):
        self.partitions = set(partitions)
        self.records: dict[str, list[dict]] = defaultdict(list)
        self._added: dict[str, dict[str, int]] = defaultdict(dict)
        self._deleted: dict[str, set[str]] = defaultdict(set)

    def add_files(self, partition: str, files: dict[str, int]) -> None:
        self._added[partition].update(files)

    def delete_files(self, partition: str, names: Iterable[str]) -> None:
        self._deleted[partition].update(names)

    def finish(self, known_partitions: set[str] | None = None) -> dict[str, list[dict]]:
        """The files-partition records (one per data partition touched, plus the partition list
        when a partition is new), then everything else gathered."""
        if FILES in self.partitions:
            touched = sorted(set(self._added) | set(self._deleted))
            new = [p for p in touched if self._added.get(p) and (known_partitions is None or p not in known_partitions)]
            if new:
                self.records[FILES].append(partition_list_record(new))
            for p in touched:
                self.records[FILES].append(files_record(p, self._added.get(p, {}), sorted(self._deleted.get(p, ()))))
        return dict(self.records)

    def base_file_stats(self, storage: Storage, paths: list[str], columns: list[str] | None,
                        instant: str) -> None:
        """Column ranges and bloom filters of new base files, from their footers."""
        wanted = {COLUMN_STATS, BLOOM_FILTERS} & self.partitions
        paths = [p for p in paths if p.endswith(".parquet")]
        if not wanted or not paths:
            return
        with ThreadPoolExecutor(max_workers=8) as pool:
            footers = list(pool.map(lambda p: read_footer(storage, p), paths))
        for path, meta in zip(paths, footers):
            partition, name = posixpath.dirname(path), posixpath.basename(path)
            if COLUMN_STATS in wanted:
                self.records[COLUMN_STATS] += column_stats_records(partition, name,
                                                                   parquet_column_ranges(meta, columns))
            if BLOOM_FILTERS in wanted:
                kv = meta.metadata or {}
                bloom = kv.get(FOOTER_KEY.encode())
                if bloom is not None:
                    kind = (kv.get(TYPE_CODE_KEY.encode()) or b"SIMPLE").decode()
                    self.records[BLOOM_FILTERS].append(bloom_filter_record(partition, name, instant, bloom, kind))

    def drop_base_file_stats(self, partition: str, names: Iterable[str], columns: list[str], instant: str) -> None:
        """Tombstones for deleted base files' column ranges and bloom filters."""
        bases = [n for n in names if parse_base_file_name(n) is not None]
        for name in bases:
            if COLUMN_STATS in self.partitions:
                for column in columns:
                    self.records[COLUMN_STATS].append(column_stats_tombstone(partition, name, column))
            if BLOOM_FILTERS in self.partitions:
                self.records[BLOOM_FILTERS].append(bloom_filter_tombstone(partition, name, instant))


def commit_changes(partitions: Iterable[str], storage: Storage, instant: str, meta: dict,
                   columns: list[str] | None) -> Changes:
    """A write, compaction or clustering: the files it wrote (base, log and CDC log files)."""
    changes = Changes(partitions)
    new_bases = []
    for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
        files = {}
        for stat in stats:
            path = stat.get("path")
            if path:
                files[posixpath.basename(path)] = int(stat.get("fileSizeInBytes") or 0)
                if parse_base_file_name(posixpath.basename(path)) is not None:
                    new_bases.append(path)
            for cdc_path, size in (stat.get("cdcStats") or {}).items():
                files[posixpath.basename(cdc_path)] = int(size)
        changes.add_files(partition, files)
    changes.base_file_stats(storage, new_bases, columns, instant)
    return changes


def clean_changes(partitions: Iterable[str], clean_meta: dict, columns: list[str], instant: str) -> Changes:
    changes = Changes(partitions)
    for partition, pm in (clean_meta.get("partitionMetadata") or {}).items():
        names = [posixpath.basename(f) for f in pm.get("successDeleteFiles") or []]
        changes.delete_files(partition, names)
        changes.drop_base_file_stats(partition, names, columns, instant)
    return changes


def rollback_changes(partitions: Iterable[str], rollback_meta: dict) -> Changes:
    """A rollback: the files it deleted go; the log files it wrote (command blocks) come, and so do
    the failed commit's own log files it leaves in place (their blocks voided), as Hudi lists them
    (``logFilesFromFailedCommit``): compaction and cleaning find them in the listing."""
    changes = Changes(partitions)
    for partition, pm in (rollback_meta.get("partitionMetadata") or {}).items():
        changes.delete_files(partition, [posixpath.basename(f) for f in pm.get("successDeleteFiles") or []])
        for kept in ("rollbackLogFiles", "logFilesFromFailedCommit"):
            changes.add_files(partition, {posixpath.basename(f): int(size) for f, size in (pm.get(kept) or {}).items()})
    return changes
