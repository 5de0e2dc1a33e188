"""The demo lakehouse (examples/lakehouse/) smaller, against a real PostgreSQL 15: the shop is
changed after the pipelines start (orders placed, paid and cancelled, lines changed and removed,
customers moving, products recategorized, a column added, a type widened), and the bronze ingest
of order_items is killed in the middle of a batch and restarted. Every change must reach bronze,
silver and gold exactly once: bronze equals PostgreSQL's tables, and gold equals the same
aggregates computed in PostgreSQL, read by this engine and by hudi-rs. Every table is registered in
a real Hive Metastore at its last commit, as its catalogSync declares.

The pipelines are planned from the example files as ``hudictl run`` plans them; here they run in
this process, one SparkSession for all, a round of batches in dependency order at a time (the
killed one runs as its own job process, as the local executor starts it)."""
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from hudi_engine import read
from hudi_engine.table.meta_client import HoodieTable
from hudi_jobs.keys import metrics as MK
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer
from hudictl import retail
from hudictl.render import read_documents
from hudictl.run import local_settings
from hudi_operator.planner.resource_set import ResourceSet
from hudi_operator.planner.spark_app import job_config_yaml
from tests.support.hudi_rs import hudi_rs_read
from tests.support.metastore import thrift
from tests.support.postgres import start_postgres
from tests.support.processes import kill_when

