"""``spark.read.format("hudi")``: a PySpark Python data source over the same read plan.

Each Spark partition reads one file slice in Arrow; options are the same as :func:`read`'s.
Register once per session with :func:`register`.
"""
from __future__ import annotations

from typing import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema

from ..cdc import QUERY_SCHEMA
from ..errors import HoodieConfigError
from ..storage import Storage
from ..table.meta_client import HoodieTable
from .cdc import CDCPlan, plan_cdc, split_changes
from .file_slice import read_file_slice
from .plan import ReadPlan, is_cdc_query, plan_read


class _SlicePartition(InputPartition):
    def __init__(self, index: int):
        super().__init__(index)


class HudiDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "hudi"

    def _plan(self) -> tuple[HoodieTable, ReadPlan | CDCPlan]:
        if not hasattr(self, "_cached_plan"):
            path = self.options.get("path")
            if not path:
                raise HoodieConfigError('spark.read.format("hudi") needs a path: .load("<base path>")')
            table = HoodieTable.load(path)
            options = dict(self.options)
            plan = plan_cdc(table, options) if is_cdc_query(options) else plan_read(table, options)
            self._cached_plan = (table, plan)
        return self._cached_plan

    def schema(self):
        plan = self._plan()[1]
        return from_arrow_schema(QUERY_SCHEMA if isinstance(plan, CDCPlan) else plan.schema)

    def reader(self, schema) -> DataSourceReader:
        table, plan = self._plan()
        if isinstance(plan, CDCPlan):
            return _CDCReader(table.base_path, plan)
        return _HudiReader(table.base_path, plan)


class _HudiReader(DataSourceReader):
    def __init__(self, base_path: str, plan: ReadPlan):
        self.base_path = base_path
        self.plan = plan

    def partitions(self):
        # Spark needs at least one partition; -1 stands for "nothing to read".
        return [_SlicePartition(i) for i in range(len(self.plan.slices))] or [_SlicePartition(-1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value < 0:
            return
        file_slice = self.plan.slices[partition.value]
        table = read_file_slice(Storage(self.base_path), file_slice, self.plan.schema,
                                self.plan.commit_times, self.plan.merge)
        yield from table.to_batches()


class _CDCReader(DataSourceReader):
    """One Spark partition per file group's CDC splits."""

    def __init__(self, base_path: str, plan: CDCPlan):
        self.base_path = base_path
        self.plan = plan

    def partitions(self):
        return [_SlicePartition(i) for i in range(len(self.plan.groups))] or [_SlicePartition(-1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value < 0:
            return
        storage = Storage(self.base_path)
        for split in self.plan.groups[partition.value]:
            yield from split_changes(storage, self.plan, split).to_batches()


def register(spark: SparkSession) -> None:
    spark.dataSource.register(HudiDataSource)
