"""Due table services: Hudi's triggers over a timeline, the reason given, and one job of a kind
per table at a time."""
from __future__ import annotations

import datetime as dt

import pytest

from hudi_engine.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from hudi_operator import api
from hudi_operator.planner.labels import SERVICE_LABEL
from hudi_operator.reconcile import services_due as sd

UTC = dt.timezone.utc


def at(seconds: int) -> str:
    """An instant time ``seconds`` after 2025-01-01 12:00:00 UTC."""
    return (dt.datetime(2025, 1, 1, 12, 0) + dt.timedelta(seconds=seconds)).strftime("%Y%m%d%H%M%S") + "000"


T0 = dt.datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


def done(seconds: int, action: str = DELTA_COMMIT) -> Instant:
    return Instant(at(seconds), action, State.COMPLETED)


def timeline(*instants: Instant, clusterings=(), pending_clusterings=()) -> sd.Timeline:
    return sd.Timeline(tuple(instants), frozenset(clusterings), tuple(pending_clusterings), utc=True)


def reasons(due):
    return {d.service: d.reason for d in due}


# --- compaction: every trigger strategy, counted since the last compaction -----------------------------
@pytest.mark.parametrize("strategy, commits, seconds, due", [
    ("NUM_COMMITS", 3, 10, True), ("NUM_COMMITS", 2, 10_000, False),
    ("TIME_ELAPSED", 1, 600, True), ("TIME_ELAPSED", 9, 599, False),
    ("NUM_AND_TIME", 3, 600, True), ("NUM_AND_TIME", 3, 599, False), ("NUM_AND_TIME", 2, 600, False),
    ("NUM_OR_TIME", 3, 1, True), ("NUM_OR_TIME", 1, 600, True), ("NUM_OR_TIME", 2, 599, False),
])
def test_compaction_trigger_strategies(strategy, commits, seconds, due):
    last_compaction = done(0, COMMIT)
    deltas = [done(n + 1) for n in range(commits)]
    trigger = sd.CompactionTrigger(strategy, max_delta_commits=3, max_delta_seconds=600)
    found = sd.due_services(timeline(last_compaction, *deltas), sd.Triggers(compaction=trigger),
                            T0 + dt.timedelta(seconds=seconds))
    assert bool(found) is due
    if due:
        reason = reasons(found)["compaction"]
        assert reason.startswith(f"compaction due: {commits} delta commits since {at(0)}, the last compaction")
        assert f"hoodie.compact.inline.trigger.strategy={strategy}" in reason
        assert "hoodie.compact.inline.max.delta.commits=3" in reason


def test_deltas_before_the_last_compaction_do_not_count():
    instants = [done(1), done(2), done(3), done(4, COMMIT), done(5)]
    trigger = sd.Triggers(compaction=sd.CompactionTrigger("NUM_COMMITS", 2, 3600))
    assert sd.due_services(timeline(*instants), trigger, T0) == ()
    assert reasons(sd.due_services(timeline(*instants, done(6)), trigger, T0))["compaction"].startswith(
        "compaction due: 2 delta commits")


def test_a_pending_compaction_plan_is_due_whatever_the_counts():
    plan = Instant(at(5), COMPACTION, State.REQUESTED)
    trigger = sd.Triggers(compaction=sd.CompactionTrigger("NUM_COMMITS", 99, 3600))
    assert reasons(sd.due_services(timeline(done(1), plan), trigger, T0)) == {
        "compaction": f"compaction due: plan {at(5)} is pending"}
    # the threshold alone (what "compaction is due" in the status reports) ignores the plan
    assert sd.compaction_threshold(timeline(done(1), plan), trigger.compaction, T0) is None


# --- clustering and cleaning ---------------------------------------------------------------------------
def test_clustering_due_after_max_commits_since_the_last_clustering():
    clustered = done(10, REPLACE_COMMIT)
    instants = [done(1, COMMIT), clustered, done(11, COMMIT), done(12, COMMIT)]
    triggers = sd.Triggers(clustering_max_commits=3)
    assert sd.due_services(timeline(*instants, clusterings={clustered.timestamp}), triggers, T0) == ()
    found = sd.due_services(timeline(*instants, done(13, COMMIT), clusterings={clustered.timestamp}), triggers, T0)
    assert reasons(found) == {"clustering": "clustering due: 3 commits since the last clustering "
                                            "(hoodie.clustering.inline.max.commits=3)"}
    # an insert-overwrite replacecommit is a write, not a clustering: it counts and does not reset
    assert sd.due_services(timeline(*instants, clusterings=()), triggers, T0) != ()


def test_a_pending_clustering_plan_is_due():
    found = sd.due_services(timeline(done(1, COMMIT), pending_clusterings=[at(2)]),
                            sd.Triggers(clustering_max_commits=50), T0)
    assert reasons(found) == {"clustering": f"clustering due: plan {at(2)} is pending"}


def test_cleaning_due_after_max_commits_since_the_last_clean():
    triggers = sd.Triggers(clean_max_commits=2)
    cleaned = [done(1, COMMIT), done(2, COMMIT), done(3, CLEAN), done(4, COMMIT)]
    assert sd.due_services(timeline(*cleaned), triggers, T0) == ()
    assert reasons(sd.due_services(timeline(*cleaned, done(5, COMMIT)), triggers, T0)) == {
        "clean": "cleaning due: 2 or more commits since the last clean (hoodie.clean.max.commits=2)"}


