"""The three-commit example on a copy-on-write table, read by our reader, by the ``hudi`` data
source and by hudi-rs (real Spark, real files)."""
import pytest

from hudi_engine import read, write
from tests.support.data import three_commits, window_ends
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit"]


def ours(spark, path, **opts):
    return sorted((r["name"], r["fruit"]) for r in read(spark, path, opts).select(*COLS).collect())


def test_incremental_and_snapshot_match_hudi_rs(spark, base_path):
    c1, c2, c3 = three_commits(spark, write, base_path)
    assert c1 < c2 < c3
    w1, w3 = window_ends(base_path, c1, c3)       # completion times from version 8 on

    assert ours(spark, base_path) == [("jack", "banana"), ("sarah", "orange")]
    incr = {"hoodie.datasource.query.type": "incremental"}
    assert ours(spark, base_path, **incr, **{"hoodie.datasource.read.begin.instanttime": "0"}) == [
        ("jack", "banana"), ("sarah", "orange")]
    assert ours(spark, base_path, **incr, **{"hoodie.datasource.read.begin.instanttime": "0",
                                              "hoodie.datasource.read.end.instanttime": w1}) == [
        ("jack", "apple"), ("john", "pineapple"), ("sarah", "orange")]
    assert ours(spark, base_path, **incr, **{"hoodie.datasource.read.begin.instanttime": w1,
                                              "hoodie.datasource.read.end.instanttime": w3}) == [
        ("jack", "banana")]

    # The Apache Hudi project's Rust reader agrees, query by query.
    assert rows(hudi_rs_read(base_path), COLS) == ours(spark, base_path)
    assert rows(hudi_rs_read(base_path, begin="0", end=w1), COLS) == [
        ("jack", "apple"), ("john", "pineapple"), ("sarah", "orange")]
    assert rows(hudi_rs_read(base_path, begin=w1, end=w3), COLS) == [("jack", "banana")]
    assert rows(hudi_rs_read(base_path, begin="0"), COLS) == [("jack", "banana"), ("sarah", "orange")]


def test_time_travel_both_instant_forms(spark, base_path):
    c1, c2, c3 = three_commits(spark, write, base_path)
    at_c2 = [("jack", "banana"), ("john", "pineapple"), ("sarah", "orange")]
    assert ours(spark, base_path, **{"as.of.instant": c2}) == at_c2
    readable = f"{c2[:4]}-{c2[4:6]}-{c2[6:8]} {c2[8:10]}:{c2[10:12]}:{c2[12:14]}.{c2[14:17]}"
    assert ours(spark, base_path, **{"as.of.instant": readable}) == at_c2
    assert rows(hudi_rs_read(base_path, as_of=c2), COLS) == at_c2
    assert ours(spark, base_path, **{"as.of.instant": c1}) == rows(hudi_rs_read(base_path, as_of=c1), COLS)


def test_meta_columns_as_hudi_fills_them(spark, base_path):
    c1, c2, _ = three_commits(spark, write, base_path)
    got = {r["name"]: r for r in read(spark, base_path).collect()}
    jack, sarah = got["jack"], got["sarah"]
    assert jack["_hoodie_commit_time"] == c2 and sarah["_hoodie_commit_time"] == c1
    assert jack["_hoodie_record_key"] == "jack" and jack["_hoodie_partition_path"] == "eu"
    assert jack["_hoodie_commit_seqno"].startswith(c2 + "_")
    assert jack["_hoodie_file_name"].endswith(f"_{c2}.parquet") or \
        jack["_hoodie_file_name"].endswith(".parquet")


def test_spark_format_hudi_data_source(spark, base_path):
    w1, w3 = window_ends(base_path, *three_commits(spark, write, base_path)[::2])
    df = spark.read.format("hudi").load(base_path)
    assert sorted((r["name"], r["fruit"]) for r in df.collect()) == [("jack", "banana"), ("sarah", "orange")]
    incr = (spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental")
            .option("hoodie.datasource.read.begin.instanttime", w1)
            .option("hoodie.datasource.read.end.instanttime", w3).load(base_path))
    assert [(r["name"], r["fruit"]) for r in incr.collect()] == [("jack", "banana")]
