"""``spark.readStream.format("hudi")``: a table's commits as a stream, with Hudi's incremental
semantics.

An offset is a position on the timeline, ``{"instant": <time>}``: the completion time of a
completed write on Hudi 1.x tables, its instant time before (what an incremental window compares,
:func:`plan.window_position`). Each micro-batch reads the commits in (start, end], planned as the
batch incremental or CDC query of that window (``plan_read`` / ``plan_cdc``), one Spark task per
file slice or file group. Spark's checkpoint keeps the offsets, so a restarted query goes on after
its last batch. ``hoodie.datasource.streaming.startOffset`` (earliest, latest or an instant,
exclusive) places a new query; Spark's first micro-batch always runs, so even a ``latest`` start
lands in the checkpoint before any later commit.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieTimelineError
from ..storage import Storage
from ..table.meta_client import HoodieTable
from ..timeline.instant import normalize_instant
from .cdc import plan_cdc
from .partition_rows import partition_rows
from .plan import ReadPlan, is_cdc_query, plan_read, window_position

EARLIEST = "0"      # before every instant: the first window holds every commit


class HudiStreamReader(DataSourceStreamReader):
    def __init__(self, storage: Storage, options: dict, columns: list[str]):
        self.storage, self.options, self.columns = storage, options, columns
        self.cdc = is_cdc_query(options)
        if not self.cdc and HoodieConfig(options).get_str(C.INCREMENTAL_FORMAT).lower() == "cdc":
            raise HoodieConfigError(
                f"a CDC stream needs {C.QUERY_TYPE.key}=incremental as well as {C.INCREMENTAL_FORMAT.key}=cdc "
                "(as Hudi's streaming source); without it the stream gives the rows' latest state")
        self._initial: dict | None = None

    def initialOffset(self) -> dict:
        # Once per query run: Spark may ask again before its first batch, and a "latest" start
        # must not move meanwhile.
        if self._initial is None:
            self._initial = {"instant": start_position(HoodieTable.load(self.storage), self.options)}
        return self._initial

    def latestOffset(self) -> dict:
        # Never before the start: a later commit between the two would otherwise be read.
        latest = latest_position(HoodieTable.load(self.storage)) or EARLIEST
        return {"instant": max(latest, self.initialOffset()["instant"])}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        """One task per file slice or file group, each given a plan of its own part only, so that no
        task carries the whole batch's plan."""
        if start["instant"] >= end["instant"]:
            return []
        table = HoodieTable.load(self.storage)
        window = {**self.options, C.QUERY_TYPE.key: "incremental",
                  C.BEGIN_INSTANTTIME.key: start["instant"], C.END_INSTANTTIME.key: end["instant"]}
        if self.cdc:
            changes = plan_cdc(table, window)
            return [InputPartition(replace(changes, groups=(group,))) for group in changes.groups]
        plan = self._in_stream_columns(plan_read(table, window))
        return [InputPartition(replace(plan, slices=(s,))) for s in plan.slices]

    def _in_stream_columns(self, plan: ReadPlan) -> ReadPlan:
        """The plan in the columns the query started with: Spark fixed them then. Columns added
        since are left out until the query restarts, as Hudi's streaming source does."""
        gone = [c for c in self.columns if c not in plan.schema.names]
        if gone:
            raise HoodieTimelineError(
                f"the table's schema no longer has column(s) {', '.join(gone)} that this stream started "
                "with; restart the query to stream in the table's current schema")
        return replace(plan, schema=pa.schema([plan.schema.field(c) for c in self.columns]))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from partition_rows(self.storage, partition.value, 0)


def latest_position(table: HoodieTable) -> str | None:
    """Where the newest completed write ends an incremental window; None before any."""
    return max((window_position(table, i) for i in table.timeline.completed_writes()), default=None)


def start_position(table: HoodieTable, options: dict) -> str:
    start = HoodieConfig(options).get_str(C.STREAMING_START_OFFSET)
    if start.lower() == "earliest":
        return EARLIEST
    if start.lower() == "latest":
        return latest_position(table) or EARLIEST
    return normalize_instant(start, C.STREAMING_START_OFFSET.key)
