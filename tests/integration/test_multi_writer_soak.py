"""Several jobs on one table, as the operator plans them, run concurrently by the local executor
(``hudictl run --table-services``) for minutes: a continuous streamer ingesting files into two
partitions, a second continuous pipeline writing a third partition of the same table, and the
table's compaction, clustering and cleaning jobs started on their schedules and when Hudi's triggers
say they are due. The planner sees five writers and gives every job optimistic concurrency control
with one lock: the Hive Metastore's (a real metastore) on local disk, ZooKeeper (a real server) on S3
(a real radosgw). At the end every source record is in the table exactly once, as both our reader and
hudi-rs read it, nothing is pending, and every job ended cleanly (a write that lost a conflict was
retried by its job). ``HUDI_SOAK_SECONDS`` sets how long files keep arriving (default 90)."""
from __future__ import annotations

import collections
import hashlib
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hudi_engine.api import HoodieTable, read
from tests.support.hudi_rs import hudi_rs_read
from tests.support.zookeeper import zookeeper  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.spark, pytest.mark.slow]
log = logging.getLogger(__name__)
API = "lakehouse.hudi.dev/v1alpha1"
SOAK_SECONDS = float(os.environ.get("HUDI_SOAK_SECONDS", "90"))
MAX_SOAK_SECONDS = 480              # files keep coming until every service has done its work once
SERVICE_ACTIONS = ("commit", "replacecommit", "clean")       # compaction, clustering, cleaning
DRAIN_SECONDS = 600                 # for the last files to be ingested and the services to finish
FILE_EVERY_SECONDS = 2.0
NEW_PER_FILE, UPDATES_PER_FILE = 20, 5
# Each pipeline's partitions and the first record key it uses (the two never share a key).
PIPELINES = {"orders-main": (("eu", "us"), 0), "orders-apac": (("apac",), 1_000_000)}
COLUMNS = ("id", "region", "amount", "ts")


def resource(kind: str, name: str, spec: dict) -> dict:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


def soak_resources(base_path: str, landing: Path, lock: dict, storage: dict | None) -> list[dict]:
    table = {"basePath": base_path, "tableType": "MERGE_ON_READ", "recordKey": ["id"],
             "partitionFields": ["region"], "orderingField": "ts",
             "concurrency": {"lock": lock},
             "services": {
                 "compaction": {"mode": "scheduled", "schedule": "@yearly", "maxDeltaCommits": 2},
                 "clustering": {"mode": "scheduled", "schedule": "@yearly"},
                 "cleaning": {"mode": "scheduled", "schedule": "@every 30s", "retainCommits": 1}},
             # no small-file handling: new keys make new file groups (clustering has small files to join)
             # and updates go to log files (compaction has slices to merge)
             "options": {"hoodie.parquet.small.file.limit": "0", "hoodie.clustering.inline.max.commits": "4",
                         "hoodie.clustering.plan.strategy.small.file.limit": "10485760"}}
    if storage:
        table["storage"] = storage
    documents = [resource("HudiTable", "orders", table)]
    for name in PIPELINES:
        documents.append(resource("HudiPipeline", name, {
            "tableRef": {"name": "orders"}, "mode": {"minSyncIntervalSeconds": 1},
            "source": {"type": "files", "files": {"path": str(landing / name), "format": "json"}}}))
    return documents


class Source:
    """The files the pipelines ingest: new keys and updates of earlier ones (a later ``ts``), and
    what the table must hold at the end (the latest version of every key)."""

    def __init__(self, landing: Path):
        self.landing, self.files = landing, 0
        self.latest: dict[int, tuple] = {}
        self.next_id = {name: first for name, (_, first) in PIPELINES.items()}
        self.random = random.Random(25)

    def drop(self) -> None:
        self.files += 1
        for name, (regions, _) in PIPELINES.items():
            mine = [k for k, row in self.latest.items() if row[1] in regions]
            rows = [self._row(self.next_id[name] + i, self.random.choice(regions)) for i in range(NEW_PER_FILE)]
            self.next_id[name] += NEW_PER_FILE
            rows += [self._row(k, self.latest[k][1]) for k in self.random.sample(mine, min(UPDATES_PER_FILE, len(mine)))]
            folder = self.landing / name
            folder.mkdir(parents=True, exist_ok=True)
            partial = folder / f".part-{self.files:05d}.json"
            partial.write_text("".join(json.dumps(dict(zip(COLUMNS, row))) + "\n" for row in rows))
            partial.rename(folder / f"orders-{self.files:05d}.json")     # whole files only
            for row in rows:
                self.latest[row[0]] = row

    def _row(self, key: int, region: str) -> tuple:
        return (key, region, round(self.random.uniform(1, 1000), 2), self.files)

    def expected(self) -> list[tuple]:
        return sorted(self.latest.values())


def checksum(rows: list[tuple]) -> str:
    return hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()[:16]


def table_rows(table) -> list[tuple]:
    """The rows of a pyarrow table (hudi-rs) or a Spark DataFrame (our reader)."""
    rows = table.select(*COLUMNS).collect() if hasattr(table, "collect") else table.select(list(COLUMNS)).to_pylist()
    return sorted(tuple(r[c] for c in COLUMNS) for r in rows)


