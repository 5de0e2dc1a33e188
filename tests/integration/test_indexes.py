"""Every index type on copy-on-write and merge-on-read tables with real Spark: inserts, upserts,
deletes and keys moving partition land where Hudi would put them; rows read back by our reader
and hudi-rs."""
import pyarrow as pa
import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieConfigError
from hudi_engine.index.bucket import bucket_ids, bucket_of
from hudi_engine.index.bloom import BaseFileRef, existing_keys
from hudi_engine.table.meta_client import HoodieTable
from tests.support.hudi_rs import hudi_rs_read, rows

# Every test twice: writes run in this process (small inputs) and as Spark stages (big ones).
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("write_plane")]
COLS = ["id", "p", "v"]


def options(index, table_type, **extra):
    return {"hoodie.table.name": "idx", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index,
            "hoodie.bucket.index.num.buckets": "4", **extra}


def batch(spark, ids, value, ts, partition=None):
    part = f"'{partition}'" if partition else "cast(id % 2 as string)"
    return spark.range(0, 1).selectExpr("explode(array(" + ",".join(str(i) for i in ids) + ")) as n").selectExpr(
        "cast(n as string) as id", f"{part} as p", f"cast({ts} as long) as ts", f"'{value}' as v")


def state(spark, path):
    mine = rows(read(spark, path).toArrow(), COLS)
    assert rows(hudi_rs_read(path), COLS) == mine
    return mine


INDEXES = ["SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET"]


# In the writing process: every index on both table types on local disk; on S3 every index on
# copy-on-write (each tags through its own reads of base files) and merge-on-read's log path once.
# On Spark's executors: every index on merge-on-read (tagging reads keys from log files too), and
# on S3 the indexes that read base files there (keys, bloom footers) for both table types.
@pytest.mark.parametrize("write_plane, base_path, index, table_type", [
    *[("in-process", "local", i, t) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for i in INDEXES],
    *[("in-process", "s3", i, "COPY_ON_WRITE") for i in INDEXES], ("in-process", "s3", "SIMPLE", "MERGE_ON_READ"),
    *[("spark-stages", "local", i, "MERGE_ON_READ") for i in INDEXES],
    *[("spark-stages", "s3", i, t) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for i in ("SIMPLE", "BLOOM")]],
    indirect=["write_plane", "base_path"])
