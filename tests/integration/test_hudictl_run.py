"""``hudictl run`` end to end in its own process: resources planned as the operator plans them, each
pipeline's job run on this machine with local Spark, and the tables it leaves read with hudi-rs."""
import json
import subprocess
import sys

import pytest
import yaml

from hudi_engine.storage import Storage
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
API = "lakehouse.hudi.dev/v1alpha1"
COLUMNS = ["id", "region", "amount", "ts"]


def write_json_lines(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def resource(kind, name, spec):
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


def orders_table(name, base_path):
    return resource("HudiTable", name, {"basePath": str(base_path), "recordKey": ["id"],
                                        "partitionFields": ["region"], "orderingField": "ts",
                                        "services": {"cleaning": {"mode": "disabled"}}})


def hudictl_run(tmp_path, documents, *extra):
    resources = tmp_path / "lake.yaml"
    resources.write_text(yaml.safe_dump_all(documents))
    (tmp_path / "secrets").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "hudictl.cli", "run", "-f", str(resources), "--once",
                           "--secrets-dir", str(tmp_path / "secrets"), *extra],
                          capture_output=True, text=True, timeout=900)


ORDERS = [{"id": 1, "region": "eu", "amount": 10.5, "ts": 1},
          {"id": 2, "region": "us", "amount": 3.0, "ts": 1},
          {"id": 2, "region": "us", "amount": 4.0, "ts": 2},       # the later version of order 2 wins
          {"id": 3, "region": "eu", "amount": -1.0, "ts": 1},      # fails the quality rule
          {"id": 4, "region": "us", "amount": 7.25, "ts": 1}]


@pytest.fixture(params=["local", "s3"])
def lake(request, tmp_path):
    """(root, storage spec): a local folder, or a bucket of the real S3 server reached as a
    HudiTable says (endpoint, path-style, credentials from a Secret given as files)."""
    if request.param == "local":
        return str(tmp_path), None
    server = request.getfixturevalue("s3_server")
    bucket = request.getfixturevalue("s3_session")
    secret = tmp_path / "secrets" / "lake-s3"
    secret.mkdir(parents=True)
    (secret / "AWS_ACCESS_KEY_ID").write_text(server.access_key)
    (secret / "AWS_SECRET_ACCESS_KEY").write_text(server.secret_key)
    return f"s3a://{bucket}", {"endpoint": server.endpoint, "region": server.region, "pathStyleAccess": True,
                               "credentialsSecret": "lake-s3"}


def test_run_a_json_files_pipeline_into_a_table(tmp_path, lake):
    """On S3 too: files landing in the bucket, the table and its error table beside them."""
    root, storage = lake
    Storage(root).write_text("landing/orders-1.json", "".join(json.dumps(r) + "\n" for r in ORDERS))
    table = orders_table("orders", f"{root}/lake/orders")
    if storage:
        table["spec"]["storage"] = storage
    documents = [
        table,
        resource("HudiPipeline", "orders-files", {
            "tableRef": {"name": "orders"},
            "source": {"type": "files", "files": {"path": f"{root}/landing", "format": "json"}},
            "qualityRules": [{"name": "amount_positive", "expression": "amount > 0"}]}),
    ]
    done = hudictl_run(tmp_path, documents)
    assert done.returncode == 0, done.stderr[-3000:]
    assert rows(hudi_rs_read(f"{root}/lake/orders"), COLUMNS) == [
        (1, "eu", 10.5, 1), (2, "us", 4.0, 2), (4, "us", 7.25, 1)]
    errors = hudi_rs_read(f"{root}/lake/orders_errors")       # the error table's default place
    assert errors.column("reason").to_pylist() == ["QUALITY_RULE_FAILURE"]
    assert json.loads(errors.column("raw_record")[0].as_py())["id"] == 3


