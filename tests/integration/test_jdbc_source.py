"""JdbcSource against a real PostgreSQL 15 (read with psycopg, no driver JAR): full then incremental
pulls, the streamer writing a Hudi table from it and resuming after a restart, read back by our
reader and by hudi-rs. Spark's own JDBC path is run against Derby, the one JDBC driver pyspark
ships; no other driver JAR can be downloaded here, so for any other database only the missing
driver error is tested."""
import uuid
from datetime import date, datetime, timezone
from decimal import Decimal

import psycopg
import pyarrow as pa
import pytest

from hudi_engine.api import read
from hudi_engine.errors import HoodieConfigError
from hudi_engine.table.meta_client import HoodieTable
from hudi_jobs.keys import jdbc as K
from hudi_jobs.sources.jdbc import IncrementalQueryError, JdbcSource
from hudi_jobs.streamer.checkpoint import CHECKPOINT_KEY
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer
from tests.support.hudi_rs import hudi_rs_read
from tests.support.postgres import start_postgres

pytestmark = pytest.mark.spark
DERBY_DRIVER = "org.apache.derby.jdbc.EmbeddedDriver"


@pytest.fixture(scope="module")
def pg():
    server = start_postgres()
    try:
        server.psql("postgres", "CREATE DATABASE shop")
        yield server
    finally:
        server.stop()


def source(pg, table, **props):
    return JdbcSource({K.URL.key: "jdbc:" + pg.url("shop"), K.TABLE_NAME.key: table, K.IS_INCREMENTAL.key: "true",
                       K.INCREMENTAL_COLUMN.key: "seq", **props})


def rows(batch):
    return sorted(batch.data.toArrow().to_pylist(), key=lambda r: r["id"])


def test_first_run_reads_everything_then_only_new_rows(spark, pg):
    pg.psql("shop", """
        CREATE TABLE events (id int PRIMARY KEY, seq bigint, amount numeric(10,2), paid boolean, note text,
            day date, at timestamp, at_tz timestamptz, payload bytea, ref uuid, extra jsonb, ratio float8, tiny int2);
        INSERT INTO events VALUES
            (1, 1, 12.50, true, 'tab\there', '2024-02-29', '2024-03-01 10:00:00.123456',
             '2024-03-01 10:00:00+02', '\\x00ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": [1, 2]}', 0.1, 7),
            (2, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
            (3, 2, 1, false, '', '1999-12-31', NULL, NULL, '\\x', NULL, 'null', -1e300, -32768),
            (4, NULL, 0, NULL, 'no seq yet', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""")
    events = source(pg, "events", **{K.EXTRA_OPTIONS_PREFIX + "fetchsize": "2"})   # several Arrow batches

    first = events.fetch(spark, None, 0)
    assert first.checkpoint == "2"
    got = rows(first)
    assert [r["id"] for r in got] == [1, 2, 3, 4]               # a full fetch has the rows without a seq
    assert got[0] == {"id": 1, "seq": 1, "amount": Decimal("12.50"), "paid": True, "note": "tab\there",
                      "day": date(2024, 2, 29), "at": datetime(2024, 3, 1, 10, 0, 0, 123456, tzinfo=timezone.utc),
                      "at_tz": datetime(2024, 3, 1, 8, tzinfo=timezone.utc), "payload": b"\x00\xff",
                      "ref": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "extra": '{"k": [1, 2]}', "ratio": 0.1,
                      "tiny": 7}
    assert got[2]["payload"] == b"" and got[2]["extra"] == "null" and got[2]["ratio"] == -1e300
    assert set(got[1].values()) == {2, None}

    pg.psql("shop", "INSERT INTO events (id, seq) VALUES (5, 3), (6, 4), (7, 4), (8, 5)")
    capped = events.fetch(spark, first.checkpoint, 2)           # seq 3 and 4, and the other row of seq 4
    assert ([r["id"] for r in rows(capped)], capped.checkpoint) == ([5, 6, 7], "4")
    rest = events.fetch(spark, capped.checkpoint, 0)
    assert ([r["id"] for r in rows(rest)], rest.checkpoint) == ([8], "5")
    idle = events.fetch(spark, rest.checkpoint, 0)
    assert (idle.data, idle.checkpoint) == (None, "5")

    snapshot = source(pg, "events", **{K.IS_INCREMENTAL.key: "false"}).fetch(spark, "5", 0)
    assert (len(rows(snapshot)), snapshot.checkpoint) == (8, "")    # no incremental pull: all rows, every run


