"""Hive sync against a real Hive Metastore (2.3, from pyspark's jars): tables, columns, partitions
and locations as the metastore reports them over thrift, and a separate Spark session reading the
metastore. Tables are written by this engine or by real Apache Hudi (fixtures)."""
import argparse
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest
from pyarrow.fs import FileSelector
from pymetastore.hive_metastore.ttypes import FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table

from hudi_engine import read, write
from hudi_engine.sync import (HiveSyncError, MetastoreUnavailableError, TableOwnershipError, sync_after_commit,
                              sync_hive)
from hudi_engine.table.meta_client import HoodieTable
from hudictl import hive_sync as hive_sync_cli
from tests.conftest import configure_session, unzip_fixture
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.metastore import S3A_BUCKET, thrift
from tests.support.services import free_port

pytestmark = pytest.mark.spark      # the metastore runs on the JVM too
ROOT = Path(__file__).resolve().parents[2]
HUDI_INPUT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
HUDI_RT_INPUT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
META_COLS = [("_hoodie_commit_time", "string"), ("_hoodie_commit_seqno", "string"),
             ("_hoodie_record_key", "string"), ("_hoodie_partition_path", "string"),
             ("_hoodie_file_name", "string")]


@pytest.fixture
def db():
    return f"db_{uuid.uuid4().hex[:8]}"


def options(metastore, db, **extra):
    return {"hoodie.datasource.hive_sync.metastore.uris": metastore.uri,
            "hoodie.datasource.hive_sync.database": db, **extra}


def get_table(metastore, db, name) -> Table:
    with thrift(metastore) as c:
        return c.get_table(db, name)


def partitions(metastore, db, name) -> dict[tuple, Partition]:
    with thrift(metastore) as c:
        return {tuple(p.values): p for p in c.get_partitions(db, name, -1)}


def locations(metastore, db, name) -> dict[tuple, str]:
    return {v: p.sd.location for v, p in partitions(metastore, db, name).items()}


def columns(sd: StorageDescriptor) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in sd.cols]


def fixture_table(tmp_path, name) -> Path:
    return unzip_fixture(name, tmp_path)


def hide_commit(base: Path, instant_file: str) -> bytes:
    """The completed instant file disappears: the write looks in flight to readers."""
    path = base / ".hoodie" / instant_file
    content = path.read_bytes()
    path.unlink()
    return content


def complete_commit(base: Path, instant_file: str, content: bytes) -> None:
    """The write completes now (a fresh file, so its completion time is now)."""
    (base / ".hoodie" / instant_file).write_bytes(content)


# --- a table written by this engine, followed commit by commit --------------------------------------
def fruit(spark, data, schema=FRUIT_SCHEMA):
    return spark.createDataFrame(data, schema)


