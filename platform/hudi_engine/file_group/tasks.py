"""What a Spark task that writes files needs: its write token (part of every file name it writes)
and the one-column batch in which it hands its write stats back to the driver."""
from __future__ import annotations

import json

import pyarrow as pa

from .naming import write_token

STAT_SCHEMA = "stat string"


def task_identity() -> tuple[int, str]:
    from pyspark import TaskContext

    tc = TaskContext.get()
    if tc is None:  # in-process use, outside Spark
        return 0, write_token(0, 0, 0)
    return tc.partitionId(), write_token(tc.partitionId(), tc.stageId(), tc.taskAttemptId())


def stats_batch(stats: list[dict]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"stat": [json.dumps(s) for s in stats]}, schema=pa.schema([pa.field("stat", pa.string())]))
