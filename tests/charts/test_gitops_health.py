"""The GitOps health checks of HudiTable and HudiPipeline, run on the statuses the operator really
writes: each status comes from the operator's own pure reconcile code (``table_status.status``,
``lifecycle.step`` on the plan of a committed example, ``conditions.degraded_status``), stored as the
API server stores a status patch. The Argo CD check runs in a real Lua 5.1 interpreter (lupa; Argo
CD's gopher-lua is Lua 5.1) with only the libraries Argo CD opens; Flux's health expressions run in
cel-python under the rules of Flux's evaluator (RFC 0009). Both tools must read every status alike."""
from __future__ import annotations

import copy
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import celpy
import lupa.lua51
import pytest
import yaml

from hudi_operator.api import load
from hudi_operator.planner import plan_pipeline
from hudi_operator.reconcile import children, lifecycle, table_status
from hudi_operator.reconcile.conditions import degraded_status, timestamp
from hudi_operator.settings import Settings
from tests.support.merge_patch import apply_merge_patch

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"
ARGOCD = GITOPS / "argocd"
NAMESPACE = "lakehouse"
NOW = dt.datetime(2026, 11, 26, 6, 0, tzinfo=dt.timezone.utc)
PLANNER = Settings.from_env({}).planner
HEALTH_KEY = "resource.customizations.health.{group}_{kind}"
ARGO_STATUSES = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}
# Argo CD runs a health check from argocd-cm with gopher-lua's package, base and table libraries and a
# reduced os (util/lua/lua.go, useOpenLibs off): none of these is there (os: none of it is used here).
NOT_IN_ARGO = ("string", "math", "io", "os", "debug", "coroutine", "python")
# Flux's kstatus result for each Argo CD health of the same status.
FLUX_FOR_ARGO = {"Healthy": "Current", "Suspended": "Current", "Progressing": "InProgress", "Degraded": "Failed"}


def resource(path: Path) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all(path.read_text()) if d]
    doc["metadata"].setdefault("namespace", NAMESPACE)
    doc["metadata"]["generation"] = 1
    return doc


def stored(status: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The status the API server keeps after the operator's status patch (a JSON merge patch, whose
    nulls delete) on top of ``previous``."""
    return apply_merge_patch(previous or {}, status)


# --- the checks as Argo CD and Flux run them ------------------------------------------------------------
def argo_health(obj: dict[str, Any], script: Path = ARGOCD / "health.lua") -> tuple[str, str]:
    """``script`` run as Argo CD runs a health check: ``obj`` a global table made from the object's
    JSON, the chunk's returned table read for status and message."""
    lua = lupa.lua51.LuaRuntime()
    assert lua.eval("_VERSION") == "Lua 5.1"
    for name in NOT_IN_ARGO:
        lua.globals()[name] = None
    lua.globals().obj = lua.table_from(json.loads(json.dumps(obj)), recursive=True)
    result = lua.execute(script.read_text())
    status, message = result["status"], result["message"]
    assert status in ARGO_STATUSES and isinstance(message, str), (status, message)
    return status, message


def health_expressions() -> dict[str, dict[str, str]]:
    (lakehouse,) = [d for d in yaml.safe_load_all((GITOPS / "flux" / "cluster.yaml").read_text())
                    if d["kind"] == "Kustomization" and d["spec"]["path"] == "./examples/gitops/lakehouse"]
    return {e["kind"]: e for e in lakehouse["spec"]["healthCheckExprs"]}


def flux_health(obj: dict[str, Any]) -> str:
    """Flux's kstatus result for ``obj`` (fluxcd/pkg runtime/cel StatusEvaluator): InProgress while
    status.observedGeneration differs from metadata.generation, then the first of inProgress, failed,
    current that holds, else InProgress; an expression that cannot be evaluated is an error, which
    Flux reports and polls again."""
    status = obj.get("status") or {}
    if "observedGeneration" in status and status["observedGeneration"] != obj["metadata"].get("generation"):
        return "InProgress"
    expressions = health_expressions()[obj["kind"]]
    assert expressions["apiVersion"] == obj["apiVersion"]
    activation = {key: celpy.json_to_cel(value) for key, value in obj.items()}
    env = celpy.Environment()
    for field, result in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        if field in expressions:
            value = env.program(env.compile(expressions[field])).evaluate(activation)
            if isinstance(value, celpy.CELEvalError):
                raise value
            if value:
                return result
    return "InProgress"


@dataclass(frozen=True)
class Case:
    name: str
    obj: dict[str, Any]
    health: str            # Argo CD's
    message: str           # a part of Argo CD's message


