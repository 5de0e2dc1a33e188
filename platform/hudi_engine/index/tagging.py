"""Where incoming keys are stored, per index type, as Spark plans over the latest base files.

SIMPLE / GLOBAL_SIMPLE read every key of the candidate files; BLOOM / GLOBAL_BLOOM read footers,
prune by key range, check bloom filters and read keys of candidate files only; BUCKET computes the
file group from the key and reads nothing. The driver only sees file lists and counts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import config as C
from ..config import HoodieConfig
from ..file_group.fs_view import FileSlice
from ..merge.record_merger import DELETE, OP_COLUMN
from ..schema.meta_fields import FILE_NAME, PARTITION_PATH, RECORD_KEY
from ..spark_files import parquet_frame, task_indexes
from ..storage import Storage
from .bloom import MATCH_SCHEMA, RANGE_SCHEMA, BaseFileRef, CheckCandidates, KeyRanges
from .bucket import bucket_ids
from .consistent_hashing import check_engine, is_consistent_hashing, key_hashes, ring_lookup  # noqa: F401 (re-exported)

SIMPLE, GLOBAL_SIMPLE, BLOOM, GLOBAL_BLOOM, BUCKET = "SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET"
RECORD_INDEX = "RECORD_INDEX"
GLOBAL_INDEXES = (GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX)
BUCKET_COLUMN = "_hoodie_bucket"
_KEY_COLUMNS = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), (FILE_NAME, pa.string())])


def index_type(cfg: HoodieConfig) -> str:
    return cfg.get_str(C.INDEX_TYPE).upper()


def updates_partition_path(cfg: HoodieConfig) -> bool:
    """Under a global index, whether a key arriving with a new partition moves there."""
    prop = {GLOBAL_BLOOM: C.BLOOM_INDEX_UPDATE_PARTITION_PATH, RECORD_INDEX: C.RECORD_INDEX_UPDATE_PARTITION_PATH}.get(
        index_type(cfg), C.SIMPLE_INDEX_UPDATE_PARTITION_PATH)
    return cfg.get(prop)


def stored_locations(spark: SparkSession, storage: Storage, slices: list[FileSlice], incoming: DataFrame,
                     cfg: HoodieConfig, target: str) -> DataFrame | None:
    """(``_k``, ``_p``, ``target``): stored key, its partition and file group, for the keys of the
    latest base files in ``slices`` that the index finds may be among ``incoming``'s keys (every
    stored key for the simple indexes). None when there is no base file to look in."""
    if index_type(cfg) == RECORD_INDEX:
        from ..metadata_table.record_index import record_index_locations

        found = record_index_locations(spark, storage, incoming.select(F.col(RECORD_KEY).alias("_k")), target)
        # Entries of file groups a replace retired (insert_overwrite, delete_partition) no longer hold the key.
        live = sorted({f"{s.partition}\x00{s.file_id}" for s in slices})
        return found.filter(F.concat_ws("\x00", F.col("_p"), F.col(target)).isin(live))
    refs = [BaseFileRef(s.partition, s.file_id, s.base_file.path) for s in slices if s.base_file]
    if not refs:
        return None
    if index_type(cfg) in (BLOOM, GLOBAL_BLOOM):
        return _bloom_matches(spark, storage, refs, incoming, cfg).withColumnRenamed("_fid", target)
    return (parquet_frame(spark, storage, [r.path for r in refs], _KEY_COLUMNS)
            .select(F.col(RECORD_KEY).alias("_k"), F.col(PARTITION_PATH).alias("_p"),
                    F.substring_index(F.col(FILE_NAME), "_", 1).alias(target)))


def _bloom_matches(spark: SparkSession, storage: Storage, refs: list[BaseFileRef], incoming: DataFrame,
                   cfg: HoodieConfig) -> DataFrame:
    ranges = (task_indexes(spark, len(refs))
              .mapInArrow(KeyRanges(storage, tuple(refs)), _ddl(RANGE_SCHEMA)).collect())
    files = spark.createDataFrame([tuple(r) for r in ranges], _ddl(RANGE_SCHEMA))
    keys = incoming.select(F.col(RECORD_KEY).alias("_k"), F.col(PARTITION_PATH).alias("_kp")).distinct()
    cond = F.lit(True)
    if index_type(cfg) == BLOOM:
        cond = keys["_kp"] == files["_p"]
    if cfg.get(C.BLOOM_INDEX_PRUNE_BY_RANGES):
        cond = cond & (files["_lo"].isNull() | ((keys["_k"] >= files["_lo"]) & (keys["_k"] <= files["_hi"])))
    candidates = keys.join(F.broadcast(files), cond, "inner").select("_k", "_fid")
    check = CheckCandidates(storage, {r.file_id: r for r in refs})
    # PySpark counts a callable object's `self` as an argument: hand it a plain (key, data) function.
    return candidates.groupBy("_fid").applyInArrow(lambda key, data: check(key, data), _ddl(MATCH_SCHEMA))


def _ddl(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} string" for f in schema)


# Incoming records up to which their keys are broadcast to the stored-key scan (about 50 bytes a
# key in Spark's hash relation: 50 MB at most, on the driver and each executor).
BROADCAST_KEYS = 1_000_000


def _broadcast_keys(spark: SparkSession, incoming: int) -> bool:
    """Whether to broadcast the input's keys: few enough, and the session allows broadcast joins
    (``spark.sql.autoBroadcastJoinThreshold=-1`` turns them off, here as for Spark's planner)."""
    return 0 < incoming <= BROADCAST_KEYS and spark.conf.get("spark.sql.autoBroadcastJoinThreshold") != "-1"


@dataclass(frozen=True)
class AddBucket:
    """Executor side: each prepared record's bucket (``BUCKET_COLUMN``)."""
    hash_fields: tuple[str, ...]
    num_buckets: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids = bucket_ids(batch.column(RECORD_KEY), list(self.hash_fields), self.num_buckets)
            yield batch.append_column(BUCKET_COLUMN, pa.array(ids, pa.int32()))


@dataclass(frozen=True)
class AddConsistentBucket:
    """Executor side: each prepared record's node index on its partition's ring (``BUCKET_COLUMN``).
    ``rings``: partition → the sorted node values of its hashing metadata."""
    hash_fields: tuple[str, ...]
    rings: dict

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rings = {p: np.array(values, np.int64) for p, values in self.rings.items()}
        for batch in batches:
            hashes = key_hashes(batch.column(RECORD_KEY), self.hash_fields)
            partitions = batch.column(PARTITION_PATH).to_numpy(zero_copy_only=False)
            ids = np.zeros(batch.num_rows, np.int32)
            for partition in set(partitions.tolist()):
                rows = partitions == partition
                ids[rows] = ring_lookup(rings[partition], hashes[rows])
            yield batch.append_column(BUCKET_COLUMN, pa.array(ids, pa.int32()))


def _key_hash(key: str, partition: str, is_global: bool) -> Column:
    return F.xxhash64(key) if is_global else F.xxhash64(key, partition)


def tag(spark: SparkSession, storage: Storage, slices: list[FileSlice], prepared: DataFrame, cfg: HoodieConfig,
        target: str) -> DataFrame:
    """``prepared`` with ``target``: the file group where the index finds each incoming key stored
    in the latest base files (of the input's partitions only, unless the index is global), null for
    a new key. Under a global index a key that moves partition becomes a delete from its old file
    group and an insert in the new partition (``hoodie.*.update.partition.path``), or stays where
    it is stored. The join hashes one side and streams the other past it rather than sorting both."""
    is_global = index_type(cfg) in GLOBAL_INDEXES
    scans_keys = index_type(cfg) in (SIMPLE, GLOBAL_SIMPLE)
    # Records per partition: the partitions to look in, and whether the keys are few enough to
    # broadcast. A global index other than the simple one needs neither, so pays no Spark job here.
    per_partition = ({r[0]: r[1] for r in prepared.groupBy(PARTITION_PATH).count().collect()}
                     if scans_keys or not is_global else {})
    if not is_global:
        slices = [s for s in slices if s.partition in per_partition]
    existing = stored_locations(spark, storage, slices, prepared, cfg, target)
    if existing is None:
        return prepared.withColumn(target, F.lit(None).cast("string"))
    if scans_keys and _broadcast_keys(spark, sum(per_partition.values())):
        # The simple indexes scan every stored key. With few incoming keys each scanning task keeps
        # those among them, so only matches (at most the input's size) reach the join's shuffle.
        # What is broadcast is a 64-bit hash of each key (with its partition unless the index is
        # global): a fraction of the keys' size, probed as a long. A stored key whose hash merely
        # collides passes on to the exact join below, which drops it. The matches, narrower than
        # the incoming records, are the side that join hashes.
        hashes = prepared.select(_key_hash(RECORD_KEY, PARTITION_PATH, is_global).alias("_h"))
        existing = (existing.join(F.broadcast(hashes), _key_hash("_k", "_p", is_global) == hashes["_h"], "left_semi")
                    .hint("shuffle_hash"))
    else:
        prepared = prepared.hint("shuffle_hash")
    if not is_global:
        cond = (prepared[RECORD_KEY] == existing["_k"]) & (prepared[PARTITION_PATH] == existing["_p"])
        return prepared.join(existing, cond, "left").drop("_k", "_p")
    joined = prepared.join(existing, prepared[RECORD_KEY] == existing["_k"], "left").drop("_k")
    moved = F.col("_p").isNotNull() & (F.col("_p") != F.col(PARTITION_PATH))
    if not updates_partition_path(cfg):
        return joined.withColumn(PARTITION_PATH, F.coalesce("_p", PARTITION_PATH)).drop("_p")
    stay = joined.filter(~moved).drop("_p")
    old_copy = (joined.filter(moved).withColumn(PARTITION_PATH, F.col("_p"))
                .withColumn(OP_COLUMN, F.lit(DELETE)).drop("_p"))
    new_copy = joined.filter(moved).withColumn(target, F.lit(None).cast("string")).drop("_p")
    return stay.unionByName(old_copy).unionByName(new_copy)
