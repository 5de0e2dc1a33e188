"""Small writes run in the writing process (issue 20): no Spark stage for a small change, and a
no-Spark write of Arrow tables; checked on rows read back by our reader and hudi-rs, and on
Spark's own record of the jobs a write ran."""
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieConfigError, HoodieValidationError
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.write import writer
from hudi_engine.write.writer import small_input
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA, window_ends
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region", "ts"]
ARROW_SCHEMA = pa.schema([("name", pa.string()), ("fruit", pa.string()), ("region", pa.string()), ("ts", pa.int64())])


def op(operation, **extra):
    return {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": operation, **extra}


def arrow(data):
    return pa.Table.from_pylist([dict(zip(COLS, r)) for r in data], schema=ARROW_SCHEMA)


def both_readers(spark, path):
    ours = sorted(tuple(r) for r in read(spark, path).select(*COLS).collect())
    assert rows(hudi_rs_read(path), COLS) == ours, "hudi-rs disagrees with our reader"
    return ours


def jobs_of(spark, table: str, instant: str) -> list[int]:
    return list(spark.sparkContext.statusTracker().getJobIdsForGroup(f"hudi-commit-{table}-{instant}"))


def commit_stats(path, instant):
    timeline = HoodieTable.load(str(path)).timeline
    meta = timeline.commit_metadata(timeline.get(instant))
    return [s for ss in meta["partitionToWriteStats"].values() for s in ss]


@pytest.mark.parametrize("index", ["SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "RECORD_INDEX", "BUCKET"])
def test_a_small_upsert_runs_no_spark_job(spark, table_path, index):
    """The index answers from key columns, footers or the metadata table, and the touched file
    groups are merged here: the write's job group records no Spark job."""
    opts = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "4"}
    data = [(f"k{i:03d}", "x", "eu" if i % 2 else "us", 1) for i in range(400)]
    write(spark.createDataFrame(data, FRUIT_SCHEMA), table_path, op("upsert", **opts))
    changes = [("k001", "new", "eu", 2), ("k150", "new", "us", 2), ("n1", "new", "eu", 2)]
    instant = write(spark.createDataFrame(changes, FRUIT_SCHEMA), table_path, op("upsert", **opts))
    assert jobs_of(spark, "fruit", instant) == []
    stats = commit_stats(table_path, instant)
    assert sum(s["numUpdateWrites"] for s in stats) == 2 and sum(s["numInserts"] for s in stats) == 1
    got = both_readers(spark, table_path)
    assert len(got) == 401
    assert sorted(r for r in got if r[1] == "new") == sorted(changes)


def test_large_rewrites_merge_on_spark(spark, table_path):
    """A small change whose file groups are bigger than hoodie.write.in.process.max.merge.bytes
    is tagged here and merged by Spark's executors, with the same result."""
    data = [(f"k{i:03d}", "x", r, 1) for i in range(200) for r in ("eu", "us")]
    write(spark.createDataFrame(data, FRUIT_SCHEMA), table_path, op("insert"))
    changes = [("k001", "new", "eu", 2), ("k002", "new", "us", 2)]
    instant = write(spark.createDataFrame(changes, FRUIT_SCHEMA), table_path,
                    op("upsert", **{"hoodie.write.in.process.max.merge.bytes": "1"}))
    assert jobs_of(spark, "fruit", instant), "the merge should have run as Spark jobs"
    got = both_readers(spark, table_path)
    assert len(got) == 400 and sorted(r for r in got if r[1] == "new") == sorted(changes)


def test_big_inputs_are_not_collected(spark, monkeypatch):
    """Spark's estimate of a big input sends it through Spark without a probe; an input Spark sizes
    but cannot count (a projection of a cached frame) is counted before it is collected, so only a
    small one is collected; rows from Python (no size) are collected up to the limit, once."""
    collected = []
    monkeypatch.setattr(writer, "_collect", lambda df: collected.append(df) or df.toArrow())
    cached = spark.range(1000).selectExpr("id", "cast(id as string) AS key").cache()
    cached.count()
    try:
        assert small_input(spark.range(1000), 10) is None
        assert small_input(cached.select("key"), 10) is None
        assert small_input(spark.range(100).filter("id % 2 = 0"), 10) is None
        assert small_input(spark.range(5), 0) is None
        assert collected == []
        assert small_input(spark.createDataFrame([(i,) for i in range(20)], "id long"), 10) is None
        assert len(collected) == 1
        assert small_input(spark.range(5).toDF("id"), 10).num_rows == 5
        assert small_input(spark.createDataFrame([(i,) for i in range(5)], "id long"), 10).num_rows == 5
        assert small_input(cached.filter("id < 5"), 100).num_rows == 5
        assert len(collected) == 4
    finally:
        cached.unpersist()


def test_arrow_tables_are_written_without_spark(spark, tmp_path):
    """An Arrow table is a write's whole input: create, upsert, delete and insert, each a commit,
    read back the same by both readers (Spark only reads here)."""
    path = str(tmp_path / "fruit")
    write(arrow([("a", "x", "eu", 1), ("b", "y", "us", 1), ("c", "z", "eu", 1)]), path, op("insert"))
    write(arrow([("a", "x2", "eu", 2), ("a", "x1", "eu", 1), ("d", "w", "us", 1)]), path, op("upsert"))
    write(arrow([("c", "z", "eu", 9)]), path, op("delete"))
    last = write(arrow([("e", "v", "eu", 1)]), path, op("insert"))
    assert both_readers(spark, path) == [("a", "x2", "eu", 2), ("b", "y", "us", 1), ("d", "w", "us", 1),
                                         ("e", "v", "eu", 1)]
    table = HoodieTable.load(path)
    assert [i.timestamp for i in table.timeline.completed_writes()][-1] == last
    assert len(table.timeline.completed_writes()) == 4


def test_arrow_writes_refuse_what_needs_spark_and_bad_records(tmp_path):
    path = str(tmp_path / "fruit")
    with pytest.raises(HoodieConfigError, match="hoodie.clustering.inline"):
        write(arrow([("a", "x", "eu", 1)]), path, op("insert", **{"hoodie.clustering.inline": "true"}))
    with pytest.raises(HoodieValidationError, match="ordering field 'ts' is null"):
        write(arrow([("a", "x", "eu", None)]), path, op("upsert"))
    write(arrow([("a", "x", "eu", 1)]), path, op("insert"))
    assert len(HoodieTable.load(path).timeline.completed_writes()) == 1


def test_a_rewritten_file_keeps_a_bloom_filter_of_all_its_keys(tmp_path):
    """A merge continues the stored file's bloom filter with the keys it inserts: every key of the
    new file is in its footer's filter, and the bloom index finds them."""
    import pyarrow.parquet as pq

    from hudi_engine.bloom import FOOTER_KEY, TYPE_CODE_KEY, deserialize_bloom_filter

    path = str(tmp_path / "fruit")
    write(arrow([(f"k{i:04d}", "x", "eu", 1) for i in range(3000)]), path, op("insert"))
    # Updates and inserts in one partition: the inserts fill the (small) file group the updates rewrite.
    write(arrow([("k0001", "new", "eu", 2)] + [(f"n{i:04d}", "y", "eu", 1) for i in range(500)]), path, op("upsert"))
    (only,) = HoodieTable.load(path).fs_view().latest_file_slices()
    f = pq.ParquetFile(str(Path(path) / only.base_file.path))
    footer = f.metadata.metadata
    bloom = deserialize_bloom_filter(footer[FOOTER_KEY.encode()], footer[TYPE_CODE_KEY.encode()])
    keys = f.read(columns=["_hoodie_record_key"]).column(0)
    assert len(keys) == 3500 and bloom.might_contain_many(keys).all()
    instant = write(arrow([("n0499", "z", "eu", 2), ("k2999", "z", "eu", 2)]),
                    path, op("upsert", **{"hoodie.index.type": "BLOOM"}))
    stats = commit_stats(path, instant)
    assert sum(s["numUpdateWrites"] for s in stats) == 2 and sum(s["numInserts"] for s in stats) == 0
    # A rewrite that inserts no key writes the stored filter back as it was, undecoded.
    (latest,) = HoodieTable.load(path).fs_view().latest_file_slices()
    rewritten = pq.ParquetFile(str(Path(path) / latest.base_file.path))
    assert rewritten.metadata.metadata[FOOTER_KEY.encode()] == footer[FOOTER_KEY.encode()]
    # The file name and commit times, written from dictionaries, are plain strings in the file.
    meta = rewritten.read(columns=["_hoodie_commit_time", "_hoodie_file_name", "_hoodie_record_key", "name"])
    assert meta.schema.field("_hoodie_file_name").type == pa.string()
    assert set(meta["_hoodie_file_name"].to_pylist()) == {Path(latest.base_file.path).name}
    times = dict(zip(meta["_hoodie_record_key"].to_pylist(), meta["_hoodie_commit_time"].to_pylist()))
    assert {k for k, t in times.items() if t == instant} == {"n0499", "k2999"} and len(set(times.values())) == 3
    chunks = [rewritten.metadata.row_group(g).column(c) for g in range(rewritten.num_row_groups) for c in (0, 4)]
    assert {c.path_in_schema for c in chunks} == {"_hoodie_commit_time", "_hoodie_file_name"}
    assert all("RLE_DICTIONARY" in c.encodings for c in chunks)
    got = rows(hudi_rs_read(path), COLS)
    assert len(got) == 3500 and {r for r in got if r[1] == "z"} == {("n0499", "z", "eu", 2), ("k2999", "z", "eu", 2)}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_arrow_reads_give_what_spark_reads_give(spark, tmp_path, table_type):
    """read_arrow (no Spark) answers each query type as read does: snapshot, read-optimized, time
    travel, incremental, CDC, with filters and chosen columns."""
    from hudi_engine.api import read_arrow

    path = str(tmp_path / "fruit")
    opts = {"hoodie.table.type": table_type, "hoodie.table.cdc.enabled": "true"}
    c1 = write(arrow([("a", "x", "eu", 1), ("b", "y", "us", 1), ("c", "z", "eu", 1)]), path, op("insert", **opts))
    c2 = write(arrow([("a", "x2", "eu", 2), ("d", "w", "us", 1)]), path, op("upsert", **opts))
    write(arrow([("b", "y", "us", 9)]), path, op("delete", **opts))
    w1, w2 = window_ends(path, c1, c2)           # completion times from version 8 on

    def same(options=None, filters=None, columns=COLS):
        ours = read_arrow(path, options, filters=filters, columns=columns)
        theirs = read(spark, path, options, filters=filters).select(*columns)
        got = sorted(tuple(r.values()) for r in ours.to_pylist())
        assert got == sorted(tuple(r) for r in theirs.collect())
        return got

    assert same() == [("a", "x2", "eu", 2), ("c", "z", "eu", 1), ("d", "w", "us", 1)]
    assert same(filters=[("region", "=", "eu"), ("ts", ">", 1)]) == [("a", "x2", "eu", 2)]
    assert same(filters=[("name", "NOT IN", ["a", "c"])]) == [("d", "w", "us", 1)]
    assert same({"as.of.instant": c1}) == [("a", "x", "eu", 1), ("b", "y", "us", 1), ("c", "z", "eu", 1)]
    assert same({"hoodie.datasource.query.type": "incremental",
                 "hoodie.datasource.read.begin.instanttime": w1,
                 "hoodie.datasource.read.end.instanttime": w2}) == [("a", "x2", "eu", 2), ("d", "w", "us", 1)]
    same({"hoodie.datasource.query.type": "read_optimized"})
    cdc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
           "hoodie.datasource.read.begin.instanttime": w1}
    assert sorted(r["op"] for r in read_arrow(path, cdc).to_pylist()) == ["d", "i", "u"]
    assert read_arrow(path, cdc).num_rows == read(spark, path, cdc).count()
