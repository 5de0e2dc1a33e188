"""The record index kept in step: which keys a commit's files added, moved or deleted (one Spark
task per written file), and the table's keys and file groups when the index is first built."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ...file_group.log_file import BlockType, data_block_records, delete_block_keys, read_log_file
from ...file_group.base_file import read_base_file
from ...file_group.naming import parse_base_file_name, parse_log_file_name
from ...read.reader import read
from ...schema.meta_fields import COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from ...spark_files import received_indexes
from ...storage import Storage

CHANGE_SCHEMA = pa.schema([("key", pa.string()), ("partition", pa.string()), ("file_id", pa.string()),
                           ("deleted", pa.bool_())])


@dataclass(frozen=True)
class WrittenFile:
    path: str                    # relative to the data table
    previous_base: str | None    # the base file a copy-on-write merge replaced
    all_keys: bool = False       # clustering/bootstrap: every key moved here, not only this instant's


def written_files(meta: dict, previous_bases: dict[tuple[str, str], str], all_keys: bool) -> list[WrittenFile]:
    """The files of a commit whose keys may change record-index entries. A copy-on-write rewrite
    whose stat counts no insert and no delete only updated keys in place, which changes no entry
    (as Hudi skips updates that keep their file group): it is left out, its keys never read."""
    out = []
    for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
        for stat in stats:
            path = stat.get("path")
            if not path:
                continue
            prev = None
            if parse_base_file_name(posixpath.basename(path)) is not None and stat.get("prevCommit") not in (None, "null"):
                prev = previous_bases.get((partition, stat["fileId"]))
            if (prev is not None and not all_keys
                    and not int(stat.get("numInserts") or 0) and not int(stat.get("numDeletes") or 0)):
                continue
            out.append(WrittenFile(path, prev, all_keys))
    return out


def _batch(keys, partitions, file_id: str, deleted: bool) -> pa.RecordBatch:
    keys, partitions = (c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in (keys, partitions))
    n = len(keys)
    return pa.RecordBatch.from_arrays(
        [keys.cast(pa.string()), partitions.cast(pa.string()), pa.array([file_id] * n, pa.string()),
         pa.array([deleted] * n, pa.bool_())], schema=CHANGE_SCHEMA)


@dataclass(frozen=True)
class KeyChanges:
    """mapInArrow over indexes into ``files``: the record-index changes each file carries."""
    storage: Storage
    instant: str
    files: tuple[WrittenFile, ...]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for index in received_indexes(batches):
            yield from self.changes(self.files[index])

    def changes(self, f: WrittenFile) -> Iterator[pa.RecordBatch]:
        name = posixpath.basename(f.path)
        base = parse_base_file_name(name)
        if base is not None:
            yield from self._base(f, base.file_id)
            return
        log = parse_log_file_name(name)
        if log is None or log.is_cdc:
            return
        for block in read_log_file(self.storage, f.path):
            if block.is_corrupt or (not f.all_keys and block.instant_time != self.instant):
                continue
            if block.block_type == BlockType.DELETE_BLOCK:
                keys = delete_block_keys(block)
                yield _batch(keys.column("record_key"), keys.column("partition_path"), log.file_id, True)
            elif block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK):
                rows = data_block_records(block)
                if RECORD_KEY in rows.column_names:
                    yield _batch(rows.column(RECORD_KEY),
                                 rows.column(PARTITION_PATH), log.file_id, False)

    def _base(self, f: WrittenFile, file_id: str) -> Iterator[pa.RecordBatch]:
        """A rewritten base file's changes against the one it replaced: keys new to the file group
        and keys gone from it. A key updated in place keeps its entry (as Hudi skips updates whose
        file group stays), so a small upsert into a large file writes few index entries."""
        cols = [RECORD_KEY, PARTITION_PATH, COMMIT_TIME]
        new = read_base_file(self.storage, f.path, columns=cols)
        mine = new if f.all_keys else new.filter(pc.equal(new.column(COMMIT_TIME), self.instant))
        old = None
        if f.previous_base and self.storage.exists(f.previous_base):
            old = read_base_file(self.storage, f.previous_base, columns=cols[:2])
            if not f.all_keys and mine.num_rows:
                old_keys = old.column(RECORD_KEY).combine_chunks()
                mine = mine.filter(pc.invert(pc.is_in(mine.column(RECORD_KEY), value_set=old_keys)))
        if mine.num_rows:
            yield _batch(mine.column(RECORD_KEY), mine.column(PARTITION_PATH),
                         file_id, False)
        if old is not None:
            gone = old.filter(pc.invert(pc.is_in(old.column(RECORD_KEY), value_set=new.column(RECORD_KEY).combine_chunks())))
            if gone.num_rows:
                yield _batch(gone.column(RECORD_KEY), gone.column(PARTITION_PATH),
                             file_id, True)


def local_key_changes(storage: Storage, instant: str, files: list[WrittenFile]) -> pa.Table | None:
    """The same rows as ``key_changes``, read in this process, a file per thread (None when
    there is nothing to read)."""
    if not files:
        return None
    from ...threads import parallel_map

    task = KeyChanges(storage, instant, tuple(files))
    batches = [b for found in parallel_map(lambda f: list(task.changes(f)), files) for b in found]
    return pa.Table.from_batches(batches, CHANGE_SCHEMA)


def key_changes(spark, storage: Storage, instant: str, files: list[WrittenFile]):
    """A DataFrame of CHANGE_SCHEMA rows for ``files`` (None when there is nothing to read)."""
    if not files:
        return None
    from pyspark.sql.pandas.types import from_arrow_schema

    n = len(files)
    indexes = spark.range(n).repartition(min(n, spark.sparkContext.defaultParallelism * 2)).selectExpr("CAST(id AS INT) AS id")
    return indexes.mapInArrow(KeyChanges(storage, instant, tuple(files)), from_arrow_schema(CHANGE_SCHEMA))


def snapshot_locations(spark, base_path: str):
    """Every live key's location, for building the record index from scratch: a snapshot read's
    key, partition and file name columns (the file name gives the file group; a row a log file
    wrote carries the file group id itself, as Hudi's append handle sets it)."""
    from pyspark.sql import functions as F

    df = read(spark, base_path).select(RECORD_KEY, PARTITION_PATH, FILE_NAME)
    named = F.regexp_extract(F.col(FILE_NAME), r"^\.?(.+?)_", 1)
    file_id = F.when(named == "", F.col(FILE_NAME)).otherwise(named)
    return df.select(F.col(RECORD_KEY).alias("key"), F.col(PARTITION_PATH).alias("partition"),
                     file_id.alias("file_id"), F.lit(False).alias("deleted"))


# --- RECORD_INDEX: writes tag incoming keys through the record index ------------------------------
