"""Merge-on-read updates: a file group's incoming records appended as log blocks (Hudi's append
handle). No stored row is read: merging happens on read and at compaction."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..file_group.base_file import WriteContext, ensure_partition_metadata, write_stat
from ..file_group.fs_view import FileSlice
from ..file_group.log_file import LogWriter, avro_data_block, delete_block, parquet_data_block
from ..file_group.markers import marker_path
from ..merge.record_merger import (MergeSpec, deduplicate, is_delete, is_partial_update, operation_deletes_unordered,
                                   ordering_struct)
from ..schema.arrow import conform, repeat_string
from ..schema.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from .partial_writes import partial_block_schema, partial_rows


@dataclass(frozen=True)
class AppendTarget:
    """Where a file group's log blocks go: the slice they extend and the next log version."""
    partition: str
    file_id: str
    base_instant: str              # named in the log file: the slice's base instant (table v6), the write's own (v8+)
    base_file: str | None          # the slice's base file name, for the write stat
    log_files: tuple[str, ...]     # the slice's existing log file names
    version: int                   # first log version this write creates
    prev_commit: str = ""          # the write stat's prevCommit; empty: base_instant


def append_target(s: FileSlice, base_instant: str | None = None, own_instant: str | None = None,
                  cdc: bool = False) -> AppendTarget:
    """``base_instant`` overrides the slice's when a pending compaction has started a new slice.
    ``own_instant`` (table version 8+): log files are named by the write's own instant, start at
    version 1 and hold only its blocks; readers place them in a slice by completion time. Their
    write stat names the slice they extend only on a table keeping CDC, whose reader diffs the
    log against that slice (as Hudi 1.x's append handle does; a slice a pending compaction
    started has no files yet, and the reader takes the plan's)."""
    if own_instant is not None:
        if not cdc:
            return new_log_target(s.partition, s.file_id, own_instant)
        if base_instant is not None:
            return AppendTarget(s.partition, s.file_id, own_instant, None, (), 1, base_instant)
        base = s.base_file.path.rsplit("/", 1)[-1] if s.base_file else None
        return AppendTarget(s.partition, s.file_id, own_instant, base,
                            tuple(f.path.rsplit("/", 1)[-1] for f in s.log_files), 1, s.base_instant)
    base_instant = base_instant or s.base_instant
    names = tuple(f.path.rsplit("/", 1)[-1] for f in s.log_files)
    version = max((f.version for f in s.log_files if f.instant == base_instant), default=0) + 1
    base = s.base_file.path.rsplit("/", 1)[-1] if s.base_file else None
    return AppendTarget(s.partition, s.file_id, base_instant, base, names, version)


def new_log_target(partition: str, file_id: str, instant: str) -> AppendTarget:
    """A file group that starts with a log file of ``instant`` (no base file yet)."""
    return AppendTarget(partition, file_id, instant, None, (), 1)