def test_a_checkpoint_the_column_cannot_take_fails_or_falls_back_to_a_full_fetch(spark, pg):
    pg.psql("shop", "CREATE TABLE points (id int PRIMARY KEY, seq int); INSERT INTO points VALUES (1, 10), (2, 20)")
    with pytest.raises(IncrementalQueryError, match=K.FALLBACK_TO_FULL_FETCH.key.replace(".", r"\.")):
        source(pg, "points").fetch(spark, "yesterday", 0)
    batch = source(pg, "points", **{K.FALLBACK_TO_FULL_FETCH.key: "true"}).fetch(spark, "yesterday", 0)
    assert ([r["id"] for r in rows(batch)], batch.checkpoint) == ([1, 2], "20")


def test_missing_table_and_unknown_column_are_named(spark, pg):
    pg.psql("shop", "CREATE TABLE shop_items (id int, updated_at timestamptz)")
    with pytest.raises(HoodieConfigError, match=r"table\.name=nowhere: no such table"):
        source(pg, "nowhere").fetch(spark, None, 0)
    with pytest.raises(HoodieConfigError, match=r"seq: shop_items has no such column; its columns: id, updated_at"):
        source(pg, "public.shop_items").fetch(spark, None, 0)
    with pytest.raises(HoodieConfigError, match="refused the login|does not exist"):
        JdbcSource({K.URL.key: pg.url("shop"), K.USER.key: "nobody", K.TABLE_NAME.key: "shop_items",
                    K.IS_INCREMENTAL.key: "false"}).fetch(spark, None, 0)


# --- the streamer end to end ----------------------------------------------------------------------

