"""The rows one Spark task of the ``hudi`` data source returns, for batch reads and micro-batches
alike: one file slice of a read plan, or one file group's changes of a CDC plan."""
from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from ..storage import Storage
from .cdc import CDCPlan, split_changes
from .file_slice import read_file_slice
from .plan import ReadPlan


def partition_rows(storage: Storage, plan: ReadPlan | CDCPlan, index: int) -> Iterator[pa.RecordBatch]:
    if isinstance(plan, CDCPlan):
        for split in plan.groups[index]:
            yield from split_changes(storage, plan, split).to_batches()
        return
    yield from read_file_slice(storage, plan.slices[index], plan.schema, plan.commit_times,
                               plan.merge).to_batches()
