"""Keeping the metadata table in step with the data table (HoodieBackedTableMetadataWriter).

Every data action commits a delta commit of its own instant time to the metadata table just before
it completes itself, so a reader trusts a metadata instant only once the data instant completed.
A failed write's delta commit is rolled back with it; a restore drops the metadata table and the
next write that asks for it builds it again from the table's files; a write that turns it off
deletes it, as Hudi does. Partitions are built one at a time and listed in the data table's
``hoodie.table.metadata.partitions`` only once complete, so a build that dies is simply redone.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import pyarrow as pa

from ... import config as C
from ...config import HoodieConfig
from ...errors import HoodieConfigError
from ...file_group.fs_view import FileSystemView
from ...file_group.log_scanner import Visibility
from ...file_group.naming import parse_base_file_name, parse_log_file_name
from ...metadata_table.codec import SCHEMA_JSON, combine_batch, split
from ...metadata_table.file_groups import write_base, write_log
from ...metadata_table.keys import EXPRESSION_INDEX
from ...metadata_table.keys import RECORD_INDEX as RECORD_INDEX_TYPE
from ...metadata_table.keys import (
    ALL_PARTITIONS_KEY,
    PARTITION_TYPES,
    file_group_id,
    file_group_index,
    file_group_index_of_id,
    file_group_indexes,
)
from ...metadata_table.layout import (
    BLOOM_FILTERS,
    COLUMN_STATS,
    FILES,
    PARTITION_STATS,
    RECORD_INDEX,
    create_mdt,
    delete_mdt,
    init_instant,
    mdt_storage,
    open_mdt,
    set_table_partitions,
    wanted_partitions,
)
from ...metadata_table.index_defs import (
    IndexDefinition,
    expression_indexes,
    is_expression_index_partition,
    is_secondary_index_partition,
    secondary_indexes,
)
from ...metadata_table.reader import MetadataReader, table_view
from ...metadata_table.records import encode, partitions_of, record_index_record
from ...metadata_table.sizing import estimate_file_group_count
from ...schema.avro import avro_to_arrow
from ...schema.meta_fields import META_FIELDS, RECORD_KEY
from ...table.meta_client import PROPERTIES_FILE, HoodieTable
from ...table.properties import read_properties_text
from ...timeline.commit_metadata import commit_metadata
from ...timeline.index_plan import IndexPartition, indexing_partitions
from ...timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, FILE_WRITING_ACTIONS, ROLLBACK, Instant, State
from ..commit import complete
from ..rollback import rollback
from . import partition_stats
from .changes import Changes, clean_changes, commit_changes, rollback_changes
from .commit_view import EMPTY_VIEW, commit_view
from .compaction import compact_if_due
from .expression_index import (
    build_records,
    built_expression_indexes,
    clean_tombstones,
    kept_expression_partitions,
    missing_expression_indexes,
)
from .expression_index import commit_records as expression_commit_records
from .group_writes import ENCODED, PartitionFiles, write_file_groups
from .record_index import key_changes, local_key_changes, snapshot_locations, written_files
from .secondary_index import (
    build_index,
    built_indexes,
    entry_changes,
    entry_count,
    index_build_instant,
    taken_build_instants,
    kept_partitions,
    missing_indexes,
    write_changes,
    write_index_base,
)

log = logging.getLogger(__name__)

ORDER = (FILES, COLUMN_STATS, RECORD_INDEX, BLOOM_FILTERS, PARTITION_STATS)   # build order; index = init suffix offset
TOKEN = "0-0-0"


def current_partitions(table: HoodieTable) -> list[str]:
    """The complete metadata partitions, read from storage (another process may have changed them)."""
    try:
        props = read_properties_text(table.storage.read_text(PROPERTIES_FILE))
    except FileNotFoundError:
        return []
    if not mdt_storage(table).exists(PROPERTIES_FILE):
        return []
    return [p for p in props.get(C.TABLE_METADATA_PARTITIONS.key, "").split(",") if p]


def building_partitions(table: HoodieTable) -> dict[str, IndexPartition]:
    """The partitions pending indexing instants build: writers keep them in step from the moment
    they are scheduled (their base files may not exist yet). The caller's timeline is trusted: writers
    beside an indexer must take the table lock (as Hudi requires), and under it the timeline was
    reloaded (``locked_table``)."""
    if not mdt_storage(table).exists(PROPERTIES_FILE):
        return {}
    return indexing_partitions(table.timeline)


def indexed_columns(table: HoodieTable, cfg: HoodieConfig | None = None) -> list[str]:
    """Columns whose ranges go to column_stats: the configured list, else the record key and the
    first data columns up to Hudi's limit."""
    cfg = cfg or table.config
    listed = cfg.get_list(C.METADATA_COLUMN_STATS_COLUMNS)
    if listed:
        return listed
    schema = table.timeline.latest_schema() or table.props.get(C.CREATE_SCHEMA.key)
    names = [f.name for f in avro_to_arrow(schema) if f.name not in META_FIELDS] if schema else []
    return ([RECORD_KEY] if table.populate_meta_fields else []) + names[:cfg.get(C.METADATA_COLUMN_STATS_MAX_COLUMNS)]


