"""The consistent-hashing bucket index with real Spark on merge-on-read tables: upserts and deletes
routed by the hashing metadata, a resize through clustering that splits an oversized bucket, and
writes after it that update moved keys in place. Every state is read back by our reader and by
hudi-rs, and no key is ever read twice."""
import json
import posixpath

import numpy as np
import pyarrow as pa
import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieClusteringUpdateError, HoodieConfigError
from hudi_engine.index.consistent_hashing import Ring, key_hashes
from hudi_engine.index.consistent_meta import HASHING_METADATA_DIR, load_metadata
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.pending import requested_plan
from tests.support.hudi_rs import hudi_rs_read, rows

# Every test twice: writes run in this process (small inputs) and as Spark stages (big ones).
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("write_plane")]
COLS = ["id", "p", "v"]
OPTIONS = {
    "hoodie.table.name": "ch", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.type": "BUCKET",
    "hoodie.index.bucket.engine": "CONSISTENT_HASHING", "hoodie.bucket.index.num.buckets": "2",
}


def batch(spark, ids, value, ts):
    return spark.createDataFrame([(str(i), str(i % 2), ts, value) for i in ids], "id string, p string, ts long, v string")


def state(spark, path):
    """The rows both readers return (they must agree), each key once."""
    mine = rows(read(spark, path).toArrow(), COLS)
    assert rows(hudi_rs_read(path), COLS) == mine
    keys = [(k, p) for k, p, _ in mine]
    assert len(keys) == len(set(keys)), "a key is read more than once"
    return mine


def file_of_each_key(spark, path):
    return {r["id"]: r["_hoodie_file_name"].split("_")[0] for r in read(spark, path).select("id", "_hoodie_file_name").collect()}


def expected_file(table, partition, key):
    ring = Ring(load_metadata(table, partition))
    return ring.nodes[int(ring.lookup(key_hashes(pa.array([key]), ["id"]))[0])].file_id


