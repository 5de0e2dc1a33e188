"""What a query reads: file slices, a commit-time window and the schema. No engine in here, so the
Spark reader, the ``hudi`` data source and in-process reads all plan the same way."""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieTimelineError
from ..expr.skipping import predicates
from ..file_group.fs_view import FileSlice
from ..file_group.log_scanner import Visibility
from ..keygen import key_generator_from_config
from ..merge.custom import custom_merger_name
from ..merge.partial import partial_update
from ..merge.record_merger import MergeSpec, merge_mode, ordering_fields
from ..metadata_table.reader import table_view
from ..schema.avro import avro_to_arrow
from ..schema.meta_fields import META_FIELDS
from ..table.meta_client import HoodieTable
from ..table.retention import check_incremental_begin, check_read_instant
from ..timeline.instant import Instant, normalize_instant
from .file_slice import SliceMerge
from .pruning import prune


@dataclass(frozen=True)
class ReadPlan:
    slices: tuple[FileSlice, ...]
    schema: pa.Schema                # columns returned, meta columns first when the table has them
    commit_times: tuple[str, ...] | None = None   # incremental: keep rows of these commits only
    merge: SliceMerge | None = None  # merge-on-read: how log files join base files; None = base only

    def merges(self, file_slice: FileSlice) -> bool:
        return self.merge is not None and bool(file_slice.log_files)

    @property
    def base_paths(self) -> list[str]:
        """Base files read as they are (slices with nothing to merge)."""
        return [s.base_file.path for s in self.slices if s.base_file and not self.merges(s)]

    @property
    def merged_slices(self) -> tuple[FileSlice, ...]:
        return tuple(s for s in self.slices if self.merges(s))


def plan_read(table: HoodieTable, options: dict | None = None, filters=None) -> ReadPlan:
    """What a query reads. ``filters`` (``(column, op, value)`` triples, or parsed predicates) prune
    partitions and, with the metadata table, file groups (record index) and files (column stats);
    the caller still filters rows."""
    cfg = HoodieConfig(options)
    query = cfg.get_str(C.QUERY_TYPE).lower()
    timeline = table.timeline
    if query == "incremental":
        return _incremental(table, cfg)
    as_of = cfg.get_str(C.AS_OF_INSTANT)
    if as_of is not None:
        as_of = normalize_instant(as_of, C.AS_OF_INSTANT.key)
        check_read_instant(table, as_of, C.AS_OF_INSTANT.key)
        last = timeline.last_completed_write(until=as_of)
        if last is None:
            return ReadPlan((), table_schema(table, as_of))
        as_of = last.timestamp
    schema = table_schema(table, as_of)
    slices = table_view(table).latest_file_slices(as_of=as_of)
    if filters:
        slices = prune(table, slices, predicates(filters, schema), cfg, latest=as_of is None)
    if query == "read_optimized":
        return ReadPlan(tuple(s for s in slices if s.base_file), schema)
    return ReadPlan(tuple(slices), schema, merge=slice_merge(table, cfg, as_of))


def is_cdc_query(options: dict | None) -> bool:
    cfg = HoodieConfig(options)
    return (cfg.get_str(C.QUERY_TYPE).lower() == "incremental"
            and cfg.get_str(C.INCREMENTAL_FORMAT).lower() == "cdc")


def slice_merge(table: HoodieTable, cfg: HoodieConfig, as_of: str | None) -> SliceMerge | None:
    """How this table's slices merge their logs (None for copy-on-write: nothing to merge)."""
    if table.table_type != "MERGE_ON_READ":
        return None
    timeline = table.timeline
    visibility = Visibility(frozenset(i.timestamp for i in timeline.completed_writes(until=as_of)),
                            timeline.start, as_of)
    return SliceMerge(visibility, merge_spec(table),
                      skip_merge=cfg.get_str(C.MERGE_TYPE).lower() == "skip_merge",
                      keygen=None if table.populate_meta_fields else key_generator_from_config(table.config))


def merge_spec(table: HoodieTable) -> MergeSpec:
    return MergeSpec(ordering_fields(table.config), True, merge_mode(table.config) == "EVENT_TIME_ORDERING",
                     partial_update(table.config), custom_merger_name(table.config))


def incremental_commits(table: HoodieTable, cfg: HoodieConfig) -> list[Instant]:
    """The completed writes in the window (begin, end] of an incremental query.

    Table version 6 windows on instant (requested) times; Hudi 1.x tables (timeline layout 2)
    window on completion times, as Hudi 1.x and hudi-rs do."""
    timeline = table.timeline
    begin = cfg.get_str(C.BEGIN_INSTANTTIME)
    if begin is None:
        raise HoodieConfigError(
            f"an incremental query needs {C.BEGIN_INSTANTTIME.key} (exclusive; '0' reads from the "
            "first commit)")
    begin = normalize_instant(begin, C.BEGIN_INSTANTTIME.key)
    end = cfg.get_str(C.END_INSTANTTIME)
    end = normalize_instant(end, C.END_INSTANTTIME.key) if end else None
    check_incremental_begin(table, begin)
    if table.layout_version >= 2:
        return [i for i in timeline.completed_writes()
                if i.completion_time > begin and (end is None or i.completion_time <= end)]
    return timeline.completed_writes(after=begin, until=end)


def window_position(table: HoodieTable, instant: Instant) -> str:
    """Where an incremental window that ends with ``instant`` ends, as :func:`incremental_commits`
    compares it: its completion time on Hudi 1.x tables, its instant time before."""
    return instant.completion_time if table.layout_version >= 2 else instant.timestamp


def _incremental(table: HoodieTable, cfg: HoodieConfig) -> ReadPlan:
    """Rows written by the commits in the window (begin, end], latest version of each."""
    timeline = table.timeline
    commits = incremental_commits(table, cfg)
    end = cfg.get_str(C.END_INSTANTTIME)
    end = normalize_instant(end, C.END_INSTANTTIME.key) if end else None
    schema_as_of = end if cfg.get(C.INCR_SCHEMA_USE_END_INSTANT) else None
    if not commits:
        return ReadPlan((), table_schema(table, schema_as_of), ())
    as_of = max(i.timestamp for i in commits)
    check_read_instant(table, as_of, f"the incremental window's last commit (up to {C.END_INSTANTTIME.key})")
    touched: set[tuple[str, str]] = set()
    for instant in commits:
        meta = timeline.commit_metadata(instant)
        for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
            touched.update((partition, s["fileId"]) for s in stats if s.get("fileId"))
    groups = table_view(table).file_groups(as_of=as_of, partitions={p for p, _ in touched})
    slices = [g.latest_slice() for g in groups if (g.partition, g.file_id) in touched and g.slices]
    return ReadPlan(tuple(slices), table_schema(table, schema_as_of and as_of),
                    tuple(sorted(i.timestamp for i in commits)), slice_merge(table, cfg, as_of))


def table_schema(table: HoodieTable, as_of: str | None = None) -> pa.Schema:
    """Columns of the table at ``as_of``: the newest commit schema, else the creation schema."""
    avro = table.timeline.latest_schema(until=as_of) or table.props.get(C.CREATE_SCHEMA.key)
    if not avro:
        raise HoodieTimelineError(
            f"table {table.name} records no schema (no completed commit and no "
            f"{C.CREATE_SCHEMA.key}); write to it first")
    data = [f for f in avro_to_arrow(avro) if f.name not in META_FIELDS]
    meta = [pa.field(n, pa.string()) for n in META_FIELDS] if table.populate_meta_fields else []
    return pa.schema(meta + data)
