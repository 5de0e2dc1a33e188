"""The real operator process (``python -m hudi_operator``, kopf and the official Kubernetes client)
against kmock, an HTTP stand-in of the Kubernetes API: no API server can run here. The stand-in
stores objects and streams watch events; the tests play the user (creating and changing
HudiTables/HudiPipelines) and the Spark operator (moving SparkApplication states), and assert on
what the operator sent: SparkApplications, ConfigMaps, status patches and events; like the API server,
it refuses a ConfigMap or Spark application its schema rejects. Tables are real
Hudi tables (fixtures written by Apache Hudi) in a temporary directory."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import aiohttp
import kmock
from kmock._internal import parsing as kmock_parsing
import pytest
import pytest_asyncio
import yaml

from hudi_operator import rbac
from hudi_operator.planner.labels import SPEC_HASH_ANNOTATION
from hudi_operator.reconcile.conditions import find
from tests.conftest import unzip_fixture
from tests.support.kube_api import ApiServer, declare, now, write_kubeconfig
from tests.support.services import free_port

NS = "data"
GROUP = "lakehouse.hudi.dev/v1alpha1"
SPARK = "sparkoperator.k8s.io/v1beta2"
TABLES, PIPELINES = f"{GROUP}/huditables", f"{GROUP}/hudipipelines"
APPS, SCHEDULED = f"{SPARK}/sparkapplications", f"{SPARK}/scheduledsparkapplications"
CONFIGMAPS, EVENTS = "v1/configmaps", "v1/events"
PEERINGS = "kopf.dev/v1/kopfpeerings"
OTHER_NS = "analytics"
TEST_AGENT = "operator-test-driver"
RESYNC_SECONDS = 2


def _declare(server: kmock.KubernetesEmulator) -> None:
    """The resources a cluster with the lakehouse CRDs and the Spark operator serves."""
    for key, kind, status in [(TABLES, "HudiTable", True), (PIPELINES, "HudiPipeline", True),
                              (APPS, "SparkApplication", True), (SCHEDULED, "ScheduledSparkApplication", True),
                              (CONFIGMAPS, "ConfigMap", False), (EVENTS, "Event", False),
                              (PEERINGS, "KopfPeering", False)]:      # kopf's peering CRD has no status subresource
        declare(server, key, kind, status=status)
    server.resources["v1/namespaces"] = kmock.ResourceInfo(kind="Namespace", singular="namespace",
                                                           namespaced=False, verbs={"get", "list", "watch"})
    for namespace in (NS, OTHER_NS):
        server.objects["v1/namespaces", None, namespace] = {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": namespace}}


# --- the user and the Spark operator, over HTTP ----------------------------------------------------------
class Cluster:
    def __init__(self, server: kmock.KubernetesEmulator, session: aiohttp.ClientSession):
        self.server, self.session = server, session

    async def create(self, resource: str, body: dict[str, Any], namespace: str = NS) -> None:
        body = {**body, "metadata": {"namespace": namespace, **body["metadata"]}}
        async with self.session.post(f"{_path(resource, namespace)}", json=body) as response:
            assert response.status < 300, await response.text()

    async def patch(self, resource: str, name: str, patch: dict[str, Any], subresource: str = "") -> None:
        url = f"{_path(resource)}/{name}" + (f"/{subresource}" if subresource else "")
        async with self.session.patch(url, json=patch,
                                      headers={"Content-Type": "application/merge-patch+json"}) as response:
            assert response.status < 300, await response.text()

    async def delete(self, resource: str, name: str) -> None:
        async with self.session.delete(f"{_path(resource)}/{name}") as response:
            assert response.status < 300, await response.text()

    def get(self, resource: str, name: str, namespace: str = NS) -> dict[str, Any] | None:
        key = (kmock.resource(resource), namespace, name)
        if key not in self.server.objects or self.server.objects[key].deleted:
            return None
        return json.loads(json.dumps(self.server.objects[key].raw))

    def names(self, resource: str) -> list[str]:
        return sorted(n for (r, ns, n), o in self.server.objects.items() if r == resource and not o.deleted)

    def operator_requests(self, name: str | None = None) -> list[kmock.Request]:
        """What the operators sent (``name``: only that operator's, told by its token)."""
        return [r for r in self.server if r.headers.get("User-Agent") != TEST_AGENT
                and (name is None or r.headers.get("Authorization") == f"Bearer token-{name}")]

    def events(self, reason: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
        """Events the operator posted (kopf posts core/v1 events), oldest first."""
        found = [r.data for r in self.operator_requests() if r.method == "POST" and r.resource == EVENTS]
        return [e for e in found if (reason is None or e["reason"] == reason)
                and (name is None or e["involvedObject"]["name"] == name)]

    async def posted(self, name: str, *reasons: str) -> list[dict[str, Any]]:
        """Wait until the operator posted events of these reasons on ``name`` (kopf posts events from
        a queue, a moment after the action); returns them all."""
        await self.until(lambda: set(reasons) <= {e["reason"] for e in self.events(name=name)},
                         what=f"events {reasons} on {name}")
        return [e for e in self.events(name=name) if e["reason"] in reasons]

    def status_patches(self, resource: str, name: str) -> list[dict[str, Any]]:
        return [r.data["status"] for r in self.operator_requests()
                if r.method == "PATCH" and r.resource == resource and r.name == name and r.subresource == "status"]

    async def spark_state(self, name: str, state: str, **extra: Any) -> None:
        """What the Spark operator writes as the job moves."""
        await self.patch(APPS, name, {"status": {"applicationState": {"state": state, **extra},
                                                 "lastSubmissionAttemptTime": now(), "submissionAttempts": 1,
                                                 "executionAttempts": 1}}, "status")

    async def until(self, check: Callable[[], Any], timeout: float = 30, what: str = "") -> Any:
        """Poll the stand-in's objects until ``check`` is truthy (the operator works asynchronously)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                result = check()
            except (KeyError, TypeError, IndexError):
                result = None
            if result:
                return result
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what or check}")
            await asyncio.sleep(0.1)

    def status(self, resource: str, name: str, namespace: str = NS) -> dict[str, Any]:
        return (self.get(resource, name, namespace) or {}).get("status") or {}


def _path(resource: str, namespace: str = NS) -> str:
    group_version, plural = resource.rsplit("/", 1)
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    return f"{root}/namespaces/{namespace}/{plural}"


@pytest.fixture
def tables(tmp_path: Path) -> Callable[[str], str]:
    """Real Hudi tables to point basePaths at: a fixture unzipped under a name of its own."""
    def table(name: str) -> str:
        extracted = unzip_fixture("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", tmp_path / name)
        return str(extracted)
    return table


@pytest.fixture
def namespaces_path(monkeypatch):
    """kmock 0.8 cannot parse ``/api/v1/namespaces`` (the list kopf makes to see which watched
    namespaces exist): the stand-in learns it here."""
    parse = kmock_parsing.parse_path

    def parse_path(path: str) -> kmock_parsing.ParsedPath:
        if path.strip("/").split("/") == ["api", "v1", "namespaces"]:
            return kmock_parsing.ParsedPath("", "v1", "namespaces")
        return parse(path)
    monkeypatch.setattr(kmock_parsing, "parse_path", parse_path)


@pytest_asyncio.fixture
async def cluster(tmp_path: Path, namespaces_path: None):
    server = ApiServer()
    _declare(server)
    async with server, kmock.Server(server):
        async with aiohttp.ClientSession(base_url=str(server.url), headers={"User-Agent": TEST_AGENT}) as session:
            yield Cluster(server, session)


@contextlib.asynccontextmanager
async def running_operator(cluster: Cluster, tmp_path: Path, name: str = "operator", **env: str):
    """``python -m hudi_operator`` pointed at the stand-in by a kubeconfig of its own (its token,
    ``token-<name>``, tells its requests apart), watching namespace data unless ``env`` says otherwise."""
    kubeconfig = write_kubeconfig(tmp_path / f"{name}.kubeconfig", cluster.server, name, NS)
    health, metrics = free_port(), free_port()
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "WATCH_NAMESPACES": NS, "SPARK_IMAGE": "spark-jobs:test",
           "RESYNC_INTERVAL_SECONDS": str(RESYNC_SECONDS), "HEALTH_PORT": str(health), "METRICS_PORT": str(metrics),
           **env}
    log = (tmp_path / f"{name}.log").open("wb")
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "hudi_operator", env=env,
                                                   stdout=log, stderr=asyncio.subprocess.STDOUT)
    process.health_url = f"http://127.0.0.1:{health}/healthz"
    process.metrics_url = f"http://127.0.0.1:{metrics}/metrics"
    process.log_path = tmp_path / f"{name}.log"
    try:
        await cluster.until(lambda: process.returncode is not None or _started(cluster, name), 30,
                            "the operator to watch or to join its peering")
        assert process.returncode is None, process.log_path.read_text()
        yield process
    finally:
        if process.returncode is None:
            process.terminate()
            await asyncio.wait_for(process.wait(), 30)
        log.close()
        print(f"--- {name} ---\n" + process.log_path.read_text()[-20000:])   # shown by pytest when a test fails


@pytest_asyncio.fixture
async def operator(cluster: Cluster, tmp_path: Path):
    async with running_operator(cluster, tmp_path) as process:
        yield process


def _watching(cluster: Cluster, name: str) -> bool:
    return any(r.action == kmock.action.WATCH and r.resource == PIPELINES for r in cluster.operator_requests(name))


def _started(cluster: Cluster, name: str) -> bool:
    """Watching, or (a replica standing by) keeping its place in the peering."""
    return _watching(cluster, name) or any(r.resource == PEERINGS for r in cluster.operator_requests(name))


TRIGGERED = "trips-compaction-run-220210130911"    # named for the commit that crossed the threshold


def table_body(name: str, base_path: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": GROUP, "kind": "HudiTable", "metadata": {"name": name},
            "spec": {"basePath": base_path, "tableType": "MERGE_ON_READ", "recordKey": ["uuid"],
                     "partitionFields": ["city"], "orderingField": "ts",
                     "services": {"cleaning": {"mode": "disabled"},
                                  "compaction": {"mode": "scheduled", "schedule": "0 * * * *",
                                                 "maxDeltaCommits": 1}},
                     **spec}}


def pipeline_body(name: str, table: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": GROUP, "kind": "HudiPipeline", "metadata": {"name": name},
            "spec": {"tableRef": {"name": table},
                     "source": {"type": "files", "files": {"path": "/landing/trips", "format": "json"}},
                     "upgrade": {"stableAfterSeconds": 1}, **spec}}


def phase(cluster: Cluster, resource: str, name: str) -> str | None:
    return cluster.status(resource, name).get("phase")


# --- the tests -----------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_pipeline_lifecycle_through_the_real_operator_against_kmock(cluster, operator, tables):
    """create → running → failed → update (replaced once) → stable → suspend → resume → succeeded →
    hand-edited (drift put back) → delete."""
    await cluster.create(TABLES, table_body("trips", tables("trips")))
    await cluster.until(lambda: phase(cluster, TABLES, "trips") == "Ready", what="table Ready")
    table = cluster.status(TABLES, "trips")
    assert (table["lastCommitInstant"], table["tableVersion"], table["commitsSinceCompaction"]) == \
        ("20251220210130911", 8, 1)
    assert table["services"]["compaction"]["name"] == "trips-compaction"
    # Started once the run is made, Running once the stand-in reports its driver up: all may come
    # before this first look at the status
    assert table["services"]["compaction"]["state"] in ("Due", "Started", "Running")
    assert cluster.names(SCHEDULED) == ["trips-compaction"]            # the scheduled table service
    await cluster.posted("trips", "CompactionDue", "Ready")
    # the threshold (1 delta commit) is crossed, so compaction runs now, once, not at the next cron tick
    await cluster.until(lambda: cluster.names(APPS) == [TRIGGERED], what="the triggered compaction")
    run, scheduled = cluster.get(APPS, TRIGGERED), cluster.get(SCHEDULED, "trips-compaction")
    assert run["spec"]["arguments"] == scheduled["spec"]["template"]["arguments"]
    assert run["spec"]["arguments"][0] == "table-service"
    assert run["spec"]["timeToLiveSeconds"] == 3600
    assert run["metadata"]["labels"]["app.kubernetes.io/component"] == "table-service-run"
    await cluster.posted("trips", "CompactionTriggered")
    await asyncio.sleep(RESYNC_SECONDS * 2)                              # resyncs start no second run
    assert cluster.names(APPS) == [TRIGGERED] and len(cluster.events("CompactionTriggered", "trips")) == 1

    # create
    await cluster.create(PIPELINES, pipeline_body("ingest", "trips"))
    app_name = "ingest-ingest"
    await cluster.until(lambda: cluster.get(APPS, app_name), what="the SparkApplication")
    app = cluster.get(APPS, app_name)
    pipeline = cluster.get(PIPELINES, "ingest")
    assert app["metadata"]["ownerReferences"][0]["uid"] == pipeline["metadata"]["uid"]
    assert app["spec"]["image"] == "spark-jobs:test"
    config = cluster.get(CONFIGMAPS, "ingest-ingest-config")
    assert "job-config.yaml" in config["data"]
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Deploying", what="Deploying")
    status = cluster.status(PIPELINES, "ingest")
    assert status["reconciliation"]["state"] == "DEPLOYED"
    assert json.loads(status["reconciliation"]["lastReconciledSpec"]) == pipeline["spec"]
    await cluster.posted("ingest", "Created", "Deploying")

    # running: the Spark operator's state is copied into the pipeline's status
    await cluster.spark_state(app_name, "RUNNING")
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Running", what="Running")
    status = cluster.status(PIPELINES, "ingest")
    assert status["sparkApplication"]["state"] == "RUNNING"
    assert find(status["conditions"], "Ready")["status"] == "True"
    await cluster.until(lambda: cluster.status(PIPELINES, "ingest").get("lastCommitInstant") == "20251220210130911",
                        what="the table's last commit on the pipeline")
    await cluster.until(lambda: cluster.status(PIPELINES, "ingest")["reconciliation"]["lastStableSpec"],
                        what="a stable spec")

    # failed
    await cluster.spark_state(app_name, "FAILED", errorMessage="driver OOM")
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Failed", what="Failed")
    degraded = find(cluster.status(PIPELINES, "ingest")["conditions"], "Degraded")
    assert degraded["status"] == "True" and "driver OOM" in degraded["message"]
    assert [e["type"] for e in await cluster.posted("ingest", "Failed")] == ["Warning"]

    # update: the spec change replaces the job once (deleted, created again from the new spec)
    first_uid = cluster.get(APPS, app_name)["metadata"]["uid"]
    first_hash = cluster.get(APPS, app_name)["metadata"]["annotations"][SPEC_HASH_ANNOTATION]
    await cluster.patch(PIPELINES, "ingest", {"spec": {"operation": "insert"}})
    await cluster.until(lambda: (cluster.get(APPS, app_name) or {}).get("metadata", {}).get("uid") not in
                        (None, first_uid), what="the replaced SparkApplication")
    assert cluster.get(APPS, app_name)["metadata"]["annotations"][SPEC_HASH_ANNOTATION] != first_hash
    job_config = yaml.safe_load(cluster.get(CONFIGMAPS, "ingest-ingest-config")["data"]["job-config.yaml"])
    assert job_config["op"] == "INSERT"
    status = cluster.status(PIPELINES, "ingest")
    assert status["observedGeneration"] == 2 and status["reconciliation"]["state"] == "UPGRADING"
    await cluster.posted("ingest", "Upgrading", "Replacing", "Updated")
    assert len(cluster.events("Upgrading", "ingest")) == 1
    await cluster.spark_state(app_name, "RUNNING")
    await cluster.until(lambda: cluster.status(PIPELINES, "ingest")["reconciliation"]["state"] == "DEPLOYED",
                        what="the upgrade to become stable")
    status = cluster.status(PIPELINES, "ingest")
    assert json.loads(status["reconciliation"]["lastStableSpec"])["operation"] == "insert"
    assert len(cluster.events("Upgrading", "ingest")) == 1             # applied once, across resyncs

    # suspend: the Spark operator is told to stop the job; the object stays
    uid = cluster.get(APPS, app_name)["metadata"]["uid"]
    await cluster.patch(PIPELINES, "ingest", {"spec": {"state": "suspended"}})
    await cluster.until(lambda: cluster.get(APPS, app_name)["spec"].get("suspend") is True, what="suspend: true")
    await cluster.spark_state(app_name, "SUSPENDED")
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Suspended", what="Suspended")
    assert cluster.get(APPS, app_name)["metadata"]["uid"] == uid
    await cluster.posted("ingest", "Suspending", "Suspended")

    # resume: from the checkpoint in the table's commits
    await cluster.patch(PIPELINES, "ingest", {"spec": {"state": "running"}})
    await cluster.until(lambda: not cluster.get(APPS, app_name)["spec"].get("suspend"), what="suspend cleared")
    await cluster.spark_state(app_name, "RUNNING")
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Running", what="Running again")
    assert cluster.get(APPS, app_name)["metadata"]["uid"] == uid
    await cluster.posted("ingest", "Resuming")

    # succeeded
    await cluster.spark_state(app_name, "COMPLETED")
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Succeeded", what="Succeeded")

    # drift: a hand edit of the job is put back by the resync timer
    wanted = cluster.get(APPS, app_name)["spec"]["driver"]["memory"]
    await cluster.patch(APPS, app_name, {"spec": {"driver": {"memory": "64g"}}})
    await cluster.until(lambda: cluster.get(APPS, app_name)["spec"]["driver"]["memory"] == wanted,
                        timeout=RESYNC_SECONDS * 5, what="drift correction")
    await cluster.posted("ingest", "DriftCorrected")

    # every status write is a patch of the status subresource
    patches = cluster.status_patches(PIPELINES, "ingest")
    assert [p["phase"] for p in patches if "phase" in p][:2] == ["Deploying", "Running"]

    # delete: the job and its config go with the pipeline
    await cluster.delete(PIPELINES, "ingest")
    await cluster.until(lambda: cluster.get(PIPELINES, "ingest") is None, what="the pipeline to go")
    assert cluster.names(APPS) == [TRIGGERED] and cluster.names(CONFIGMAPS) == ["trips-compaction-config"]
    assert operator.returncode is None


def add_delta_commit(base_path: str, instant: str) -> None:
    """A writer's new delta commit on the fixture table (its last one, again, at a later time)."""
    timeline = Path(base_path) / ".hoodie" / "timeline"
    last = timeline / "20251220210130911_20251220210131755.deltacommit"
    (timeline / f"{instant}_{instant[:-3]}999.deltacommit").write_bytes(last.read_bytes())


@pytest.mark.asyncio
async def test_due_services_start_one_job_of_a_kind_at_a_time_with_the_reason(cluster, operator, tables):
    """Due → one run, the reason in status and event; a new commit while it runs → no second run
    (status says what it waits for); the run ends → the next one starts for the newer timeline."""
    base_path = tables("trips")
    await cluster.create(TABLES, table_body("trips", base_path))
    await cluster.until(lambda: cluster.names(APPS) == [TRIGGERED], what="the triggered compaction")
    reason = ("compaction due: 1 delta commits since 20251220210129235, the last compaction or first delta commit "
              "(hoodie.compact.inline.trigger.strategy=NUM_COMMITS, hoodie.compact.inline.max.delta.commits=1, "
              "hoodie.compact.inline.max.delta.seconds=3600)")
    await cluster.until(lambda: cluster.status(TABLES, "trips")["services"]["compaction"].get("run") == TRIGGERED,
                        what="the run in the status")
    service = cluster.status(TABLES, "trips")["services"]["compaction"]
    assert service["state"] in ("Started", "Running") and service["reason"].split("; waiting")[0] == reason
    [event] = await cluster.posted("trips", "CompactionTriggered")
    assert event["message"] == f"{reason}: started {TRIGGERED}"
    assert cluster.get(APPS, TRIGGERED)["metadata"]["labels"]["lakehouse.hudi.dev/service"] == "compaction"

    # still running: a new delta commit makes compaction due again, but no second job starts
    await cluster.spark_state(TRIGGERED, "RUNNING")
    add_delta_commit(base_path, "20251220210140000")
    await cluster.until(lambda: cluster.status(TABLES, "trips")["services"]["compaction"].get("reason", "")
                        .startswith("compaction due: 2 delta commits"), timeout=RESYNC_SECONDS * 5,
                        what="the held compaction, due again, in the status")
    held = cluster.status(TABLES, "trips")["services"]["compaction"]
    assert held["state"] == "Running" and held["reason"].startswith("compaction due: 2 delta commits")
    assert held["reason"].endswith(f"; waiting for {TRIGGERED} to end")
    await asyncio.sleep(RESYNC_SECONDS * 2)
    assert cluster.names(APPS) == [TRIGGERED] and len(cluster.events("CompactionTriggered", "trips")) == 1

    # finished (here without compacting, as if it failed): the next run starts, for the newer commit
    await cluster.spark_state(TRIGGERED, "FAILED", errorMessage="executor lost")
    second = "trips-compaction-run-220210140000"
    await cluster.until(lambda: cluster.names(APPS) == sorted([TRIGGERED, second]), timeout=RESYNC_SECONDS * 5,
                        what="the next run")
    await cluster.until(lambda: len(cluster.events("CompactionTriggered", "trips")) == 2, what="its event")
    assert cluster.status(TABLES, "trips")["services"]["compaction"]["run"] == second
    await asyncio.sleep(RESYNC_SECONDS * 2)                              # one run per state of the timeline
    assert cluster.names(APPS) == sorted([TRIGGERED, second])
    assert operator.returncode is None


@pytest.mark.asyncio
async def test_scheduled_indexing_starts_when_an_enabled_index_is_not_built(cluster, operator, tables):
    """A table whose metadata table lacks an index its spec enables, with indexing scheduled: one
    run of the asynchronous indexer starts with the engine's reason, and its job builds under the
    table's lock while the writers leave the index to it."""
    base_path = tables("trips")                  # Hudi 1.0's metadata table: no bloom_filters partition
    services = {"cleaning": {"mode": "disabled"}, "compaction": {"mode": "disabled"},
                "indexing": {"mode": "scheduled", "schedule": "0 3 * * *"}}
    await cluster.create(TABLES, table_body("trips", base_path, services=services,
                                            metadataTable={"bloomFilters": True}))
    run = "trips-indexing-run-220210130911"
    await cluster.until(lambda: cluster.names(APPS) == [run], what="the triggered indexing")
    [event] = await cluster.posted("trips", "IndexingTriggered")
    assert event["message"] == f"indexing due: bloom_filters enabled but not built: started {run}"
    assert cluster.get(APPS, run)["metadata"]["labels"]["lakehouse.hudi.dev/service"] == "indexing"
    config = yaml.safe_load(cluster.get(CONFIGMAPS, "trips-indexing-config")["data"]["job-config.yaml"])
    assert config["service"] == "indexing"
    assert config["hoodieConf"]["hoodie.metadata.index.async"] == "true"
    assert config["hoodieConf"]["hoodie.write.concurrency.mode"] == "OPTIMISTIC_CONCURRENCY_CONTROL"
    assert cluster.status(TABLES, "trips")["concurrency"]["writers"] == ["indexing"]
    await asyncio.sleep(RESYNC_SECONDS * 2)                              # one run per state of the table
    assert cluster.names(APPS) == [run]
    assert operator.returncode is None


@pytest.mark.asyncio
async def test_degraded_not_crashing_for_what_only_the_operator_can_detect(cluster, operator, tables, tmp_path):
    """A pipeline whose table is missing, a spec the API would refuse, a base path it cannot read:
    Degraded with the reason, and the pipeline recovers as soon as its table appears."""
    await cluster.create(PIPELINES, pipeline_body("orphan", "trips"))
    await cluster.until(lambda: phase(cluster, PIPELINES, "orphan") == "Degraded", what="Degraded")
    degraded = find(cluster.status(PIPELINES, "orphan")["conditions"], "Degraded")
    assert degraded["reason"] == "TableNotFound" and "trips" in degraded["message"]
    assert [e["type"] for e in await cluster.posted("orphan", "TableNotFound")] == ["Warning"]
    assert cluster.names(APPS) == []

    broken = table_body("broken", tables("broken"))
    broken["spec"]["tableType"] = "COPY_ON_WRITE"                     # the data is merge-on-read
    del broken["spec"]["services"]["compaction"]
    await cluster.create(TABLES, broken)
    unreadable = tmp_path / "unreadable"
    (unreadable / ".hoodie").mkdir(parents=True)
    (unreadable / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=x\nhoodie.table.version=3\n")
    await cluster.create(TABLES, table_body("old", str(unreadable)))
    await cluster.create(PIPELINES, {**pipeline_body("typo", "trips"), "spec": {
        **pipeline_body("typo", "trips")["spec"], "opration": "insert"}})

    await cluster.until(lambda: phase(cluster, TABLES, "broken") == "Degraded", what="type mismatch")
    assert find(cluster.status(TABLES, "broken")["conditions"], "Degraded")["reason"] == "TableTypeMismatch"
    await cluster.until(lambda: phase(cluster, TABLES, "old") == "Degraded", what="unreadable base path")
    assert find(cluster.status(TABLES, "old")["conditions"], "Degraded")["reason"] == "BasePathUnreadable"
    await cluster.until(lambda: phase(cluster, PIPELINES, "typo") == "Degraded", what="invalid spec")
    typo = find(cluster.status(PIPELINES, "typo")["conditions"], "Degraded")
    assert typo["reason"] == "InvalidSpec" and "spec.opration" in typo["message"]

    await cluster.create(TABLES, table_body("trips", tables("trips")))
    await cluster.until(lambda: phase(cluster, PIPELINES, "orphan") == "Deploying", what="recovery")
    assert cluster.get(APPS, "orphan-ingest") is not None
    await asyncio.sleep(RESYNC_SECONDS * 2)                              # resyncs repeat no warning
    assert len(cluster.events("TableNotFound", "orphan")) == 1
    assert operator.returncode is None


@pytest.mark.asyncio
async def test_deleting_a_table_with_policy_delete_waits_for_its_pipelines_then_deletes_the_data(
        cluster, operator, tables):
    base_path = tables("doomed")
    await cluster.create(TABLES, table_body("doomed", base_path, deletionPolicy="Delete"))
    await cluster.create(TABLES, table_body("kept", tables("kept")))
    await cluster.create(PIPELINES, pipeline_body("writer", "doomed"))
    await cluster.until(lambda: cluster.get(APPS, "writer-ingest"), what="the writer's job")

    await cluster.delete(TABLES, "doomed")
    await cluster.until(lambda: phase(cluster, TABLES, "doomed") == "Deleting"
                        and "HudiPipeline writer" in cluster.status(TABLES, "doomed").get("message", ""),
                        what="waiting for the pipeline")
    await asyncio.sleep(RESYNC_SECONDS * 2)
    assert Path(base_path, ".hoodie", "hoodie.properties").exists()
    assert cluster.get(TABLES, "doomed") is not None

    await cluster.delete(PIPELINES, "writer")
    await cluster.until(lambda: cluster.get(TABLES, "doomed") is None, timeout=60, what="the table to go")
    assert not Path(base_path).exists()
    await cluster.posted("doomed", "DataDeleted")

    kept = cluster.get(TABLES, "kept")
    kept_path = kept["spec"]["basePath"]
    await cluster.delete(TABLES, "kept")
    await cluster.until(lambda: cluster.get(TABLES, "kept") is None, what="the retained table to go")
    assert Path(kept_path, ".hoodie", "hoodie.properties").exists()
    await cluster.posted("kept", "DataRetained")


@pytest.mark.asyncio
async def test_operator_serves_health_and_metrics_and_needs_only_its_rbac_rules(cluster, operator, tables):
    """Every request the operator made to the stand-in is allowed by ``hudi_operator.rbac``."""
    await cluster.create(TABLES, table_body("trips", tables("trips")))
    await cluster.create(PIPELINES, pipeline_body("ingest", "trips"))
    await cluster.until(lambda: cluster.get(APPS, "ingest-ingest"), what="the job")
    await cluster.spark_state("ingest-ingest", "RUNNING")
    await cluster.until(lambda: phase(cluster, PIPELINES, "ingest") == "Running", what="Running")
    await cluster.delete(PIPELINES, "ingest")
    await cluster.until(lambda: cluster.get(PIPELINES, "ingest") is None, what="the pipeline to go")

    async with aiohttp.ClientSession() as session:
        async with session.get(operator.health_url) as response:
            assert response.status == 200
        async with session.get(operator.metrics_url) as response:
            text = await response.text()
    assert 'hudi_operator_reconciliations_total{kind="HudiPipeline",result="ok"}' in text
    assert 'hudi_operator_table_pending_compactions{namespace="data",table="trips"} 0.0' in text
    assert 'hudi_operator_table_last_commit_age_seconds{namespace="data",table="trips"}' in text

    checked = allowed_requests(cluster, rbac.namespaced_rules() + rbac.cluster_rules())
    assert {("create", "sparkoperator.k8s.io", "sparkapplications", None),
            ("patch", "lakehouse.hudi.dev", "hudipipelines", "status"),
            ("create", "", "events", None), ("watch", "sparkoperator.k8s.io", "sparkapplications", None),
            ("delete", "", "configmaps", None)} <= checked


def allowed_requests(cluster: Cluster, rules: list[rbac.Rule], name: str | None = None) -> set[tuple]:
    """Asserts every request the operator(s) made is allowed by ``rules`` (from ``hudi_operator.rbac``,
    which the chart renders); returns what was checked as (verb, group, resource, subresource)."""
    verbs = {"GET": "get", "POST": "create", "PATCH": "patch", "DELETE": "delete", "PUT": "update"}
    checked = set()
    for request in cluster.operator_requests(name):
        if request.resource is None or request.resource.plural is None:
            continue                                                      # discovery: allowed to everyone
        verb = ("watch" if request.action == kmock.action.WATCH else
                "list" if request.action == kmock.action.LIST else verbs[request.method])
        group, plural = request.resource.group, request.resource.plural
        assert rbac.allows(rules, verb, group, plural, request.subresource), \
            f"{request.method} {request.url.path} ({verb} {group}/{plural}) is not in hudi_operator.rbac"
        checked.add((verb, group, plural, request.subresource))
    return checked


def created_by(cluster: Cluster, resource: str, name: str, namespace: str = NS) -> set[str]:
    """Which operators (by token) created this object."""
    return {r.headers.get("Authorization", "").removeprefix("Bearer token-") for r in cluster.operator_requests()
            if r.method == "POST" and r.resource == resource and r.namespace == namespace
            and (r.data or {}).get("metadata", {}).get("name") == name}


@pytest.mark.asyncio
async def test_two_replicas_peer_one_works_and_the_standby_takes_over_when_it_dies(cluster, tmp_path, tables):
    """HA by kopf peering through a KopfPeering object in the watched namespace: two operator
    processes, the higher priority works and the other stands by making no change; when the worker is
    killed (SIGKILL: no goodbye in the peering), the standby takes over once the worker's peering
    entry expires, and reconciles what was declared meanwhile. The API is kmock, a stand-in."""
    await cluster.create(PEERINGS, {"apiVersion": "kopf.dev/v1", "kind": "KopfPeering",
                                    "metadata": {"name": "hudi-operator"}})
    # Long enough that a replica starved of CPU on a loaded machine still renews its entry in time.
    peering = {"PEERING_NAME": "hudi-operator", "PEERING_LIFETIME_SECONDS": "10"}
    async with running_operator(cluster, tmp_path, "leader", PEERING_PRIORITY="200", **peering) as leader, \
            running_operator(cluster, tmp_path, "standby", PEERING_PRIORITY="100", **peering):
        await cluster.until(lambda: len(cluster.status(PEERINGS, "hudi-operator")) == 2, what="both in the peering")
        await cluster.until(lambda: _watching(cluster, "leader"), what="the leader to watch")
        await cluster.create(TABLES, table_body("trips", tables("trips")))
        await cluster.create(PIPELINES, pipeline_body("first", "trips"))
        await cluster.until(lambda: cluster.get(APPS, "first-ingest"), what="the first job")
        await asyncio.sleep(RESYNC_SECONDS * 2)                       # resync rounds: the standby stays still
        changes = [r for r in cluster.operator_requests("standby")
                   if r.method in ("POST", "PATCH", "PUT", "DELETE") and r.resource != PEERINGS]
        assert changes == [] and created_by(cluster, APPS, "first-ingest") == {"leader"}

        leader.kill()
        await leader.wait()
        await cluster.create(PIPELINES, pipeline_body("second", "trips"))
        await cluster.until(lambda: cluster.get(APPS, "second-ingest"), timeout=60, what="the standby to take over")
        assert created_by(cluster, APPS, "second-ingest") == {"standby"}
        await cluster.spark_state("second-ingest", "RUNNING")
        await cluster.until(lambda: phase(cluster, PIPELINES, "second") == "Running", what="status by the standby")
    assert ("patch", "kopf.dev", "kopfpeerings", None) in allowed_requests(
        cluster, rbac.namespaced_rules(peering=True) + rbac.cluster_rules())


@pytest.mark.asyncio
async def test_cluster_wide_operator_serves_every_namespace_and_a_namespaced_one_only_its_own(
        cluster, tmp_path, tables):
    """WATCH_NAMESPACES empty: one operator for the whole cluster (a ClusterRole's worth of rules);
    a namespaced operator ignores resources elsewhere. The API is kmock, a stand-in."""
    for namespace in (NS, OTHER_NS):
        await cluster.create(TABLES, table_body("trips", tables(f"trips-{namespace}")), namespace)
        await cluster.create(PIPELINES, pipeline_body("ingest", "trips"), namespace)
    async with running_operator(cluster, tmp_path, "namespaced"):
        await cluster.until(lambda: cluster.get(APPS, "ingest-ingest"), what="the job in the watched namespace")
        await asyncio.sleep(RESYNC_SECONDS * 2)
        assert cluster.get(APPS, "ingest-ingest", OTHER_NS) is None
    async with running_operator(cluster, tmp_path, "clusterwide", WATCH_NAMESPACES=""):
        await cluster.until(lambda: cluster.get(APPS, "ingest-ingest", OTHER_NS), what="the job in the other namespace")
        assert created_by(cluster, APPS, "ingest-ingest") == {"namespaced"}
        assert created_by(cluster, APPS, "ingest-ingest", OTHER_NS) == {"clusterwide"}
        await cluster.until(lambda: cluster.status(TABLES, "trips", OTHER_NS)["observedGeneration"] == 1,
                            what="the other namespace's table status")
    watched = {(str(r.url.path)) for r in cluster.operator_requests("clusterwide") if r.action == kmock.action.WATCH}
    assert "/apis/lakehouse.hudi.dev/v1alpha1/hudipipelines" in watched          # one watch, all namespaces
    allowed_requests(cluster, rbac.policy_rules(clusterwide=True)["namespaced"] + rbac.cluster_rules(), "clusterwide")
