"""``df.write.format("hudi")``: every operation and both save modes Spark lets a Python data source
have, checked on the rows read back (our reader and hudi-rs) against ``api.write`` of the same
input, and on what a user sees when Spark or the engine refuses a write. Tasks stage their rows in
the table's temp folder; none may be left there, whatever the write's outcome."""
import json
import os
import subprocess
import sys
import textwrap
import threading
from decimal import Decimal

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from hudi_engine import read, write
from hudi_engine.spark import register
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.properties import read_properties_text
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region"]
OPERATION = "hoodie.datasource.write.operation"


def df_write(frame, path, options, mode="append"):
    frame.write.format("hudi").options(**options).mode(mode).save(str(path))


def op(operation, **extra):
    return {**FRUIT_OPTIONS, OPERATION: operation, **extra}


def snapshot(spark, path):
    ours = sorted(tuple(r) for r in read(spark, str(path)).select(*COLS).collect())
    assert rows(hudi_rs_read(path), COLS) == ours, "hudi-rs disagrees with our reader"
    return ours


def completed(path):
    return [(i.timestamp, i.action) for i in HoodieTable.load(str(path)).timeline.completed_writes()]


def staged(path):
    """What staging left in the table's temp folder."""
    return [f.path for f in Storage(str(path)).list(".hoodie/.temp", recursive=True) if "dataframe-write-" in f.path]


# Each step through df.write to one table and through api.write to another.
STEPS = [
    ("insert", [("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1), ("john", "pineapple", "eu", 1)], {}),
    ("upsert", [("jack", "banana", "eu", 2), ("mia", "kiwi", "us", 1)], {}),
    ("insert", [("zoe", "fig", "eu", 1), ("zoe", "date", "eu", 2)], {}),
    ("delete", [("john", "pineapple", "eu", 3)], {}),
    ("insert_overwrite", [("max", "plum", "us", 5)], {}),
    ("bulk_insert", [("ann", "pear", "asia", 1), ("bob", "lime", "asia", 1)], {}),
    ("delete_partition", [], {"hoodie.datasource.write.partitions.to.delete": "asia"}),
]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_operation_writes_what_api_write_writes(spark, tmp_path, table_type, write_plane):
    """Both planes: the engine runs the staged write in this process or as Spark stages (mapInArrow
    tasks launched while Spark's own write job waits for its commit)."""
    ours, theirs = tmp_path / "df_write", tmp_path / "api_write"
    for operation, data, extra in STEPS:
        options = op(operation, **{"hoodie.datasource.write.table.type": table_type}, **extra)
        frame = spark.createDataFrame(data, FRUIT_SCHEMA)
        df_write(frame, ours, options)
        write(frame, str(theirs), options)
        assert snapshot(spark, ours) == snapshot(spark, theirs), operation
        assert staged(ours) == []
    assert snapshot(spark, ours) == [("jack", "banana", "eu"), ("max", "plum", "us"), ("zoe", "date", "eu"),
                                     ("zoe", "fig", "eu")]
    assert [a for _, a in completed(ours)] == [a for _, a in completed(theirs)]
    assert read_properties_text((ours / ".hoodie/hoodie.properties").read_text()) == \
        read_properties_text((theirs / ".hoodie/hoodie.properties").read_text())


def test_nested_decimal_and_timestamp_columns_survive(spark, tmp_path):
    frame = spark.sql("""
        SELECT CAST(id AS STRING) AS id, CAST(id % 2 AS STRING) AS p, id AS ts,
               CAST(id * 1000.1234 AS DECIMAL(20,4)) AS amount,
               TIMESTAMP'2024-03-01 12:34:56.789012' + make_interval(0, 0, 0, 0, 0, 0, id) AS at,
               DATE'2024-02-29' + CAST(id AS INT) AS day,
               named_struct('city', concat('c', id), 'geo', named_struct('lat', id * 1.5, 'lon', -id * 1.0),
                            'tags', array('a', CAST(id AS STRING))) AS address,
               map('x', CAST(id AS INT)) AS scores,
               array(named_struct('at', TIMESTAMP'2020-01-01 00:00:00', 'amount', CAST(id AS DECIMAL(10,2)))) AS history
        FROM range(5)""")
    options = {"hoodie.table.name": "typed", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}
    df_write(frame, tmp_path / "ours", options)
    write(frame, str(tmp_path / "theirs"), options)
    data_cols = frame.columns
    ours = read(spark, str(tmp_path / "ours")).select(*data_cols)
    assert ours.schema == read(spark, str(tmp_path / "theirs")).select(*data_cols).schema
    assert sorted(ours.collect()) == sorted(frame.collect())
    first = min(hudi_rs_read(tmp_path / "ours").select(data_cols).to_pylist(), key=lambda r: r["id"])
    assert first["amount"] == Decimal("0.0000") and first["address"]["geo"] == {"lat": 0.0, "lon": -0.0}
    assert first["at"].replace(tzinfo=None).isoformat() == "2024-03-01T12:34:56.789012"
    assert first["history"][0]["amount"] == Decimal("0.00")
    created = json.loads(read_properties_text(
        (tmp_path / "ours/.hoodie/hoodie.properties").read_text())["hoodie.table.create.schema"])
    theirs = json.loads(read_properties_text(
        (tmp_path / "theirs/.hoodie/hoodie.properties").read_text())["hoodie.table.create.schema"])
    assert created == theirs, "df.write changed the table schema (nullability, logical types)"


def test_overwrite_mode_deletes_an_existing_table_and_writes_a_new_one(spark, tmp_path):
    """Hudi's SaveMode.Overwrite: the base path goes; the new write's settings need not match."""
    df_write(spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)], FRUIT_SCHEMA),
             tmp_path, op("insert"))
    df_write(spark.createDataFrame([("jack", "banana", "eu", 2)], FRUIT_SCHEMA), tmp_path, op("upsert"))
    other_layout = op("upsert", **{"hoodie.datasource.write.partitionpath.field": "fruit",
                                   "hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    df_write(spark.createDataFrame([("tom", "fig", "asia", 1)], FRUIT_SCHEMA), tmp_path, other_layout, "overwrite")
    assert snapshot(spark, tmp_path) == [("tom", "fig", "asia")]
    [(_, action)] = completed(tmp_path)
    assert action == "deltacommit"
    table = HoodieTable.load(str(tmp_path))
    assert table.table_type == "MERGE_ON_READ" and table.props["hoodie.table.partition.fields"] == "fruit"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hoodie", "fig"]
    assert staged(tmp_path) == []


def test_overwrite_mode_with_insert_overwrite_table_keeps_the_timeline(spark, tmp_path):
    first = spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)], FRUIT_SCHEMA)
    df_write(first, tmp_path, op("insert"))
    [(c1, _)] = completed(tmp_path)
    df_write(spark.createDataFrame([("tom", "fig", "asia", 1)], FRUIT_SCHEMA), tmp_path,
             op("insert_overwrite_table"), "overwrite")
    assert snapshot(spark, tmp_path) == [("tom", "fig", "asia")]
    assert [a for _, a in completed(tmp_path)] == ["commit", "replacecommit"]
    travelled = read(spark, str(tmp_path), {"as.of.instant": c1}).select(*COLS).collect()
    assert sorted(tuple(r) for r in travelled) == [("jack", "apple", "eu"), ("sarah", "orange", "us")]