def streamer_argv(pg, target, *extra):
    return ["--target-base-path", str(target), "--target-table", "customers",
            "--source-class", "org.apache.hudi.utilities.sources.JdbcSource", "--source-ordering-field", "updated_at",
            "--hoodie-conf", f"hoodie.deltastreamer.jdbc.url=jdbc:{pg.url('shop')}",
            "--hoodie-conf", "hoodie.streamer.jdbc.table.name=customers",
            "--hoodie-conf", "hoodie.streamer.jdbc.incr.pull=true",
            "--hoodie-conf", "hoodie.streamer.jdbc.table.incr.column.name=updated_at",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id", *extra]


def run_until_idle(spark, argv):
    """Rounds of a freshly started streamer (a restart) until one finds nothing new; the records
    each round wrote."""
    streamer = Streamer(spark, build_config(argv))
    try:
        written = []
        while (result := streamer.sync_once()).instant is not None:
            written.append(result.records_written)
        return written
    finally:
        streamer.close()


def as_rows(table: pa.Table) -> list[tuple]:
    """(id, name, balance, updated_at in microseconds) sorted, from any reader's Arrow table."""
    columns = ["id", "name", "balance", "updated_at"]
    table = table.select(columns)
    table = table.set_column(3, "updated_at", table["updated_at"].cast(pa.timestamp("us", "UTC")).cast(pa.int64()))
    return sorted(tuple(r.values()) for r in table.to_pylist())


def postgres_rows(pg) -> list[tuple]:
    with psycopg.connect(pg.url("shop")) as conn:
        return sorted(conn.execute("SELECT id, name, balance, (extract(epoch FROM updated_at) * 1000000)::bigint "
                                   "FROM customers").fetchall())


def stored_checkpoint(path):
    table = HoodieTable.load(str(path))
    return table.timeline.commit_metadata(table.timeline.last_completed_write())["extraMetadata"][CHECKPOINT_KEY]


def test_streamer_pulls_a_table_into_hudi_and_resumes_after_a_restart(spark, pg, tmp_path):
    pg.psql("shop", """
        CREATE TABLE customers (id int PRIMARY KEY, name text, balance numeric(12,2), updated_at timestamptz);
        INSERT INTO customers SELECT i, 'c' || i, i * 1.25, timestamptz '2024-05-01 00:00:00+00' + i * interval '1 s'
        FROM generate_series(1, 5) i""")
    target = tmp_path / "customers"
    argv = streamer_argv(pg, target, "--source-limit", "3")

    assert run_until_idle(spark, argv) == [3, 2]
    assert stored_checkpoint(target) == "2024-05-01 00:00:05+00"

    pg.psql("shop", """
        UPDATE customers SET balance = 99.99, updated_at = timestamptz '2024-05-02 00:00:00+00' WHERE id = 2;
        INSERT INTO customers VALUES (6, 'c6', 6.00, '2024-05-02 00:00:01+00'), (7, 'c7', 7.00, '2024-05-02 00:00:02+00')""")
    assert run_until_idle(spark, argv) == [3]                  # only what changed since the checkpoint

    expected = postgres_rows(pg)
    assert len(expected) == 7 and (2, "c2", Decimal("99.99"), expected[1][3]) == expected[1]
    assert as_rows(read(spark, str(target)).toArrow()) == expected
    assert as_rows(hudi_rs_read(target)) == expected


# --- any other database: Spark's JDBC reader ------------------------------------------------------

def derby(spark, url, *statements):
    """Runs SQL on an embedded Derby database through the JVM's JDBC, with no Spark job."""
    conn = spark._jvm.org.apache.derby.jdbc.EmbeddedDriver().connect(url, spark._jvm.java.util.Properties())
    try:
        for statement in statements:
            conn.createStatement().executeUpdate(statement)
    finally:
        conn.close()


def test_spark_jdbc_path_reads_derby_and_names_a_missing_driver(spark):
    """Derby (embedded, in memory) is the JDBC driver pyspark ships; with it the generic path runs
    for real: Hudi's queries, the checkpoint from the rows, and the fallback when Derby refuses to
    compare an INTEGER column with the checkpoint's text."""
    url = f"jdbc:derby:memory:shop_{uuid.uuid4().hex};create=true"
    derby(spark, url, "CREATE TABLE ORDERS (ID INT, UPDATED TIMESTAMP)",
          "INSERT INTO ORDERS VALUES (1, '2024-01-01 00:00:01'), (2, '2024-01-01 00:00:02')")
    props = {K.URL.key: url, K.DRIVER_CLASS.key: DERBY_DRIVER, K.TABLE_NAME.key: "ORDERS",
             K.IS_INCREMENTAL.key: "true", K.INCREMENTAL_COLUMN.key: "UPDATED"}

    first = JdbcSource(props).fetch(spark, None, 0)
    assert (first.data.count(), first.checkpoint) == (2, "2024-01-01 00:00:02")
    derby(spark, url, "INSERT INTO ORDERS VALUES (3, '2024-01-01 00:00:03')")
    new = JdbcSource(props).fetch(spark, first.checkpoint, 0)
    assert ([r.ID for r in new.data.collect()], new.checkpoint) == ([3], "2024-01-01 00:00:03")

    by_id = {**props, K.INCREMENTAL_COLUMN.key: "ID", K.FALLBACK_TO_FULL_FETCH.key: "true"}
    fallback = JdbcSource(by_id).fetch(spark, "1", 0)
    assert (fallback.data.count(), fallback.checkpoint) == (3, "3")

    mysql = {**props, K.URL.key: "jdbc:mysql://127.0.0.1:1/shop", K.DRIVER_CLASS.key: "com.mysql.cj.jdbc.Driver"}
    with pytest.raises(HoodieConfigError, match=r"driver\.class=com\.mysql\.cj\.jdbc\.Driver: .*spark\.jars"):
        JdbcSource(mysql).fetch(spark, None, 0)
