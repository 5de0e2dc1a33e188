"""CDC queries (``hoodie.datasource.query.incremental.format=cdc``): every change the commits of an
incremental window made, as ``op``/``ts_ms``/``before``/``after`` rows.

The plan (which file groups, which inference case, which files) is :mod:`hudi_engine.cdc`'s; one
Spark task per file group reads what its splits need and renders their rows, so the driver holds
splits, never rows. :func:`cdc_batches` gives the same changes commit by commit, for pipelines
that feed one table from another.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from .. import config as C
from ..cdc import (
    QUERY_SCHEMA,
    CDCSplit,
    Commit,
    FileGroupIndex,
    InferenceCase,
    LoggingMode,
    change_rows,
    extract_splits,
)
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..file_group.fs_view import FileSlice
from ..file_group.log_file import BlockType, data_block_records, read_log_file
from ..file_group.log_scanner import Visibility
from ..file_group.naming import parse_base_file_name
from ..merge.record_merger import MergeSpec
from ..metadata_table.reader import table_view
from ..schema.meta_fields import COMMIT_TIME, RECORD_KEY
from ..spark_files import received_indexes, task_indexes
from ..storage import Storage
from ..table.meta_client import HoodieTable
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import COMPACTION, Instant, State
from .file_slice import SliceMerge, read_file_slice
from .plan import incremental_commits, merge_spec, table_schema, window_position


@dataclass(frozen=True)
class CDCPlan:
    groups: tuple[tuple[CDCSplit, ...], ...]   # each file group's splits, in instant order
    mode: LoggingMode
    schema: pa.Schema                          # rows of before/after slices, meta columns first
    completed: frozenset[str]
    timeline_start: str | None
    spec: MergeSpec | None                     # merge-on-read: how slices merge their logs


def plan_cdc(table: HoodieTable, options: dict | None = None) -> CDCPlan:
    cfg = HoodieConfig(options)
    if not table.populate_meta_fields:
        raise HoodieConfigError(
            f"table {table.name} has no meta columns (hoodie.populate.meta.fields=false), so a CDC "
            "query cannot tell which commit wrote a row; query it as a snapshot or incremental")
    timeline = table.timeline
    commits = [Commit(i.timestamp, i.action, timeline.commit_metadata(i))
               for i in incremental_commits(table, cfg)]
    cdc_on = table.config.get(C.CDC_ENABLED)
    mode = LoggingMode.parse(table.config.get_str(C.CDC_LOGGING_MODE))
    pending = [(i.timestamp, decode_instant_avro(timeline.read_details(
                Instant(i.timestamp, COMPACTION, State.REQUESTED))))
               for i in timeline.pending([COMPACTION])]
    view = table_view(table)
    splits = extract_splits(commits, mode, FileGroupIndex.of(view.file_groups(include_replaced=True)),
                            pending, infer_rewrites=not cdc_on)
    spec = merge_spec(table) if table.table_type == "MERGE_ON_READ" else None
    completed = frozenset(i.timestamp for i in timeline.completed_writes())
    return CDCPlan(tuple(tuple(s) for s in splits.values()), mode, table_schema(table), completed,
                   timeline.start, spec)


def read_cdc(spark: SparkSession, table: HoodieTable, options: dict | None = None) -> DataFrame:
    plan = plan_cdc(table, options)
    schema = from_arrow_schema(QUERY_SCHEMA)
    if not plan.groups:
        return spark.createDataFrame([], schema)
    return task_indexes(spark, len(plan.groups)).mapInArrow(_ReadChanges(table.storage, plan), schema)


def cdc_batches(spark: SparkSession, base_path: str, begin: str = "0",
                end: str | None = None) -> Iterator[tuple[str, DataFrame]]:
    """(instant, its changes) for each commit after ``begin`` up to ``end``, oldest first; a
    consumer that stores the instant it finished can resume from it."""
    table = HoodieTable.load(base_path)
    bounds = {C.BEGIN_INSTANTTIME.key: begin, **({C.END_INSTANTTIME.key: end} if end else {})}
    previous = begin
    for instant in incremental_commits(table, HoodieConfig(bounds)):
        upto = window_position(table, instant)
        yield instant.timestamp, read_cdc(spark, table, {
            C.QUERY_TYPE.key: "incremental", C.INCREMENTAL_FORMAT.key: "cdc",
            C.BEGIN_INSTANTTIME.key: previous, C.END_INSTANTTIME.key: upto})
        previous = upto


class _ReadChanges:
    """Executor side: the change rows of the file groups whose indexes a task receives."""

    def __init__(self, storage: Storage, plan: CDCPlan):
        self.storage, self.plan = storage, plan

    def __call__(self, batches):
        storage = self.storage
        for index in received_indexes(batches):
            for split in self.plan.groups[index]:
                yield from split_changes(storage, self.plan, split).to_batches()


def split_changes(storage: Storage, plan: CDCPlan, split: CDCSplit) -> pa.Table:
    """One split's rows: its CDC records, and its before (the slice as of just before the split's
    commit) and after (as of the commit) rows where the case and mode need them."""
    records = None
    if split.case is InferenceCase.AS_IS:
        records = pa.concat_tables([data_block_records(b) for path in split.cdc_files
                                    for b in read_log_file(storage, path)
                                    if b.block_type == BlockType.CDC_DATA_BLOCK], promote_options="permissive")
    before = _slice(storage, plan, split.before, lambda ts: ts < split.instant)
    after = _slice(storage, plan, split.after, lambda ts: ts <= split.instant)
    return change_rows(split.case, split.instant, plan.mode, records=records, before=before, after=after,
                       keys=_rewritten_keys(split, before, after))


def _rewritten_keys(split: CDCSplit, before: pa.Table | None, after: pa.Table | None) -> pa.Array | None:
    """For a base file rewritten without a CDC log: the keys the commit wrote or dropped. Rows it
    carried over differ from their previous version in ``_hoodie_file_name`` only."""
    if split.case is not InferenceCase.LOG_FILE or before is None or after is None or \
            parse_base_file_name(posixpath.basename(split.cdc_files[0])) is None:
        return None
    written = after[RECORD_KEY].filter(pc.equal(after[COMMIT_TIME], split.instant))
    dropped = before[RECORD_KEY].filter(pc.invert(pc.is_in(before[RECORD_KEY], value_set=after[RECORD_KEY])))
    return pa.concat_arrays([written.combine_chunks(), dropped.combine_chunks()])


def _slice(storage: Storage, plan: CDCPlan, file_slice: FileSlice | None, upto) -> pa.Table | None:
    if file_slice is None:
        return None
    how = None
    if plan.spec is not None:
        visible = Visibility(frozenset(ts for ts in plan.completed if upto(ts)), plan.timeline_start)
        how = SliceMerge(visible, plan.spec)
    return read_file_slice(storage, file_slice, plan.schema, None, how)

