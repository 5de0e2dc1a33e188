"""Compacting the metadata table: every ``hoodie.metadata.compact.max.delta.commits`` delta commits
each file group's base HFile and trusted log blocks are merged into a new base HFile, so lookups
read one sorted file again. As in Hudi, it waits while any data write older than the newest delta
commit is pending (its records could still be rolled back) and takes the instant time
``<newest delta commit>001`` (version 6) or a new one (version 8+). Slices older than the one before the new base are then deleted.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

from ... import config as C
from ...config import HoodieConfig
from ...file_group.fs_view import FileSlice
from ...metadata_table.codec import SCHEMA_JSON, split
from ...metadata_table.file_groups import write_base
from ...metadata_table.layout import COMPACTION_SUFFIX, RECORD_INDEX
from ...metadata_table.reader import SliceReader
from ...table.meta_client import HoodieTable
from ...table.pending import compaction_operation, delta_commits_since_compaction
from ...timeline.avro_models import COMPACTION_PLAN, encode_instant_avro
from ...timeline.commit_metadata import commit_metadata
from ...threads import parallel_map
from ...timeline.instant import (COMMIT, COMPACTION, DELTA_COMMIT, INDEXING, WRITE_ACTIONS, Instant, State,
                                 new_instant_time)
from ..commit import complete

KEEP_SLICES = 2      # the newest base and the one before it, for readers still on the old one


def compact_if_due(mdt: HoodieTable, table: HoodieTable, current: str, spark=None,
                   options: dict | None = None) -> HoodieTable:
    """Compact when due; ``current`` is the data instant about to sync (pending, not blocking),
    ``options`` the writer's."""
    cfg = HoodieConfig({**(options or {}), **table.props})
    info = delta_commits_since_compaction(mdt.timeline.instants)
    if info is None or info.count < cfg.get(C.METADATA_COMPACT_MAX_DELTA_COMMITS):
        return mdt
    deltas = [i for i in mdt.timeline.completed_writes() if i.action == DELTA_COMMIT]
    newest = deltas[-1].timestamp
    blocked = [i for i in table.timeline.pending(WRITE_ACTIONS) if i.timestamp != current and i.timestamp < newest]
    # A partition being indexed gets its base files only when the indexer's build completes.
    if blocked or table.timeline.pending([INDEXING]):
        return mdt
    # Hudi 1.x (version 8+) gives a compaction an instant time of its own.
    instant = new_instant_time(mdt.timeline.last_instant_time) if mdt.version >= 8 else newest + COMPACTION_SUFFIX
    compact(mdt, table, instant, spark)
    return mdt.reload()


def compact(mdt: HoodieTable, table: HoodieTable, instant: str, spark=None) -> None:
    """Merge every file slice with log files into a new base HFile: one Spark task per file group
    when Spark is at hand (the record index is as big as the table's key set), else in-process."""
    from ...metadata_table.reader import MetadataReader

    slices = [s for s in mdt.fs_view().latest_file_slices() if s.log_files]
    if not slices:
        return
    plan = {"operations": [compaction_operation(s, 0) for s in slices], "extraMetadata": {},
            "version": 2, "strategy": None, "preserveHoodieMetadata": False, "missingSchedulePartitions": []}
    timeline = mdt.timeline
    requested = timeline.create_requested(Instant(instant, COMPACTION, State.REQUESTED),
                                          encode_instant_avro(COMPACTION_PLAN, plan))
    timeline.transition_to_inflight(requested)
    task = _CompactSlices(MetadataReader(table, mdt=mdt).slice_reader, tuple(slices), instant)
    if spark is None:
        stats = parallel_map(task.compact, range(len(slices)))
    else:
        from pyspark.sql.pandas.types import from_arrow_schema

        indexes = spark.range(len(slices), numPartitions=max(1, min(len(slices), 64)))
        out = indexes.mapInArrow(task, from_arrow_schema(pa.schema([("stat", pa.string())])))
        stats = [json.loads(r[0]) for r in out.collect()]
    meta = commit_metadata(stats, "compact", SCHEMA_JSON)
    meta["compacted"] = True
    complete(mdt, Instant(instant, COMMIT, State.INFLIGHT), meta)
    _drop_old_slices(mdt.reload())


@dataclass(frozen=True)
class _CompactSlices:
    reader: SliceReader
    slices: tuple[FileSlice, ...]
    instant: str

    def compact(self, index: int) -> dict:
        file_slice = self.slices[index]
        # The record index (as big as the table's key set) is merged without decoding its values.
        items = self.reader.read_replacing(file_slice) if file_slice.partition == RECORD_INDEX else None
        if items is None:
            items, _ = split(self.reader.read(file_slice))   # deleted keys simply end here
        return write_base(self.reader.storage, file_slice.partition, file_slice.file_id, self.instant, "0-0-0",
                          items, prev_commit=file_slice.base_instant)

    def __call__(self, batches):
        for batch in batches:
            stats = [json.dumps(self.compact(i)) for i in batch.column(0).to_pylist()]
            yield pa.RecordBatch.from_pydict({"stat": stats})


def _drop_old_slices(mdt: HoodieTable) -> None:
    storage = mdt.storage
    for group in mdt.fs_view().file_groups():
        for old in group.slices[:-KEEP_SLICES]:
            for path in ([old.base_file.path] if old.base_file else []) + [f.path for f in old.log_files]:
                storage.delete(path)
