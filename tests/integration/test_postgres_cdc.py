"""PostgresCdcSource against a real PostgreSQL 15 (logical decoding with pgoutput): the snapshot,
then inserts, updates, deletes and schema changes applied exactly once, also after a batch that
was read but never committed; and the setups it refuses, each with what to do."""
import pytest

from hudi_engine import read
from hudi_engine.errors import HoodieConfigError
from hudi_engine.table.meta_client import HoodieTable
from hudi_jobs.sources.postgres_cdc import PostgresCdcSource
from hudi_jobs.streamer.checkpoint import CHECKPOINT_KEY
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer
from tests.support.hudi_rs import hudi_rs_read
from tests.support.postgres import start_postgres

pytestmark = pytest.mark.spark
COLUMNS = "id, customer, amount, qty, channel"


@pytest.fixture(scope="module")
def pg():
    server = start_postgres(wal_level="logical", max_replication_slots="8")
    yield server
    server.stop()


def argv(tmp_path, pg, database, table, *extra):
    return ["--target-base-path", str(tmp_path / table), "--target-table", table,
            "--table-type", "MERGE_ON_READ", "--source-class", "PostgresCdcSource",
            "--hoodie-conf", f"hoodie.streamer.source.postgres.url={pg.url(database)}",
            "--hoodie-conf", f"hoodie.streamer.source.postgres.table=public.{table}",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id",
            "--hoodie-conf", "hoodie.errortable.enable=true",
            "--hoodie-conf", f"hoodie.errortable.base.path={tmp_path / (table + '_errors')}", *extra]


def sync_until_idle(spark, args):
    streamer = Streamer(spark, build_config(args))
    try:
        results = [streamer.sync_once()]
        while results[-1].instant is not None:
            results.append(streamer.sync_once())
        return results
    finally:
        streamer.close()


def in_postgres(pg, database):
    rows = pg.psql(database, f"SELECT {COLUMNS} FROM orders ORDER BY id").splitlines()
    return [tuple(None if v == "" else v for v in line.split("|")) for line in rows]


def as_text(rows):
    return sorted(tuple(None if v is None else str(v) for v in row) for row in rows)


def test_snapshot_then_changes_in_both_readers_each_exactly_once(spark, tmp_path, pg):
    pg.psql("postgres", "CREATE DATABASE shop")
    pg.psql("shop", "CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2), "
                    "qty int, note bytea)")
    pg.psql("shop", "INSERT INTO orders VALUES (1, 'ann', 10.50, 1, '\\x01'), (2, 'bob', 20, 2, NULL), "
                    "(3, 'cid', 30.25, 3, NULL)")
    args = argv(tmp_path, pg, "shop", "orders")
    assert [r.records_written for r in sync_until_idle(spark, args)] == [3, 0]      # the snapshot

    pg.psql("shop", "BEGIN; INSERT INTO orders VALUES (4, 'dan', 40, 4, NULL); "
                    "UPDATE orders SET amount = 11 WHERE id = 1; UPDATE orders SET amount = 12 WHERE id = 1; "
                    "DELETE FROM orders WHERE id = 2; COMMIT")
    pg.psql("shop", "ALTER TABLE orders ADD COLUMN channel text")
    pg.psql("shop", "INSERT INTO orders VALUES (5, 'eve', 50, 5, NULL, 'app')")
    pg.psql("shop", "ALTER TABLE orders ALTER COLUMN qty TYPE bigint")
    pg.psql("shop", "UPDATE orders SET qty = 5000000000, channel = 'web' WHERE id = 4")

    # A batch read but never committed (the job died before its commit) is read again, not lost.
    source = PostgresCdcSource(build_config(args).props)
    lost = source.fetch(spark, _checkpoint(tmp_path / "orders"), 0)
    assert lost.data.count() == 6

    results = sync_until_idle(spark, args)
    assert [r.records_written for r in results] == [6, 0]
    expected = in_postgres(pg, "shop")
    assert [r[0] for r in expected] == ["1", "3", "4", "5"]
    got = read(spark, str(tmp_path / "orders")).select(*COLUMNS.split(", ")).collect()
    assert as_text(got) == as_text(expected)
    outside = hudi_rs_read(tmp_path / "orders")
    assert as_text(zip(*(outside.column(c).to_pylist() for c in COLUMNS.split(", ")))) == as_text(expected)
    # The idle round moved the slot up to the committed checkpoint: the server holds no WAL before it.
    assert _checkpoint(tmp_path / "orders") == pg.psql(
        "shop", "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'hudi_shop_public_orders'")

    # A TRUNCATE has no rows to apply: it goes to the error table, the Hudi table keeps its rows.
    pg.psql("shop", "TRUNCATE orders")
    sync_until_idle(spark, args)
    errors = read(spark, str(tmp_path / "orders_errors")).collect()
    assert [(e["reason"], e["source_position"].startswith("postgres:public.orders@")) for e in errors] == [
        ("INVALID_RECORD_SCHEMA", True)]
    assert read(spark, str(tmp_path / "orders")).count() == 4


def _checkpoint(base):
    table = HoodieTable.load(str(base))
    return table.timeline.commit_metadata(table.timeline.last_completed_write())["extraMetadata"][CHECKPOINT_KEY]


def _refusal(props, spark, checkpoint=None):
    with pytest.raises(HoodieConfigError) as refused:
        PostgresCdcSource(props).fetch(spark, checkpoint, 0)
    return str(refused.value)


def test_setups_it_cannot_capture_are_refused_with_what_to_do(spark, tmp_path, pg):
    pg.psql("postgres", "CREATE DATABASE plain")
    pg.psql("plain", "CREATE TABLE logs (line text); CREATE TABLE orders (id int PRIMARY KEY, customer text)")
    pg.psql("plain", "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    props = build_config(argv(tmp_path, pg, "plain", "orders")).props
    assert "no primary key" in _refusal({**props, "hoodie.streamer.source.postgres.table": "logs"}, spark)
    assert "does not exist" in _refusal({**props, "hoodie.streamer.source.postgres.table": "nope"}, spark)
    assert "ALTER ROLE reader REPLICATION" in _refusal(
        {**props, "hoodie.streamer.source.postgres.user": "reader"}, spark)
    assert "is not the primary key" in _refusal({**props, "hoodie.datasource.write.recordkey.field": "customer"},
                                                spark)
    # The slot a checkpoint needs was dropped: the changes since are gone, so nothing is written.
    assert PostgresCdcSource(props).fetch(spark, None, 0).checkpoint
    pg.psql("plain", "SELECT pg_drop_replication_slot('hudi_plain_public_orders')")
    assert "no longer exists" in _refusal(props, spark, checkpoint="0/1")

    replica = start_postgres()                                   # wal_level replica: no logical decoding
    try:
        props = build_config(argv(tmp_path, replica, "postgres", "orders")).props
        assert "wal_level=replica" in _refusal(props, spark)
    finally:
        replica.stop()