# --- turning it on and off -----------------------------------------------------------------------
def ensure_metadata(spark, table: HoodieTable, cfg: HoodieConfig) -> HoodieTable:
    """Make the metadata table hold what the write's options ask for: build missing partitions,
    drop ones no longer wanted, or delete it all when ``hoodie.metadata.enable`` is false."""
    wanted = wanted_partitions(cfg, table.version)
    have = current_partitions(table)
    building = building_partitions(table)
    if building and not wanted:
        raise HoodieConfigError(f"{table.name} is being indexed ({', '.join(sorted(building))}): a write with "
                                f"{C.METADATA_ENABLE.key}=false would delete its metadata table; keep it on, or roll "
                                "the indexing back first (hudictl table index build --mode rollback)")
    if not wanted:
        return delete_mdt(table) if (have or mdt_storage(table).exists("")) else table
    dropped = [p for p in have if p not in wanted + kept_partitions(have, wanted, cfg) + kept_expression_partitions(have)]
    if dropped:
        storage = mdt_storage(table)
        for p in dropped:
            storage.delete_dir(p)
        have = [p for p in have if p in wanted]
        table = set_table_partitions(table, have)
    buildable = [FILES] if cfg.get(C.METADATA_INDEX_ASYNC) else wanted    # the rest: the asynchronous indexer's
    missing = [p for p in ORDER if p in buildable and p not in have and p not in building]
    if missing:
        table = _build(spark, table, have, missing, cfg)
    if cfg.get(C.METADATA_INDEX_ASYNC):         # defined indexes without a partition: the indexer's too
        return table
    secondary = [d for d in missing_indexes(table, current_partitions(table), cfg) if d.name not in building]
    table = build_secondary_indexes(spark, table, secondary, cfg)
    expression = [d for d in missing_expression_indexes(table, current_partitions(table)) if d.name not in building]
    return build_expression_indexes(spark, table, expression, cfg)


def build_secondary_indexes(spark, table: HoodieTable, definitions: list, cfg: HoodieConfig) -> HoodieTable:
    """Build each defined secondary index's partition (sized as the record index would be for as
    many entries) and list it once complete."""
    for definition in definitions:
        table = set_table_partitions(table, current_partitions(table), inflight=[definition.name])
        build_index(spark, table, definition, lambda n: _file_group_count(RECORD_INDEX, cfg, n))
        table = set_table_partitions(table, current_partitions(table) + [definition.name])
    return table


def build_expression_indexes(spark, table: HoodieTable, definitions: list[IndexDefinition],
                             cfg: HoodieConfig) -> HoodieTable:
    """Build each expression index's partition from every file of the latest file slices (one
    task per file), in a metadata delta commit of its own, and list it once complete."""
    for definition in definitions:
        table = set_table_partitions(table, current_partitions(table), inflight=[definition.name])
        mdt = open_mdt(table)
        assert mdt is not None
        instant = index_build_instant(mdt, table)
        log.info(f"building expression index {definition.user_name} of {table.name} at {instant}")
        files = [(f.path, f.size) for s in table_view(table).latest_file_slices()
                 for f in ([s.base_file] if s.base_file is not None else []) + s.log_files]
        stats = _write_expression_base(spark, table, mdt, definition, files, instant,
                                       cfg.get(C.METADATA_EXPRESSION_INDEX_FILE_GROUP_COUNT), cfg)
        _complete(mdt, Instant(instant, DELTA_COMMIT, State.REQUESTED), stats, "bulk_insert", begin=True)
        table = set_table_partitions(table, current_partitions(table) + [definition.name])
    return table


