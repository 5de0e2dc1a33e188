"""Writing keyed changes into a big metadata partition's file groups, one task per file group.

The record index and the secondary indexes hold too many entries for the driver: their changes
come as an Arrow table (a write that ran in this process) or a DataFrame (Spark's tasks), are
encoded by a partition-specific function into rows of :data:`ENCODED`, and each file group's rows
are written by one task, as a base HFile (a build) or a log file (a commit). What differs between
the partitions is only the encoding (key, value, which file group) and the file-group ids.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ...metadata_table.file_groups import write_base, write_log
from ...metadata_table.keys import PartitionType, file_group_id
from ...storage import Storage
from ...table.meta_client import HoodieTable

# fg: file group index; value null with deleted: a delete of the key (a log's delete block); a
# value with deleted: a tombstone record, kept as any value but losing to an add of the same key.
ENCODED = pa.schema([("fg", pa.int32()), ("key", pa.string()), ("value", pa.binary()), ("deleted", pa.bool_())])

Encoder = Callable[[pa.RecordBatch], pa.RecordBatch]     # change rows → ENCODED rows; picklable


@dataclass(frozen=True)
class PartitionFiles:
    """A metadata partition's file groups: its type (file-id prefix) and folder."""
    partition_type: PartitionType
    partition: str

    def file_id(self, index: int) -> str:
        return file_group_id(self.partition_type, index, self.partition)


@dataclass(frozen=True)
class _Encode:
    encoder: Encoder

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield self.encoder(batch)


@dataclass(frozen=True)
class _WriteGroup:
    """One file group's ENCODED rows: a base HFile (``base_instants`` None: the build) or a log file."""
    storage: Storage
    files: PartitionFiles
    instant: str
    base_instants: dict[int, str] | None

    def write(self, fg: int, data: pa.Table) -> dict:
        from ...file_group.tasks import task_identity

        # A key deleted and added in one instant (a record that moved file group, or partition under
        # a global index) is written as added: adds sort first.
        data = data.sort_by([("key", "ascending"), ("deleted", "ascending")])
        items, deletes, last = [], [], None
        for k, v in zip(data.column("key").to_pylist(), data.column("value").to_pylist()):
            if k != last:
                if v is None:
                    deletes.append(k)
                else:
                    items.append((k.encode("utf-8"), v))
                last = k
        fid = self.files.file_id(fg)
        token = task_identity()[1]
        if self.base_instants is None:
            return write_base(self.storage, self.files.partition, fid, self.instant, token, items)
        return write_log(self.storage, self.files.partition, fid, self.base_instants[fg], self.instant, token,
                         items, deletes)

    def __call__(self, key, data: pa.Table) -> pa.Table:
        return pa.table({"stat": [json.dumps(self.write(int(key[0].as_py()), data))]})


def write_file_groups(spark, mdt: HoodieTable, files: PartitionFiles, instant: str, rows, encoder: Encoder,
                      count: int, base_instants: dict[int, str] | None) -> list[dict]:
    """``rows`` (an Arrow table, written here, or a DataFrame, written by one Spark task per file
    group) encoded by ``encoder`` into ``count`` file groups at ``instant``. A build
    (``base_instants`` None) gives every file group a base file, even an empty one."""
    task = _WriteGroup(mdt.storage, files, instant, base_instants)
    if isinstance(rows, pa.Table):
        encoded = pa.Table.from_batches([encoder(b) for b in rows.to_batches()], ENCODED)
        stats = [task.write(fg, encoded.filter(pc.equal(encoded.column("fg"), fg)))
                 for fg in sorted(set(encoded.column("fg").to_pylist()))]
    else:
        from pyspark.sql.pandas.types import from_arrow_schema

        grouped = rows.mapInArrow(_Encode(encoder), from_arrow_schema(ENCODED)).groupBy("fg")
        stats = [json.loads(r[0]) for r in grouped.applyInArrow(lambda key, data: task(key, data), "stat string").collect()]
    if base_instants is None:
        written = {s["fileId"] for s in stats}
        stats += [task.write(i, ENCODED.empty_table()) for i in range(count) if files.file_id(i) not in written]
    return stats
