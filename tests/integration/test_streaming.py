"""Structured Streaming through ``format("hudi")``: files streamed into a table, one commit per
micro-batch holding its batch id; a batch Spark replays after its commit landed is not written
twice; a table's CDC stream feeding another table across restarts; a ``latest`` start. Checked on
the rows (our reader and hudi-rs) and on the commits' extra metadata."""
import json

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from hudi_engine import read, write
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region", "ts"]
SINK_KEY = "_hudi_streaming_sink_checkpoint"
QUERY_KEY = "_hudi_streaming_sink_query_id"
CDC = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc"}


def drop_file(folder, name, records):
    """A JSON file of fruit records, as a producer drops them into the stream's folder."""
    (folder / name).write_text("".join(json.dumps(dict(zip(COLS, r))) + "\n" for r in records))


def run_once(stream, path, checkpoint, options):
    """One availableNow run of ``stream`` into the Hudi table at ``path``: every micro-batch it has, then stop."""
    query = (stream.writeStream.format("hudi").options(**options).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start(str(path)))
    query.awaitTermination()
    return query


def files_stream(spark, folder):
    return spark.readStream.schema(FRUIT_SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))


def table_rows(spark, path, cols=COLS):
    ours = sorted(tuple(r) for r in read(spark, str(path)).select(*cols).collect())
    assert rows(hudi_rs_read(path), cols) == ours, "hudi-rs disagrees with our reader"
    return ours


def sink_commits(path):
    """(instant, {identifier: batch id}, query id) of each completed write, oldest first."""
    timeline = HoodieTable.load(str(path)).timeline
    found = []
    for instant in timeline.completed_writes():
        extra = timeline.commit_metadata(instant).get("extraMetadata") or {}
        found.append((instant.timestamp, json.loads(extra.get(SINK_KEY, "null")), extra.get(QUERY_KEY)))
    return found


def staged(path):
    return [f.path for f in Storage(str(path)).list(".hoodie/.temp", recursive=True) if "dataframe-write-" in f.path]


def test_files_stream_into_a_table_once_each_one_commit_per_batch(spark, tmp_path):
    source, table, checkpoint = tmp_path / "in", tmp_path / "table", tmp_path / "checkpoint"
    source.mkdir()
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}  # no index: a row written twice shows twice
    drop_file(source, "1.json", [("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)])
    drop_file(source, "2.json", [("john", "pineapple", "eu", 1)])
    first = run_once(files_stream(spark, source), table, checkpoint, options)
    assert table_rows(spark, table) == [("jack", "apple", "eu", 1), ("john", "pineapple", "eu", 1),
                                        ("sarah", "orange", "us", 1)]
    drop_file(source, "3.json", [("mia", "kiwi", "us", 2), ("zoe", "fig", "eu", 2)])
    drop_file(source, "4.json", [("max", "plum", "asia", 3)])
    second = run_once(files_stream(spark, source), table, checkpoint, options)
    assert second.id == first.id, "a restart from the checkpoint is the same query"
    assert table_rows(spark, table) == [
        ("jack", "apple", "eu", 1), ("john", "pineapple", "eu", 1), ("max", "plum", "asia", 3),
        ("mia", "kiwi", "us", 2), ("sarah", "orange", "us", 1), ("zoe", "fig", "eu", 2)]
    commits = sink_commits(table)
    assert [(batches, query) for _, batches, query in commits] == \
        [({"default_single_writer": str(b)}, first.id) for b in range(4)]
    # One file per micro-batch (maxFilesPerTrigger=1), each batch's rows in its own commit.
    by_commit = {}
    for commit_time, name in read(spark, str(table)).select("_hoodie_commit_time", "name").collect():
        by_commit.setdefault(commit_time, set()).add(name)
    assert sorted(by_commit) == [c for c, _, _ in commits]
    assert sorted(map(sorted, by_commit.values())) == [["jack", "sarah"], ["john"], ["max"], ["mia", "zoe"]]
    assert staged(table) == []


def test_a_replayed_batch_whose_commit_landed_is_not_written_again(spark, tmp_path):
    source, table, checkpoint = tmp_path / "in", tmp_path / "table", tmp_path / "checkpoint"
    source.mkdir()
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}
    drop_file(source, "1.json", [("jack", "apple", "eu", 1)])
    drop_file(source, "2.json", [("sarah", "orange", "us", 1), ("john", "pineapple", "eu", 1)])
    run_once(files_stream(spark, source), table, checkpoint, options)
    before, commits = table_rows(spark, table), sink_commits(table)
    assert [b for _, b, _ in commits] == [{"default_single_writer": "0"}, {"default_single_writer": "1"}]
    # A crash after the table's commit of batch 1 and before Spark's own: Spark runs batch 1 again.
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    run_once(files_stream(spark, source), table, checkpoint, options)
    assert (checkpoint / "commits" / "1").exists(), "Spark did not replay batch 1"
    assert sink_commits(table) == commits
    assert table_rows(spark, table) == before
    assert staged(table) == []
    # Another checkpoint under the same identifier counts batches from 0 again: refused, not skipped.
    drop_file(source, "3.json", [("mia", "kiwi", "us", 2)])
    with pytest.raises(Exception, match="not a replay") as failure:
        run_once(files_stream(spark, source), table, tmp_path / "other_checkpoint", options)
    assert "hoodie.datasource.write.streaming.checkpoint.identifier" in str(failure.value)
    assert sink_commits(table) == commits


def cdc_options(**extra):
    return {**FRUIT_OPTIONS, "hoodie.table.cdc.enabled": "true",
            "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE_AFTER", **extra}


CHANGE_LOG = {"hoodie.table.name": "changes", "hoodie.datasource.write.recordkey.field": "change",
              "hoodie.datasource.write.partitionpath.field": "op", "hoodie.datasource.write.precombine.field": "ts_ms",
              "hoodie.datasource.write.operation": "bulk_insert"}   # no index: a change twice stays twice


def change_stream(spark, path):
    """The table's CDC stream, each change keyed by its commit and record: the change log's key."""
    name = F.coalesce(F.get_json_object("after", "$.name"), F.get_json_object("before", "$.name"))
    return spark.readStream.format("hudi").options(**CDC).load(str(path)) \
        .withColumn("change", F.concat_ws(":", "ts_ms", name))


def test_a_cdc_stream_feeds_another_table_across_restarts(spark, tmp_path):
    source, changes, checkpoint = str(tmp_path / "source"), tmp_path / "changes", tmp_path / "checkpoint"
    write(spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1),
                                 ("john", "pineapple", "eu", 1)], FRUIT_SCHEMA), source,
          cdc_options(**{"hoodie.datasource.write.operation": "insert"}))
    write(spark.createDataFrame([("jack", "banana", "eu", 2)], FRUIT_SCHEMA), source, cdc_options())
    first = run_once(change_stream(spark, source), changes, checkpoint, CHANGE_LOG)
    write(spark.createDataFrame([("john", "pineapple", "eu", 3)], FRUIT_SCHEMA), source,
          cdc_options(**{"hoodie.datasource.write.operation": "delete"}))
    write(spark.createDataFrame([("sarah", "lemon", "us", 4), ("mia", "kiwi", "us", 4)], FRUIT_SCHEMA), source,
          cdc_options())
    run_once(change_stream(spark, source), changes, checkpoint, CHANGE_LOG)
    change_cols = ["op", "ts_ms", "before", "after"]
    expected = sorted(tuple(r) for r in read(spark, source, {**CDC, "hoodie.datasource.read.begin.instanttime": "0"})
                      .select(*change_cols).collect())
    assert [op for op, *_ in expected] == ["d", "i", "i", "i", "i", "u", "u"]
    assert table_rows(spark, changes, change_cols) == expected
    assert [(b, q) for _, b, q in sink_commits(changes)] == \
        [({"default_single_writer": "0"}, first.id), ({"default_single_writer": "1"}, first.id)]