def _write_expression_base(spark, table: HoodieTable, mdt: HoodieTable, definition: IndexDefinition,
                           files: list[tuple[str, int]], instant: str, count: int, cfg: HoodieConfig) -> list[dict]:
    """An expression index's base files: the records of ``files`` (one Spark task per file)."""
    if spark is None:
        raise HoodieConfigError(f"building expression index {definition.user_name} needs Spark; run it from a "
                                "Spark session (CREATE INDEX, a Spark write, or the indexer)")
    timeline = table.timeline
    visible = Visibility(frozenset(i.timestamp for i in timeline.completed_writes()), timeline.start)
    records = build_records(spark, table, definition, files, visible, instant, cfg)
    return _write_groups(mdt, definition.name, instant, count, records, base_instants=None)


def _build(spark, table: HoodieTable, have: list[str], missing: list[str], cfg: HoodieConfig) -> HoodieTable:
    if RECORD_INDEX in missing:
        _check_record_index_possible(table)
    mdt = open_mdt(table) if have else None
    if mdt is None:
        delete_mdt(table)
        mdt = create_mdt(table)
        have = []
        if not cfg.get(C.METADATA_INDEX_ASYNC):
            missing = [p for p in ORDER if p in missing or p in wanted_partitions(cfg, table.version)]
    table = set_table_partitions(table, have, inflight=missing)
    completed = table.timeline.completed_writes()
    anchor = completed[-1].timestamp if completed else None
    listing = _committed_files(table)
    for partition in missing:
        instant = init_instant(anchor, ORDER.index(partition), table.version, taken_build_instants(mdt, table))
        log.info(f"building metadata partition {partition} of {table.name} at {instant}")
        if partition == RECORD_INDEX:
            stats = _build_record_index(spark, table, mdt, instant, cfg)
        else:
            records = _initial_records(spark, table, partition, listing, cfg, instant)
            count = _file_group_count(partition, cfg, len(records))
            stats = _write_groups(mdt, partition, instant, count, records, base_instants=None)
        _complete(mdt, Instant(instant, DELTA_COMMIT, State.REQUESTED), stats, "bulk_insert", begin=True)
        have = have + [partition]
        table = set_table_partitions(table, have, inflight=[p for p in missing if p not in have])
    return table


# --- the asynchronous indexer's builds -----------------------------------------------------------
INDEXABLE = (COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX, PARTITION_STATS)   # the indexer builds these, and defined
# secondary and expression indexes


def build_order(partition: str) -> int:
    """A partition's place in the build order (its initialization instant's number): secondary and
    expression indexes after the rest, as ``CREATE INDEX`` numbers them."""
    return ORDER.index(partition) if partition in ORDER else ORDER.index(PARTITION_STATS)


def _definition(table: HoodieTable, partition: str) -> IndexDefinition:
    found = next((d for d in secondary_indexes(table) + expression_indexes(table) if d.name == partition), None)
    if found is None:
        raise HoodieConfigError(f"{table.name} has no definition of index {partition} in its index.json; "
                                "define it with CREATE INDEX (or roll the indexing back: --mode rollback)")
    return found


def planned_file_groups(spark, table: HoodieTable, partition: str, cfg: HoodieConfig) -> int:
    """How many file groups an indexing instant builds ``partition`` with, fixed when it is
    scheduled (writers route their changes by it): the record index's by the table's live keys, a
    secondary index's by its entries (as its synchronous build sizes it)."""
    if is_expression_index_partition(partition):
        return cfg.get(C.METADATA_EXPRESSION_INDEX_FILE_GROUP_COUNT)
    if is_secondary_index_partition(partition):
        if spark is None:
            raise HoodieConfigError(f"scheduling the build of {partition} needs Spark (it counts its entries)")
        return _file_group_count(RECORD_INDEX, cfg, entry_count(spark, table, _definition(table, partition)))
    if partition != RECORD_INDEX:
        return _file_group_count(partition, cfg, 0)
    _check_record_index_possible(table)
    if spark is None:
        raise HoodieConfigError("scheduling the record index's build needs Spark (it counts the table's keys)")
    return _file_group_count(RECORD_INDEX, cfg, snapshot_locations(spark, table.base_path).count())