def test_overwrite_mode_creates_a_new_table(spark, tmp_path):
    df_write(spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA), tmp_path / "new", op("upsert"),
             "overwrite")
    assert snapshot(spark, tmp_path / "new") == [("jack", "apple", "eu")]


def test_refused_writes_name_the_option_and_leave_the_table_as_it_was(spark, tmp_path):
    frame = spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA)
    df_write(frame, tmp_path, op("insert"))
    before, timeline = snapshot(spark, tmp_path), completed(tmp_path)
    refused = {
        "hoodie.datasource.write.operation='upsertt' is not valid": (frame, op("upsertt"), "append"),
        'Append is the only save mode applicable for the delete operation: write .mode("append")':
            (frame, op("delete"), "overwrite"),
        "hoodie.table.recordkey.fields='fruit' does not match the table's 'name'":
            (frame, op("upsert", **{"hoodie.datasource.write.recordkey.field": "fruit"}), "append"),
        "hoodie table with name fruit already exists at": (frame, op("upsert", **{"hoodie.table.name": "veg"}),
                                                          "append"),
        "field 'name' (a record key or partition field) is not in the input": (frame.drop("name"), op("upsert"),
                                                                              "append"),
        # Refused inside the write's transaction, which rolls back.
        "Record key field 'name' is null or empty": (spark.createDataFrame([(None, "fig", "eu", 2)], FRUIT_SCHEMA),
                                                     op("upsert"), "append"),
    }
    for message, (data, options, mode) in refused.items():
        with pytest.raises(AnalysisException) as failure:
            df_write(data, tmp_path, options, mode)
        text = str(failure.value)
        assert message in text and "hudi_engine.errors.Hoodie" in text, text
        assert text.count("File ") <= 3, f"a buried traceback: {text}"
        assert snapshot(spark, tmp_path) == before and completed(tmp_path) == timeline
        assert staged(tmp_path) == []


def test_a_new_table_without_a_record_key_is_refused_and_leaves_nothing(spark, tmp_path):
    options = {k: v for k, v in FRUIT_OPTIONS.items() if k != "hoodie.datasource.write.recordkey.field"}
    with pytest.raises(AnalysisException, match="hoodie.datasource.write.recordkey.field"):
        df_write(spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA), tmp_path / "t", options)
    assert not (tmp_path / "t" / ".hoodie").exists()