def test_a_latest_start_streams_only_later_commits(spark, tmp_path):
    source, copy, checkpoint = str(tmp_path / "source"), tmp_path / "copy", tmp_path / "checkpoint"
    write(spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)], FRUIT_SCHEMA), source,
          FRUIT_OPTIONS)
    stream = lambda: spark.readStream.format("hudi").option("hoodie.datasource.streaming.startOffset", "latest") \
        .load(source).select(*COLS, F.col("_hoodie_commit_time").alias("source_commit"))
    run_once(stream(), copy, checkpoint, FRUIT_OPTIONS)         # its first batch pins the start in the checkpoint
    later = write(spark.createDataFrame([("jack", "banana", "eu", 2), ("mia", "kiwi", "us", 2)], FRUIT_SCHEMA),
                  source, FRUIT_OPTIONS)
    run_once(stream(), copy, checkpoint, FRUIT_OPTIONS)
    assert table_rows(spark, copy, COLS + ["source_commit"]) == [("jack", "banana", "eu", 2, later),
                                                                   ("mia", "kiwi", "us", 2, later)]
    assert [b for _, b, _ in sink_commits(copy)] == [{"default_single_writer": "0"}, {"default_single_writer": "1"}]


def test_refusals_name_what_is_missing(spark, tmp_path):
    missing = tmp_path / "no_table"
    with pytest.raises(Exception, match="no Hudi table at") as failure:
        spark.readStream.format("hudi").load(str(missing))
    assert str(missing) in str(failure.value)
    with pytest.raises(Exception, match=r'need a path: \.load\("<base path>"\)'):
        spark.readStream.format("hudi").load()
    table = str(tmp_path / "table")
    write(spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA), table, FRUIT_OPTIONS)
    cdc_without_incremental = spark.readStream.format("hudi") \
        .option("hoodie.datasource.query.incremental.format", "cdc").load(table)
    with pytest.raises(Exception, match="a CDC stream needs hoodie.datasource.query.type=incremental"):
        run_once(cdc_without_incremental, tmp_path / "copy", tmp_path / "cdc_checkpoint", FRUIT_OPTIONS)
    source = tmp_path / "in"
    source.mkdir()
    drop_file(source, "1.json", [("jack", "apple", "eu", 1)])
    with pytest.raises(AnalysisException, match="checkpointLocation must be specified"):
        files_stream(spark, source).writeStream.format("hudi").options(**FRUIT_OPTIONS).start(str(tmp_path / "t"))
    with pytest.raises(Exception, match=r'needs a path: \.start\("<base path>"\)'):
        query = files_stream(spark, source).writeStream.format("hudi").options(**FRUIT_OPTIONS) \
            .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start()
        query.awaitTermination()