def test_services_without_a_trigger_are_never_due():
    busy = timeline(*[done(n) for n in range(1, 20)], Instant(at(30), COMPACTION, State.REQUESTED),
                    pending_clusterings=[at(31)])
    assert sd.due_services(busy, sd.Triggers(), T0) == ()


# --- from the HudiTable spec ----------------------------------------------------------------------------
def table_spec(**services):
    return api.load({"apiVersion": f"{api.API_GROUP}/{api.API_VERSION}", "kind": "HudiTable",
                     "metadata": {"name": "orders"},
                     "spec": {"basePath": "/lake/orders", "recordKey": ["id"], "orderingField": "ts",
                              "tableType": "MERGE_ON_READ", "services": services,
                              "options": {"hoodie.clustering.inline.max.commits": "7",
                                          "hoodie.clean.max.commits": "3"}}}).spec


def test_triggers_come_from_the_spec_and_hudi_options():
    spec = table_spec(compaction={"mode": "scheduled", "schedule": "@hourly", "triggerStrategy": "NUM_OR_TIME",
                                  "maxDeltaCommits": 4, "maxDeltaSeconds": 90},
                      clustering={"mode": "scheduled", "schedule": "@daily"},
                      cleaning={"mode": "scheduled", "schedule": "@daily"})
    assert sd.triggers(spec) == sd.Triggers(sd.CompactionTrigger("NUM_OR_TIME", 4, 90), 7, 3)
    assert sd.triggers(spec, on_demand=("clean",)) == sd.Triggers(clean_max_commits=3)
    # cleaning starts a job when due only if asked (Hudi's default is a clean after every commit)
    assert sd.on_demand(spec, ["compaction", "clustering", "clean", "savepoint"]) == ("compaction", "clustering")
    eager = table_spec(cleaning={"mode": "scheduled", "schedule": "@daily", "runWhenDue": True},
                       compaction={"mode": "scheduled", "schedule": "@hourly", "runWhenDue": False})
    assert sd.on_demand(eager, ["compaction", "clean"]) == ("clean",)


def test_indexing_is_due_when_the_engine_says_the_indexer_has_work():
    """The engine's ``indexing_due`` reads the table (tested on real tables in test_async_indexer);
    here: only a scheduled indexing service starts on it, with the options its job gets."""
    spec = table_spec(indexing={"mode": "scheduled", "schedule": "@hourly"})
    wanted = sd.triggers(spec, options={"hoodie.metadata.record.index.enable": "true"})
    assert dict(wanted.indexing_options)["hoodie.metadata.record.index.enable"] == "true"
    assert dict(wanted.indexing_options)["hoodie.clean.max.commits"] == "3"          # the spec's options too
    work = sd.Timeline((done(1),), indexing="record_index enabled but not built")
    assert reasons(sd.due_services(work, wanted, T0)) == {"indexing": "indexing due: record_index enabled but not built"}
    assert sd.due_services(sd.Timeline((done(1),)), wanted, T0) == ()              # nothing to build
    inline = table_spec()
    assert sd.triggers(inline).indexing_options is None and sd.due_services(work, sd.triggers(inline), T0) == ()
    assert sd.on_demand(spec, ["indexing"]) == ("indexing",)
    assert sd.on_demand(table_spec(indexing={"mode": "scheduled", "schedule": "@hourly", "runWhenDue": False}),
                        ["indexing"]) == ()


# --- one job of a kind at a time ---------------------------------------------------------------------------
def app(name: str, service: str, state: str | None, deleting: bool = False) -> dict:
    meta = {"name": name, "labels": {SERVICE_LABEL: service}}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"applicationState": {"state": state}} if state else {}}


def test_running_jobs_are_those_not_ended():
    apps = [app("orders-compaction-run-1", "compaction", "COMPLETED"),
            app("orders-compaction-run-2", "compaction", "RUNNING"),
            app("orders-clustering-1", "clustering", "FAILED"),
            app("orders-clean-run-1", "clean", None),                 # just created: not submitted yet
            app("orders-savepoint-1", "savepoint", "RUNNING"),        # not a service the timeline triggers
            app("orders-clean-run-0", "clean", "RUNNING", deleting=True)]
    service_of = {"compaction": "compaction", "clustering": "clustering", "clean": "clean"}
    assert sd.running_jobs(apps, service_of) == {"compaction": "orders-compaction-run-2",
                                                 "clean": "orders-clean-run-1"}


def test_a_due_service_waits_while_a_job_of_its_kind_runs():
    due = (sd.Due("compaction", "compaction due: x"), sd.Due("clean", "cleaning due: y"))
    decision = sd.decide(due, {"compaction": "orders-compaction-run-2"})
    assert decision.launch == (due[1],) and decision.held == ((due[0], "orders-compaction-run-2"),)
    assert sd.service_status(decision, {"clean": "orders-clean-run-9"}) == {
        "clean": {"state": "Started", "reason": "cleaning due: y", "run": "orders-clean-run-9"},
        "compaction": {"state": "Running", "reason": "compaction due: x; waiting for orders-compaction-run-2 to end",
                       "run": "orders-compaction-run-2"}}
    assert sd.decide(due, {}).launch == due