def test_a_failed_task_leaves_no_staged_rows(spark, tmp_path):
    df_write(spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA), tmp_path / "t", op("insert"))
    before = snapshot(spark, tmp_path / "t")

    @F.udf("string")
    def fail_on_k42(name):
        if name == "k42":
            raise ValueError("boom in a task")
        return name

    frame = (spark.range(0, 100, numPartitions=4).select(F.concat(F.lit("k"), F.col("id")).alias("name"))
             .select(fail_on_k42("name").alias("name"), F.lit("x").alias("fruit"), F.lit("eu").alias("region"),
                     F.lit(1).cast("long").alias("ts")))
    for path in (tmp_path / "t", tmp_path / "new"):
        with pytest.raises(Exception, match="boom in a task"):
            df_write(frame, path, op("upsert"))
    assert snapshot(spark, tmp_path / "t") == before and staged(tmp_path / "t") == []
    assert not (tmp_path / "new" / ".hoodie").exists()


def test_spark_refuses_other_save_modes_and_partition_by(spark, tmp_path):
    """Spark's own refusals, before the source sees the write: the README tells users what to write."""
    writer = spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA).write.format("hudi") \
        .options(**op("upsert"))
    for mode, shown in ((None, "ErrorIfExists"), ("errorifexists", "ErrorIfExists"), ("ignore", "Ignore")):
        with pytest.raises(AnalysisException) as failure:
            (writer.mode(mode) if mode else writer).save(str(tmp_path))
        assert f'cannot be written in the "{shown}" mode. Please use either the "Append" or "Overwrite" mode' \
            in str(failure.value)
    with pytest.raises(Exception, match="partitioning or clustering columns do not match"):
        writer.mode("append").partitionBy("region").save(str(tmp_path))
    assert not tmp_path.joinpath(".hoodie").exists()


def test_staged_rows_on_object_storage(spark, base_path):
    """The staging folder lives on the table's own storage (S3 here: the session's
    ``spark.hadoop.fs.s3a.*`` settings, re-registered, reach the tasks and the driver)."""
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    df_write(spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)], FRUIT_SCHEMA),
             base_path, op("insert", **mor))
    df_write(spark.createDataFrame([("jack", "banana", "eu", 2)], FRUIT_SCHEMA), base_path, op("upsert", **mor))
    assert snapshot(spark, base_path) == [("jack", "banana", "eu"), ("sarah", "orange", "us")]
    assert staged(base_path) == []


def test_writes_from_threads_of_your_own(spark, tmp_path):
    """Several threads write at once, each after ``register(spark)`` in it (Spark 4.1 finds a Python
    data source for df.write only in the thread's active session); their commits are handed to
    this process together."""
    failures = []

    def writes(path):
        try:
            register(spark)
            for ts in (1, 2):
                frame = spark.createDataFrame([("jack", f"apple{ts}", "eu", ts), ("sarah", "orange", "us", 1)],
                                              FRUIT_SCHEMA)
                df_write(frame, path, op("upsert"))
        except Exception as e:
            failures.append(e)

    paths = [tmp_path / f"t{i}" for i in range(3)]
    threads = [threading.Thread(target=writes, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for path in paths:
        assert snapshot(spark, path) == [("jack", "apple2", "eu"), ("sarah", "orange", "us")]
        assert len(completed(path)) == 2


USERS_OWN_SESSION = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    from hudi_engine import read
    from hudi_engine.spark import register
    path = sys.argv[1]
    spark = (SparkSession.builder.master("local[2]").appName("users-own-session")
             .config("spark.ui.enabled", "false").getOrCreate())
    register(spark)
    options = json.loads(sys.argv[2])
    frame = spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)],
                                  "name string, fruit string, region string, ts long")
    frame.write.format("hudi").options(**options).mode("append").save(path)
    spark.createDataFrame([("jack", "banana", "eu", 2)], frame.schema).write.format("hudi") \\
        .options(**options).mode("append").save(path)
    got = sorted(tuple(r) for r in spark.read.format("hudi").load(path).select("name", "fruit").collect())
    print("RESULT " + json.dumps(got))
""")


def test_a_users_own_session_after_register(tmp_path):
    """A plain ``SparkSession.builder`` session (its own JVM, none of local_spark's settings) writes
    once ``hudi_engine.spark.register(spark)`` ran in it."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    result = subprocess.run([sys.executable, "-c", USERS_OWN_SESSION, str(tmp_path / "t"), json.dumps(FRUIT_OPTIONS)],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    [line] = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert json.loads(line[len("RESULT "):]) == [["jack", "banana"], ["sarah", "orange"]]
    assert rows(hudi_rs_read(tmp_path / "t"), ["name", "fruit"]) == [("jack", "banana"), ("sarah", "orange")]
