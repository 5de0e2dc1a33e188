"""Hudi's SQL and ``format("hudi")`` from a Spark Connect client (issue 21): a real Connect server,
``hudictl spark-connect`` started as users start it, in a process of its own, and pyspark's Connect
client in this one. What the client does is read back with our reader (a classic session here) and
with hudi-rs."""
import subprocess
import sys

import pytest
from pyspark.errors.exceptions.connect import SparkConnectGrpcException
from pyspark.sql.connect.session import SparkSession as ConnectSession

from hudi_engine import read
from hudictl.local_process import free_port, stop_group, wait_until
from tests.support.book_sql import commits, walk_the_book
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spark-connect")
    port, log = free_port(), folder / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "hudictl.cli", "spark-connect", "--port", str(port), "--cores", "2",
             "--conf", f"spark.sql.warehouse.dir={folder / 'warehouse'}"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(server, lambda: "Spark Connect with Hudi at" in log.read_text(), "hudictl spark-connect", log,
                   timeout_s=240)
        # the Connect client's own class: pyspark.sql.SparkSession refuses a remote session in a
        # process that runs a classic one (this one's `spark`, which reads back what the client wrote)
        session = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
        yield session
        session.stop()
    finally:
        stop_group(server, timeout_s=60)


def test_the_books_walkthrough_from_a_connect_client(client, spark, tmp_path):
    walk_the_book(client, spark, tmp_path, "mor")


def test_dataframes_procedures_and_refusals_from_a_connect_client(client, spark, tmp_path):
    path = str(tmp_path / "fruit")
    options = {"hoodie.table.name": "fruit", "hoodie.datasource.write.recordkey.field": "name",
               "hoodie.datasource.write.partitionpath.field": "region",
               "hoodie.datasource.write.precombine.field": "ts"}
    schema = "name string, fruit string, region string, ts long"
    client.createDataFrame([("k1", "apple", "eu", 1), ("k2", "pear", "us", 1)], schema) \
        .write.format("hudi").options(**options).mode("overwrite").save(path)
    client.createDataFrame([("k2", "plum", "us", 2), ("k3", "fig", "eu", 1)], schema) \
        .write.format("hudi").options(**options).mode("append").save(path)
    want = [("k1", "apple", "eu"), ("k2", "plum", "us"), ("k3", "fig", "eu")]
    got = client.read.format("hudi").load(path).select("name", "fruit", "region").collect()
    assert sorted(tuple(r) for r in got) == want
    assert sorted(tuple(r) for r in read(spark, path).select("name", "fruit", "region").collect()) == want
    assert rows(hudi_rs_read(path), ["name", "fruit", "region"]) == want

    client.sql(f"CREATE TABLE fruit USING hudi LOCATION '{path}'")
    try:
        shown = client.sql("CALL show_commits(table => 'fruit')").collect()
        assert sorted(r.commit_time for r in shown) == commits(path)
        # newest first; copy-on-write rewrote both file groups whole: k1 and k3 in eu, k2 in us
        assert [r.total_records_written for r in shown] == [3, 2]
        assert client.sql("CALL create_savepoint(table => 'fruit')").first()[0] is True
        assert [r.savepoint_time for r in client.sql("CALL show_savepoints(table => 'fruit')").collect()] \
            == commits(path)[-1:]
        with pytest.raises(SparkConnectGrpcException, match="no procedure 'show_comits'.*show_commits"):
            client.sql("CALL show_comits(table => 'fruit')").collect()
        with pytest.raises(SparkConnectGrpcException, match="'name', the record key"):
            client.sql("UPDATE fruit SET name = 'k9' WHERE name = 'k1'")
        assert len(commits(path)) == 2, "a refused statement commits nothing"
        client.sql("UPDATE fruit SET fruit = 'quince' WHERE name = 'k1'")
        assert rows(hudi_rs_read(path), ["name", "fruit"])[0] == ("k1", "quince")
    finally:
        client.sql("DROP TABLE IF EXISTS fruit")
