"""Hudi's fixed file ids of non-blocking concurrency control, and a write's file groups told apart
by (partition, file id): the same id names bucket N's file group in every partition."""
from types import SimpleNamespace

import pyarrow as pa

from hudi_engine.concurrency.conflicts import Touch, find_conflicts
from hudi_engine.config import HoodieConfig
from hudi_engine.file_group.fs_view import BaseFile, FileSlice, LogFile
from hudi_engine.file_group.log_scanner import Visibility
from hudi_engine.index.bucket import bucket_of, nbcc_bucket_file_id
from hudi_engine.merge.record_merger import MergeSpec
from hudi_engine.read import merged_scan
from hudi_engine.read.file_slice import SliceMerge
from hudi_engine.read.plan import ReadPlan
from hudi_engine.schema.meta_fields import PARTITION_PATH, RECORD_KEY
from hudi_engine.timeline.instant import DELTA_COMMIT, Instant, State
from hudi_engine.write.arrow_plane import group_slices
from hudi_engine.write.log_append import append_target
from hudi_engine.write.planner import small_files
from hudi_engine.write.routing import simple_buckets
from hudi_engine.write.tasks import TARGET

BUCKET_1 = "00000001-0000-0000-0000-000000000000-0"


def test_nbcc_file_ids_are_hudis_the_bucket_then_a_constant_tail_in_every_partition():
    assert nbcc_bucket_file_id(1) == BUCKET_1
    assert nbcc_bucket_file_id(0) == "00000000-0000-0000-0000-000000000000-0"
    assert nbcc_bucket_file_id(12345678) == "12345678-0000-0000-0000-000000000000-0"
    assert [bucket_of(nbcc_bucket_file_id(b)) for b in (0, 7, 255)] == [0, 7, 255]


def test_bucket_routing_keeps_each_partitions_slice_of_one_file_id():
    eu = FileSlice("eu", BUCKET_1, "100", None)
    us = FileSlice("us", BUCKET_1, "200", BaseFile(f"us/{BUCKET_1}_0-1-0_200.parquet", BUCKET_1, "200", 10))
    routing = simple_buckets([eu, us], ["key"], 2, fixed_ids=True)
    assert routing.existing == {("eu", 1): eu, ("us", 1): us}
    assert {routing.new_file_id(p, 0) for p in ("eu", "us", "")} == {nbcc_bucket_file_id(0)}
    # Each log append extends its own partition's slice.
    assert [(t.partition, t.base_file) for t in (append_target(eu), append_target(us))] == [
        ("eu", None), ("us", f"{BUCKET_1}_0-1-0_200.parquet")]


def test_routed_rows_are_grouped_by_partition_and_file_id():
    rows = pa.table({RECORD_KEY: ["k1", "k2", "k3", "k4", "k5"], PARTITION_PATH: ["us", "eu", "us", "eu", "eu"],
                     TARGET: [BUCKET_1, BUCKET_1, BUCKET_1, nbcc_bucket_file_id(0), BUCKET_1]})
    groups = {g: sorted(t[RECORD_KEY].to_pylist()) for g, t in group_slices(rows)}
    assert groups == {("eu", BUCKET_1): ["k2", "k5"], ("us", BUCKET_1): ["k1", "k3"],
                      ("eu", nbcc_bucket_file_id(0)): ["k4"]}


def test_small_files_and_conflicts_of_one_file_id_stay_in_their_partition():
    base = lambda p: BaseFile(f"{p}/{BUCKET_1}_0-1-0_1.parquet", BUCKET_1, "1", 10)
    slices = [FileSlice(p, BUCKET_1, "1", base(p)) for p in ("eu", "us")]
    clustering = {("us", BUCKET_1)}
    small = small_files(slices, HoodieConfig({}), clustering, set(), is_mor=False)
    assert {p: [f.path for f in files] for p, files in small.items()} == {"eu": [base("eu").path]}
    other = Touch(Instant("2", DELTA_COMMIT, State.COMPLETED), frozenset({("us", BUCKET_1)}), "completed")
    assert find_conflicts({("eu", BUCKET_1)}, [other], by_bucket=True) == []
    assert [c.file_groups for c in find_conflicts({("us", BUCKET_1)}, [other], by_bucket=True)] == [
        frozenset({("us", BUCKET_1)})]


def test_slices_whose_base_files_share_a_name_across_partitions_are_merged_by_slice(monkeypatch):
    """Spark's merged scan joins logged keys to base rows by base file name; one compaction task
    that compacts both partitions' groups of a bucket (one write token) names their base files
    alike, so such slices are merged in Arrow, each by itself."""
    monkeypatch.setattr(merged_scan, "spark_opens", lambda spark, storage: True)

    def plan(us_token: str) -> ReadPlan:
        slices = tuple(FileSlice(p, BUCKET_1, "1", BaseFile(f"{p}/{BUCKET_1}_{token}_1.parquet", BUCKET_1, "1", 10 << 20),
                                 [LogFile(f"{p}/.{BUCKET_1}_2.log.1_0-0-0", BUCKET_1, "2", 1, 100)])
                       for p, token in (("eu", "0-1-0"), ("us", us_token)))
        schema = pa.schema([(RECORD_KEY, pa.string()), ("ts", pa.int64())])
        return ReadPlan(slices, schema, merge=SliceMerge(Visibility(frozenset({"1", "2"})),
                                                         MergeSpec(("ts",), True, True)))

    table = SimpleNamespace(storage=None)
    assert merged_scan.merges_in_spark(None, table, plan("1-1-0"))
    assert not merged_scan.merges_in_spark(None, table, plan("0-1-0"))