def op(operation, **extra):
    return {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": operation, **extra}


def test_cow_table_follows_the_timeline(metastore, spark_catalog, spark, table_path, db):
    base = f"file://{table_path}"
    c1 = write(fruit(spark, [("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)]), table_path, op("insert"))
    first = sync_hive(table_path, options(metastore, db))
    assert [(t.name, t.created, t.full, t.added) for t in first.tables] == [("fruit", True, True, (("eu",), ("us",)))]
    t = get_table(metastore, db, "fruit")
    assert (t.tableType, t.parameters["EXTERNAL"], t.sd.location) == ("EXTERNAL_TABLE", "TRUE", f"file:{table_path}")
    assert (t.sd.inputFormat, t.sd.outputFormat, t.sd.serdeInfo.serializationLib) == (
        HUDI_INPUT, "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
    assert t.sd.serdeInfo.parameters["path"] == base
    assert t.sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == "false"
    assert columns(t.sd) == META_COLS + [("name", "string"), ("fruit", "string"), ("ts", "bigint")]
    assert [(k.name, k.type) for k in t.partitionKeys] == [("region", "string")]
    assert t.parameters["spark.sql.sources.provider"] == "hudi"
    assert t.parameters["last_commit_time_sync"] == c1
    assert locations(metastore, db, "fruit") == {("eu",): f"file:{table_path}/eu", ("us",): f"file:{table_path}/us"}

    again = sync_hive(table_path, options(metastore, db))
    assert not again.changed
    assert get_table(metastore, db, "fruit").parameters == t.parameters      # not even rewritten

    before = partitions(metastore, db, "fruit")
    with_weight = FRUIT_SCHEMA + ", weight double"           # a new partition and a new column
    write(fruit(spark, [("jack", "banana", "eu", 2, 0.1), ("li", "lychee", "asia", 2, 0.2)], with_weight),
          table_path, op("upsert"))
    grown = sync_hive(table_path, options(metastore, db)).tables[0]
    assert (grown.altered, grown.full, grown.added, grown.updated, grown.dropped) == (
        True, False, (("asia",),), (), ())
    t = get_table(metastore, db, "fruit")
    assert columns(t.sd)[-1] == ("weight", "double")
    after = partitions(metastore, db, "fruit")
    assert after[("eu",)].createTime == before[("eu",)].createTime          # kept, not re-added
    assert all(columns(p.sd) == columns(t.sd) for p in after.values())     # cascaded to old partitions

    last = write(fruit(spark, [], with_weight), table_path,
                 op("delete_partition", **{"hoodie.datasource.write.partitions.to.delete": "us"}))
    shrunk = sync_hive(table_path, options(metastore, db)).tables[0]
    assert (shrunk.altered, shrunk.added, shrunk.dropped) == (False, (), (("us",),))
    assert set(partitions(metastore, db, "fruit")) == {("eu",), ("asia",)}
    t = get_table(metastore, db, "fruit")
    assert t.parameters["last_commit_time_sync"] == last
    assert t.parameters["last_commit_completion_time_sync"] >= last

    described = spark_catalog(db, "fruit")
    assert described["tables"] == ["fruit"]
    assert described["columns"] == [c for c in META_COLS] + [
        ("name", "string"), ("fruit", "string"), ("ts", "bigint"), ("weight", "double"), ("region", "string")]
    assert described["catalog"] == {"provider": "hudi", "type": "EXTERNAL", "partitionColumns": ["region"],
                                    "location": base}
    # queried by name in a Hive-enabled session: Hudi's SQL (sql/router.py) reads it through read()
    assert described["rows"] == sorted(list(r) for r in read(spark, table_path).select("name", "fruit", "region").collect())


SPARK_DESCRIBE = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    from hudi_engine.spark import register
    uri, warehouse = sys.argv[1:]
    spark = (SparkSession.builder.master("local[1]").appName("describe")
             .config("spark.sql.catalogImplementation", "hive").config("spark.hadoop.hive.metastore.uris", uri)
             .config("spark.sql.warehouse.dir", warehouse).config("spark.ui.enabled", "false").getOrCreate())
    register(spark)   # the platform's "hudi" provider, as every session made by hudi_engine.spark has it
    db, table = sys.stdin.readline().split()
    tables = [r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect()]
    rows = spark.sql(f"DESCRIBE TABLE {db}.{table}").collect()
    described = [(r.col_name, r.data_type) for r in rows if r.col_name and not r.col_name.startswith("#")]
    jvm = spark._jvm
    meta = spark._jsparkSession.sessionState().catalog().getTableMetadata(
        jvm.org.apache.spark.sql.catalyst.TableIdentifier.apply(table, jvm.scala.Option.apply(db)))
    catalog = {"provider": meta.provider().get(), "type": meta.tableType().name(),
               "partitionColumns": list(meta.partitionColumnNames().mkString(",").split(",")),
               "location": meta.location().toString()}
    by_name = sorted(list(r) for r in spark.sql(f"SELECT name, fruit, region FROM {db}.{table}").collect())
    print("RESULT " + json.dumps({"tables": tables, "columns": described, "catalog": catalog, "rows": by_name}))
""")


@pytest.fixture
def spark_catalog(metastore, tmp_path):
    """A separate Spark session (its own JVM) with the metastore as its catalog. It starts now and
    waits for a table to describe, so its startup overlaps the test's writes."""
    script = tmp_path / "describe.py"
    script.write_text(SPARK_DESCRIBE)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'platform'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    log = tmp_path / "describe.log"
    with open(log, "w") as err:
        process = subprocess.Popen([sys.executable, str(script), metastore.address, str(tmp_path / "warehouse")],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                                   cwd=tmp_path, env=env)

    def describe(db, table) -> dict:
        out, _ = process.communicate(f"{db} {table}\n", timeout=300)
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        assert process.returncode == 0 and lines, log.read_text()[-3000:]
        result = json.loads(lines[0][len("RESULT "):])
        return {**result, "columns": [tuple(c) for c in result["columns"]]}

    yield describe
    if process.poll() is None:
        process.kill()
        process.wait()


# --- tables written by real Apache Hudi -------------------------------------------------------------
def test_hudi_1x_table_types_partitions_and_completion_time(tmp_path, metastore, db):
    base = fixture_table(tmp_path, "sample_table/cow/v8_complexkeygen_hivestyle.zip")
    sync_hive(str(base), options(metastore, db))
    t = get_table(metastore, db, "v8_complexkeygen_hivestyle")
    assert columns(t.sd) == META_COLS + [
        ("id", "int"), ("name", "string"), ("isactive", "boolean"), ("intfield", "int"), ("longfield", "bigint"),
        ("floatfield", "float"), ("doublefield", "double"), ("decimalfield", "decimal(10,5)"), ("datefield", "date"),
        ("timestampfield", "bigint"), ("binaryfield", "binary"),
        ("arrayfield", "array<struct<arr_struct_f1:string,arr_struct_f2:int>>"),
        ("mapfield", "map<string,struct<map_field_value_struct_f1:double,map_field_value_struct_f2:boolean>>"),
        ("structfield", "struct<field1:string,field2:int,child_struct:struct<child_field1:double,child_field2:boolean>>")]
    assert [(k.name, k.type) for k in t.partitionKeys] == [("bytefield", "int"), ("shortfield", "int")]
    assert locations(metastore, db, "v8_complexkeygen_hivestyle") == {
        (b, s): f"file:{base}/byteField={b}/shortField={s}" for b, s in [("10", "300"), ("20", "100"), ("30", "100")]}
    assert t.parameters["last_commit_time_sync"] == "20250713010142013"
    assert t.parameters["last_commit_completion_time_sync"] == "20250713010142784"   # from the 1.x timeline


def test_merge_on_read_registers_read_optimized_and_realtime_tables(tmp_path, metastore, db):
    base = fixture_table(tmp_path, "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip")
    result = sync_hive(str(base), options(metastore, db))
    assert [t.name for t in result.tables] == ["v6_trips_8i1u_ro", "v6_trips_8i1u_rt"]
    ro, rt = (get_table(metastore, db, f"v6_trips_8i1u_{s}") for s in ("ro", "rt"))
    assert (ro.sd.inputFormat, ro.sd.serdeInfo.parameters["hoodie.query.as.ro.table"]) == (HUDI_INPUT, "true")
    assert (rt.sd.inputFormat, rt.sd.serdeInfo.parameters["hoodie.query.as.ro.table"]) == (HUDI_RT_INPUT, "false")
    cities = {("chennai",), ("san_francisco",), ("sao_paulo",)}
    assert set(partitions(metastore, db, "v6_trips_8i1u_ro")) == set(partitions(metastore, db, "v6_trips_8i1u_rt")) == cities

    sync_hive(str(base), options(metastore, db, **{"hoodie.datasource.hive_sync.skip_ro_suffix": "true",
                                                   "hoodie.datasource.hive_sync.table": "trips"}))
    with thrift(metastore) as c:
        assert sorted(c.get_all_tables(db)) == ["trips", "trips_rt", "v6_trips_8i1u_ro", "v6_trips_8i1u_rt"]
    assert get_table(metastore, db, "trips").sd.inputFormat == HUDI_INPUT


def test_insert_overwrite_table_drops_the_replaced_partitions(tmp_path, metastore, db):
    base = fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable.zip")
    overwrite = hide_commit(base, "20240707001303088.replacecommit")
    sync_hive(str(base), options(metastore, db))
    assert set(partitions(metastore, db, "v6_simplekeygen_nonhivestyle_overwritetable")) == {("10",), ("20",), ("30",)}
    complete_commit(base, "20240707001303088.replacecommit", overwrite)
    result = sync_hive(str(base), options(metastore, db)).tables[0]
    assert (result.full, result.dropped) == (False, (("10",), ("20",)))
    assert set(partitions(metastore, db, "v6_simplekeygen_nonhivestyle_overwritetable")) == {("30",)}


def test_commit_completing_after_a_later_one_was_synced_is_not_missed(tmp_path, metastore, db):
    """Two writers: the older commit (partitions 10, 20) completes after the newer one (30, 10)
    was synced. Only completed instants are read, and the late one is found by completion time."""
    base = fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle.zip")
    name = "v6_simplekeygen_nonhivestyle"
    late = hide_commit(base, "20240418172802262.commit")
    sync_hive(str(base), options(metastore, db))
    assert set(partitions(metastore, db, name)) == {("10",), ("30",)}
    assert get_table(metastore, db, name).parameters["last_commit_time_sync"] == "20240418172804498"
    complete_commit(base, "20240418172802262.commit", late)
    result = sync_hive(str(base), options(metastore, db)).tables[0]
    assert (result.full, result.added) == (False, (("20",),))


def test_full_partition_sync_repairs_what_incremental_cannot_see(tmp_path, metastore, db):
    base = fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle.zip")
    name = "v6_simplekeygen_nonhivestyle"
    sync_hive(str(base), options(metastore, db))
    with thrift(metastore) as c:                 # someone edits the metastore by hand
        c.drop_partition(db, name, ["20"], False)
        bogus = c.get_partitions(db, name, -1)[0]
        bogus.values, bogus.sd.location = ["99"], f"file:{base}/99"
        c.add_partition(bogus)
    assert not sync_hive(str(base), options(metastore, db)).changed       # no new commit: nothing to do
    repaired = sync_hive(str(base), options(metastore, db, **{"hoodie.meta.sync.incremental": "false"})).tables[0]
    assert (repaired.full, repaired.added, repaired.dropped) == (True, (("20",),), (("99",),))
    assert set(partitions(metastore, db, name)) == {("10",), ("20",), ("30",)}


def test_table_owned_by_someone_else_is_refused_unless_taken_over(tmp_path, metastore, db):
    base = fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle.zip")
    name = "v6_simplekeygen_nonhivestyle"
    sync_hive(str(base), options(metastore, db, **{"hoodie.datasource.hive_sync.table": "warmup"}))  # makes the db
    text = Table(tableName=name, dbName=db, owner="someone", sd=StorageDescriptor(
        cols=[FieldSchema("line", "string", None)], location=f"file:{tmp_path}/elsewhere",
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=SerDeInfo(None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}), bucketCols=[],
        sortCols=[], parameters={}), partitionKeys=[FieldSchema("bytefield", "int", None)],
        parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE")
    with thrift(metastore) as c:
        c.create_table(text)
    with pytest.raises(TableOwnershipError) as err:
        sync_hive(str(base), options(metastore, db))
    assert f"{db}.{name}" in str(err.value) and "TextInputFormat" in str(err.value) and "--take-over" in str(err.value)
    assert get_table(metastore, db, name).sd.inputFormat == "org.apache.hadoop.mapred.TextInputFormat"
    assert partitions(metastore, db, name) == {}

    sync_hive(str(base), options(metastore, db), take_over=True)
    t = get_table(metastore, db, name)
    assert (t.sd.inputFormat, t.sd.location, t.owner) == (HUDI_INPUT, f"file:{base}", "someone")
    assert set(partitions(metastore, db, name)) == {("10",), ("20",), ("30",)}


def test_unreachable_metastore_names_the_uri_and_what_to_check(tmp_path):
    base = fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle.zip")
    uri = f"thrift://127.0.0.1:{free_port()}"
    with pytest.raises(MetastoreUnavailableError) as err:
        sync_hive(str(base), {"hoodie.datasource.hive_sync.metastore.uris": uri}, retries=2, backoff_seconds=0.05)
    message = str(err.value)
    assert uri in message and "3 times" in message and "running and listening" in message
    assert "hoodie.datasource.hive_sync.metastore.uris" in message


def test_dropped_connection_is_retried_on_the_next_metastore(tmp_path, metastore, db):
    """The first URI accepts connections and drops them (a metastore dying mid-call, played by a
    bare socket); the call is retried on the next URI, the real metastore."""
    base = fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle.zip")
    with socket.socket() as dying:
        dying.bind(("127.0.0.1", 0))
        dying.listen()

        def drop_every_connection():
            while True:
                try:
                    dying.accept()[0].close()
                except OSError:
                    return
        threading.Thread(target=drop_every_connection, daemon=True).start()
        uris = f"thrift://127.0.0.1:{dying.getsockname()[1]},{metastore.uri}"
        sync_hive(str(base), {**options(metastore, db), "hoodie.datasource.hive_sync.metastore.uris": uris},
                  retries=1, backoff_seconds=0.05)
    assert set(partitions(metastore, db, "v6_simplekeygen_nonhivestyle")) == {("10",), ("20",), ("30",)}


def test_table_in_a_bucket_is_registered_at_its_s3a_location(metastore, spark, s3_server, db):
    """A table on the real S3 server, written and synced by its ``s3a://`` spelling: the metastore
    holds s3a:// locations for the table and each partition. (The metastore's own folder checks
    go to a local stand-in for hadoop-aws: see tests/support/metastore.py.)"""
    configure_session(spark, s3_server)
    if S3A_BUCKET not in {b.base_name for b in s3_server.filesystem().get_file_info(FileSelector(""))}:
        s3_server.create_bucket(S3A_BUCKET)
    path = f"s3a://{S3A_BUCKET}/{db}/fruit"
    sync = options(metastore, db, **{"hoodie.datasource.hive_sync.enable": "true"})
    c1 = write(fruit(spark, [("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)]), path, op("insert", **sync))
    t = get_table(metastore, db, "fruit")
    assert (t.sd.location, t.sd.serdeInfo.parameters["path"]) == (path, path)
    assert t.parameters["last_commit_time_sync"] == c1
    assert columns(t.sd) == META_COLS + [("name", "string"), ("fruit", "string"), ("ts", "bigint")]
    assert locations(metastore, db, "fruit") == {("eu",): f"{path}/eu", ("us",): f"{path}/us"}
    c2 = write(fruit(spark, [("li", "lychee", "asia", 2)]), path, op("upsert", **sync))
    assert get_table(metastore, db, "fruit").parameters["last_commit_time_sync"] == c2
    assert locations(metastore, db, "fruit")[("asia",)] == f"{path}/asia"


def test_inline_sync_after_a_commit(tmp_path, metastore, db):
    base = str(fixture_table(tmp_path, "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"))
    assert sync_after_commit(base, options(metastore, db)) is None                  # not enabled
    with thrift(metastore) as c:
        assert db not in c.get_all_databases()
    result = sync_after_commit(base, options(metastore, db, **{"hoodie.datasource.meta.sync.enable": "true"}))
    assert result.synced_instant == HoodieTable.load(base).timeline.completed_writes()[-1].timestamp
    assert set(partitions(metastore, db, "v6_simplekeygen_nonhivestyle")) == {("10",), ("20",), ("30",)}

    broken = {"hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.metastore.uris": "http://hms"}
    with pytest.raises(HiveSyncError, match="succeeded but syncing it to the Hive Metastore failed.*thrift://host:port"):
        sync_after_commit(base, broken)
    assert sync_after_commit(base, {**broken, "hoodie.datasource.hive_sync.ignore_exceptions": "true"}) is None


def test_hudictl_hive_sync(tmp_path, metastore, db, capsys):
    base = fixture_table(tmp_path, "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip")
    parser = argparse.ArgumentParser(prog="hudictl")
    hive_sync_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["hive-sync", "--base-path", str(base), "--metastore-uris", metastore.uri,
                              "--database", db, "--table", "trips", "--skip-ro-suffix", "--sync-mode", "hms",
                              "--hoodie-conf", "hoodie.datasource.hive_sync.table_properties=team=rides"])
    assert args.run(args) == 0
    out = capsys.readouterr().out
    assert f"{db}.trips: table created; partitions +3" in out and f"{db}.trips_rt: table created" in out
    assert get_table(metastore, db, "trips").parameters["team"] == "rides"
    assert args.run(args) == 0 and "table unchanged; partitions +0 ~0 -0 (incremental)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["hive-sync", "--help"])
    assert "hudictl hive-sync --base-path s3://lake/trips" in capsys.readouterr().out
