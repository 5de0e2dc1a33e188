"""The operator's pure reconcile logic, tested directly: the pipeline lifecycle (deploy, stable,
upgrade, rollback, suspend/resume, failure), children diff and drift correction on the planner's
real manifests, conditions, and table status read from real Hudi tables (fixtures written by
Apache Hudi, and tables written here by hudi_engine with Spark)."""
from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from hudi_operator import api
from hudi_operator.planner import OperatorSettings, plan_pipeline
from hudi_operator.planner.labels import SPEC_HASH_ANNOTATION
from hudi_operator.reconcile import children, lifecycle, table_status
from hudi_operator.reconcile.conditions import Condition, degraded_status, find, merge
from hudi_engine.table.meta_client import HoodieTable
from tests.conftest import unzip_fixture
from tests.support.merge_patch import apply_merge_patch

T0 = dt.datetime(2025, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
NS = "data"
TABLE = {"apiVersion": "lakehouse.hudi.dev/v1alpha1", "kind": "HudiTable",
         "metadata": {"name": "orders", "namespace": NS, "uid": "table-uid", "generation": 1},
         "spec": {"basePath": "s3://lake/orders", "recordKey": ["id"], "orderingField": "ts"}}


def pipeline_body(generation=1, **spec):
    base = {"tableRef": {"name": "orders"},
            "source": {"type": "files", "files": {"path": "s3://landing/orders", "format": "json"}}}
    return {"apiVersion": "lakehouse.hudi.dev/v1alpha1", "kind": "HudiPipeline",
            "metadata": {"name": "orders-ingest", "namespace": NS, "uid": "pipe-uid", "generation": generation},
            "spec": {**base, **spec}}


def plan_of(body):
    """The objects the operator applies for ``body``: the planner's, job-configs bound to their jobs."""
    plan = plan_pipeline(api.load(TABLE), api.load(body), OperatorSettings(image="spark-jobs:test"))
    return plan.manifests


def live(manifest, **status):
    """A manifest as the API server returns it: the same object plus server fields and a status."""
    obj = copy.deepcopy(manifest)
    obj["metadata"].update(resourceVersion="7", creationTimestamp="2025-01-01T00:00:00Z")
    if status:
        obj["status"] = status
    return obj


def app_of(manifests):
    return children.spark_application(manifests)


def intent(body, **kw):
    spec = api.load(body).spec
    return lifecycle.Intent(lifecycle.canonical(body["spec"]), spec.state, spec.upgrade.rollback_on_failure,
                            spec.upgrade.stable_after_seconds, body["metadata"]["generation"], **kw)


def running(plan, since, state="RUNNING", **extra):
    return live(app_of(plan), applicationState={"state": state, **extra},
                lastSubmissionAttemptTime=since.strftime("%Y-%m-%dT%H:%M:%SZ"), submissionAttempts=1,
                executionAttempts=1)


def reconcile(body, status, live_objects, now):
    """What the handler does, minus I/O: observe against the spec in effect, step, plan the decision."""
    spec_json = lifecycle.canonical(body["spec"])
    in_effect = lifecycle.spec_in_effect(status, spec_json)
    expected = app_of(plan_of({**body, "spec": json.loads(in_effect)}))
    app = lifecycle.observe(live_objects, expected)
    return app, lifecycle.step(intent(body), status, app, now)


# --- conditions ---------------------------------------------------------------------------------------
def test_conditions_keep_their_transition_time_while_unchanged():
    first = merge(None, [Condition("Ready", False, "Deploying", "starting")], 1, T0)
    later = T0 + dt.timedelta(minutes=5)
    same = merge(first, [Condition("Ready", False, "Starting", "still starting")], 2, later)
    assert same[0]["lastTransitionTime"] == "2025-01-01T12:00:00Z"
    assert same[0] | {"lastTransitionTime": None} == {
        "type": "Ready", "status": "False", "reason": "Starting", "message": "still starting",
        "lastTransitionTime": None, "observedGeneration": 2}
    flipped = merge(same, [Condition("Ready", True, "Running", "")], 2, later)
    assert flipped[0]["status"] == "True" and flipped[0]["lastTransitionTime"] == "2025-01-01T12:05:00Z"


def test_conditions_of_other_writers_are_kept():
    theirs = {"type": "ArgoHealthy", "status": "True", "reason": "Fine", "message": "",
              "lastTransitionTime": "2024-01-01T00:00:00Z"}
    merged = merge([theirs], [Condition("Degraded", False, "Healthy")], 3, T0)
    assert [c["type"] for c in merged] == ["Degraded", "ArgoHealthy"] and merged[1] == theirs


def test_degraded_status_says_what_is_wrong_on_every_condition():
    status = degraded_status({"conditions": merge(None, [Condition("Ready", True, "Running")], 1, T0)},
                             "TableNotFound", "HudiTable orders does not exist", 4, T0 + dt.timedelta(hours=1))
    assert status["phase"] == "Degraded" and status["observedGeneration"] == 4
    assert find(status["conditions"], "Degraded") | {"lastTransitionTime": None} == {
        "type": "Degraded", "status": "True", "reason": "TableNotFound", "message": "HudiTable orders does not exist",
        "lastTransitionTime": None, "observedGeneration": 4}
    assert find(status["conditions"], "Ready")["status"] == "False"


# --- children: desired vs live --------------------------------------------------------------------------
def test_missing_children_are_created_in_apply_order():
    plan = plan_of(pipeline_body())
    actions = children.diff(plan, [], "pipe-uid")
    assert [(a.verb, a.kind) for a in actions] == [("create", "ConfigMap"), ("create", "SparkApplication")]
    assert actions[1].body == app_of(plan) and actions[1].reason == "Created"


def test_children_matching_the_plan_need_nothing_even_with_status_and_foreign_labels():
    plan = plan_of(pipeline_body())
    objects = [live(m) for m in plan]
    objects[1]["status"] = {"applicationState": {"state": "RUNNING"}}
    objects[1]["metadata"]["labels"]["team"] = "payments"          # added by someone else: not drift
    assert children.diff(plan, objects, "pipe-uid") == []


def test_a_changed_plan_patches_config_maps_and_replaces_spark_applications():
    old = plan_of(pipeline_body())
    new = plan_of(pipeline_body(generation=2, operation="insert"))
    actions = children.diff(new, [live(m) for m in old], "pipe-uid")
    assert [(a.verb, a.kind, a.reason) for a in actions] == [
        ("patch", "ConfigMap", "Updated"), ("delete", "SparkApplication", "Replacing")]
    result = apply_merge_patch(live(old[0]), actions[0].body)
    assert result["data"] == new[0]["data"]
    assert result["metadata"]["annotations"][SPEC_HASH_ANNOTATION] == \
        new[0]["metadata"]["annotations"][SPEC_HASH_ANNOTATION]


def test_suspending_patches_the_spark_application_in_place():
    old = plan_of(pipeline_body())
    new = plan_of(pipeline_body(generation=2, state="suspended"))
    actions = children.diff(new, [live(m) for m in old], "pipe-uid")
    assert [(a.verb, a.kind) for a in actions] == [("patch", "SparkApplication")]
    assert actions[0].body["spec"] == {"suspend": True}


def test_hand_edits_are_drift_and_are_put_back_exactly():
    plan = plan_of(pipeline_body())
    edited = [live(m) for m in plan]
    edited[1]["spec"]["driver"]["memory"] = "16g"
    edited[1]["spec"]["hand"] = "added"
    del edited[1]["metadata"]["labels"]["lakehouse.hudi.dev/table"]
    assert children.drifted(edited[1], plan[1])
    (action,) = children.diff(plan, edited, "pipe-uid")
    assert (action.verb, action.reason) == ("patch", "DriftCorrected")
    restored = apply_merge_patch(edited[1], action.body)
    assert restored["spec"] == plan[1]["spec"]
    assert restored["metadata"]["labels"] == plan[1]["metadata"]["labels"]
    assert not children.drifted(restored, plan[1])


def test_objects_no_longer_planned_are_pruned_but_others_objects_never_touched():
    plan = plan_of(pipeline_body())
    stale = live(plan[0])
    stale["metadata"]["name"] = "orders-ingest-old-config"
    foreign = live(plan[1])
    foreign["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "x", "uid": "other", "controller": True}]
    scheduled_run = live(plan[1])                       # a run owned by a ScheduledSparkApplication
    scheduled_run["metadata"].update(name="orders-ingest-ingest-123", ownerReferences=[
        {"kind": "ScheduledSparkApplication", "name": "s", "uid": "sched", "controller": True}])
    actions = children.diff(plan, [live(plan[0]), stale, foreign, scheduled_run], "pipe-uid")
    assert [(a.verb, a.name, a.reason) for a in actions] == [
        ("conflict", "orders-ingest-ingest", "NameConflict"),
        ("delete", "orders-ingest-old-config", "Pruned")]


def test_objects_being_deleted_are_waited_for():
    old = plan_of(pipeline_body())
    new = plan_of(pipeline_body(generation=2, operation="insert"))
    going = live(app_of(old))
    going["metadata"]["deletionTimestamp"] = "2025-01-01T12:00:00Z"
    actions = children.diff(new, [live(new[0]), going], "pipe-uid")
    assert actions == []


# --- lifecycle -------------------------------------------------------------------------------------------
def test_first_deployment_then_running_then_stable():
    body = pipeline_body(upgrade={"stableAfterSeconds": 300})
    plan = plan_of(body)
    app, first = reconcile(body, None, [], T0)
    assert app is None
    rec = first.status["reconciliation"]
    assert rec == {"lastReconciledSpec": lifecycle.canonical(body["spec"]), "lastStableSpec": None, "state": "DEPLOYED"}
    assert first.status["phase"] == "Deploying" and first.spec == lifecycle.canonical(body["spec"])
    assert [e.reason for e in first.events] == ["Deploying"]
    assert find(first.status["conditions"], "Progressing")["status"] == "True"

    _, starting = reconcile(body, first.status, [live(app_of(plan))], T0)
    assert (starting.status["phase"], find(starting.status["conditions"], "Progressing")["reason"]) == \
        ("Deploying", "Starting")

    _, run = reconcile(body, starting.status, [running(plan, T0)], T0 + dt.timedelta(seconds=60))
    assert run.status["phase"] == "Running" and run.status["reconciliation"]["lastStableSpec"] is None
    assert run.status["sparkApplication"] == {"name": "orders-ingest-ingest", "kind": "SparkApplication",
                                              "state": "RUNNING", "submissionAttempts": 1,
                                              "lastSubmissionTime": "2025-01-01T12:00:00Z"}
    assert find(run.status["conditions"], "Ready")["status"] == "True"
    assert [e.reason for e in run.events] == ["Running"]

    _, stable = reconcile(body, run.status, [running(plan, T0)], T0 + dt.timedelta(seconds=301))
    assert stable.status["reconciliation"]["lastStableSpec"] == lifecycle.canonical(body["spec"])
    assert [e.reason for e in stable.events] == ["Stable"]
    _, again = reconcile(body, stable.status, [running(plan, T0)], T0 + dt.timedelta(seconds=400))
    assert again.events == () and again.status == stable.status


def _stable_status(body):
    plan = plan_of(body)
    _, first = reconcile(body, None, [], T0)
    _, stable = reconcile(body, first.status, [running(plan, T0)], T0 + dt.timedelta(seconds=600))
    assert stable.status["reconciliation"]["lastStableSpec"]
    return stable.status


def test_a_spec_change_is_applied_once_as_an_upgrade_that_becomes_stable():
    v1 = pipeline_body()
    status = _stable_status(v1)
    v2 = pipeline_body(generation=2, operation="insert")
    old_app = running(plan_of(v1), T0)
    app, upgrading = reconcile(v2, status, [old_app], T0 + dt.timedelta(seconds=700))
    assert app is not None and not app.current                     # the old spec's job: being replaced
    assert upgrading.status["reconciliation"]["state"] == "UPGRADING"
    assert upgrading.status["phase"] == "Deploying"
    assert find(upgrading.status["conditions"], "Progressing")["reason"] == "Upgrading"
    assert [e.reason for e in upgrading.events] == ["Upgrading"]
    assert upgrading.spec == lifecycle.canonical(v2["spec"])
    assert upgrading.status["observedGeneration"] == 2

    new_app = running(plan_of(v2), T0 + dt.timedelta(seconds=800))
    _, runs = reconcile(v2, upgrading.status, [new_app], T0 + dt.timedelta(seconds=850))
    assert runs.status["phase"] == "Running" and runs.status["reconciliation"]["state"] == "UPGRADING"
    assert runs.events[0].reason == "Running" and len(runs.events) == 1          # applied once: no new Upgrading
    assert find(runs.status["conditions"], "Progressing")["reason"] == "Upgrading"   # until stable
    _, done = reconcile(v2, runs.status, [new_app], T0 + dt.timedelta(seconds=1200))
    assert done.status["reconciliation"] == {"lastReconciledSpec": lifecycle.canonical(v2["spec"]),
                                             "lastStableSpec": lifecycle.canonical(v2["spec"]), "state": "DEPLOYED"}


def test_an_upgrade_that_fails_rolls_back_to_the_last_stable_spec_when_asked():
    v1 = pipeline_body(upgrade={"rollbackOnFailure": True})
    status = _stable_status(v1)
    v2 = pipeline_body(generation=2, operation="insert", upgrade={"rollbackOnFailure": True})
    _, upgrading = reconcile(v2, status, [], T0 + dt.timedelta(seconds=700))
    failed_app = running(plan_of(v2), T0 + dt.timedelta(seconds=710), state="FAILED", errorMessage="bad column")
    _, rolling = reconcile(v2, upgrading.status, [failed_app], T0 + dt.timedelta(seconds=720))
    assert rolling.status["reconciliation"]["state"] == "ROLLING_BACK"
    assert rolling.status["phase"] == "Deploying"
    assert [(e.type, e.reason) for e in rolling.events] == [("Warning", "RollingBack")]
    assert "bad column" in rolling.events[0].message
    assert json.loads(rolling.spec) == {**json.loads(lifecycle.canonical(v1["spec"])), "state": "running"}
    # The children diff now replaces the failed job with the stable spec's.
    stable_plan = plan_of({**v2, "spec": json.loads(rolling.spec)})
    actions = children.diff(stable_plan, [live(plan_of(v2)[0]), failed_app], "pipe-uid")
    assert [(a.verb, a.kind) for a in actions] == [("patch", "ConfigMap"), ("delete", "SparkApplication")]

    restored = running(stable_plan, T0 + dt.timedelta(seconds=760))
    app, back = reconcile(v2, rolling.status, [restored], T0 + dt.timedelta(seconds=770))
    assert app.current and back.status["reconciliation"]["state"] == "ROLLED_BACK"
    assert back.status["phase"] == "Running" and back.spec == rolling.spec
    assert [e.reason for e in back.events] == ["RolledBack", "Running"]
    _, still = reconcile(v2, back.status, [restored], T0 + dt.timedelta(seconds=2000))
    assert still.spec == rolling.spec and still.status["reconciliation"]["state"] == "ROLLED_BACK"

    broken = running(stable_plan, T0 + dt.timedelta(seconds=760), state="FAILED", errorMessage="source gone")
    _, down = reconcile(v2, still.status, [broken], T0 + dt.timedelta(seconds=2010))
    assert (down.status["phase"], down.status["reconciliation"]["state"]) == ("Failed", "ROLLED_BACK")
    assert [e.reason for e in down.events] == ["Failed"] and down.spec == rolling.spec   # no second rollback

    v3 = pipeline_body(generation=3, operation="bulk_insert", upgrade={"rollbackOnFailure": True})
    _, retry = reconcile(v3, still.status, [restored], T0 + dt.timedelta(seconds=2100))
    assert retry.status["reconciliation"]["state"] == "UPGRADING" and retry.spec == lifecycle.canonical(v3["spec"])


def test_an_upgrade_that_fails_without_rollback_is_failed_and_degraded():
    v1 = pipeline_body()
    status = _stable_status(v1)
    v2 = pipeline_body(generation=2, operation="insert")
    _, upgrading = reconcile(v2, status, [], T0 + dt.timedelta(seconds=700))
    failed_app = running(plan_of(v2), T0 + dt.timedelta(seconds=710), state="FAILED", errorMessage="OOM")
    _, failed = reconcile(v2, upgrading.status, [failed_app], T0 + dt.timedelta(seconds=720))
    assert failed.status["phase"] == "Failed" and failed.spec == lifecycle.canonical(v2["spec"])
    degraded = find(failed.status["conditions"], "Degraded")
    assert (degraded["status"], degraded["reason"]) == ("True", "SparkApplicationFailed")
    assert "OOM" in degraded["message"]
    assert [(e.type, e.reason) for e in failed.events] == [("Warning", "Failed")]
    assert find(failed.status["conditions"], "Progressing")["status"] == "False"
    _, again = reconcile(v2, failed.status, [failed_app], T0 + dt.timedelta(seconds=780))
    assert again.events == ()                                       # reported once


def test_suspend_stops_the_job_and_resume_starts_it_from_its_checkpoint():
    v1 = pipeline_body()
    status = _stable_status(v1)
    suspended = pipeline_body(generation=2, state="suspended")
    stale = running(plan_of(v1), T0)
    _, suspending = reconcile(suspended, status, [stale], T0 + dt.timedelta(seconds=700))
    assert [e.reason for e in suspending.events] == ["Suspending"]
    assert suspending.status["reconciliation"]["state"] == "DEPLOYED"   # not an upgrade
    assert suspending.status["phase"] == "Deploying"
    plan_suspended = plan_of(suspended)
    assert app_of(plan_suspended)["spec"]["suspend"] is True
    halted = running(plan_suspended, T0, state="SUSPENDED")
    _, done = reconcile(suspended, suspending.status, [halted], T0 + dt.timedelta(seconds=710))
    assert done.status["phase"] == "Suspended" and [e.reason for e in done.events] == ["Suspended"]
    assert find(done.status["conditions"], "Ready")["reason"] == "Suspended"

    resumed = pipeline_body(generation=3)
    _, resuming = reconcile(resumed, done.status, [halted], T0 + dt.timedelta(seconds=800))
    assert [e.reason for e in resuming.events] == ["Resuming"]
    # Patched to resume, the job still reports SUSPENDED until the Spark operator acts.
    patched = live(app_of(plan_of(resumed)), applicationState={"state": "SUSPENDED"})
    _, waking = reconcile(resumed, resuming.status, [patched], T0 + dt.timedelta(seconds=801))
    assert waking.status["phase"] == "Deploying"
    assert find(waking.status["conditions"], "Progressing")["reason"] == "Resuming"
    _, back = reconcile(resumed, resuming.status, [running(plan_of(resumed), T0 + dt.timedelta(seconds=805))],
                        T0 + dt.timedelta(seconds=810))
    assert back.status["phase"] == "Running"


def test_a_completed_job_is_succeeded():
    body = pipeline_body()
    _, first = reconcile(body, None, [], T0)
    _, done = reconcile(body, first.status, [running(plan_of(body), T0, state="COMPLETED")], T0)
    assert done.status["phase"] == "Succeeded"
    assert [e.reason for e in done.events] == ["Stable", "Succeeded"]


def test_a_scheduled_pipeline_reports_its_last_run():
    body = pipeline_body(mode={"type": "scheduled", "schedule": "*/10 * * * *"})
    scheduled = app_of(plan_of(body))
    assert scheduled["kind"] == "ScheduledSparkApplication"
    parent = live(scheduled, scheduleState="Scheduled", lastRun="2025-01-01T12:10:00Z", lastRunName="run-1")
    run = {"apiVersion": scheduled["apiVersion"], "kind": "SparkApplication",
           "metadata": {"name": "run-1", "namespace": NS}, "status": {"applicationState": {"state": "FAILED",
                                                                                          "errorMessage": "boom"}}}
    app = lifecycle.observe([parent, run], scheduled)
    assert (app.current, app.state, app.schedule_state, app.last_submission_time) == \
        (True, "FAILED", "Scheduled", "2025-01-01T12:10:00Z")
    _, first = reconcile(body, None, [], T0)
    _, failed = reconcile(body, first.status, [parent, run], T0)
    assert failed.status["phase"] == "Failed" and "boom" in failed.status["message"]
    fresh = live(scheduled, scheduleState="Scheduled")
    _, waiting = reconcile(body, first.status, [fresh], T0)
    assert waiting.status["phase"] == "Running"


def test_observe_ignores_jobs_of_another_spec_and_jobs_being_deleted():
    plan = plan_of(pipeline_body())
    other = live(app_of(plan))
    other["metadata"]["annotations"][SPEC_HASH_ANNOTATION] = "0000"
    assert not lifecycle.observe([other], app_of(plan)).current
    going = live(app_of(plan), applicationState={"state": "RUNNING"})
    going["metadata"]["deletionTimestamp"] = "2025-01-01T12:00:00Z"
    assert not lifecycle.observe([going], app_of(plan)).current
    assert lifecycle.observe([], app_of(plan)) is None


# --- table status from real tables ------------------------------------------------------------------------
@pytest.fixture
def fixture_table(tmp_path):
    def extract(relative):
        return str(unzip_fixture(relative, tmp_path))
    return extract


def test_table_status_of_a_merge_on_read_table_written_by_apache_hudi_1x(fixture_table):
    path = fixture_table("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip")
    table = HoodieTable.load(path)
    later = dt.datetime(2025, 12, 21, tzinfo=dt.timezone.utc)
    obs = table_status.observe(table, table_status.CompactionTrigger("NUM_COMMITS", 5, 3600), later)
    assert (obs.table_version, obs.table_type, obs.last_commit_instant) == (8, "MERGE_ON_READ", "20251220210130911")
    assert (obs.pending_compactions, obs.pending_clusterings, obs.commits_since_compaction) == (0, 0, 1)
    assert obs.compaction_due is False and obs.checkpoint is None
    assert table_status.observe(table, table_status.CompactionTrigger("NUM_COMMITS", 1, 3600), later).compaction_due
    assert table_status.observe(table, table_status.CompactionTrigger("TIME_ELAPSED", 99, 60), later).compaction_due
    assert not table_status.observe(table, None, later).compaction_due
    status = table_status.status(obs, {}, None, 3, later)
    assert status["phase"] == "Ready" and status["lastCommitInstant"] == "20251220210130911"
    assert status["commitsSinceCompaction"] == 1 and status["observedGeneration"] == 3
    assert status["lastCommitTime"].startswith("2025-12-2")


def test_table_status_of_a_copy_on_write_table_never_counts_compaction(fixture_table):
    table = HoodieTable.load(fixture_table("sample_table/cow/v6_nonpartitioned.zip"))
    obs = table_status.observe(table, table_status.CompactionTrigger(), T0)
    assert (obs.table_version, obs.last_commit_instant, obs.commits_since_compaction, obs.compaction_due) == \
        (6, "20240418173551906", None, False)


def test_pending_compactions_are_counted_and_due_compaction_marked(fixture_table, tmp_path):
    from hudi_engine.services.compaction import schedule_compaction
    path = fixture_table("quickstart_trips_table/mor/avro/v6_trips_8i1u.zip")
    before = table_status.observe(HoodieTable.load(path), table_status.CompactionTrigger("NUM_COMMITS", 2, 3600), T0)
    assert (before.commits_since_compaction, before.compaction_due, before.pending_compactions) == (2, True, 0)
    status = table_status.status(before, {"compaction": {"name": "orders-compaction", "state": "Scheduled"}},
                                 None, 1, T0)
    assert status["services"]["compaction"] == {"name": "orders-compaction", "state": "Due"}
    assert schedule_compaction(HoodieTable.load(path), force=True) is not None
    after = table_status.observe(HoodieTable.load(path), table_status.CompactionTrigger("NUM_COMMITS", 2, 3600), T0)
    assert after.pending_compactions == 1


def test_a_table_without_commits_is_pending():
    status = table_status.status(None, {}, None, 1, T0)
    assert status["phase"] == "Pending" and find(status["conditions"], "Progressing")["status"] == "True"
    assert status["message"].startswith("no Hudi table at basePath yet")


@pytest.mark.spark
def test_table_status_of_a_table_written_by_the_engine_shows_the_streamer_checkpoint(spark, table_path):
    from hudi_engine import write
    from hudi_jobs.streamer.checkpoint import checkpoint_metadata
    from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.operation": "upsert"}
    for n, offset in enumerate(["orders,0:10", "orders,0:25", "orders,0:40"], start=1):
        df = spark.createDataFrame([("jack", f"fruit{n}", "eu", n)], FRUIT_SCHEMA)
        write(df, table_path, options, extra_metadata=checkpoint_metadata(offset, None, None))
    obs = table_status.observe(HoodieTable.load(table_path), table_status.CompactionTrigger("NUM_COMMITS", 3, 3600),
                               dt.datetime.now(dt.timezone.utc))
    assert (obs.checkpoint, obs.commits_since_compaction, obs.compaction_due) == ("orders,0:40", 3, True)
    assert obs.commit_age_seconds(dt.datetime.now(dt.timezone.utc)) < 600


@pytest.mark.spark
def test_each_pipeline_of_a_shared_table_sees_its_own_checkpoint(spark, table_path):
    """Two streamers with their own checkpoint ids (the pipelines' names): each pipeline's status
    shows where it resumes, whichever wrote last; the table shows no single checkpoint."""
    from hudi_engine import write
    from hudi_jobs.streamer.checkpoint import checkpoint_metadata
    from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "upsert"}
    batches = [("orders-main", "eu", "100"), ("orders-apac", "apac", "7"), ("orders-main", "eu", "250")]
    for n, (writer, region, position) in enumerate(batches, start=1):
        df = spark.createDataFrame([(f"k{n}", "kiwi", region, n)], FRUIT_SCHEMA)
        write(df, table_path, options, extra_metadata=checkpoint_metadata(position, None, None, writer))
    obs = table_status.observe(HoodieTable.load(table_path), None, dt.datetime.now(dt.timezone.utc))
    assert (obs.checkpoint_of("orders-main"), obs.checkpoint_of("orders-apac")) == ("250", "7")
    assert obs.checkpoint is None and obs.checkpoint_of("orders-new") is None
