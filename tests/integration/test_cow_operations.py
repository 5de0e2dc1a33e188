"""Write operations on copy-on-write tables, checked on the rows read back (ours and hudi-rs) and
on the files and timeline on disk."""
import json
import os
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from hudi_engine import read, write
from hudi_engine.errors import HoodieValidationError
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.properties import read_properties_text
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

# Every test twice: writes run in this process (small inputs) and as Spark stages (big ones).
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("write_plane")]
COLS = ["name", "fruit", "region"]


def df(spark, data):
    return spark.createDataFrame(data, FRUIT_SCHEMA)


def op(operation, **extra):
    return {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": operation, **extra}


def commit_of(path, instant: str) -> dict:
    """An instant's commit metadata, read through the timeline of the table's version."""
    timeline = HoodieTable.load(str(path)).timeline
    return timeline.commit_metadata(timeline.get(instant))


def snapshot(spark, path):
    ours = sorted(tuple(r) for r in read(spark, path).select(*COLS).collect())
    assert rows(hudi_rs_read(path), COLS) == ours, "hudi-rs disagrees with our reader"
    return ours


def test_table_creation_files(spark, table_path):
    """Version 6's files, byte for byte what Hudi 0.x readers expect (test_table_versions_8_and_9
    holds 8's and 9's against real Hudi's)."""
    instant = write(df(spark, [("a", "x", "eu", 1), ("b", "y", "us", 1)]), table_path,
                    op("insert", **{"hoodie.write.table.version": "6"}))
    base = Path(table_path)
    props = read_properties_text((base / ".hoodie/hoodie.properties").read_text())
    assert props["hoodie.table.version"] == "6" and props["hoodie.table.type"] == "COPY_ON_WRITE"
    assert props["hoodie.table.recordkey.fields"] == "name"
    assert props["hoodie.table.partition.fields"] == "region"
    assert props["hoodie.table.precombine.field"] == "ts"
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert props["hoodie.table.checksum"]
    assert not [k for k in props if k.startswith("hoodie.keygen.")], "timestamp keygen settings leaked"
    assert json.loads(props["hoodie.table.create.schema"])["name"] == "fruit_record"
    meta = read_properties_text((base / "eu/.hoodie_partition_metadata").read_text())
    assert meta == {"commitTime": instant, "partitionDepth": "1"}
    timeline = sorted(p.name for p in (base / ".hoodie").iterdir() if p.is_file())
    assert timeline == [f"{instant}.commit", f"{instant}.commit.requested", f"{instant}.inflight",
                        "hoodie.properties"]
    commit = json.loads((base / f".hoodie/{instant}.commit").read_text())
    assert commit["operationType"] == "INSERT"
    stats = [s for ss in commit["partitionToWriteStats"].values() for s in ss]
    assert sum(s["numInserts"] for s in stats) == 2
    for s in stats:
        assert os.path.getsize(base / s["path"]) == s["fileSizeInBytes"]
    assert not (base / ".hoodie/.temp" / instant).exists()


def test_upsert_rewrites_only_touched_file_groups(spark, table_path):
    write(df(spark, [(f"k{i}", "x", r, 1) for i in range(20) for r in ("eu", "us")][:30]),
          table_path, op("bulk_insert"))
    before = {p.name for p in Path(table_path).rglob("*.parquet")}
    instant = write(df(spark, [("k1", "new", "eu", 2)]), table_path, op("upsert"))
    commit = commit_of(table_path, instant)
    assert list(commit["partitionToWriteStats"]) == ["eu"]
    [stat] = commit["partitionToWriteStats"]["eu"]
    assert stat["numUpdateWrites"] == 1 and stat["prevCommit"] != "null"
    after = {p.name for p in Path(table_path).rglob("*.parquet")}
    assert after - before == {Path(stat["path"]).name}
    got = snapshot(spark, table_path)
    assert ("k1", "new", "eu") in got and len(got) == 30


def test_dedup_by_ordering_field_and_commit_time(spark, table_path):
    """A version 6 table, whose writes each choose how they merge (from version 8 on the merge mode
    is the table's, set when it is created)."""
    v6 = {"hoodie.write.table.version": "6"}
    data = [("a", "v1", "eu", 5), ("a", "v2", "eu", 9), ("a", "v3", "eu", 7)]
    write(df(spark, data), table_path, op("upsert", **v6))
    assert snapshot(spark, table_path) == [("a", "v2", "eu")]
    # Event time: a late, older record does not overwrite the stored newer one.
    write(df(spark, [("a", "late", "eu", 1)]), table_path, op("upsert", **v6))
    assert snapshot(spark, table_path) == [("a", "v2", "eu")]
    # Commit time: the last write wins whatever its ordering value.
    write(df(spark, [("a", "latest", "eu", 0)]), table_path,
          op("upsert", **v6, **{"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}))
    assert snapshot(spark, table_path) == [("a", "latest", "eu")]


def test_insert_keeps_duplicates_and_fills_small_files(spark, table_path):
    write(df(spark, [("a", "x", "eu", 1)]), table_path, op("insert"))
    write(df(spark, [("b", "y", "eu", 1), ("b", "z", "eu", 2)]), table_path, op("insert"))
    assert snapshot(spark, table_path) == [("a", "x", "eu"), ("b", "y", "eu"), ("b", "z", "eu")]
    table = HoodieTable.load(table_path)
    slices = table.fs_view().latest_file_slices()
    assert len(slices) == 1, "the second insert should have gone into the small file"


def test_new_file_groups_split_by_max_file_size(spark, table_path):
    data = [(f"k{i:04d}", "x" * 50, "eu", 1) for i in range(1000)]
    write(df(spark, data), table_path, op("insert", **{
        "hoodie.parquet.max.file.size": "20000", "hoodie.copyonwrite.record.size.estimate": "100"}))
    slices = HoodieTable.load(table_path).fs_view().latest_file_slices()
    assert len(slices) == 5          # 1000 records / (20000 / 100 per file)
    assert len(snapshot(spark, table_path)) == 1000


def test_global_index_moves_a_key_to_its_new_partition(spark, table_path):
    opts = {"hoodie.index.type": "GLOBAL_SIMPLE"}
    write(df(spark, [("a", "x", "eu", 1), ("b", "y", "us", 1)]), table_path, op("upsert", **opts))
    write(df(spark, [("a", "moved", "us", 2)]), table_path, op("upsert", **opts))
    assert snapshot(spark, table_path) == [("a", "moved", "us"), ("b", "y", "us")]
    # Non-global: the same key in another partition is another record.
    path2 = table_path + "_local"
    write(df(spark, [("a", "x", "eu", 1)]), path2, op("upsert"))
    write(df(spark, [("a", "other", "us", 2)]), path2, op("upsert"))
    assert snapshot(spark, path2) == [("a", "other", "us"), ("a", "x", "eu")]


def test_insert_overwrite_replaces_only_touched_partitions(spark, table_path):
    write(df(spark, [("a", "x", "eu", 1), ("b", "y", "us", 1)]), table_path, op("insert"))
    instant = write(df(spark, [("c", "z", "eu", 1)]), table_path, op("insert_overwrite"))
    assert snapshot(spark, table_path) == [("b", "y", "us"), ("c", "z", "eu")]
    meta = commit_of(table_path, instant)
    assert list(meta["partitionToReplaceFileIds"]) == ["eu"]
    write(df(spark, [("d", "w", "asia", 1)]), table_path, op("insert_overwrite_table"))
    assert snapshot(spark, table_path) == [("d", "w", "asia")]


def test_delete_partition(spark, table_path):
    write(df(spark, [("a", "x", "eu", 1), ("b", "y", "us", 1)]), table_path, op("insert"))
    write(spark.createDataFrame([], FRUIT_SCHEMA), table_path,
          op("delete_partition", **{"hoodie.datasource.write.partitions.to.delete": "eu"}))
    assert snapshot(spark, table_path) == [("b", "y", "us")]


def test_hive_style_complex_and_nonpartitioned_keys(spark, table_path):
    opts = op("insert", **{"hoodie.datasource.write.recordkey.field": "name,fruit",
                           "hoodie.datasource.write.partitionpath.field": "region,ts",
                           "hoodie.datasource.write.hive_style_partitioning": "true"})
    write(df(spark, [("a", "x", "eu", 1)]), table_path, opts)
    [r] = read(spark, table_path).collect()
    assert r["_hoodie_record_key"] == "name:a,fruit:x"
    assert r["_hoodie_partition_path"] == "region=eu/ts=1"
    assert (Path(table_path) / "region=eu/ts=1/.hoodie_partition_metadata").exists()
    assert rows(hudi_rs_read(table_path), ["name"]) == [("a",)]

    flat = table_path + "_flat"
    write(df(spark, [("a", "x", "eu", 1)]), flat, op("insert", **{
        "hoodie.datasource.write.partitionpath.field": ""}))
    [r] = read(spark, flat).collect()
    assert r["_hoodie_partition_path"] == ""
    assert rows(hudi_rs_read(flat), ["name"]) == [("a",)]


def test_timestamp_based_partitions(spark, table_path):
    write(spark.createDataFrame([("a", 1700000000)], "id string, event_ts long"), table_path, {
        "hoodie.table.name": "events", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "event_ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        "hoodie.datasource.write.operation": "insert"})
    [r] = read(spark, table_path).collect()
    assert r["_hoodie_partition_path"] == "2023/11/14"
    props = read_properties_text((Path(table_path) / ".hoodie/hoodie.properties").read_text())
    assert props["hoodie.keygen.timebased.timestamp.type"] == "UNIX_TIMESTAMP"
    assert props["hoodie.keygen.timebased.output.dateformat"] == "yyyy/MM/dd"
    # A later write needs no keygen options: the table remembers them.
    write(spark.createDataFrame([("b", 1700100000)], "id string, event_ts long"), table_path,
          {"hoodie.datasource.write.operation": "upsert"})
    assert sorted(r["_hoodie_partition_path"] for r in read(spark, table_path).collect()) == [
        "2023/11/14", "2023/11/16"]
    assert rows(hudi_rs_read(table_path), ["id"]) == [("a",), ("b",)]


def test_schema_evolution_adds_a_column(spark, table_path):
    write(df(spark, [("a", "x", "eu", 1)]), table_path, op("insert"))
    write(spark.createDataFrame([("b", "y", "eu", 2, 3.5)], FRUIT_SCHEMA + ", weight double"),
          table_path, op("upsert"))
    got = sorted((r["name"], r["weight"]) for r in read(spark, table_path).collect())
    assert got == [("a", None), ("b", 3.5)]
    assert rows(hudi_rs_read(table_path), ["name", "weight"]) == [("a", None), ("b", 3.5)]


def test_a_batch_lacking_a_table_column_fails_unless_nulls_are_asked_for(spark, table_path):
    """Hudi 1.x's writer refuses a batch that lacks a table column (the table would lose it), unless
    hoodie.write.set.null.for.missing.columns or hoodie.datasource.write.reconcile.schema asks for
    nulls."""
    write(spark.createDataFrame([("a", "x", "eu", 1, 1.5)], FRUIT_SCHEMA + ", weight double"), table_path, op("insert"))
    lacking = df(spark, [("a", "y", "eu", 2), ("b", "z", "eu", 2)])
    with pytest.raises(HoodieValidationError, match=r"lacks column\(s\) weight .*set.null.for.missing.columns=true"):
        write(lacking, table_path, op("upsert"))
    assert len(HoodieTable.load(table_path).timeline.completed_writes()) == 1, "the refused write committed nothing"
    write(lacking, table_path, op("upsert", **{"hoodie.write.set.null.for.missing.columns": "true"}))
    got = sorted((r["name"], r["fruit"], r["weight"]) for r in read(spark, table_path).collect())
    assert got == [("a", "y", None), ("b", "z", None)]
    assert rows(hudi_rs_read(table_path), ["name", "fruit", "weight"]) == got


def test_extra_metadata_is_kept_for_checkpoints(spark, table_path):
    instant = write(df(spark, [("a", "x", "eu", 1)]), table_path, op("insert"),
                    extra_metadata={"deltastreamer.checkpoint.key": "offsets:42"})
    meta = commit_of(table_path, instant)
    assert meta["extraMetadata"]["deltastreamer.checkpoint.key"] == "offsets:42"
    assert "schema" in meta["extraMetadata"]


def _stage_tasks(spark, group: str) -> list[int]:
    tracker = spark.sparkContext.statusTracker()
    stages = [s for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds]
    return [info.numTasks for info in map(tracker.getStageInfo, stages) if info is not None]


def test_an_upsert_sizes_its_stages_from_the_work_not_the_sessions_shuffle_partitions(spark, table_path):
    """Hudi derives a write's shuffle parallelism from its input (hoodie.upsert.shuffle.parallelism=0);
    a session's spark.sql.shuffle.partitions (200 in a stock session) must neither size the index
    join nor stay changed after the write."""
    key, batch = "spark.sql.shuffle.partitions", "spark.sql.execution.arrow.maxRecordsPerBatch"
    before, batch_before = spark.conf.get(key), spark.conf.get(batch, None)
    spark.conf.set(key, "200")
    try:
        write(df(spark, [(f"k{i}", "x", r, 1) for i in range(50) for r in ("eu", "us")]), table_path, op("insert"))
        changes = df(spark, [("k1", "new", "eu", 2), ("k2", "new", "us", 2), ("k99", "new", "eu", 2)]).coalesce(1)
        # Spark's stages are what this test is about: the in-process path would run none.
        instant = write(changes, table_path, op("upsert", **{"hoodie.write.in.process.max.records": "0"}))
        assert spark.conf.get(key) == "200"
        tasks = _stage_tasks(spark, f"hudi-commit-fruit-{instant}")
        # Input of one partition on two cores: two-way shuffles, one merge task per file group (2).
        assert tasks and max(tasks) <= 2, tasks
        got = snapshot(spark, table_path)
        assert len(got) == 101
        assert sorted(r for r in got if r[1] == "new") == [("k1", "new", "eu"), ("k2", "new", "us"), ("k99", "new", "eu")]
        with pytest.raises(HoodieValidationError, match="ordering field 'ts' is null"):
            write(changes.withColumn("ts", F.lit(None).cast("long")), table_path, op("upsert"))
        assert spark.conf.get(key) == "200", "a failed write must give the session its setting back"
        assert spark.conf.get(batch, None) == batch_before
    finally:
        spark.conf.set(key, before)


def test_an_upsert_that_sets_a_nullable_column_from_a_literal_keeps_the_schema(spark, table_path):
    """Spark marks F.lit(...) non-nullable; Hudi reconciles that with the table's nullable column."""
    write(df(spark, [("a", "x", "eu", 1), ("b", None, "eu", 1)]), table_path, op("insert"))
    changes = df(spark, [("a", "x", "eu", 2)]).withColumn("fruit", F.lit("kiwi"))
    assert not changes.schema["fruit"].nullable
    write(changes, table_path, op("upsert"))
    assert snapshot(spark, table_path) == [("a", "kiwi", "eu"), ("b", None, "eu")]
    schema = json.loads(HoodieTable.load(table_path).timeline.latest_schema())
    fruit = next(f for f in schema["fields"] if f["name"] == "fruit")
    assert fruit["type"] == ["null", "string"], "the table's column stays nullable"


def test_a_null_struct_whose_fields_spark_declares_required_is_written(spark, table_path):
    """F.struct of non-null expressions gives fields Spark marks non-nullable; a null struct of
    that type must write (Parquet refuses the nulls Spark leaves in its fields) and read back."""
    rows = df(spark, [("a", "x", "eu", 1), ("b", "y", "eu", 1)]).withColumn(
        "device", F.when(F.col("name") == "a", F.struct(F.lit("linux").alias("os"), F.lit(1).alias("n"))))
    assert not rows.schema["device"].dataType["os"].nullable
    write(rows, table_path, op("bulk_insert"))
    got = sorted((r["name"], r["device"] and r["device"].asDict()) for r in read(spark, table_path).collect())
    assert got == [("a", {"os": "linux", "n": 1}), ("b", None)]
    assert sorted(hudi_rs_read(table_path).column("device").to_pylist(), key=str) == [None, {"os": "linux", "n": 1}]