def test_upserts_and_deletes_land_in_the_buckets_of_the_hashing_metadata(spark, table_path):
    opts = {**OPTIONS, "hoodie.datasource.write.operation": "upsert"}
    expected = {}
    write(batch(spark, range(0, 60), "a", 1), table_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    expected.update({str(i): "a" for i in range(60)})
    write(batch(spark, range(40, 80), "b", 2), table_path, opts)
    expected.update({str(i): "b" for i in range(40, 80)})
    write(batch(spark, [1, 2, 3, 70, 999], "x", 3), table_path, {**opts, "hoodie.datasource.write.operation": "delete"})
    for i in ("1", "2", "3", "70"):
        expected.pop(i)
    write(batch(spark, [41, 90], "old", 0), table_path, opts)       # a stale update loses
    expected["90"] = "old"
    assert state(spark, table_path) == sorted((k, str(int(k) % 2), v) for k, v in expected.items())

    table = HoodieTable.load(table_path)
    for partition in ("0", "1"):
        # The first write created each partition's initial metadata: Hudi's file, no marker needed.
        folder = posixpath.join(HASHING_METADATA_DIR, partition)
        assert [posixpath.basename(f.path) for f in table.storage.list(folder)] == ["00000000000000.hashing_meta"]
        meta = json.loads(table.storage.read_text(posixpath.join(folder, "00000000000000.hashing_meta")))
        assert meta["numBuckets"] == 2 and [n["value"] for n in meta["nodes"]] == [1073741824, 2147483647]
    # Every key sits in the file group of its node; file groups are the nodes' prefixes + "-0".
    files = file_of_each_key(spark, table_path)
    assert all(fid == expected_file(table, str(int(k) % 2), k) for k, fid in files.items())
    slices = table.fs_view().latest_file_slices()
    assert len(slices) == 4 and all(s.file_id.endswith("-0") for s in slices)


def test_a_resize_splits_an_oversized_bucket_and_later_writes_follow_it(spark, table_path):
    opts = {**OPTIONS, "hoodie.datasource.write.operation": "upsert"}
    write(batch(spark, range(0, 400), "a", 1), table_path, opts)
    write(batch(spark, range(0, 400, 3), "b", 2), table_path, opts)
    before = state(spark, table_path)
    table = HoodieTable.load(table_path)
    sizes = sorted((s.base_file.size + sum(f.size for f in s.log_files), s.partition, s.file_id)
                   for s in table.fs_view().latest_file_slices())
    # Small thresholds: only the largest bucket passes split.threshold x max.file.size.
    max_size = (sizes[-1][0] + sizes[-2][0]) // 2
    resize = {**OPTIONS, "hoodie.parquet.max.file.size": str(max_size), "hoodie.bucket.index.split.threshold": "1.0",
              "hoodie.bucket.index.max.num.buckets": "4", "hoodie.bucket.index.merge.threshold": "0.0"}
    planned = schedule_clustering(table, resize)
    plan = requested_plan(table.reload().timeline, planned)["clusteringPlan"]
    assert plan["strategy"]["strategyClassName"].endswith("SingleSparkJobConsistentHashingExecutionStrategy")
    outputs = sorted(g["numOutputFileGroups"] for g in plan["inputGroups"])
    assert outputs == [1, 1, 1, 2]        # one split; the other buckets are rewritten, as Hudi plans it
    split_partition = sizes[-1][1]

    # Updates to buckets under resize are refused (Hudi's reject-update strategy), leaving the
    # table as it was.
    with pytest.raises(HoodieClusteringUpdateError, match="pending clustering " + planned.timestamp):
        write(batch(spark, [0, 1], "no", 9), table_path, opts)
    run_clusterings(spark, HoodieTable.load(table_path), options=resize)
    assert state(spark, table_path) == before

    table = HoodieTable.load(table_path)
    meta = load_metadata(table, split_partition)
    assert meta.instant == planned.timestamp and meta.seq_no == 1 and len(meta.nodes) == 3
    folder = posixpath.join(HASHING_METADATA_DIR, split_partition)
    names = sorted(posixpath.basename(f.path) for f in table.storage.list(folder))
    assert names == ["00000000000000.hashing_meta", f"{planned.timestamp}.commit", f"{planned.timestamp}.hashing_meta"]
    # A commit marker lost in a crash after the replacecommit completed is made again on load.
    table.storage.delete(posixpath.join(folder, f"{planned.timestamp}.commit"))
    assert load_metadata(table, split_partition) == meta
    assert table.storage.exists(posixpath.join(folder, f"{planned.timestamp}.commit"))
    # Every key moved to the file group of its node on the new ring.
    files = file_of_each_key(spark, table_path)
    assert all(fid == expected_file(table, str(int(k) % 2), k) for k, fid in files.items())
    assert {s.file_id for s in table.fs_view().latest_file_slices() if s.partition == split_partition} == \
        {n.file_id for n in meta.nodes}

    # Upserts of moved keys update them in place (no duplicates); new keys and deletes too.
    write(batch(spark, range(0, 400, 2), "c", 3), table_path, opts)
    write(batch(spark, range(400, 420), "n", 3), table_path, opts)
    write(batch(spark, range(0, 400, 5), "d", 4), table_path, {**opts, "hoodie.datasource.write.operation": "delete"})
    expected = {k: v for k, _, v in before}
    expected.update({str(i): "c" for i in range(0, 400, 2)})
    expected.update({str(i): "n" for i in range(400, 420)})
    for i in range(0, 400, 5):
        expected.pop(str(i))
    assert state(spark, table_path) == sorted((k, str(int(k) % 2), v) for k, v in expected.items())
    files = file_of_each_key(spark, HoodieTable.load(table_path).base_path)
    assert all(fid == expected_file(HoodieTable.load(table_path), str(int(k) % 2), k) for k, fid in files.items())


def test_refusals_with_clear_errors(spark, table_path):
    with pytest.raises(HoodieConfigError, match="MERGE_ON_READ tables only"):
        write(batch(spark, [1], "a", 1), table_path,
              {**OPTIONS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
    assert not HoodieTable.exists(table_path)
    write(batch(spark, [1, 2], "a", 1), table_path, OPTIONS)
    # Size-based clustering would move records out of their buckets.
    with pytest.raises(HoodieConfigError, match="consistent-hashing buckets"):
        schedule_clustering(HoodieTable.load(table_path), {})
    with pytest.raises(HoodieConfigError, match="only supports clustering plan strategy"):
        schedule_clustering(HoodieTable.load(table_path), {
            **OPTIONS, "hoodie.clustering.plan.strategy.class":
                "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"})
    with pytest.raises(HoodieConfigError, match="delete_partition is not supported"):
        write(batch(spark, [1], "a", 2), table_path, {**OPTIONS, "hoodie.datasource.write.operation": "delete_partition"})
    # The simple bucket engine cannot take over a consistent-hashing table's file groups.
    with pytest.raises(HoodieConfigError, match="not one of 2 buckets"):
        write(batch(spark, [3], "a", 2), table_path, {**OPTIONS, "hoodie.index.bucket.engine": "SIMPLE"})
    assert state(spark, table_path) == [("1", "1", "a"), ("2", "0", "a")]
    assert np.all(key_hashes(pa.array(["1"]), ["id"]) >= 0)


# The resize runs in hudictl's own process, whatever plane the test's writes take: one plane is enough.
@pytest.mark.parametrize("write_plane", ["in-process"], indirect=True)
def test_hudictl_cluster_resizes_with_the_index_options(spark, table_path):
    """``hudictl cluster`` in its own process, as a scheduled job runs it: refused without the
    index options, a resize with them."""
    import subprocess
    import sys

    write(batch(spark, range(0, 100), "a", 1), table_path, OPTIONS)
    before = state(spark, table_path)

    def hudictl(*args):
        return subprocess.run([sys.executable, "-m", "hudictl.cli", "cluster", "--base-path", table_path, *args],
                              capture_output=True, text=True, timeout=300)
    refused = hudictl()
    assert refused.returncode != 0 and "CONSISTENT_HASHING" in refused.stderr
    conf = [a for k, v in OPTIONS.items() if k.startswith("hoodie.index") or k.startswith("hoodie.bucket")
            for a in ("--hoodie-conf", f"{k}={v}")]
    done = hudictl(*conf, "--hoodie-conf", "hoodie.parquet.max.file.size=100", "--hoodie-conf",
                   "hoodie.bucket.index.max.num.buckets=3")
    assert done.returncode == 0, done.stderr
    table = HoodieTable.load(table_path)
    metas = [load_metadata(table, p) for p in ("0", "1")]
    # max.num.buckets bounds each partition: one split each (every bucket is over 2 x 100 bytes).
    assert [len(m.nodes) for m in metas] == [3, 3] and all(m.seq_no == 1 for m in metas)
    assert state(spark, table_path) == before


def test_a_resize_merges_small_buckets_and_compaction_keeps_them(spark, table_path):
    from hudi_engine.services.compaction import run_compactions, schedule_compaction

    opts = {**OPTIONS, "hoodie.bucket.index.num.buckets": "4", "hoodie.datasource.write.operation": "upsert"}
    write(batch(spark, range(0, 80), "a", 1), table_path, opts)
    write(batch(spark, range(0, 80, 4), "b", 2), table_path, opts)
    before = state(spark, table_path)
    merge = {**opts, "hoodie.bucket.index.min.num.buckets": "1", "hoodie.bucket.index.merge.threshold": "1.0"}
    planned = schedule_clustering(HoodieTable.load(table_path), merge)
    groups = requested_plan(HoodieTable.load(table_path).timeline, planned)["clusteringPlan"]["inputGroups"]
    assert sorted(len(g["slices"]) for g in groups) == [4, 4]          # each partition's 4 buckets into one
    run_clusterings(spark, HoodieTable.load(table_path), options=merge)
    assert state(spark, table_path) == before
    table = HoodieTable.load(table_path)
    for partition in ("0", "1"):
        meta = load_metadata(table, partition)
        # One node left; as in Hudi the run found from the first bucket (backwards across the
        # wrap: 1, 2, 3, then 0) keeps its last node's value, which covers the whole ring alone.
        assert [n.value for n in meta.nodes] == [536870912] and meta.num_buckets == 4
    assert len(table.fs_view().latest_file_slices()) == 2
    # Updates log into the merged bucket; compaction folds them into its base file, same file group.
    write(batch(spark, range(0, 80, 2), "c", 3), table_path, opts)
    schedule_compaction(HoodieTable.load(table_path), opts, force=True)
    run_compactions(spark, HoodieTable.load(table_path), options=opts)
    expected = {k: v for k, _, v in before}
    expected.update({str(i): "c" for i in range(0, 80, 2)})
    assert state(spark, table_path) == sorted((k, str(int(k) % 2), v) for k, v in expected.items())
    table = HoodieTable.load(table_path)
    assert {s.file_id for s in table.fs_view().latest_file_slices()} == \
        {load_metadata(table, p).nodes[0].file_id for p in ("0", "1")}


def test_an_interrupted_resize_is_run_again_and_its_stale_ring_never_used(spark, table_path):
    """Stands in for a resize killed after writing its new ring but before completing: the
    instant is inflight and ``<instant>.hashing_meta`` (with no marker) is on disk."""
    from hudi_engine.index.consistent_hashing import HashingMetadata, Node
    from hudi_engine.index.consistent_meta import save_metadata

    opts = {**OPTIONS, "hoodie.datasource.write.operation": "upsert"}
    write(batch(spark, range(0, 50), "a", 1), table_path, opts)
    before = state(spark, table_path)
    resize = {**OPTIONS, "hoodie.parquet.max.file.size": "100", "hoodie.bucket.index.max.num.buckets": "3"}
    planned = schedule_clustering(HoodieTable.load(table_path), resize)
    table = HoodieTable.load(table_path)
    initial = load_metadata(table, "0")
    table.timeline.transition_to_inflight(planned)
    save_metadata(table.storage, HashingMetadata("0", planned.timestamp, 2, 1, (Node(2147483647, "stale"),)))
    assert load_metadata(HoodieTable.load(table_path), "0") == initial      # its instant is not completed
    assert state(spark, table_path) == before
    assert run_clusterings(spark, HoodieTable.load(table_path), options=resize) == [planned.timestamp]
    table = HoodieTable.load(table_path)
    meta = load_metadata(table, "0")
    assert meta.instant == planned.timestamp and len(meta.nodes) == 3 and "stale" not in {n.file_id_prefix for n in meta.nodes}
    assert state(spark, table_path) == before
    write(batch(spark, range(0, 50), "z", 5), table_path, opts)
    assert state(spark, table_path) == sorted((str(i), str(i % 2), "z") for i in range(50))


def test_inline_clustering_resizes_after_writes(spark, table_path):
    opts = {**OPTIONS, "hoodie.datasource.write.operation": "upsert", "hoodie.clustering.inline": "true",
            "hoodie.clustering.inline.max.commits": "2", "hoodie.parquet.max.file.size": "100",
            "hoodie.bucket.index.max.num.buckets": "3"}
    write(batch(spark, range(0, 40), "a", 1), table_path, opts)
    assert load_metadata(HoodieTable.load(table_path), "0").seq_no == 0
    write(batch(spark, range(0, 40, 2), "b", 2), table_path, opts)
    table = HoodieTable.load(table_path)
    assert [len(load_metadata(table, p).nodes) for p in ("0", "1")] == [3, 3]
    assert state(spark, table_path) == sorted((str(i), str(i % 2), "b" if i % 2 == 0 else "a") for i in range(40))


def test_beside_a_pending_resize_empty_buckets_take_inserts(spark, table_path):
    opts = {**OPTIONS, "hoodie.bucket.index.num.buckets": "8", "hoodie.datasource.write.operation": "upsert"}
    write(batch(spark, [0], "a", 1), table_path, opts)                 # one bucket of partition "0" has data
    planned = schedule_clustering(HoodieTable.load(table_path), opts)
    table = HoodieTable.load(table_path)
    stored = {s.file_id for s in table.fs_view().latest_file_slices()}
    fresh = next(str(i) for i in range(2, 400, 2) if expected_file(table, "0", str(i)) not in stored)
    write(batch(spark, [int(fresh)], "new", 2), table_path, opts)      # its bucket is in no resize group
    with pytest.raises(HoodieClusteringUpdateError, match="pending clustering " + planned.timestamp):
        write(batch(spark, [0], "upd", 3), table_path, opts)
    run_clusterings(spark, HoodieTable.load(table_path), options=opts)
    write(batch(spark, [0, int(fresh)], "upd", 4), table_path, opts)
    assert state(spark, table_path) == sorted([("0", "0", "upd"), (fresh, "0", "upd")])