def build_planned(spark, table: HoodieTable, planned: IndexPartition, scheduled: str, cfg: HoodieConfig) -> bool:
    """Write the base files of a partition an indexing instant builds, at the metadata instant its
    plan names, from the table as it was when the indexing was ``scheduled``. Writers have logged
    every change since then in the partition, sorting after this base. Per-file records (column
    ranges, blooms, expression values) come from the files of instants completed before
    ``scheduled`` only, since records of one file merge by adding their counts; the record and
    secondary indexes read the snapshot of now, as a key's newer location or a (value, key) pair's
    newer state in a log replaces the base's, and so do partition stats (a write's record of a
    partition is a tight bound over all its files, which replaces the base's). False when an
    earlier run built it already; a build that died half way (its metadata instant pending) is
    written again."""
    mdt = open_mdt(table)
    if mdt is None:
        raise HoodieConfigError(f"{table.name} lost its metadata table while indexing {planned.partition}; "
                                "roll the indexing back (hudictl table index build --mode rollback)")
    existing = mdt.timeline.get(planned.build_instant)
    if existing is not None and existing.is_completed:
        return False
    instant, partition = planned.build_instant, planned.partition
    for f in mdt.storage.list(partition):     # a killed run's base files (other task tokens)
        base = parse_base_file_name(f.path.rsplit("/", 1)[-1])
        if base is not None and base.instant == instant:
            mdt.storage.delete(f.path)
    if existing is not None:
        mdt.timeline.delete_pending_files(existing)
        mdt = mdt.reload()
    log.info(f"indexing {partition} of {table.name}: building {planned.file_groups} file groups at {instant}")
    if partition == RECORD_INDEX:
        if spark is None:
            raise HoodieConfigError("building the record index needs Spark; run the indexer from a Spark session")
        stats = _write_changes(spark, mdt, instant, snapshot_locations(spark, table.base_path), planned.file_groups,
                               base_instants=None, since=planned.upto)
    elif is_secondary_index_partition(partition):
        stats = write_index_base(spark, table, mdt, _definition(table, partition), instant,
                                 lambda _: planned.file_groups)
    elif is_expression_index_partition(partition):
        files = [(f"{p}/{n}" if p else n, size) for p, named in _committed_files(table, scheduled).items()
                 for n, size in named.items()]
        stats = _write_expression_base(spark, table, mdt, _definition(table, partition), files, instant,
                                       planned.file_groups, cfg)
    else:
        records = _initial_records(spark, table, partition, _committed_files(table, scheduled), cfg, instant)
        stats = _write_groups(mdt, partition, instant, planned.file_groups, records, base_instants=None)
    _complete(mdt, Instant(instant, DELTA_COMMIT, State.REQUESTED), stats, "bulk_insert", begin=True)
    return True


def uncovered_instants(table: HoodieTable, upto: str, scheduled: str) -> list[str]:
    """Data instants completed since the indexing was ``scheduled`` (or requested after its base
    ``upto``) with no completed metadata delta commit: changes the partitions being indexed would
    miss (none while every writer commits under the table lock). One requested before the base
    that completed after the schedule counts too: its changes are not in the base either."""
    mdt = open_mdt(table)
    done = {i.timestamp for i in mdt.timeline.filter(completed=True)} if mdt is not None else set()
    actions = FILE_WRITING_ACTIONS + (COMMIT, CLEAN, ROLLBACK)
    return [i.timestamp for i in table.timeline.filter(actions, completed=True)
            if i.timestamp not in done and since_base(i, upto, scheduled)]


def since_base(instant: Instant, upto: str, scheduled: str) -> bool:
    """Whether a completed data instant is one the indexing's writers had to log: requested after
    the base, or completed after the schedule (a version 8+ completion time)."""
    return instant.timestamp > upto or (instant.completion_time or "") > scheduled


def _check_record_index_possible(table: HoodieTable) -> None:
    if not table.populate_meta_fields:
        raise HoodieConfigError(
            f"{C.METADATA_RECORD_INDEX_ENABLE.key}=true needs the record key column, and table "
            f"{table.name} was written with hoodie.populate.meta.fields=false; turn the record index off")


