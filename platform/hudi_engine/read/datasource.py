"""``spark.read.format("hudi")`` and ``spark.readStream.format("hudi")``: the read half of the
``hudi`` Python data source (``sql.datasource`` adds writes), over the same read plan.

Each Spark partition reads one file slice in Arrow; options are the same as :func:`read`'s. A stream
(``stream``) plans each micro-batch as an incremental or CDC query of its window.
``hudi_engine.spark.register`` registers the source in a session.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from .. import config as C
from ..cdc import QUERY_SCHEMA
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..expr.skipping import predicates
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .cdc import CDCPlan, plan_cdc
from .partition_rows import partition_rows
from .plan import ReadPlan, is_cdc_query, plan_read, table_schema
from .pruning import prune
from .stream import HudiStreamReader


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

    def _table(self) -> HoodieTable:
        path = self.options.get("path")
        if not path:
            raise HoodieConfigError('spark.read.format("hudi") and spark.readStream.format("hudi") need a path: '
                                    '.load("<base path>")')
        return HoodieTable.load(Storage(path, {**self.session_settings, **self.options}))

    def _plan(self) -> tuple[HoodieTable, ReadPlan | CDCPlan]:
        if not hasattr(self, "_cached_plan"):
            options = dict(self.options)
            table = self._table()
            plan = plan_cdc(table, options) if is_cdc_query(options) else plan_read(table, options)
            self._cached_plan = (table, plan)
        return self._cached_plan

    def schema(self):
        if self._is_stream():
            return from_arrow_schema(QUERY_SCHEMA if is_cdc_query(self.options) else table_schema(self._table()))
        plan = self._plan()[1]
        return from_arrow_schema(QUERY_SCHEMA if isinstance(plan, CDCPlan) else plan.schema)

    def _is_stream(self) -> bool:
        """An incremental query with no window: only a stream's, whose micro-batches bring theirs
        (Spark tells a source's ``schema`` nothing more). A batch read refuses it when it plans."""
        cfg = HoodieConfig(self.options)
        return cfg.get_str(C.QUERY_TYPE).lower() == "incremental" and cfg.get_str(C.BEGIN_INSTANTTIME) is None

    def streamReader(self, schema: StructType) -> HudiStreamReader:
        table = self._table()
        return HudiStreamReader(table.storage, C.canonical_keys(dict(self.options)), schema.fieldNames())

    def reader(self, schema) -> DataSourceReader:
        table, plan = self._plan()
        if isinstance(plan, CDCPlan):
            return _CDCReader(table.storage, plan)
        return _HudiReader(table.storage, plan, dict(self.options))


class _PlanReader(DataSourceReader):
    """Reads one part of its plan (a file slice, a file group's changes) per Spark partition."""

    def __init__(self, storage: Storage, plan: ReadPlan | CDCPlan):
        self.storage = storage
        self.plan = plan

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value >= 0:
            yield from partition_rows(self.storage, self.plan, partition.value)


class _HudiReader(_PlanReader):
    plan: ReadPlan

    def __init__(self, storage: Storage, plan: ReadPlan, options: dict | None = None):
        super().__init__(storage, plan)
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


class _CDCReader(_PlanReader):
    """One Spark partition per file group's CDC splits."""
    plan: CDCPlan

    def partitions(self):
        return [_SlicePartition(i) for i in range(len(self.plan.groups))] or [_SlicePartition(-1)]


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

