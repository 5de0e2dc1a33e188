"""``spark.read.format("hudi")``: the read half of the ``hudi`` Python data source (``sql.datasource``
adds writes), over the same read plan.

Each Spark partition reads one file slice in Arrow; options are the same as :func:`read`'s.
``hudi_engine.spark.register`` registers the source in a session.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema

from .. import config as C
from ..cdc import QUERY_SCHEMA
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..expr.skipping import predicates
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .cdc import CDCPlan, plan_cdc, split_changes
from .file_slice import read_file_slice
from .plan import ReadPlan, is_cdc_query, plan_read
from .pruning import prune


class _SlicePartition(InputPartition):
    def __init__(self, index: int):
        super().__init__(index)


class HudiReadSource(DataSource):
    # The session's storage settings (spark.hadoop.fs.*) as of register(): the source is planned in
    # a Python worker that cannot read the session's conf.
    session_settings: dict[str, str] = {}

    @classmethod
    def name(cls) -> str:
        return "hudi"

    def _plan(self) -> tuple[HoodieTable, ReadPlan | CDCPlan]:
        if not hasattr(self, "_cached_plan"):
            path = self.options.get("path")
            if not path:
                raise HoodieConfigError('spark.read.format("hudi") needs a path: .load("<base path>")')
            options = dict(self.options)
            table = HoodieTable.load(Storage(path, {**self.session_settings, **options}))
            plan = plan_cdc(table, options) if is_cdc_query(options) else plan_read(table, options)
            self._cached_plan = (table, plan)
        return self._cached_plan

    def schema(self):
        plan = self._plan()[1]
        return from_arrow_schema(QUERY_SCHEMA if isinstance(plan, CDCPlan) else plan.schema)

    def reader(self, schema) -> DataSourceReader:
        table, plan = self._plan()
        if isinstance(plan, CDCPlan):
            return _CDCReader(table.storage, plan)
        return _HudiReader(table.storage, plan, dict(self.options))


class _HudiReader(DataSourceReader):
    def __init__(self, storage: Storage, plan: ReadPlan, options: dict | None = None):
        self.storage = storage
        self.plan = plan
        self.options = options or {}

    def pushFilters(self, filters):
        """Spark's filters prune slices (partitions, record index, column stats); Spark still
        applies every one of them to the rows, so all are handed back."""
        filters = list(filters)
        preds = [p for p in (_predicate(f) for f in filters) if p is not None]
        if preds and self.plan.commit_times is None:
            cfg = HoodieConfig(self.options)
            latest = cfg.get_str(C.AS_OF_INSTANT) is None
            slices = prune(HoodieTable.load(self.storage), self.plan.slices,
                           predicates(preds, self.plan.schema), cfg, latest)
            self.plan = replace(self.plan, slices=tuple(slices))
        return filters

    def partitions(self):
        # Spark needs at least one partition; -1 stands for "nothing to read".
        return [_SlicePartition(i) for i in range(len(self.plan.slices))] or [_SlicePartition(-1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value < 0:
            return
        file_slice = self.plan.slices[partition.value]
        table = read_file_slice(self.storage, file_slice, self.plan.schema,
                                self.plan.commit_times, self.plan.merge)
        yield from table.to_batches()


class _CDCReader(DataSourceReader):
    """One Spark partition per file group's CDC splits."""

    def __init__(self, storage: Storage, plan: CDCPlan):
        self.storage = storage
        self.plan = plan

    def partitions(self):
        return [_SlicePartition(i) for i in range(len(self.plan.groups))] or [_SlicePartition(-1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value < 0:
            return
        for split in self.plan.groups[partition.value]:
            yield from split_changes(self.storage, self.plan, split).to_batches()


_OPS = {"EqualTo": "=", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<",
        "LessThanOrEqual": "<=", "In": "IN", "IsNull": "IS NULL", "IsNotNull": "IS NOT NULL"}


def _predicate(f) -> tuple | None:
    """A pushed Spark filter as a ``(column, op, value)`` triple, when pruning can use it."""
    op = _OPS.get(type(f).__name__)
    attribute = getattr(f, "attribute", None)
    if op is None or attribute is None or len(attribute) != 1:
        return None
    value = getattr(f, "value", None)
    if op in ("IS NULL", "IS NOT NULL"):
        return (attribute[0], op)
    if value is None:
        return None
    return (attribute[0], op, tuple(value) if op == "IN" else value)