def _committed_files(table: HoodieTable, completed_before: str | None = None) -> dict[str, dict[str, int]]:
    """partition → file name → size of the data files the completed timeline accounts for (only
    those of instants that completed before ``completed_before``, a time of a version 8+ table)."""
    view = FileSystemView(table.storage, table.timeline)
    done = {i.timestamp for i in table.timeline.completed_writes()
            if completed_before is None or (i.completion_time or i.timestamp) < completed_before}
    start = table.timeline.start
    out: dict[str, dict[str, int]] = {}
    for f in view.data_files():
        name = f.path.rsplit("/", 1)[-1]
        partition = f.path[:-len(name) - 1] if "/" in f.path else ""
        base = parse_base_file_name(name)
        if base is not None and not (base.instant in done or (start is not None and base.instant < start)):
            continue
        log_file = parse_log_file_name(name) if base is None else None
        if base is None and (log_file is None or (completed_before is not None and log_file.instant not in done
                                                  and not (start is not None and log_file.instant < start))):
            continue
        out.setdefault(partition, {})[name] = f.size
    return out


def _initial_records(spark, table: HoodieTable, partition: str, listing: dict[str, dict[str, int]],
                     cfg: HoodieConfig, instant: str) -> list[dict]:
    changes = Changes([partition])
    if partition == FILES:
        for p, files in listing.items():
            changes.add_files(p, files)
        return changes.finish(known_partitions=set()).get(FILES, [])
    columns = indexed_columns(table, cfg)
    if partition == PARTITION_STATS:
        return partition_stats.initial_records(table, columns, instant, spark)
    done = Visibility(frozenset(i.timestamp for i in table.timeline.completed_writes()), table.timeline.start)
    changes.file_stats(table.storage, [f"{p}/{n}" if p else n for p, files in listing.items() for n in files],
                       columns, instant, done, spark)
    return changes.records.get(partition, [])


def _file_group_count(partition: str, cfg: HoodieConfig, records: int) -> int:
    if partition == FILES:
        return 1
    if partition == COLUMN_STATS:
        return cfg.get(C.METADATA_COLUMN_STATS_FILE_GROUP_COUNT)
    if partition == BLOOM_FILTERS:
        return cfg.get(C.METADATA_BLOOM_FILTER_FILE_GROUP_COUNT)
    if partition == PARTITION_STATS:
        return cfg.get(C.METADATA_PARTITION_STATS_FILE_GROUP_COUNT)
    return estimate_file_group_count(records, cfg.get(C.METADATA_RECORD_INDEX_MIN_FILE_GROUPS),
                                     cfg.get(C.METADATA_RECORD_INDEX_MAX_FILE_GROUPS),
                                     cfg.get(C.METADATA_RECORD_INDEX_GROWTH_FACTOR),
                                     cfg.get(C.METADATA_RECORD_INDEX_MAX_FILE_GROUP_BYTES))


def _build_record_index(spark, table: HoodieTable, mdt: HoodieTable, instant: str, cfg: HoodieConfig) -> list[dict]:
    if spark is None:
        raise HoodieConfigError("building the record index needs Spark; run it from a Spark write")
    locations = snapshot_locations(spark, table.base_path).persist()
    try:
        count = _file_group_count(RECORD_INDEX, cfg, locations.count())
        # Entries name a data instant (Hudi takes the file slices' own); a version 8+ build
        # instant is the zero time plus a number, which is no time at all.
        completed = table.timeline.completed_writes()
        since = completed[-1].timestamp if completed else instant
        return _write_changes(spark, mdt, instant, locations, count, base_instants=None, since=since)
    finally:
        locations.unpersist()


# --- writing records into file groups ------------------------------------------------------------
def _write_groups(mdt: HoodieTable, partition: str, instant: str, count: int, records: list[dict],
                  base_instants: dict[int, str] | None) -> list[dict]:
    """Small partitions, on the driver: base files (``base_instants`` None) or one log file per
    file group that receives records."""
    groups: dict[int, dict] = {}
    for key, value in combine_batch(records).items():
        groups.setdefault(file_group_index(key, count), {})[key] = value
    stats = []
    indexes = range(count) if base_instants is None else sorted(groups)
    for i in indexes:
        items, deletes = split(groups.get(i, {}))
        fid = _file_group_id(partition, i)
        if base_instants is None:
            stats.append(write_base(mdt.storage, partition, fid, instant, TOKEN, items))
        else:
            stats.append(write_log(mdt.storage, partition, fid, base_instants[i], instant, TOKEN, items, deletes))
    return stats


def _file_group_id(partition: str, index: int) -> str:
    if is_expression_index_partition(partition):
        return file_group_id(EXPRESSION_INDEX, index, partition)
    return file_group_id(next(t for t in PARTITION_TYPES if t.path == partition), index)