def test_run_bronze_then_silver_in_dependency_order(tmp_path):
    write_json_lines(tmp_path / "landing" / "orders-1.json", ORDERS)
    bronze, silver = tmp_path / "lake" / "bronze", tmp_path / "lake" / "silver"
    documents = [     # the silver pipeline comes first in the file: hudictl orders the runs
        resource("HudiPipeline", "orders-silver", {
            "tableRef": {"name": "silver"},
            "source": {"type": "hudiIncremental", "hudiIncremental": {"tableRef": {"name": "bronze"}}},
            "transformations": [{"name": "big", "sql": "SELECT id, region, amount, ts FROM <SRC> WHERE amount > 5"}]}),
        orders_table("silver", silver),
        orders_table("bronze", bronze),
        resource("HudiPipeline", "orders-bronze", {
            "tableRef": {"name": "bronze"},
            "source": {"type": "files", "files": {"path": str(tmp_path / "landing")}},
            "errorTable": {"enabled": False}}),
    ]
    done = hudictl_run(tmp_path, documents)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.index("HudiPipeline/orders-bronze: running") < done.stderr.index(
        "HudiPipeline/orders-silver: running")
    assert rows(hudi_rs_read(bronze), COLUMNS) == [
        (1, "eu", 10.5, 1), (2, "us", 4.0, 2), (3, "eu", -1.0, 1), (4, "us", 7.25, 1)]
    assert rows(hudi_rs_read(silver), COLUMNS) == [(1, "eu", 10.5, 1), (4, "us", 7.25, 1)]


def test_run_reports_a_bad_resource_with_its_field(tmp_path):
    table = orders_table("orders", tmp_path / "lake" / "orders")
    table["spec"]["catalogSync"] = [{"metastoreUris": "thrift://a:9083"}, {"metastoreUris": "thrift://b:9083"}]
    done = hudictl_run(tmp_path, [table])
    assert done.returncode == 2
    assert "HudiTable/orders: spec.catalogSync[1]: one catalog target per table is supported" in done.stderr


def test_run_with_table_services_compacts_a_merge_on_read_table_once_due(tmp_path):
    """A second run brings an update (a log file); --table-services then compacts it into a new base file."""
    from hudi_engine.table.meta_client import HoodieTable
    table = orders_table("orders", tmp_path / "lake" / "orders")
    table["spec"].update(tableType="MERGE_ON_READ", services={
        "cleaning": {"mode": "disabled"},
        "compaction": {"mode": "scheduled", "schedule": "@hourly", "maxDeltaCommits": 1}})
    documents = [table, resource("HudiPipeline", "orders-files", {
        "tableRef": {"name": "orders"},
        "source": {"type": "files", "files": {"path": str(tmp_path / "landing"), "format": "json"}}})]
    write_json_lines(tmp_path / "landing" / "orders-1.json", ORDERS)
    assert hudictl_run(tmp_path, documents).returncode == 0
    write_json_lines(tmp_path / "landing" / "orders-2.json", [{"id": 1, "region": "eu", "amount": 12.0, "ts": 2}])
    done = hudictl_run(tmp_path, documents, "--table-services")
    assert done.returncode == 0, done.stderr[-3000:]
    timeline = HoodieTable.load(str(tmp_path / "lake" / "orders")).timeline
    # ingest, the update, then the compaction
    assert [i.action for i in timeline.completed_writes()] == ["deltacommit", "deltacommit", "commit"]
    assert rows(hudi_rs_read(tmp_path / "lake" / "orders", read_optimized=True), COLUMNS) == [
        (1, "eu", 12.0, 2), (2, "us", 4.0, 2), (3, "eu", -1.0, 1), (4, "us", 7.25, 1)]