def test_every_index_upserts_and_deletes_the_same_rows(spark, base_path, index, table_type):
    opts = options(index, table_type)
    expected = {}
    write(batch(spark, range(0, 40), "a", 1), base_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    expected.update({(str(i), str(i % 2)): "a" for i in range(40)})
    write(batch(spark, range(30, 50), "b", 2), base_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    expected.update({(str(i), str(i % 2)): "b" for i in range(30, 50)})
    write(batch(spark, [1, 2, 3, 45, 999], "x", 3), base_path, {**opts, "hoodie.datasource.write.operation": "delete"})
    for i in (1, 2, 3, 45):
        expected.pop((str(i), str(i % 2)))
    # A stale version (older ordering value) loses to the stored one.
    write(batch(spark, [31, 60], "old", 0), base_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    expected[("60", "0")] = "old"
    assert state(spark, base_path) == sorted((k, p, v) for (k, p), v in expected.items())
    if index == "BUCKET":
        # Every record sits in its bucket's file group: no more than 4 file groups per partition.
        stored = read(spark, base_path).select("id", "_hoodie_file_name").collect()
        ids = [r["id"] for r in stored]
        assert [bucket_of(r["_hoodie_file_name"][:38]) for r in stored] == bucket_ids_of(ids)
        slices = HoodieTable.load(base_path).fs_view().latest_file_slices()
        assert len(slices) <= 8 and {bucket_of(s.file_id) for s in slices} <= set(range(4))


def bucket_ids_of(keys):
    return bucket_ids(pa.array(keys), ["id"], 4).tolist()


@pytest.mark.parametrize("index", ["GLOBAL_SIMPLE", "GLOBAL_BLOOM"])
@pytest.mark.parametrize("moves", [True, False])
def test_global_indexes_move_a_key_to_its_new_partition_or_keep_it(spark, table_path, index, moves):
    flag = "hoodie.simple.index.update.partition.path" if index == "GLOBAL_SIMPLE" else \
        "hoodie.bloom.index.update.partition.path"
    opts = options(index, "COPY_ON_WRITE", **{flag: str(moves).lower()})
    write(batch(spark, [1, 2], "a", 1, "eu"), table_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    write(batch(spark, [1], "b", 2, "us"), table_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    # Kept in place, the record keeps its stored partition path (its partition column says "us").
    where = ["id", "_hoodie_partition_path", "v"]
    mine = rows(read(spark, table_path).toArrow(), where)
    assert rows(hudi_rs_read(table_path), where) == mine
    assert mine == ([("1", "us", "b"), ("2", "eu", "a")] if moves else [("1", "eu", "b"), ("2", "eu", "a")])


def test_bloom_index_reads_keys_of_candidate_files_only(spark, table_path):
    opts = options("BLOOM", "COPY_ON_WRITE", **{"hoodie.parquet.small.file.limit": "0"})
    for start in (0, 100, 200):          # three files per partition, disjoint key ranges
        write(batch(spark, range(start, start + 50), "a", 1, "eu"), table_path,
              {**opts, "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable.load(table_path)
    refs = [BaseFileRef(s.partition, s.file_id, s.base_file.path) for s in table.fs_view().latest_file_slices()]
    found = {r.file_id: existing_keys(table.storage, r, pa.array(["10", "110", "nope"])).to_pylist() for r in refs}
    assert sorted(v for keys in found.values() for v in keys) == ["10", "110"]
    # An upsert of keys of one file rewrites that file group only.
    before = {s.file_id: s.base_instant for s in table.fs_view().latest_file_slices()}
    committed = write(batch(spark, [205, 210], "b", 2, "eu"), table_path,
                      {**opts, "hoodie.datasource.write.operation": "upsert"})
    after = {s.file_id: s.base_instant for s in HoodieTable.load(table_path).fs_view().latest_file_slices()}
    assert sorted(v for v in after.values() if v == committed) == [committed]
    assert set(after) == set(before)
    assert len([r for r in state(spark, table_path) if r[2] == "b"]) == 2


def test_bucket_index_refuses_what_it_cannot_do(spark, table_path):
    opts = options("BUCKET", "COPY_ON_WRITE")
    write(batch(spark, [1, 2, 3], "a", 1), table_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    with pytest.raises(HoodieConfigError, match="bucket count"):
        write(batch(spark, [4], "a", 1), table_path,
              {**opts, "hoodie.bucket.index.num.buckets": "2", "hoodie.datasource.write.operation": "upsert"})
    with pytest.raises(HoodieConfigError, match="not record key fields"):
        write(batch(spark, [4], "a", 1), table_path,
              {**opts, "hoodie.bucket.index.hash.field": "v", "hoodie.datasource.write.operation": "upsert"})
    with pytest.raises(HoodieConfigError, match="insert_overwrite is not supported with the BUCKET index"):
        write(batch(spark, [4], "a", 1), table_path, {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    simple = options("SIMPLE", "COPY_ON_WRITE")
    write(batch(spark, [7], "a", 1), table_path + "-simple", {**simple, "hoodie.datasource.write.operation": "insert"})
    with pytest.raises(HoodieConfigError, match="another index"):
        write(batch(spark, [8], "a", 1), table_path + "-simple", {**opts, "hoodie.datasource.write.operation": "upsert"})
    assert state(spark, table_path) == [("1", "1", "a"), ("2", "0", "a"), ("3", "1", "a")]


@pytest.mark.parametrize("write_plane", ["spark-stages"], indirect=True)
@pytest.mark.parametrize("broadcast", [True, False])
def test_simple_index_tags_the_same_with_or_without_broadcast_keys(spark, table_path, monkeypatch, broadcast):
    """The simple index's Spark tagging, with the incoming keys' hashes broadcast to the stored-key
    scan (few keys) and without (many keys: every stored key reaches the join). A key stored in the
    other partition is a new record of its own partition, not an update. No small files: a new
    record goes to a new file group, so a stored key tagged as new would be stored twice."""
    from hudi_engine.index import tagging

    if not broadcast:
        monkeypatch.setattr(tagging, "BROADCAST_KEYS", 0)
    opts = options("SIMPLE", "COPY_ON_WRITE", **{"hoodie.parquet.small.file.limit": "0"})
    write(batch(spark, range(0, 40), "a", 1), table_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    write(batch(spark, range(30, 50), "b", 2).unionByName(batch(spark, [5], "c", 2, "0")), table_path,
          {**opts, "hoodie.datasource.write.operation": "upsert"})
    expected = {(str(i), str(i % 2)): "a" for i in range(40)}
    expected.update({(str(i), str(i % 2)): "b" for i in range(30, 50)})
    expected[("5", "0")] = "c"
    assert state(spark, table_path) == sorted((k, p, v) for (k, p), v in expected.items())
    timeline = HoodieTable.load(table_path).timeline
    stats = timeline.commit_metadata(timeline.last_completed_write())["partitionToWriteStats"]
    assert sum(s["numUpdateWrites"] for group in stats.values() for s in group) == 10