@dataclass(frozen=True)
class _EncodeChanges:
    """Record-index changes (CHANGE_SCHEMA) → ENCODED rows; each live key is recorded as in its
    file group since the data instant ``since``."""
    count: int
    since: str

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        # A stored value leaves its key out (the HFile key holds it), so every key of one file
        # group has the same value: encoded once per (partition, file id).
        encoded: dict[tuple[str, str], bytes] = {}
        keys = batch.column(0)
        parts, fids = batch.column(1).to_pylist(), batch.column(2).to_pylist()
        deleted = batch.column(3).to_pylist()
        values: list[bytes | None] = []
        for k, p, f, d in zip(keys.to_pylist(), parts, fids, deleted):
            if d:
                values.append(None)
                continue
            if (p, f) not in encoded:
                encoded[(p, f)] = encode(record_index_record(k, p, f, self.since))
            values.append(encoded[(p, f)])
        return pa.RecordBatch.from_arrays(
            [pa.array(file_group_indexes(keys, self.count), pa.int32()), keys,
             pa.array(values, pa.binary()), pa.array(deleted, pa.bool_())], schema=ENCODED)


_RECORD_INDEX_FILES = PartitionFiles(RECORD_INDEX_TYPE, RECORD_INDEX)


def _write_changes(spark, mdt: HoodieTable, instant: str, changes, count: int,
                   base_instants: dict[int, str] | None, since: str | None = None) -> list[dict]:
    """``changes`` (CHANGE_SCHEMA rows) into the record index's file groups at ``instant``, live
    keys recorded since ``since`` (the instant itself by default)."""
    return write_file_groups(spark, mdt, _RECORD_INDEX_FILES, instant, changes, _EncodeChanges(count, since or instant),
                             count, base_instants)


def _complete(mdt: HoodieTable, instant: Instant, stats: list[dict], operation: str, begin: bool) -> None:
    timeline = mdt.timeline
    if begin:
        timeline.create_requested(instant)
        timeline.transition_to_inflight(instant)
    complete(mdt, instant.with_state(State.INFLIGHT), commit_metadata(stats, operation, SCHEMA_JSON))


# --- keeping it in step ---------------------------------------------------------------------------
class _Sync:
    """One metadata delta commit for one data instant."""

    def __init__(self, table: HoodieTable, instant: str, spark=None, options: dict | None = None):
        self.table, self.instant, self.spark, self.options = table, instant, spark, options or {}
        self.building = building_partitions(table)     # completions reload the table under the lock
        done = current_partitions(table)
        self.partitions = done + [p for p in self.building if p not in done]
        self.mdt = open_mdt(table) if self.partitions else None

    @property
    def active(self) -> bool:
        return self.mdt is not None

    def run(self, changes: Changes, rli=None, secondary=None) -> None:
        mdt = compact_if_due(self.mdt, self.table, self.instant, self.spark, self.options)
        pending = Instant(self.instant, DELTA_COMMIT, State.REQUESTED)
        existing = mdt.timeline.get(self.instant)
        if existing is not None:       # a retry of this instant: start its delta commit afresh
            rollback(mdt, existing)
            mdt = mdt.reload()
        mdt.timeline.create_requested(pending)
        mdt.timeline.transition_to_inflight(pending)
        slices = {}
        for s in mdt.fs_view().latest_file_slices():
            slices.setdefault(s.partition, {})[s.file_id] = s.base_instant
        known = set(self._known_partitions())
        records = changes.finish(known_partitions=known)
        stats = []
        for partition in self.partitions:
            bases = _indexed_bases(slices.get(partition, {}))
            if partition in self.building:     # its base files may not be written yet: the plan's
                planned = self.building[partition]
                bases = {i: planned.build_instant for i in range(planned.file_groups)}
            if mdt.version >= 8:       # a log file is named by its own delta commit (Hudi 1.x)
                bases = {i: self.instant for i in bases}
            if partition == RECORD_INDEX:
                if rli is not None:
                    stats += _write_changes(self.spark, mdt, self.instant, rli, len(bases), bases)
                continue
            index = next((i for i in built_indexes(self.table, [partition])), None)
            if index is not None:
                if secondary is not None:
                    stats += write_changes(self.spark, mdt, self.instant, index, secondary, bases)
                continue
            if records.get(partition):
                stats += _write_groups(mdt, partition, self.instant, len(bases), records[partition], bases)
        _complete(mdt, pending, stats, "upsert", begin=False)

    def _known_partitions(self) -> list[str]:
        reader = MetadataReader(self.table, self.mdt, self.partitions)
        record = reader.records(FILES, keys=[ALL_PARTITIONS_KEY]).get(ALL_PARTITIONS_KEY)
        return partitions_of(record) if record else []