def check(case: Case) -> None:
    """Argo CD's health and message, and Flux's reading of the same object. Flux's expressions cannot
    see a missing top-level status (has() does not reach it): the evaluation errs, and Flux polls
    again until the operator has written one."""
    health, message = argo_health(case.obj)
    assert (health, case.message in message) == (case.health, True), (case.name, health, message)
    if "status" not in case.obj:
        with pytest.raises(celpy.CELEvalError):
            flux_health(case.obj)
    else:
        assert flux_health(case.obj) == FLUX_FOR_ARGO[case.health], case.name


# --- HudiTable: the statuses table_status.status and degraded_status write ----------------------------
def table_cases() -> list[Case]:
    table = resource(GITOPS / "lakehouse" / "orders-table.yaml")

    def with_status(status: dict[str, Any], generation: int = 1) -> dict[str, Any]:
        return {**table, "metadata": {**table["metadata"], "generation": generation}, "status": status}

    def observed(due: bool) -> table_status.TableObservation:
        return table_status.TableObservation(
            table_version=6, table_type="MERGE_ON_READ", last_commit_instant="20261126055500123",
            last_commit_time=NOW - dt.timedelta(minutes=5), pending_compactions=0, pending_clusterings=0,
            commits_since_compaction=5 if due else 1, compaction_due=due, checkpoint=None)

    pending = stored(table_status.status(None, {}, None, 1, NOW))
    ready = stored(table_status.status(observed(False), {}, pending, 1, NOW), pending)
    due = stored(table_status.status(observed(True), {}, ready, 1, NOW), ready)
    mismatch = ("the table at s3a://my-lakehouse/bronze/orders is COPY_ON_WRITE, the spec says MERGE_ON_READ; "
                "a table's type cannot change: restore spec.tableType or use a new basePath")
    degraded = stored(degraded_status(ready, "TableTypeMismatch", mismatch, 1, NOW), ready)
    deleting = stored({"phase": "Deleting", "message": "waiting for HudiPipeline orders-files to be deleted before "
                                                       "deleting the data at s3a://my-lakehouse/bronze/orders"}, ready)
    return [
        Case("not reconciled yet", table, "Progressing", "waiting for the Hudi operator"),
        Case("waiting for the first commit: Healthy, or the pipelines' later sync wave never starts",
             with_status(pending), "Healthy", "no Hudi table at basePath yet"),
        Case("ready", with_status(ready), "Healthy", "table version 6, last commit 20261126055500123"),
        Case("compaction due is work for the table services, not a fault", with_status(due), "Healthy",
             "compaction is due"),
        Case("degraded", with_status(degraded), "Degraded", mismatch),
        Case("recovered: the Degraded condition turned False",
             with_status(stored(table_status.status(observed(False), {}, degraded, 1, NOW), degraded)),
             "Healthy", "table version 6"),
        Case("a spec generation the operator has not reconciled", with_status(ready, generation=2), "Progressing",
             "reconcile generation 2"),
        Case("a stale Degraded is not this generation's", with_status(degraded, generation=2), "Progressing",
             "reconcile generation 2"),
        Case("deleting, waiting for its writers", with_status(deleting), "Progressing",
             "waiting for HudiPipeline orders-files to be deleted"),
    ]


@pytest.mark.parametrize("case", table_cases(), ids=lambda c: c.name)
def test_table_health_from_the_statuses_the_operator_writes(case):
    check(case)


# --- HudiPipeline: the operator's lifecycle over a committed pipeline and its Spark job ---------------
class PipelineLoop:
    """One HudiPipeline as the operator reconciles it (``handlers._converge_pipeline`` without the API
    calls): the Spark job the plan of the spec in effect names is observed among the live objects,
    ``lifecycle.step`` decides, and the status is stored as the API server stores the patch. ``run``
    plays the Spark operator: the live job becomes the planned one, in a given state."""

    def __init__(self, table: Path, pipeline: Path):
        self.table = load(resource(table))
        self.body = resource(pipeline)
        self.live: list[dict[str, Any]] = []

    def change(self, **spec: Any) -> dict[str, Any]:
        """A commit to the pipeline's spec: the API server bumps the generation."""
        self.body["spec"] = {**self.body["spec"], **spec}
        self.body["metadata"]["generation"] += 1
        return self.object()

    def expected(self) -> dict[str, Any]:
        in_effect = lifecycle.spec_in_effect(self.body.get("status"), lifecycle.canonical(self.body["spec"]))
        pipeline = load({**self.body, "spec": json.loads(in_effect)})
        return children.spark_application(plan_pipeline(self.table, pipeline, PLANNER).manifests)

    def run(self, state: str, at: dt.datetime, error: str = "", schedule: str = "Scheduled") -> None:
        app = copy.deepcopy(self.expected())
        run_status = {"applicationState": {"state": state, "errorMessage": error}, "executionAttempts": 1,
                      "submissionAttempts": 1, "lastSubmissionAttemptTime": timestamp(at)}
        if app["kind"] == lifecycle.SCHEDULED_SPARK_APPLICATION:
            run = {"apiVersion": app["apiVersion"], "kind": lifecycle.SPARK_APPLICATION,
                   "metadata": {"name": f"{app['metadata']['name']}-1"}, "status": run_status}
            app["status"] = {"scheduleState": schedule, "lastRun": timestamp(at),
                             "lastRunName": run["metadata"]["name"], "reason": error}
            self.live = [app, run]
        else:
            app["status"] = run_status
            self.live = [app]

    def reconcile(self, now: dt.datetime) -> dict[str, Any]:
        spec = load(self.body).spec
        intent = lifecycle.Intent(lifecycle.canonical(self.body["spec"]), spec.state, spec.upgrade.rollback_on_failure,
                                  spec.upgrade.stable_after_seconds, self.body["metadata"]["generation"])
        previous = self.body.get("status")
        decision = lifecycle.step(intent, previous, lifecycle.observe(self.live, self.expected()), now)
        self.body["status"] = stored(decision.status, previous)
        return self.object()

    def object(self) -> dict[str, Any]:
        return copy.deepcopy(self.body)


