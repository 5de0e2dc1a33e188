"""Executor-side work: functions Spark runs on Arrow data (``mapInArrow`` / ``applyInArrow``).

Each returns write stats as JSON strings; none of them touches the timeline, which is the driver's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..cdc import written as cdc_changes
from ..errors import HoodieValidationError
from ..file_group.base_file import BaseFileWriter, WriteContext, continued_filter, read_base_file_and_footer
from ..file_group.naming import new_file_id
from ..file_group.tasks import stats_batch, task_identity
from ..keygen import KeyGenerator
from ..merge.keep_values import PARTIAL_UPDATE, with_absent
from ..merge.record_merger import OP_COLUMN, MergeSpec, is_partial_update, merge, operation_deletes_unordered
from ..schema.arrow import conform, repeat_string, split_by_value
from ..schema.meta_fields import FILE_NAME, PARTITION_PATH, RECORD_KEY
from .cdc_log import cdc_mode, write_cdc_log
from .log_append import AppendFileGroup
from .planner import GroupKey, Target

TARGET = "_hoodie_target"
KEY_HASH = "_hoodie_key_hash"
# Bulk insert buffers rows per partition path so row groups are not tiny; when a task's buffers
# pass this many bytes the largest is flushed, which bounds a task's memory whatever its input.
BULK_BUFFER_BYTES = 64 * 1024 * 1024


NULL_ORDERING_ADVICE = ("every record needs a value to decide which version wins "
                        "(fill it, or drop hoodie.table.ordering.fields)")


@dataclass(frozen=True)
class Prepare:
    """Adds record key and partition path; refuses records Hudi could not store. An input may mark
    its own deletes in ``OP_COLUMN`` ("D"), so one upsert also deletes (SQL's MERGE INTO)."""
    keygen: KeyGenerator
    ordering_fields: tuple[str, ...]
    delete_op: bool
    partial_op: bool = False    # upserts carry only some columns (marked PARTIAL_UPDATE)

    @property
    def default_op(self) -> str:
        """The operation of an input row that does not mark its own."""
        return "D" if self.delete_op else PARTIAL_UPDATE if self.partial_op else "U"

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ops = None
            if OP_COLUMN in batch.schema.names:
                ops = pc.fill_null(batch.column(OP_COLUMN), "U")
                batch = batch.drop_columns([OP_COLUMN])
            self.keygen.validate(batch)
            for field in self.ordering_fields if not self.delete_op else ():
                nulls = batch.column(field).is_null()
                if ops is not None:
                    nulls = pc.and_(nulls, pc.not_equal(ops, "D"))
                if pc.any(nulls).as_py():
                    row = int(np.argmax(nulls.to_numpy(zero_copy_only=False)))
                    raise HoodieValidationError(
                        f"ordering field '{field}' is null in record {_describe(batch, row)}; {NULL_ORDERING_ADVICE}")
            keys = self.keygen.record_keys(batch)
            paths = self.keygen.partition_paths(batch)
            out = batch.append_column(RECORD_KEY, keys).append_column(PARTITION_PATH, paths)
            if ops is None:
                ops = repeat_string(self.default_op, batch.num_rows)
            yield out.append_column(OP_COLUMN, ops)


def _describe(batch: pa.RecordBatch, row: int) -> str:
    values = {name: batch.column(name)[row].as_py() for name in batch.schema.names[:8]}
    return f"#{row} of its batch {values}"


@dataclass(frozen=True)
class WriteFileGroup:
    """Merge one file group's incoming records with its current base file and write the new one,
    or, for a merge-on-read group in ``append``, log them."""
    ctx: WriteContext
    targets: dict[GroupKey, Target]
    spec: MergeSpec
    append: AppendFileGroup | None = None
    carried: frozenset[str] | None = None     # the columns partial updates carry (partial_writes)

    def __call__(self, key: tuple, group: pa.Table, task: tuple[int, str] | None = None) -> pa.Table:
        """``key``: the group's (partition path, file id), as Spark's grouping hands them or plain;
        ``task``: (task partition, write token) when run outside a Spark task."""
        partition, file_id = (k.as_py() if hasattr(k, "as_py") else k for k in key)
        task_partition, token = task or task_identity()
        incoming = group.drop_columns([c for c in (TARGET, KEY_HASH) if c in group.column_names])
        if self.append is not None and (partition, file_id) in self.append.targets:
            stats = self.append((partition, file_id), incoming, task_partition, token)
            return pa.Table.from_batches([stats_batch(stats)])
        target = self.targets[(partition, file_id)]
        stored, bloom = None, None
        cdc = cdc_mode(self.ctx) is not None
        if target.base_path:
            # The stored file names are replaced by the new file's: read only for CDC's before-images
            # and a CUSTOM merger, which sees whole stored rows.
            skip = frozenset() if cdc or self.spec.custom else frozenset({FILE_NAME})
            stored, footer = read_base_file_and_footer(self.ctx.storage, target.base_path, skip)
            stored = conform(stored, self.ctx.file_schema)
            bloom = continued_filter(footer, self.ctx.config)
        if self.carried is not None:
            incoming = with_absent(conform(incoming, self._incoming_schema(incoming)),
                                   [f.name for f in self.ctx.data_schema if f.name not in self.carried],
                                   is_partial_update(incoming))
        result = merge(stored, operation_deletes_unordered(incoming, self.spec), self.spec)
        writer = BaseFileWriter(self.ctx, target.partition, file_id, token,
                                "MERGE" if target.base_path else "CREATE", target.prev_commit, bloom)
        no_keys = pa.array([], pa.string())
        writer.write(result.kept, stamp=False, task_partition=task_partition,
                     new_keys=no_keys if bloom is not None else None)
        written = writer.write(result.written, stamp=True, task_partition=task_partition,
                               new_keys=result.inserted_keys if bloom is not None else None)
        stat = writer.close(result.num_inserts, result.num_updates, result.num_deletes)
        if stored is not None and cdc:
            written = conform(written, self.ctx.file_schema)
            dropped = stored[RECORD_KEY].filter(pc.invert(pc.is_in(
                stored[RECORD_KEY], value_set=pa.concat_arrays([
                    result.kept[RECORD_KEY].combine_chunks(), written[RECORD_KEY].combine_chunks()]))))
            stat["cdcStats"] = write_cdc_log(self.ctx, target.partition, file_id, token,
                                             cdc_changes(stored, written, dropped))
        return pa.Table.from_batches([stats_batch([stat])])

    def _incoming_schema(self, incoming: pa.Table) -> pa.Schema:
        """The file's columns and the incoming ones beyond them (key, operation), so a partial
        update's rows have every column to fill."""
        extra = [f for f in incoming.schema if f.name not in self.ctx.file_schema.names]
        return pa.schema(list(self.ctx.file_schema) + extra)


@dataclass(frozen=True)
class BulkInsert:
    """Write a task's records straight into new file groups, one open file per partition path,
    rolling over at the max file size; no lookup, no merge (Hudi's bulk_insert). With ``prepare``
    it takes the user's rows and makes their keys itself."""
    ctx: WriteContext
    prepare: Prepare | None = None
    task: tuple[int, str] | None = None     # (task partition, write token) outside a Spark task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if self.prepare is not None:
            batches = self.prepare(batches)
        task_partition, token = self.task or task_identity()
        max_size = self.ctx.config.get(C.PARQUET_MAX_FILE_SIZE)
        writers: dict[str, BaseFileWriter] = {}
        buffers: dict[str, list[pa.Table]] = {}
        stats: list[dict] = []

        def flush(partition: str) -> None:
            rows = pa.concat_tables(buffers.pop(partition))
            writer = writers.get(partition)
            if writer is None:
                writer = writers[partition] = BaseFileWriter(
                    self.ctx, partition, new_file_id(), token, "CREATE", None)
            writer.write(rows, stamp=True, task_partition=task_partition)
            if writer.bytes_written >= max_size:
                stats.append(writer.close(writer.num_written, 0, 0))
                del writers[partition]

        buffered = 0
        for batch in batches:
            table = pa.Table.from_batches([batch]).drop_columns([OP_COLUMN])
            for partition, rows in _split_by_partition(table):
                buffers.setdefault(partition, []).append(rows)
                buffered += rows.nbytes
            while buffered >= BULK_BUFFER_BYTES:
                largest = max(buffers, key=lambda p: sum(t.nbytes for t in buffers[p]))
                buffered -= sum(t.nbytes for t in buffers[largest])
                flush(largest)
        for partition in list(buffers):
            flush(partition)
        for writer in writers.values():
            stats.append(writer.close(writer.num_written, 0, 0))
        if stats:
            yield stats_batch(stats)


def _split_by_partition(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """Rows grouped by partition path (``schema.arrow.split_by_value``)."""
    return iter(split_by_value(table, table[PARTITION_PATH]))