def _indexed_bases(by_file_id: dict[str, str]) -> dict[int, str]:
    return {file_group_index_of_id(fid): base for fid, base in by_file_id.items()}


def sync_commit(table: HoodieTable, instant: str, meta: dict, spark=None, options: dict | None = None,
                all_keys_moved: bool = False, keys_in_process: bool = False) -> None:
    """Before a write, compaction or clustering completes: its files, their ranges and bloom
    filters, and where its keys now live (read from the files it wrote: by Spark's tasks, or in
    this process without Spark or when ``keys_in_process``, for a write that ran here)."""
    sync = _Sync(table, instant, spark, options)
    if not sync.active:
        return
    columns = indexed_columns(table)
    changes = commit_changes(sync.partitions, table.storage, instant, meta, columns,
                             None if keys_in_process else spark)
    # The table's slices before and after this action: one listing, for every index that needs them.
    expression = built_expression_indexes(table, sync.partitions)
    needs_view = (PARTITION_STATS in sync.partitions or (RECORD_INDEX in sync.partitions and not meta.get("compacted"))
                  or any(d.index_type == "column_stats" for d in expression))
    view = commit_view(table, instant, meta, changes.written_files()) if needs_view else EMPTY_VIEW
    reader = MetadataReader(table, sync.mdt, sync.partitions)
    if PARTITION_STATS in sync.partitions:
        changes.records[PARTITION_STATS] += partition_stats.commit_records(table, meta, changes, columns, reader, view)
    if expression:
        cfg = HoodieConfig({**table.props, **(options or {})})
        # A log file's record covers every block that counts once this instant completes.
        timeline = table.timeline
        visible = Visibility(frozenset([i.timestamp for i in timeline.completed_writes()] + [instant]), timeline.start)
        found = expression_commit_records(spark, table, expression, meta, visible, instant, cfg,
                                          spark is None or keys_in_process, reader, view)
        for partition, records in found.items():
            changes.records[partition] += records
    rli = secondary = None
    if RECORD_INDEX in sync.partitions and not meta.get("compacted"):
        previous = {key: s.base_file.path for key, s in view.before.items() if s.base_file is not None}
        files = written_files(meta, previous, all_keys_moved)
        if spark is None or keys_in_process:
            rli = local_key_changes(table.storage, instant, files)
        else:
            rli = key_changes(spark, table.storage, instant, files)
        if not all_keys_moved:      # clustering moves rows, changing no value
            secondary = entry_changes(spark, table, instant, meta, built_indexes(table, sync.partitions), view,
                                      spark is None or keys_in_process)
    sync.run(changes, rli, secondary)


def sync_clean(table: HoodieTable, instant: str, clean_meta: dict, options: dict | None = None) -> None:
    sync = _Sync(table, instant, options=options)
    if sync.active:
        changes = clean_changes(sync.partitions, clean_meta, indexed_columns(table), instant)
        expression = built_expression_indexes(table, sync.partitions)
        for partition, records in clean_tombstones(expression, clean_meta, instant, table.version).items():
            changes.records[partition] += records
        sync.run(changes)


def sync_rollback(table: HoodieTable, instant: str, rollback_meta: dict, options: dict | None = None) -> None:
    """The rolled back instant's own delta commit goes (its records were never trusted), and the
    rollback's deletes and command-block log files are recorded."""
    sync = _Sync(table, instant, options=options)
    if not sync.active:
        return
    for target in rollback_meta.get("commitsRollback") or []:
        found = sync.mdt.timeline.get(target)
        if found is not None:
            rollback(sync.mdt, found)
            sync.mdt = sync.mdt.reload()
    sync.run(rollback_changes(sync.partitions, rollback_meta))


def drop_for_restore(table: HoodieTable) -> HoodieTable:
    """A restore rewinds completed instants the metadata table may have compacted away: it is
    dropped, and the next write with ``hoodie.metadata.enable`` builds it again."""
    if current_partitions(table) or mdt_storage(table).exists(""):
        log.info(f"restore of {table.name}: dropping the metadata table; the next write rebuilds it")
        return delete_mdt(table)
    return table