def continuous_cases() -> list[Case]:
    """orders-kafka (operator/examples): continuous, with rollbackOnFailure."""
    loop = PipelineLoop(ROOT / "operator" / "examples" / "orders-table.yaml",
                        ROOT / "operator" / "examples" / "orders-kafka-pipeline.yaml")
    cases = [Case("not reconciled yet", loop.object(), "Progressing", "waiting for the Hudi operator")]
    cases.append(Case("deploying", loop.reconcile(NOW), "Progressing", "waiting for the Spark job"))
    loop.run("SUBMITTED", NOW)
    cases.append(Case("submitted", loop.reconcile(NOW), "Progressing", "SUBMITTED"))
    loop.run("RUNNING", NOW)
    running = loop.reconcile(NOW + dt.timedelta(seconds=30))
    cases.append(Case("running", running, "Healthy", "running"))
    loop.run("WEIRD_NEW_STATE", NOW)
    unknown = loop.reconcile(NOW + dt.timedelta(seconds=40))
    assert unknown["status"]["phase"] == lifecycle.DEGRADED_PHASE
    cases.append(Case("a Spark state the operator does not know (phase Degraded, Degraded condition False)", unknown,
                      "Degraded", "is in state WEIRD_NEW_STATE"))
    loop.run("FAILING", NOW)
    cases.append(Case("restarted by the Spark operator", loop.reconcile(NOW + dt.timedelta(minutes=1)), "Progressing",
                      "restarted by the Spark operator"))
    loop.run("RUNNING", NOW)
    assert loop.reconcile(NOW + dt.timedelta(minutes=10))["status"]["reconciliation"]["lastStableSpec"]
    upgrade_at = NOW + dt.timedelta(minutes=20)
    spark = {**loop.body["spec"]["spark"], "executor": {"instances": 4}}
    cases.append(Case("a committed change the operator has not seen", loop.change(spark=spark), "Progressing",
                      "reconcile generation 2"))
    cases.append(Case("upgrading: the old job is being replaced", loop.reconcile(upgrade_at), "Progressing",
                      "waiting for the Spark job"))
    loop.run("RUNNING", upgrade_at)
    cases.append(Case("upgraded, not yet stable", loop.reconcile(upgrade_at + dt.timedelta(seconds=30)),
                      "Progressing", "becomes the last stable one after 300s"))
    loop.run("FAILED", upgrade_at, error="driver OOMKilled")
    cases.append(Case("failed after the upgrade: rolling back", loop.reconcile(upgrade_at + dt.timedelta(minutes=1)),
                      "Progressing", "driver OOMKilled"))
    loop.run("RUNNING", upgrade_at + dt.timedelta(minutes=2))
    rolled_back = loop.reconcile(upgrade_at + dt.timedelta(minutes=3))
    assert rolled_back["status"]["reconciliation"]["state"] == lifecycle.ROLLED_BACK
    cases.append(Case("rolled back: Git's spec is not what runs", rolled_back, "Degraded", "change the spec to try again"))
    loop.change(spark={**spark, "executor": {"instances": 2}}, state="suspended")
    cases.append(Case("suspended with a new spec: stopping the job", loop.reconcile(upgrade_at + dt.timedelta(minutes=5)),
                      "Progressing", "stopping"))
    loop.run("SUSPENDED", upgrade_at + dt.timedelta(minutes=5))
    cases.append(Case("suspended while an upgrade waits to run", loop.reconcile(upgrade_at + dt.timedelta(minutes=6)),
                      "Suspended", "suspended: no job runs"))
    return cases