def test_run_compacts_beside_a_continuous_pipeline_when_compaction_becomes_due(tmp_path):
    """No --once: the pipeline keeps ingesting while the compaction starts, as a process of its own,
    as soon as the table's trigger says it is due (its cron would fire next year); Ctrl-C stops both.
    Meanwhile a real Prometheus scrapes the pipeline through the --metrics-targets file."""
    import os
    import signal
    import time

    from hudi_engine.table.meta_client import HoodieTable
    from tests.support.prometheus import query, start_prometheus
    base_path = tmp_path / "lake" / "orders"
    table = orders_table("orders", base_path)
    table["spec"].update(tableType="MERGE_ON_READ", services={
        "cleaning": {"mode": "disabled"},
        "compaction": {"mode": "scheduled", "schedule": "@yearly", "maxDeltaCommits": 2}})
    documents = [table, resource("HudiPipeline", "orders-files", {
        "tableRef": {"name": "orders"}, "mode": {"minSyncIntervalSeconds": 1},
        "source": {"type": "files", "files": {"path": str(tmp_path / "landing"), "format": "json"}}})]
    (tmp_path / "lake.yaml").write_text(yaml.safe_dump_all(documents))
    (tmp_path / "secrets").mkdir()
    targets = tmp_path / "targets.json"
    prometheus = start_prometheus(tmp_path / "prometheus", {}, scrape_configs=(
        {"job_name": "hudi-pipelines", "file_sd_configs": [{"files": [str(targets)], "refresh_interval": "1s"}]},))
    log = (tmp_path / "hudictl.log").open("w")
    hudictl = subprocess.Popen([sys.executable, "-m", "hudictl.cli", "run", "-f", str(tmp_path / "lake.yaml"),
                                "--table-services", "--secrets-dir", str(tmp_path / "secrets"),
                                "--metrics-targets", str(targets)],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def completed():
        if not HoodieTable.exists(str(base_path)):
            return []
        return [(i.action, i.timestamp) for i in HoodieTable.load(str(base_path)).timeline.completed_writes()]

    def compacted_beside_the_pipeline():
        actions = [a for a, _ in completed()]
        return "commit" in actions and "deltacommit" in actions[actions.index("commit") + 1:]

    drops = 0
    try:
        deadline = time.monotonic() + 600
        while not compacted_beside_the_pipeline():
            assert hudictl.poll() is None, (tmp_path / "hudictl.log").read_text()[-5000:]
            assert time.monotonic() < deadline, (tmp_path / "hudictl.log").read_text()[-5000:]
            if len(completed()) >= drops:                    # one new file per commit: a steady stream
                drops += 1
                write_json_lines(tmp_path / "landing" / f"orders-{drops:03d}.json",
                                 [{"id": 1, "region": "eu", "amount": float(drops), "ts": drops},
                                  {"id": 100 + drops, "region": "us", "amount": 1.0, "ts": drops}])
                os.utime(tmp_path / "landing" / f"orders-{drops:03d}.json", (time.time(), time.time()))
            time.sleep(0.5)
        # the last file in, nothing pending: then Ctrl-C
        while HoodieTable.load(str(base_path)).timeline.pending() or \
                max(int(r["amount"]) for r in hudi_rs_read(base_path).to_pylist() if r["id"] == 1) != drops:
            assert time.monotonic() < deadline, (tmp_path / "hudictl.log").read_text()[-5000:]
            time.sleep(0.5)
        # every record written so far, as Prometheus scraped it, labelled as the chart's PodMonitor labels it
        labels = '{job="hudi-pipelines", namespace="default", pipeline="orders-files", hudi_table="orders"}'
        while [float(s["value"][1]) for s in query(prometheus, f"hudi_streamer_records_written_total{labels}")] \
                != [2.0 * drops]:
            assert time.monotonic() < deadline, query(prometheus, "hudi_streamer_records_written_total")
            time.sleep(0.5)
        hudictl.send_signal(signal.SIGINT)
        hudictl.wait(timeout=120)
    finally:
        if hudictl.poll() is None:
            os.killpg(hudictl.pid, signal.SIGKILL)
        log.close()
        prometheus.stop()
    timeline = HoodieTable.load(str(base_path)).timeline
    assert not timeline.pending(), (tmp_path / "hudictl.log").read_text()[-5000:]
    actions = [a for a, _ in completed()]
    assert actions.count("commit") >= 1 and actions[0] == "deltacommit"
    assert rows(hudi_rs_read(base_path), COLUMNS) == sorted(
        [(1, "eu", float(drops), drops)] + [(100 + n, "us", 1.0, n) for n in range(1, drops + 1)])
