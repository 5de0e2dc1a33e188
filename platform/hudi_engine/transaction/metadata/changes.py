"""What one data-table action changes in the small metadata partitions (files, column_stats,
bloom_filters), from its completed metadata, the footers of the base files it wrote and the column
ranges of the log files it wrote (as Hudi keeps them for merge-on-read; :mod:`.log_ranges`).
"""
from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Iterable

from ...bloom import FOOTER_KEY, TYPE_CODE_KEY
from ...file_group.base_file import read_footer
from ...file_group.log_scanner import Visibility
from ...file_group.naming import parse_base_file_name, parse_log_file_name
from ...metadata_table.layout import BLOOM_FILTERS, COLUMN_STATS, FILES
from ...metadata_table.records import (
    bloom_filter_record,
    bloom_filter_tombstone,
    column_stats_tombstone,
    files_record,
    partition_list_record,
)
from ...metadata_table.stats import ColumnRange, column_stats_records, parquet_column_ranges
from ...storage import FileInfo, Storage
from ...threads import parallel_map
from .log_ranges import log_column_ranges


class Changes:
    """Metadata records of one instant, by metadata partition."""

    def __init__(self, partitions: Iterable[str]):
        self.partitions = set(partitions)
        self.records: dict[str, list[dict]] = defaultdict(list)
        self.ranges: dict[str, list[ColumnRange]] = {}      # data file path -> its column ranges
        self._added: dict[str, dict[str, int]] = defaultdict(dict)
        self._deleted: dict[str, set[str]] = defaultdict(set)

    def add_files(self, partition: str, files: dict[str, int]) -> None:
        self._added[partition].update(files)

    def delete_files(self, partition: str, names: Iterable[str]) -> None:
        self._deleted[partition].update(names)

    def written_files(self) -> list[FileInfo]:
        """The data files added, as a listing (paths relative to the table)."""
        return [FileInfo(posixpath.join(p, name) if p else name, size)
                for p, files in self._added.items() for name, size in files.items()]

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

    def file_stats(self, storage: Storage, paths: list[str], columns: list[str] | None, instant: str,
                   visible: Visibility, spark=None) -> None:
        """Column ranges of data files (base files from their footers, log files from the data
        blocks ``visible`` lets count: see :mod:`.log_ranges`) and bloom filters of base files."""
        wanted = {COLUMN_STATS, BLOOM_FILTERS} & self.partitions
        bases = [p for p in paths if p.endswith(".parquet")]
        logs = [p for p in paths if _is_data_log(p)] if COLUMN_STATS in wanted else []
        if not wanted or not (bases or logs):
            return
        footers = parallel_map(lambda p: read_footer(storage, p), bases)
        for path, meta in zip(bases, footers):
            partition, name = posixpath.dirname(path), posixpath.basename(path)
            if COLUMN_STATS in wanted:
                self._add_ranges(path, parquet_column_ranges(meta, columns))
            if BLOOM_FILTERS in wanted:
                kv = meta.metadata or {}
                bloom = kv.get(FOOTER_KEY.encode())
                if bloom is not None:
                    kind = (kv.get(TYPE_CODE_KEY.encode()) or b"SIMPLE").decode()
                    self.records[BLOOM_FILTERS].append(bloom_filter_record(partition, name, instant, bloom, kind))
        for path, ranges in log_column_ranges(storage, logs, visible, columns, spark).items():
            self._add_ranges(path, ranges)

    def _add_ranges(self, path: str, ranges: list[ColumnRange]) -> None:
        self.ranges[path] = ranges
        self.records[COLUMN_STATS] += column_stats_records(posixpath.dirname(path), posixpath.basename(path), ranges)

    def drop_file_stats(self, partition: str, names: Iterable[str], columns: list[str], instant: str) -> None:
        """Tombstones for deleted data files' column ranges (base and log files) and bloom filters."""
        for name in names:
            base = parse_base_file_name(name) is not None
            if COLUMN_STATS in self.partitions and (base or _is_data_log(name)):
                for column in columns:
                    self.records[COLUMN_STATS].append(column_stats_tombstone(partition, name, column))
            if BLOOM_FILTERS in self.partitions and base:
                self.records[BLOOM_FILTERS].append(bloom_filter_tombstone(partition, name, instant))


def _is_data_log(path: str) -> bool:
    log = parse_log_file_name(posixpath.basename(path))
    return log is not None and not log.is_cdc


def commit_changes(partitions: Iterable[str], storage: Storage, instant: str, meta: dict,
                   columns: list[str] | None, spark=None) -> Changes:
    """A write, compaction or clustering: the files it wrote (base, log and CDC log files); the
    log files' ranges over this instant's blocks, by Spark's tasks when ``spark`` is given."""
    changes = Changes(partitions)
    written = []
    for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
        files = {}
        for stat in stats:
            path = stat.get("path")
            if path:
                files[posixpath.basename(path)] = int(stat.get("fileSizeInBytes") or 0)
                written.append(path)
            for cdc_path, size in (stat.get("cdcStats") or {}).items():
                files[posixpath.basename(cdc_path)] = int(size)
        changes.add_files(partition, files)
    changes.file_stats(storage, written, columns, instant, Visibility(frozenset({instant})), spark)
    return changes


def clean_changes(partitions: Iterable[str], clean_meta: dict, columns: list[str], instant: str) -> Changes:
    changes = Changes(partitions)
    for partition, pm in (clean_meta.get("partitionMetadata") or {}).items():
        names = [posixpath.basename(f) for f in pm.get("successDeleteFiles") or []]
        changes.delete_files(partition, names)
        changes.drop_file_stats(partition, names, columns, instant)
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
