"""Column ranges of log files, which Hudi 1.x keeps in column_stats for merge-on-read, computed
where the rows are: by Spark's tasks, one log file each, when a Spark session runs the action, or
in this process for a write that ran here. A file's data blocks are decoded and folded one at a
time, so no process holds more than a block's rows, and the driver only ever sees ranges.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from ...file_group.log_file import BlockType, data_block_records, read_log_file
from ...file_group.log_scanner import Visibility, valid_blocks
from ...metadata_table.partition_stats import fold
from ...metadata_table.stats import ColumnRange, arrow_column_ranges
from ...spark_files import received_indexes, task_indexes
from ...storage import Storage

_DATA_BLOCKS = (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK)
_SCHEMA = pa.schema([("index", pa.int64()), ("ranges", pa.binary())])


@dataclass(frozen=True)
class LogRanges:
    """mapInArrow over indexes into ``paths``: each log file's ranges over the data blocks
    ``visible`` lets count (pickled; none when no such block)."""
    storage: Storage
    paths: tuple[str, ...]
    visible: Visibility
    columns: tuple[str, ...] | None

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for index in received_indexes(batches):
            found = self.ranges(self.paths[index])
            yield pa.RecordBatch.from_pylist([{"index": index, "ranges": pickle.dumps(found)}], _SCHEMA)

    def ranges(self, path: str) -> list[ColumnRange] | None:
        by_column: dict[str, list[ColumnRange]] = {}
        for block in valid_blocks(read_log_file(self.storage, path), self.visible):
            if block.block_type in _DATA_BLOCKS:
                rows = data_block_records(block)
                for r in arrow_column_ranges(rows, self.columns if self.columns is not None else rows.column_names):
                    by_column.setdefault(r.column, []).append(r)
        return [fold(ranges) for ranges in by_column.values()] or None


def log_column_ranges(storage: Storage, paths: list[str], visible: Visibility, columns: list[str] | None,
                      spark=None) -> dict[str, list[ColumnRange]]:
    """Each log file's column ranges (files with no counting data block left out): by Spark's
    tasks when ``spark`` is given, else here, a file per thread."""
    if not paths:
        return {}
    task = LogRanges(storage, tuple(paths), visible, tuple(columns) if columns is not None else None)
    if spark is None:
        from ...threads import parallel_map

        found = list(zip(paths, parallel_map(task.ranges, paths)))
    else:
        rows = task_indexes(spark, len(paths)).mapInArrow(task, "index long, ranges binary").collect()
        found = [(paths[r["index"]], pickle.loads(r["ranges"])) for r in rows]
    return {path: ranges for path, ranges in found if ranges is not None}
