"""Secondary indexes kept in the metadata table (``secondary_index_<name>`` partitions, Hudi 1.x).

Built from the table's latest file slices (a snapshot read on the executors: the driver sees only
file-write stats), then kept in step with each write: for every file group a write touches, the
rows of its slice before the write and after it are read (Spark tasks, or threads when the write
ran in this process) and their (value, key) pairs compared (:func:`~hudi_engine.metadata_table.
secondary_index.changes`). Compaction and clustering move rows without changing values, so they
change no entry; a failed write's metadata delta commit is rolled back with it; a restore drops
the metadata table and the next write builds every defined index again.

Entries land in file groups by ``secondary_index_file_group`` (version 2: by value). The partition
has as many file groups as the record index would for the same number of entries.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ... import config as C
from ...config import HoodieConfig
from ...errors import HoodieConfigError
from ...file_group.fs_view import FileSlice
from ...file_group.log_scanner import Visibility
from ...metadata_table.codec import SCHEMA_JSON
from ...metadata_table.index_defs import (
    IndexDefinition,
    is_secondary_index_partition,
    secondary_indexes,
)
from ...metadata_table.keys import SECONDARY_INDEX
from ...metadata_table.layout import RECORD_INDEX, init_instant, open_mdt
from ...metadata_table.records import encode, secondary_index_record
from ...metadata_table.secondary_index import CHANGE_SCHEMA, change_rows, changes, entries, entry_file_groups
from ...read.file_slice import SliceMerge, read_file_slice
from ...read.plan import merge_spec, table_schema
from ...schema.meta_fields import RECORD_KEY
from ...spark_files import received_indexes, task_indexes
from ...storage import Storage
from ...table.meta_client import HoodieTable
from ...timeline.commit_metadata import commit_metadata
from ...timeline.instant import DELTA_COMMIT, Instant, State
from ...timeline.index_plan import indexing_partitions
from ..commit import complete
from .commit_view import CommitView
from .group_writes import ENCODED, PartitionFiles, write_file_groups

log = logging.getLogger(__name__)

INDEXED_SCHEMA = pa.schema([("index", pa.string()), *CHANGE_SCHEMA])    # change rows of several indexes


@dataclass(frozen=True)
class BuiltIndex:
    """A secondary index whose partition is complete: its partition, column and index version."""
    partition: str
    column: str
    version: int


def built_indexes(table: HoodieTable, partitions: list[str]) -> list[BuiltIndex]:
    """The defined secondary indexes among ``partitions`` (a table's complete metadata partitions)."""
    return [BuiltIndex(d.name, d.source_fields[0], d.index_version) for d in secondary_indexes(table)
            if d.name in partitions]


# --- writing entries into file groups --------------------------------------------------------------
@dataclass(frozen=True)
class _EncodeEntries:
    """CHANGE_SCHEMA rows → ENCODED rows: a live entry or a tombstone (a record with ``isDeleted``)."""
    count: int
    version: int

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        live, tombstone = (encode(secondary_index_record(None, "", deleted)) for deleted in (False, True))
        rows = pa.Table.from_batches([batch])
        deleted = rows.column("deleted").combine_chunks()
        values = pc.if_else(deleted, pa.scalar(tombstone, pa.binary()), pa.scalar(live, pa.binary()))
        return pa.RecordBatch.from_arrays([entry_file_groups(rows, self.count, self.version),
                                           rows.column("si_key").combine_chunks(), values, deleted], schema=ENCODED)


def write_entries(spark, mdt: HoodieTable, index: BuiltIndex, instant: str, rows, count: int,
                  base_instants: dict[int, str] | None) -> list[dict]:
    """CHANGE_SCHEMA ``rows`` into the index's file groups (:func:`.group_writes.write_file_groups`)."""
    return write_file_groups(spark, mdt, PartitionFiles(SECONDARY_INDEX, index.partition), instant, rows,
                             _EncodeEntries(count, index.version), count, base_instants)


# --- building an index -----------------------------------------------------------------------------
def index_build_instant(mdt: HoodieTable, table: HoodieTable) -> str:
    """A metadata instant of its own for the build, from the zero time as Hudi 1.x initializes a
    partition (readers trust it without a data instant): past the ones taken (or that pending
    indexing instants will take), and past the four Hudi builds as a table is created (its
    fixture's first index is ``…004``)."""
    return init_instant(None, 4, mdt.version, taken_build_instants(mdt, table))


def taken_build_instants(mdt: HoodieTable, table: HoodieTable) -> list[str]:
    return [i.timestamp for i in mdt.timeline.instants] + [
        p.build_instant for p in indexing_partitions(table.timeline).values()]


def build_index(spark, table: HoodieTable, definition: IndexDefinition, file_groups: Callable[[int], int]) -> None:
    """Write the index's partition from a snapshot read of the table (executors), in one metadata
    delta commit, in ``file_groups(entries)`` file groups. The caller lists the partition after."""
    mdt = open_mdt(table)
    assert mdt is not None
    instant = index_build_instant(mdt, table)
    log.info(f"building secondary index {definition.user_name} of {table.name} at {instant}")
    stats = write_index_base(spark, table, mdt, definition, instant, file_groups)
    pending = Instant(instant, DELTA_COMMIT, State.REQUESTED)
    mdt.timeline.create_requested(pending)
    mdt.timeline.transition_to_inflight(pending)
    complete(mdt, pending.with_state(State.INFLIGHT), commit_metadata(stats, "bulk_insert", SCHEMA_JSON))


def _entry_rows(spark, table: HoodieTable, definition: IndexDefinition):
    """The index's entries (CHANGE_SCHEMA rows, none deleted) from a snapshot read of the table."""
    if spark is None:
        raise HoodieConfigError(f"building secondary index {definition.user_name} needs Spark; run it from a "
                                "Spark session (CREATE INDEX, a Spark write, or the indexer)")
    from ...read.reader import read

    rows = read(spark, table.base_path).select(RECORD_KEY, definition.source_fields[0])
    return rows.mapInArrow(_Entries(), _spark_schema(CHANGE_SCHEMA))


def entry_count(spark, table: HoodieTable, definition: IndexDefinition) -> int:
    """How many entries the index has now (what its file groups are sized by)."""
    return _entry_rows(spark, table, definition).count()


def write_index_base(spark, table: HoodieTable, mdt: HoodieTable, definition: IndexDefinition, instant: str,
                     file_groups: Callable[[int], int]) -> list[dict]:
    """The index's base files at ``instant``, from a snapshot read of the table, in
    ``file_groups(entries)`` file groups: their write stats."""
    index = BuiltIndex(definition.name, definition.source_fields[0], definition.index_version)
    entry_rows = _entry_rows(spark, table, definition).persist()
    try:
        count = file_groups(entry_rows.count())
        return write_entries(spark, mdt, index, instant, entry_rows, count, base_instants=None)
    finally:
        entry_rows.unpersist()


def _spark_schema(schema: pa.Schema):
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


@dataclass(frozen=True)
class _Entries:
    """(record key, value) rows → the entries they make (CHANGE_SCHEMA, none deleted)."""

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            made = entries(batch.column(0), batch.column(1))
            none_deleted = pa.array([False] * made.num_rows, pa.bool_())
            yield from change_rows(made.column("value"), made.column("key"), none_deleted).to_batches()


def missing_indexes(table: HoodieTable, have: list[str], cfg: HoodieConfig) -> list[IndexDefinition]:
    """Defined secondary indexes without a partition, to build once the record index is there
    (after a restore, or when a write turns them back on)."""
    if not cfg.get(C.METADATA_SECONDARY_INDEX_ENABLE) or RECORD_INDEX not in have:
        return []
    return [d for d in secondary_indexes(table) if d.name not in have]


def kept_partitions(have: list[str], wanted: list[str], cfg: HoodieConfig) -> list[str]:
    """The secondary index partitions a write keeps: all while the record index stays and
    ``hoodie.metadata.index.secondary.enable`` holds, else none (Hudi deletes them)."""
    keep = cfg.get(C.METADATA_SECONDARY_INDEX_ENABLE) and RECORD_INDEX in wanted
    return [p for p in have if is_secondary_index_partition(p) and keep]


# --- keeping it in step ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TouchedGroup:
    """A file group a write changed: its slice before the write (None: new) and after (None: replaced)."""
    before: FileSlice | None
    after: FileSlice | None


def touched_groups(meta: dict, view: CommitView) -> list[TouchedGroup]:
    """The file groups of a write's stats (with the files it added) and those it replaced."""
    added = {(partition, stat["fileId"]) for partition, stats in (meta.get("partitionToWriteStats") or {}).items()
             for stat in stats if stat.get("path")}
    groups = [TouchedGroup(view.before.get(key), view.after.get(key)) for key in sorted(added)]
    for partition, fids in (meta.get("partitionToReplaceFileIds") or {}).items():
        for fid in fids:
            if (partition, fid) not in added and (partition, fid) in view.before:
                groups.append(TouchedGroup(view.before[(partition, fid)], None))
    return groups


@dataclass(frozen=True)
class GroupChanges:
    """mapInArrow over indexes into ``groups``: the entry changes each file group's write makes, for
    every index (rows of INDEXED_SCHEMA)."""
    storage: Storage
    groups: tuple[TouchedGroup, ...]
    schema: pa.Schema               # record key, ordering field, indexed columns
    indexes: tuple[BuiltIndex, ...]
    merge: SliceMerge

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for i in received_indexes(batches):
            yield from self.changes(self.groups[i]).to_batches()

    def _rows(self, file_slice: FileSlice | None) -> pa.Table:
        if file_slice is None:
            return self.schema.empty_table()
        return read_file_slice(self.storage, file_slice, self.schema, how=self.merge)

    def changes(self, group: TouchedGroup) -> pa.Table:
        before, after = self._rows(group.before), self._rows(group.after)
        out = []
        for index in self.indexes:
            made = changes(entries(before.column(RECORD_KEY), before.column(index.column)),
                           entries(after.column(RECORD_KEY), after.column(index.column)))
            out.append(made.add_column(0, "index", pa.array([index.partition] * made.num_rows, pa.string())))
        return pa.concat_tables(out) if out else INDEXED_SCHEMA.empty_table()


def entry_changes(spark, table: HoodieTable, instant: str, meta: dict, indexes: list[BuiltIndex], view: CommitView,
                  in_process: bool):
    """Every index's entry changes from one write (INDEXED_SCHEMA rows: an Arrow table read here,
    or a DataFrame read by Spark's tasks), or None when it touched no file group."""
    groups = touched_groups(meta, view)
    if not groups or not indexes:
        return None
    schema = table_schema(table)
    spec = merge_spec(table)
    names = [RECORD_KEY] + [n for n in spec.ordering_fields if n in schema.names]
    names += [i.column for i in indexes if i.column not in names]
    if spec.custom:     # a Python merger may read any column
        names += [n for n in schema.names if n not in names]
    timeline = table.timeline
    visible = Visibility(frozenset([i.timestamp for i in timeline.completed_writes()] + [instant]), timeline.start)
    task = GroupChanges(table.storage, tuple(groups), pa.schema([schema.field(n) for n in names]), tuple(indexes),
                        SliceMerge(visible, spec))
    if spark is None or in_process:
        from ...threads import parallel_map

        return pa.concat_tables(parallel_map(task.changes, groups))
    return task_indexes(spark, len(groups)).selectExpr("CAST(id AS INT) AS id").mapInArrow(
        task, _spark_schema(INDEXED_SCHEMA))


def write_changes(spark, mdt: HoodieTable, instant: str, index: BuiltIndex, rows,
                  base_instants: dict[int, str]) -> list[dict]:
    """One index's share of :func:`entry_changes` into log files of its file groups."""
    if isinstance(rows, pa.Table):
        mine = rows.filter(pc.equal(rows.column("index"), index.partition)).drop_columns(["index"])
        if mine.num_rows == 0:
            return []
    else:
        from pyspark.sql import functions as F

        mine = rows.filter(F.col("index") == index.partition).drop("index")
    return write_entries(spark, mdt, index, instant, mine, len(base_instants), base_instants)