def scheduled_cases() -> list[Case]:
    """orders-files (the GitOps example): scheduled, no rollback."""
    loop = PipelineLoop(GITOPS / "lakehouse" / "orders-table.yaml", GITOPS / "lakehouse" / "orders-files-pipeline.yaml")
    cases = [Case("deploying", loop.reconcile(NOW), "Progressing", "waiting for the Spark job")]
    loop.run("", NOW)
    cases.append(Case("scheduled, no run yet", loop.reconcile(NOW), "Healthy", "scheduled (Scheduled)"))
    loop.run("COMPLETED", NOW)
    cases.append(Case("last run completed", loop.reconcile(NOW + dt.timedelta(minutes=15)), "Healthy", "completed"))
    loop.run("FAILED", NOW, error="Path does not exist: s3a://my-lakehouse/landing/orders/")
    cases.append(Case("last run failed", loop.reconcile(NOW + dt.timedelta(minutes=30)), "Degraded",
                      "Path does not exist"))
    loop.run("", NOW, error="invalid cron schedule", schedule="FailedValidation")
    cases.append(Case("schedule refused by the Spark operator", loop.reconcile(NOW + dt.timedelta(minutes=31)),
                      "Degraded", "invalid cron schedule"))
    loop.run("RUNNING", NOW)
    loop.reconcile(NOW + dt.timedelta(minutes=32))
    loop.change(state="suspended")
    loop.run("COMPLETED", NOW)
    cases.append(Case("suspended", loop.reconcile(NOW + dt.timedelta(minutes=40)), "Suspended",
                      "suspended: no job runs"))
    missing = "HudiTable orders does not exist in namespace lakehouse: create it, or fix spec.tableRef.name"
    orphan = loop.object()
    orphan["status"] = stored(degraded_status(orphan["status"], "TableNotFound", missing,
                                              orphan["metadata"]["generation"], NOW), orphan["status"])
    cases.append(Case("what only the operator can detect", orphan, "Degraded", missing))
    return cases


@pytest.mark.parametrize("case", continuous_cases() + scheduled_cases(), ids=lambda c: c.name)
def test_pipeline_health_from_the_statuses_the_operator_writes(case):
    check(case)


# --- the Application check of the app of apps ---------------------------------------------------------
@pytest.mark.parametrize("status,health,message", [
    (None, "Progressing", "waiting for the Application to sync"),
    ({"sync": {"status": "OutOfSync"}}, "Progressing", "waiting for the Application to sync"),
    ({"health": {"status": "Missing"}, "sync": {"status": "OutOfSync"}}, "Progressing",
     "its resources do not exist yet"),
    ({"health": {"status": "Progressing"}, "operationState": {"phase": "Running", "message": "waiting for healthy "
                                                              "state of apps/Deployment/hudi-operator"}},
     "Progressing", "waiting for healthy state"),
    ({"health": {"status": "Healthy"}, "sync": {"status": "Synced"}, "operationState": {"phase": "Succeeded"}},
     "Healthy", ""),
    ({"health": {"status": "Degraded", "message": "Deployment hudi-operator exceeded its progress deadline"},
      "operationState": {"phase": "Succeeded"}}, "Degraded", "exceeded its progress deadline"),
])
def test_application_health_gates_the_next_wave(status, health, message):
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "hudi-lakehouse"}}
    if status is not None:
        app["status"] = status
    got, said = argo_health(app, ARGOCD / "application-health.lua")
    assert got == health and message in said, (got, said)


# --- what Argo CD users install -----------------------------------------------------------------------
def test_argocd_cm_patch_embeds_the_lua_files_unchanged():
    """The argocd-cm keys Argo CD reads (resource.customizations.health.<group>_<kind>) carry exactly
    the tested .lua files."""
    (patch,) = [d for d in yaml.safe_load_all((ARGOCD / "argocd-cm-health.yaml").read_text()) if d]
    assert (patch["kind"], patch["metadata"]["name"], patch["metadata"]["namespace"]) == ("ConfigMap", "argocd-cm",
                                                                                          "argocd")
    scripts = {HEALTH_KEY.format(group="lakehouse.hudi.dev", kind=kind): ARGOCD / "health.lua"
               for kind in ("HudiTable", "HudiPipeline")}
    scripts[HEALTH_KEY.format(group="argoproj.io", kind="Application")] = ARGOCD / "application-health.lua"
    assert set(patch["data"]) == set(scripts)
    for key, script in scripts.items():
        assert patch["data"][key] == script.read_text(), f"{key} differs from {script.name}: copy the file into it"