@dataclass(frozen=True)
class AppendFileGroup:
    ctx: WriteContext
    targets: dict[tuple[str, str], AppendTarget]     # by (partition path, file id)
    spec: MergeSpec
    carried: frozenset[str] | None = None     # the columns partial updates carry (partial_writes)

    def __call__(self, group: tuple[str, str], incoming: pa.Table, task_partition: int, token: str) -> list[dict]:
        target = self.targets[group]
        file_id = target.file_id
        cfg = self.ctx.config
        started = time.monotonic()
        incoming = deduplicate(incoming, self.spec)
        deletes = is_delete(incoming)
        upserts = incoming.filter(pa.array(~deletes))
        removed = incoming.filter(pa.array(deletes))
        ensure_partition_metadata(self.ctx.storage, target.partition, self.ctx.instant)
        writer = LogWriter(self.ctx.storage, target.partition, file_id, target.base_instant,
                           version=target.version, write_token=token, max_size=cfg.get(C.LOGFILE_MAX_SIZE))
        blocks = []
        partial = is_partial_update(upserts) if self.carried is not None else np.zeros(upserts.num_rows, dtype=bool)
        for rows, carried in ((upserts.filter(pa.array(~partial)), None), (upserts.filter(pa.array(partial)),
                                                                            self.carried)):
            if rows.num_rows:
                rows = self._stamp(rows, file_id, task_partition)
                blocks += [self._data_block(chunk, carried)
                           for chunk in block_chunks(rows, cfg.get(C.LOGFILE_DATA_BLOCK_MAX_SIZE))]
        if removed.num_rows:
            blocks.append(delete_block(self._deleted_keys(removed), self.ctx.instant,
                                       self.ctx.avro_footer_schema))
        files = append_marked(self.ctx, writer, target.partition, blocks, "APPEND")
        took = int((time.monotonic() - started) * 1000)
        stats = []
        for i, written in enumerate(files):
            first = i == 0
            stat = write_stat(file_id, written.path, target.partition, target.prev_commit or target.base_instant,
                              num_writes=upserts.num_rows if first else 0, num_inserts=0,
                              num_updates=upserts.num_rows if first else 0,
                              num_deletes=removed.num_rows if first else 0, size=written.size,
                              upsert_ms=took)
            stat.update({"logVersion": written.version, "logOffset": 0,
                         "baseFile": target.base_file or "",
                         "logFiles": list(target.log_files) + [f.path.rsplit("/", 1)[-1] for f in files[:i + 1]],
                         "recordsStats": {"val": None}})
            stats.append(stat)
        return stats

    def _stamp(self, rows: pa.Table, file_id: str, task_partition: int) -> pa.Table:
        """Meta columns as Hudi's append handle sets them: this instant, a sequence number, and the
        file group id (not a file name) in ``_hoodie_file_name``."""
        n = rows.num_rows
        seq = pa.array(np.arange(n)).cast(pa.string())
        prefix = f"{self.ctx.instant}_{task_partition}_"
        rows = conform(rows, self.ctx.file_schema)
        rows = rows.set_column(rows.schema.get_field_index(COMMIT_TIME), COMMIT_TIME,
                               repeat_string(self.ctx.instant, n))
        rows = rows.set_column(rows.schema.get_field_index(COMMIT_SEQNO), COMMIT_SEQNO,
                               pc.binary_join_element_wise(prefix, seq, ""))
        return rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME, repeat_string(file_id, n))

    def _data_block(self, rows: pa.Table, carried: frozenset[str] | None):
        """A data block of ``rows``; with ``carried``, of those columns only, marked IS_PARTIAL."""
        schema = self.ctx.avro_footer_schema
        if carried is not None:
            schema, rows = partial_block_schema(schema, carried), partial_rows(rows, carried)
        fmt = self.ctx.config.get_str(C.LOGFILE_DATA_BLOCK_FORMAT).lower()
        if fmt == "parquet":
            return parquet_data_block(rows, schema, self.ctx.instant,
                                      compression=self.ctx.config.get_str(C.PARQUET_COMPRESSION),
                                      partial=carried is not None)
        return avro_data_block(rows, schema, self.ctx.instant, partial=carried is not None)

    def _deleted_keys(self, removed: pa.Table) -> pa.Table:
        """Keys for the delete block. Deletes from the delete operation carry no ordering value
        (Hudi's natural order: they win); records flagged ``_hoodie_is_deleted`` carry theirs."""
        keys = {"record_key": removed[RECORD_KEY], "partition_path": removed[PARTITION_PATH]}
        fields = self.spec.ordering_fields
        if fields and all(f in removed.column_names for f in fields):
            removed = operation_deletes_unordered(removed, self.spec)
            keys["ordering_value"] = (removed[fields[0]] if len(fields) == 1 else
                                      ordering_struct(removed, fields))
        return pa.table(keys)


def append_marked(ctx: WriteContext, writer: LogWriter, partition: str, blocks, io_type: str):
    """Append blocks and close; each log file's marker is written before the file it names."""
    marked: set[str] = set()
    for block in blocks:
        if writer.path not in marked:
            marked.add(writer.path)
            name = writer.path.rsplit("/", 1)[-1]
            ctx.storage.write_bytes(marker_path(ctx.instant, partition, name, io_type), b"")
        writer.append(block)
    return writer.close()


def block_chunks(rows: pa.Table, max_bytes: int):
    """Rows split into data blocks of about ``max_bytes`` (Hudi's data block size limit)."""
    if rows.nbytes <= max_bytes or rows.num_rows <= 1:
        yield rows
        return
    per_block = max(1, int(rows.num_rows * max_bytes / rows.nbytes))
    for start in range(0, rows.num_rows, per_block):
        yield rows.slice(start, per_block)