pytestmark = [pytest.mark.spark, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "shop-secret"


@pytest.fixture
def shop(tmp_path):
    server = start_postgres(wal_level="logical", max_replication_slots="8")
    server.psql("postgres", "CREATE DATABASE retail")
    from hudi_jobs.sources.postgres_connection import parse_url
    connect = parse_url(server.url("retail"), "test").connect
    with connect() as conn:
        retail.create_schema(conn, PASSWORD)
    generator = retail.RetailGenerator(connect, seed=3)
    generator.seed(customers=15, products=8, orders=30)
    yield server, generator, connect
    server.stop()


def job_configs(tmp_path, server, metastore) -> list[tuple[str, Path]]:
    """(pipeline, job-config file) in dependency order, planned as ``hudictl run`` plans them."""
    env = {"LAKEHOUSE_PATH": str(tmp_path / "lake"), "RETAIL_DB_URL": f"postgresql://127.0.0.1:{server.port}/retail",
           "HIVE_METASTORE_URIS": metastore.uri}
    resources = ResourceSet.from_documents(read_documents([str(ROOT / "examples" / "lakehouse")], env), "lakehouse")
    configs = []
    for pipeline in resources.pipelines_in_order():
        document = resources.plan_pipeline(pipeline, local_settings("lakehouse")).jobs[0].job_config
        document = {**document, "continuous": False, "hoodieConf": {
            **document["hoodieConf"], MK.METRICS_ON.key: "false"}}
        document.pop("minSyncIntervalSeconds", None)
        path = tmp_path / "jobs" / f"{pipeline.metadata.name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(job_config_yaml(document))
        configs.append((pipeline.metadata.name, path))
    return configs


def round_of_batches(spark, configs) -> None:
    for _, path in configs:
        streamer = Streamer(spark, build_config(["--job-config", str(path)]))
        try:
            streamer.sync_once()
        finally:
            streamer.close()


def pg_rows(server, query: str) -> list[tuple[str, ...]]:
    return sorted(tuple(line.split("|")) for line in server.psql("retail", query).splitlines())


def money(value) -> str:
    return str(Decimal(value).quantize(Decimal("0.01")))


def test_the_lakehouse_follows_the_shop_exactly_once(spark, tmp_path, shop, metastore, monkeypatch):
    server, generator, _ = shop
    secrets = tmp_path / "secrets" / "retail-db"
    secrets.mkdir(parents=True)
    (secrets / "password").write_text(PASSWORD)
    monkeypatch.setenv("HUDI_SECRETS_DIR", str(tmp_path / "secrets"))
    configs = job_configs(tmp_path, server, metastore)
    assert [name for name, _ in configs][-3:] == ["silver-order-lines", "gold-daily-revenue", "gold-customer-value"]
    lake = tmp_path / "lake"

    round_of_batches(spark, configs)                                # the snapshots, then silver and gold
    generator.make_changes(120)
    server.psql("retail", "ALTER TABLE customers ADD COLUMN loyalty_tier text; "
                          "UPDATE customers SET loyalty_tier = 'gold' WHERE customer_id % 3 = 0")

    # The order_items ingest dies while writing its batch (20,000 new lines make it long enough to
    # catch); readers still see its last commit.
    server.psql("retail", "INSERT INTO order_items SELECT 1000000 + g, o.order_id, p.product_id, 1 + g % 3, p.price "
                          "FROM generate_series(1, 20000) g, (SELECT min(order_id) AS order_id FROM orders) o, "
                          "(SELECT product_id, price FROM products ORDER BY product_id LIMIT 1) p")
    items = dict(configs)["bronze-order-items"]
    job = subprocess.Popen([sys.executable, "-m", "hudi_jobs.streamer", "--job-config", str(items)],
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    temp = lake / "bronze" / "order_items" / ".hoodie" / ".temp"
    kill_when(job, lambda: temp.exists() and any(p.is_file() for p in temp.rglob("*")), "the order_items ingest")
    assert HoodieTable.load(str(lake / "bronze" / "order_items")).timeline.pending()

    round_of_batches(spark, configs)                                # resumes from the last checkpoint
    server.psql("retail", "ALTER TABLE order_items ALTER COLUMN quantity TYPE bigint")
    generator.make_changes(80)
    round_of_batches(spark, configs)

    for table, key, columns in (("customers", "customer_id", "city, loyalty_tier"), ("orders", "order_id", "status"),
                                ("order_items", "item_id", "quantity")):
        got = read(spark, str(lake / "bronze" / table)).select(key, *columns.split(", ")).collect()
        keys = [r[0] for r in got]
        assert len(keys) == len(set(keys)), f"bronze {table} holds a key twice"
        assert sorted(tuple("" if v is None else str(v) for v in r) for r in got) == \
            pg_rows(server, f"SELECT {key}, {columns} FROM {table}"), table

    revenue = pg_rows(server, retail.REVENUE_BY_DAY_AND_CATEGORY)
    value = pg_rows(server, retail.CUSTOMER_LIFETIME_VALUE)
    assert revenue and value
    ours = read(spark, str(lake / "gold" / "daily_revenue")).collect()
    assert sorted((str(r["order_date"]), r["category"], money(r["revenue"])) for r in ours) == revenue
    theirs = hudi_rs_read(lake / "gold" / "daily_revenue").to_pylist()
    assert sorted((str(r["order_date"]), r["category"], money(r["revenue"])) for r in theirs) == revenue
    ours = read(spark, str(lake / "gold" / "customer_value")).collect()
    assert sorted((str(r["customer_id"]), money(r["lifetime_value"])) for r in ours) == value

    # Lines with quantity 0 failed silver's quality rule: none in silver, each in its error table.
    zero = {int(r[0]) for r in pg_rows(server, "SELECT item_id FROM order_items WHERE quantity = 0")}
    silver = {r["item_id"] for r in read(spark, str(lake / "silver" / "order_lines")).collect()}
    assert not zero & silver
    errors = read(spark, str(lake / "silver" / "order_lines_errors")).collect()
    assert zero <= {json.loads(e["raw_record"])["item_id"] for e in errors}
    assert yaml.safe_load(items.read_text())["sourceClass"] == "PostgresCdcSource"

    # the catalog: each table at its last commit, a merge-on-read one as <table>_ro and <table>_rt
    with thrift(metastore) as hms:
        for database, tables in (("retail_bronze", ("customers", "products", "orders", "order_items")),
                                 ("retail_silver", ("order_lines",)), ("retail_gold", ("daily_revenue", "customer_value"))):
            layer = database.removeprefix("retail_")
            mor = layer == "bronze"
            assert sorted(hms.get_all_tables(database)) == sorted(
                f"{t}{suffix}" for t in tables for suffix in (("_ro", "_rt") if mor else ("",)))
            for name in tables:
                last = HoodieTable.load(str(lake / layer / name)).timeline.last_completed_write().timestamp
                for suffix in ("_ro", "_rt") if mor else ("",):
                    table = hms.get_table(database, name + suffix)
                    assert Path(table.sd.location.removeprefix("file:")) == lake / layer / name
                    assert table.parameters["last_commit_time_sync"] == last, f"{database}.{name}{suffix}"