@pytest.fixture(params=["local-hive-metastore", "s3-zookeeper"])
def soak_setup(request, tmp_path):
    """(base path, lock, storage spec); on S3 this process reads the bucket with the session's settings."""
    if request.param == "local-hive-metastore":
        metastore = request.getfixturevalue("metastore")
        return (str(tmp_path / "lake" / "orders"), {"provider": "hiveMetastore",
                                                    "hiveMetastore": {"uris": metastore.uri, "database": "default",
                                                                      "table": f"orders_{tmp_path.name[-8:]}"}},
                None)
    server = request.getfixturevalue("s3_server")
    bucket = request.getfixturevalue("s3_session")
    zk = request.getfixturevalue("zookeeper")
    host, port = zk.url.split(":")
    secret = tmp_path / "secrets" / "lake-s3"
    secret.mkdir(parents=True)
    (secret / "AWS_ACCESS_KEY_ID").write_text(server.access_key)
    (secret / "AWS_SECRET_ACCESS_KEY").write_text(server.secret_key)
    storage = {"endpoint": server.endpoint, "region": server.region, "pathStyleAccess": True,
               "credentialsSecret": "lake-s3"}
    return (f"s3a://{bucket}/orders", {"provider": "zookeeper",
                                       "zookeeper": {"url": host, "port": int(port), "basePath": "/hudi/locks"}},
            storage)


def test_pipelines_and_table_services_write_one_table_concurrently(spark, tmp_path, soak_setup):
    base_path, lock, storage = soak_setup
    landing = tmp_path / "landing"
    (tmp_path / "secrets").mkdir(exist_ok=True)
    (tmp_path / "lake.yaml").write_text(yaml.safe_dump_all(soak_resources(base_path, landing, lock, storage)))
    rendered = subprocess.run([sys.executable, "-m", "hudictl.cli", "render", "-f", str(tmp_path / "lake.yaml")],
                              capture_output=True, text=True, timeout=300)
    assert rendered.returncode == 0, rendered.stderr
    assert "concurrency: optimistic (5 writers" in rendered.stdout, rendered.stdout[:2000]

    source = Source(landing)
    output = tmp_path / "hudictl.log"
    started = time.monotonic()
    with output.open("w") as out:
        hudictl = subprocess.Popen([sys.executable, "-m", "hudictl.cli", "run", "-f", str(tmp_path / "lake.yaml"),
                                    "--table-services", "--secrets-dir", str(tmp_path / "secrets")],
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while time.monotonic() - started < SOAK_SECONDS or not _every_service_ran(base_path):
                assert hudictl.poll() is None, output.read_text()[-6000:]
                assert time.monotonic() - started < MAX_SOAK_SECONDS, output.read_text()[-6000:]
                source.drop()
                time.sleep(FILE_EVERY_SECONDS)
            deadline = time.monotonic() + DRAIN_SECONDS
            while not _settled(base_path, source):
                assert hudictl.poll() is None, output.read_text()[-6000:]
                assert time.monotonic() < deadline, output.read_text()[-6000:]
                time.sleep(2)
            hudictl.send_signal(signal.SIGINT)
            code = hudictl.wait(timeout=DRAIN_SECONDS)
        finally:
            if hudictl.poll() is None:
                os.killpg(hudictl.pid, signal.SIGKILL)
    text = output.read_text()
    assert code == 0, text[-6000:]                   # every pipeline and service run ended cleanly

    timeline = HoodieTable.load(base_path).timeline
    assert not timeline.pending(), [str(i) for i in timeline.pending()]
    expected = source.expected()
    ours = table_rows(read(spark, base_path))
    assert len(ours) == len(expected) and checksum(ours) == checksum(expected)
    assert ours == expected
    theirs = table_rows(hudi_rs_read(base_path))
    assert checksum(theirs) == checksum(expected)

    actions = collections.Counter(i.action for i in timeline.filter(completed=True))
    assert actions["deltacommit"] > 0 and all(actions[a] > 0 for a in SERVICE_ACTIONS), actions
    retried = len(re.findall(r"lost a write conflict \(attempt", text))
    clustering_waits = len(re.findall(r"updates file groups a pending clustering rewrites \(attempt", text))
    lock_waits = re.findall(r"waited ([0-9.]+) s for the .* lock", text)
    service_runs = len(re.findall(r": started, ", text))
    print(f"\nsoak {lock['provider']} on {'S3' if storage else 'local disk'}: {time.monotonic() - started:.0f} s, "
          f"{source.files} files per pipeline, {len(expected)} rows (checksum {checksum(expected)}); completed "
          f"instants on the active timeline {dict(actions)}; conflicts lost and retried {retried}; retries "
          f"after a clustering {clustering_waits}; lock waits over 1 s {len(lock_waits)} (longest "
          f"{max(map(float, lock_waits), default=0):.1f} s); service runs {service_runs}")


def _every_service_ran(base_path: str) -> bool:
    if not HoodieTable.exists(base_path):
        return False
    done = {i.action for i in HoodieTable.load(base_path).timeline.filter(completed=True)}
    return set(SERVICE_ACTIONS) <= done


def _settled(base_path: str, source: Source) -> bool:
    """Every file ingested (the newest version of every key is there, as hudi-rs reads it) and
    nothing pending."""
    if not HoodieTable.exists(base_path) or HoodieTable.load(base_path).timeline.pending():
        return False
    try:
        return table_rows(hudi_rs_read(base_path)) == source.expected()
    except Exception as exc:          # a cleaner removed a file the snapshot listed: look again
        log.info("not settled yet: %s", exc)
        return False
