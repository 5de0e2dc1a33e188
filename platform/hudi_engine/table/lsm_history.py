"""The LSM history of a layout-2 timeline on storage: reading a snapshot, adding a layer-0 file,
merging full layers and cleaning old snapshots, in Hudi 1.x's order (``LSMTimelineWriter``).

Every change writes its parquet file first, then a new ``manifest_<n+1>``, then ``_version_``; a
reader that finds no readable ``_version_`` takes the newest manifest. A file no manifest lists is
invisible and is deleted by a later clean.
"""
from __future__ import annotations

import io
import logging
import posixpath

import pyarrow as pa
import pyarrow.parquet as pq

from ..storage import Storage
from ..timeline import lsm
from ..timeline.lsm import HistoryFile, LSMRecord

log = logging.getLogger(__name__)


class LSMHistory:
    def __init__(self, storage: Storage, folder: str, compression: str = "zstd"):
        self.storage = storage
        self.folder = folder
        self.compression = compression

    def _path(self, name: str) -> str:
        return f"{self.folder}/{name}"

    # --- snapshots -------------------------------------------------------------------------------
    def manifest_versions(self) -> list[int]:
        names = (posixpath.basename(f.path) for f in self.storage.list(self.folder))
        return sorted(v for v in map(lsm.manifest_version, names) if v is not None)

    def latest_version(self) -> int:
        """The newest snapshot: ``_version_``, else the newest manifest, else -1 (no history)."""
        try:
            return int(self.storage.read_text(self._path(lsm.VERSION_FILE)).strip())
        except (FileNotFoundError, ValueError):
            return max(self.manifest_versions(), default=-1)

    def manifest(self, version: int) -> list[HistoryFile]:
        if version < 0:
            return []
        path = self._path(lsm.manifest_name(version))
        return lsm.decode_manifest(self.storage.read_bytes(path), path)

    def files(self) -> list[HistoryFile]:
        """The files of the newest snapshot."""
        return self.manifest(self.latest_version())

    def read_file(self, name: str, columns: tuple[str, ...] | None = None) -> list[LSMRecord]:
        with self.storage.open_input_file(self._path(name)) as f:
            return lsm.table_records(pq.read_table(f, columns=list(columns) if columns else None))

    def records(self, columns: tuple[str, ...] | None = None) -> list[LSMRecord]:
        """Every archived action of the newest snapshot, one record each, oldest first; only
        ``columns`` read when given (the others are None)."""
        return lsm.latest_records(r for f in sorted(self.files()) for r in self.read_file(f.name, columns))

    # --- writing ---------------------------------------------------------------------------------
    def add(self, records: list[LSMRecord]) -> HistoryFile:
        """A layer-0 file of ``records`` (oldest first), listed by a new snapshot. A file of that
        name already listed was added by a run killed before it deleted its active instants: kept
        as it is. One not listed is a killed run's leftover: written again."""
        target = HistoryFile(records[0].instant_time, records[-1].instant_time, 0)
        current = self.files()
        if any(f.name == target.name for f in current):
            log.info(f"{self._path(target.name)} is already in the LSM history; not written again")
            return next(f for f in current if f.name == target.name)
        written = self._write(target, lsm.records_table(records))
        self._commit(current + [written])
        return written

    def compact_and_clean(self, batch: int, retained: int, max_bytes: int = lsm.COMPACTION_MAX_BYTES) -> int:
        """Merge full layers into the next, layer after layer, then clean snapshots beyond
        ``retained`` (plus one per merge just made); returns the number of merges."""
        merges = 0
        while True:
            current = self.files()
            sources = lsm.files_to_compact(current, merges, batch, max_bytes)
            if not sources:
                break
            target = lsm.compacted_file(sources)
            rows = pa.concat_tables(lsm.records_table(self.read_file(f.name)) for f in sources)
            written = self._write(target, rows)
            self._commit([f for f in current if f not in sources] + [written])
            log.info(f"merged {len(sources)} history files of layer {merges} into {written.name}")
            merges += 1
        self.clean(retained + merges)
        return merges

    def clean(self, keep: int) -> None:
        """Delete manifests beyond the newest ``keep``, then the files none of the kept ones lists."""
        versions = self.manifest_versions()
        old = lsm.versions_to_clean(versions, keep)
        if not old:
            return
        kept = {f.name for v in versions if v not in old for f in self.manifest(v)}
        self.storage.delete_many([self._path(lsm.manifest_name(v)) for v in old])
        unlisted = [f.path for f in self.storage.list(self.folder)
                    if lsm.parse_file_name(posixpath.basename(f.path)) and posixpath.basename(f.path) not in kept]
        if unlisted:
            self.storage.delete_many(unlisted)

    def _write(self, target: HistoryFile, rows: pa.Table) -> HistoryFile:
        buffer = io.BytesIO()
        with pq.ParquetWriter(buffer, lsm.ARROW_SCHEMA, compression=self.compression, store_schema=False,
                              use_dictionary=["action"]) as writer:
            writer.write_table(rows.cast(lsm.ARROW_SCHEMA), row_group_size=max(rows.num_rows, 1))
            writer.add_key_value_metadata(lsm.FOOTER)
        data = buffer.getvalue()
        self.storage.write_bytes(self._path(target.name), data)
        return HistoryFile(target.min_instant, target.max_instant, target.layer, len(data))

    def _commit(self, files: list[HistoryFile]) -> None:
        """A new snapshot listing ``files``: its manifest first (one left by a run killed before its
        ``_version_`` is overwritten), then ``_version_``."""
        latest = self.latest_version()
        version = latest + 1 if latest >= 0 else 1
        self.storage.write_bytes(self._path(lsm.manifest_name(version)), lsm.encode_manifest(sorted(files)))
        self.storage.write_text(self._path(lsm.VERSION_FILE), str(version))
