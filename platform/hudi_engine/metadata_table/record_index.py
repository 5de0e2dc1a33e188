"""Record-index changes of one action, found on the executors from the files the action wrote:
only key columns are read, one written file per task, so the driver never holds keys.

For a base file the keys stamped with the instant are where those records now live; a key of the
file it replaced (copy-on-write merge) that is gone was deleted. For a log file, its data blocks of
the instant say where the keys live and its delete blocks which keys went.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..file_group.log_file import BlockType, data_block_records, delete_block_keys, read_log_file
from ..file_group.naming import parse_base_file_name, parse_log_file_name
from ..storage import Storage
from ..write.base_file import COMMIT_TIME, PARTITION_PATH, RECORD_KEY

CHANGE_SCHEMA = pa.schema([("key", pa.string()), ("partition", pa.string()), ("file_id", pa.string()),
                           ("deleted", pa.bool_())])


@dataclass(frozen=True)
class WrittenFile:
    path: str                    # relative to the data table
    previous_base: str | None    # the base file a copy-on-write merge replaced
    all_keys: bool = False       # clustering/bootstrap: every key moved here, not only this instant's


def written_files(meta: dict, previous_bases: dict[tuple[str, str], str], all_keys: bool) -> list[WrittenFile]:
    out = []
    for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
        for stat in stats:
            path = stat.get("path")
            if not path:
                continue
            prev = None
            if parse_base_file_name(posixpath.basename(path)) is not None and stat.get("prevCommit") not in (None, "null"):
                prev = previous_bases.get((partition, stat["fileId"]))
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
        for batch in batches:
            for index in batch.column(0).to_pylist():
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
        cols = [RECORD_KEY, PARTITION_PATH, COMMIT_TIME]
        new = pq.read_table(self.storage.full(f.path), columns=cols, filesystem=self.storage.fs)
        mine = new if f.all_keys else new.filter(pc.equal(new.column(COMMIT_TIME), self.instant))
        if mine.num_rows:
            yield _batch(mine.column(RECORD_KEY), mine.column(PARTITION_PATH),
                         file_id, False)
        if f.previous_base and self.storage.exists(f.previous_base):
            old = pq.read_table(self.storage.full(f.previous_base), columns=cols[:2], filesystem=self.storage.fs)
            gone = old.filter(pc.invert(pc.is_in(old.column(RECORD_KEY), value_set=new.column(RECORD_KEY).combine_chunks())))
            if gone.num_rows:
                yield _batch(gone.column(RECORD_KEY), gone.column(PARTITION_PATH),
                             file_id, True)


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
    key, partition and file name columns (the file name gives the file group)."""
    from pyspark.sql import functions as F

    from ..read.reader import read
    from ..write.base_file import FILE_NAME

    df = read(spark, base_path).select(RECORD_KEY, PARTITION_PATH, FILE_NAME)
    file_id = F.regexp_extract(F.col(FILE_NAME), r"^\.?(.+?)_", 1)
    return df.select(F.col(RECORD_KEY).alias("key"), F.col(PARTITION_PATH).alias("partition"),
                     file_id.alias("file_id"), F.lit(False).alias("deleted"))


# --- RECORD_INDEX: writes tag incoming keys through the record index ------------------------------
LOCATION_SCHEMA = pa.schema([("_k", pa.string()), ("_p", pa.string()), ("_fid", pa.string())])


@dataclass(frozen=True)
class _AddFileGroup:
    count: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from .keys import file_group_indexes

        for batch in batches:
            keys = batch.column(0)
            yield pa.RecordBatch.from_arrays([keys, pa.array(file_group_indexes(keys, self.count), pa.int32())],
                                             names=["_k", "_fg"])


@dataclass(frozen=True)
class _LookUp:
    """One task per record-index file group: where its share of the incoming keys live."""
    reader: object            # SliceReader
    slices: tuple

    def __call__(self, key, data: pa.Table) -> pa.Table:
        from .merge import is_live
        from .records import record_location_of

        found = self.reader.read(self.slices[int(key[0].as_py())], keys=data.column("_k").to_pylist())
        rows = {"_k": [], "_p": [], "_fid": []}
        for k, value in found.items():
            if is_live(value):
                loc = record_location_of(value)
                rows["_k"].append(k)
                rows["_p"].append("" if loc.partition == "." else loc.partition)
                rows["_fid"].append(loc.file_id)
        return pa.table(rows, schema=LOCATION_SCHEMA)


def record_index_locations(spark, storage: Storage, keys, target: str):
    """(``_k``, ``_p``, ``target``) of the incoming keys (a one-column ``_k`` DataFrame) that the
    record index knows; each record-index file group is read by one task, for its keys only."""
    from ..errors import HoodieConfigError
    from ..table.meta_client import HoodieTable
    from .layout import RECORD_INDEX
    from .reader import MetadataReader

    reader = MetadataReader(HoodieTable.load(storage.base_uri))
    if not reader.has(RECORD_INDEX):
        raise HoodieConfigError(f"table at {storage.base_uri} has no complete record index in its metadata "
                                "table; write once with hoodie.metadata.enable=true to build it")
    slices = tuple(reader.file_slices(RECORD_INDEX))
    lookup = _LookUp(reader.slice_reader, slices)
    with_group = keys.distinct().mapInArrow(_AddFileGroup(len(slices)), "_k string, _fg int")
    found = with_group.groupBy("_fg").applyInArrow(lambda key, data: lookup(key, data),
                                                   "_k string, _p string, _fid string")
    return found.withColumnRenamed("_fid", target)
