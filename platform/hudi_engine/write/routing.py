"""Where each incoming record goes, as Spark plans: inserts to the file groups the planner sized
(by a hash of the key, so duplicates meet in one group), and under the bucket index every record
to its bucket's file group (simple engine: hash mod buckets; consistent hashing: its ring)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..file_group.fs_view import FileSlice
from ..index.bucket import bucket_of, nbcc_bucket_file_id, new_bucket_file_id
from ..index.consistent_hashing import Ring
from ..index.consistent_meta import load_or_create_metadata
from ..index.tagging import AddBucket, AddConsistentBucket
from ..keygen import KeyGenerator
from ..schema.meta_fields import PARTITION_PATH, RECORD_KEY
from ..table.meta_client import HoodieTable
from .planner import InsertBucket
from .tasks import KEY_HASH, TARGET

_HASH_BUCKETS = 1 << 30


def assign_inserts(spark: SparkSession, inserts: DataFrame, buckets: Sequence[InsertBucket]) -> DataFrame:
    """``inserts`` with ``TARGET``: the planned file group whose key-hash range holds each key."""
    if not buckets:
        return inserts.withColumn(TARGET, F.lit(None).cast("string")).limit(0)
    plan = spark.createDataFrame(
        [(b.partition, int(b.lo * _HASH_BUCKETS), int(b.hi * _HASH_BUCKETS) if b.hi < 1 else _HASH_BUCKETS,
          b.file_id) for b in buckets],
        "_bp string, _lo long, _hi long, " + TARGET + " string")
    hashed = inserts.withColumn(KEY_HASH, F.pmod(F.xxhash64(RECORD_KEY), F.lit(_HASH_BUCKETS)))
    cond = ((hashed[PARTITION_PATH] == plan["_bp"]) & (hashed[KEY_HASH] >= plan["_lo"])
            & (hashed[KEY_HASH] < plan["_hi"]))
    return hashed.join(F.broadcast(plan), cond, "inner").drop("_bp", "_lo", "_hi", KEY_HASH)


@dataclass
class BucketRouting:
    """A bucket engine's view of the table: the stored file slice of each (partition, bucket), the
    executor-side function that adds the bucket column, and the file id a new bucket gets."""
    existing: dict[tuple[str, int], FileSlice]
    adder: Callable
    new_file_id: Callable[[str, int], str]


def bucket_hash_fields(cfg: HoodieConfig, keygen: KeyGenerator) -> list[str]:
    fields = cfg.get_list(C.BUCKET_INDEX_HASH_FIELD) or keygen.record_key_fields
    bad = [f for f in fields if f not in keygen.record_key_fields]
    if bad:
        raise HoodieConfigError(f"{C.BUCKET_INDEX_HASH_FIELD.key} names {bad}, which are not record key "
                                f"fields ({', '.join(keygen.record_key_fields)})")
    return fields


def simple_buckets(latest: Sequence[FileSlice], hash_fields: list[str], num_buckets: int,
                   fixed_ids: bool = False) -> BucketRouting:
    """The simple engine: bucket = hash mod num.buckets; a new bucket's file id starts with it
    (``fixed_ids``, non-blocking concurrency control: is Hudi's fixed one for the bucket, the same
    in every partition)."""
    existing: dict[tuple[str, int], FileSlice] = {}
    for s in latest:
        bucket = bucket_of(s.file_id)
        if bucket is None or bucket >= num_buckets:
            raise HoodieConfigError(
                f"file group {s.file_id} in partition '{s.partition}' is not one of "
                f"{num_buckets} buckets ({C.BUCKET_INDEX_NUM_BUCKETS.key}); a table's bucket count "
                "cannot change, and a table written with another index cannot take the bucket index")
        existing[(s.partition, bucket)] = s
    return BucketRouting(existing, AddBucket(tuple(hash_fields), num_buckets),
                         (lambda _p, bucket: nbcc_bucket_file_id(bucket)) if fixed_ids
                         else (lambda _p, bucket: new_bucket_file_id(bucket)))


def consistent_buckets(table: HoodieTable, latest: Sequence[FileSlice], partitions: Sequence[str],
                       hash_fields: list[str], num_buckets: int) -> BucketRouting:
    """The consistent-hashing engine: bucket = index of the key's node on its partition's ring (the
    metadata is created on a partition's first write); a bucket's file id is its node's prefix +
    "-0". Beside a pending resize the committed ring still routes keys: records of buckets it
    rewrites are refused as updates to file groups under clustering (Hudi's reject-update
    strategy); a bucket with no file group yet is in no resize group, so it takes inserts."""
    rings = {p: Ring(load_or_create_metadata(table, p, num_buckets)) for p in partitions}
    existing: dict[tuple[str, int], FileSlice] = {}
    for s in latest:
        ring = rings.get(s.partition)
        if ring is None:
            continue
        node = ring.node_of_file(s.file_id)
        if node is None:
            raise HoodieConfigError(
                f"file group {s.file_id} in partition '{s.partition}' is not a bucket of its consistent "
                f"hashing metadata ({ring.metadata.filename}); a table written with another index or "
                "bucket engine cannot take the consistent-hashing bucket index")
        existing[(s.partition, node)] = s
    adder = AddConsistentBucket(tuple(hash_fields), {p: tuple(int(v) for v in r.values) for p, r in rings.items()})
    return BucketRouting(existing, adder, lambda partition, bucket: rings[partition].nodes[bucket].file_id)
