"""The planner's concurrency decisions: who writes a table, single writer or optimistic concurrency
control, the one lock every job of the table shares, and the combinations refused with the field
to change."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest
import yaml

from hudi_engine import config as C
from hudi_operator.api import SpecError, load
from hudi_operator.planner import LockServices, PlanError, plan_pipeline, plan_table
from hudi_operator.planner.concurrency import PROVIDER_CLASSES
from hudi_operator.planner.errors import UNSAFE_CONCURRENCY
from hudi_operator.planner.resource_set import ResourceError, ResourceSet
from hudi_operator.settings import Settings
from hudictl import cli
from hudictl.run import local_settings
from tests.support.helm import CHARTS, refusal as helm_refusal, template
from tests.unit.test_planner_manifests import API, SETTINGS, check_manifests, pipeline, table

MOR_SCHEDULED = {"tableType": "MERGE_ON_READ",
                 "services": {"compaction": {"mode": "scheduled", "schedule": "*/30 * * * *"},
                              "cleaning": {"mode": "scheduled", "schedule": "@hourly"}}}
RETRIES = C.NUM_RETRIES_ON_CONFLICT_FAILURES.key
OCC = {C.WRITE_CONCURRENCY_MODE.key: C.OPTIMISTIC_CONCURRENCY_CONTROL, C.FAILED_WRITES_CLEANER_POLICY.key: "LAZY",
       C.HEARTBEAT_INTERVAL_MS.key: "60000", C.HEARTBEAT_TOLERABLE_MISSES.key: "2", RETRIES: "3"}
CONTROL = ("hoodie.write.concurrency.", "hoodie.write.lock.", "hoodie.cleaner.policy.failed.writes",
           "hoodie.client.heartbeat.", RETRIES)
# The book's chapter 7: a streamer under OCC with a ZooKeeper lock, every property written by hand.
CHAPTER_7 = {C.WRITE_CONCURRENCY_MODE.key: C.OPTIMISTIC_CONCURRENCY_CONTROL,
             C.FAILED_WRITES_CLEANER_POLICY.key: "LAZY", C.LOCK_PROVIDER.key: C.ZK_LOCK_PROVIDER,
             C.ZK_CONNECT_URL.key: "zk-0.zk", C.ZK_PORT.key: "2181", C.ZK_BASE_PATH.key: "/hudi/locks",
             C.ZK_LOCK_KEY.key: "orders"}


def control(conf: dict[str, str]) -> dict[str, str]:
    """The concurrency-control options of a job's hoodie options."""
    return {k: v for k, v in conf.items() if k.startswith(CONTROL)}


def every_job_control(*plans) -> list[dict[str, str]]:
    """The concurrency options of every job of the plans (pipelines' hoodieConf, services' too)."""
    for plan in plans:
        check_manifests(plan)
    return [control(job.job_config["hoodieConf"]) for plan in plans for job in plan.jobs]


def refusal(call) -> PlanError:
    with pytest.raises(PlanError) as caught:
        call()
    assert caught.value.reason == UNSAFE_CONCURRENCY
    return caught.value


def lease(base_path: str = "s3a://lake/orders", name: str = "orders") -> dict[str, str]:
    digest = hashlib.sha256(base_path.encode()).hexdigest()[:8]
    return {C.LOCK_PROVIDER.key: C.LEASE_LOCK_PROVIDER, C.LEASE_NAMESPACE.key: "lake",
            C.LEASE_NAME.key: f"hudi-lock-{name}-{digest}", C.LEASE_DURATION_SECONDS.key: "60"}


# --- how many write ------------------------------------------------------------------------------------
def test_one_pipeline_with_inline_services_is_a_single_writer() -> None:
    t, p = table(), pipeline()
    plan = plan_pipeline(t, p, SETTINGS)
    assert plan.concurrency.mode == "singleWriter"
    assert plan.concurrency.writers == ("pipeline orders-in",)
    assert plan.concurrency.status() == {"mode": "singleWriter", "writers": ["pipeline orders-in"]}
    assert every_job_control(plan) == [{}]          # Hudi's defaults: nothing set
    assert plan_table(t, SETTINGS, [p]).concurrency == plan.concurrency


def test_a_pipeline_and_scheduled_services_share_one_lock() -> None:
    t, p = table(**MOR_SCHEDULED, catalogSync=[{"metastoreUris": "thrift://hms:9083"}]), pipeline()
    table_plan, pipeline_plan = plan_table(t, SETTINGS, [p]), plan_pipeline(t, p, SETTINGS, pipelines=[p])
    # catalog sync writes the metastore, not the table's timeline: not a writer
    assert table_plan.concurrency.writers == ("pipeline orders-in", "compaction", "clean")
    assert {job.service for job in table_plan.jobs} == {"compaction", "clean", "catalogSync"}
    assert table_plan.concurrency == pipeline_plan.concurrency
    assert table_plan.concurrency.mode == "optimistic"
    assert every_job_control(pipeline_plan, table_plan) == [{**OCC, **lease()}] * 4
    assert table_plan.concurrency.status() == {
        "mode": "optimistic", "writers": ["pipeline orders-in", "compaction", "clean"],
        "lock": f"kubernetesLease lake/{lease()[C.LEASE_NAME.key]}"}


def test_scheduled_indexing_is_a_writer_that_always_takes_the_lock() -> None:
    """Hudi's asynchronous indexer needs the lock even as the table's only job; the pipeline then
    leaves the indexes it lacks to it (hoodie.metadata.index.async)."""
    indexing = {"services": {"indexing": {"mode": "scheduled", "schedule": "@hourly"}},
                "metadataTable": {"recordIndex": True}}
    alone = plan_table(table(**indexing), SETTINGS, [])
    assert alone.concurrency.mode == "optimistic" and alone.concurrency.writers == ("indexing",)
    [job] = alone.jobs
    assert job.service == "indexing" and job.application["kind"] == "ScheduledSparkApplication"
    assert job.job_config["service"] == "indexing" and job.application["spec"]["schedule"] == "@hourly"
    conf = job.job_config["hoodieConf"]
    assert control(conf) == {**OCC, **lease()}
    assert conf[C.METADATA_INDEX_ASYNC.key] == "true" and conf[C.METADATA_RECORD_INDEX_ENABLE.key] == "true"
    t, p = table(**indexing), pipeline()
    writer = plan_pipeline(t, p, SETTINGS, pipelines=[p]).jobs[0].job_config["hoodieConf"]
    assert writer[C.METADATA_INDEX_ASYNC.key] == "true" and control(writer) == {**OCC, **lease()}
    assert C.METADATA_INDEX_ASYNC.key not in plan_pipeline(table(), p, SETTINGS).jobs[0].job_config["hoodieConf"]
    with pytest.raises(PlanError, match="the asynchronous indexer needs the lock"):
        plan_table(table(**indexing, concurrency={"mode": "singleWriter"}), SETTINGS, [])


def test_suspending_a_pipeline_leaves_the_plan_as_it_was() -> None:
    """A suspended pipeline resumes under the same lock; suspending it must not re-plan the others."""
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}})
    running, suspended = plan_table(t, SETTINGS, [pipeline()]), plan_table(t, SETTINGS, [pipeline(state="suspended")])
    assert running.concurrency == suspended.concurrency and running.concurrency.mode == "optimistic"
    assert running.manifests == suspended.manifests
    assert plan_table(t, SETTINGS, []).concurrency.mode == "singleWriter"


def test_two_pipelines_run_optimistic_and_one_schedules_compaction_inline() -> None:
    t = table(tableType="MERGE_ON_READ", services={"clustering": {"mode": "inline"}, "cleaning": {"mode": "inline"}})
    first, second = pipeline(name="orders-eu"), pipeline(name="orders-us")
    resources = ResourceSet(tables={("lake", "orders"): t}, pipelines=[second, first], namespace="lake")
    plans = {p.metadata.name: resources.plan_pipeline(p, SETTINGS) for p in (first, second)}
    table_plan = resources.plan_table(t, SETTINGS)
    assert table_plan.concurrency.writers == ("pipeline orders-eu", "pipeline orders-us")
    assert every_job_control(*plans.values()) == [{**OCC, **lease()}] * 2
    eu, us = (plans[n].jobs[0].job_config for n in ("orders-eu", "orders-us"))
    # the first by name keeps compaction and clustering inline; the other leaves both to it
    assert "disableCompaction" not in eu and us["disableCompaction"] is True
    assert eu["hoodieConf"][C.CLUSTERING_INLINE.key] == "true"
    assert us["hoodieConf"][C.CLUSTERING_INLINE.key] == "false"
    # cleaning stays inline on both (it plans under the lock, LAZY leaves live writes alone)
    assert eu["hoodieConf"][C.CLEAN_AUTOMATIC.key] == us["hoodieConf"][C.CLEAN_AUTOMATIC.key] == "true"
    # each resumes from its own source checkpoint, kept under its name
    checkpoint_id = "hoodie.streamer.multiwriter.source.checkpoint.id"
    assert (eu["hoodieConf"][checkpoint_id], us["hoodieConf"][checkpoint_id]) == ("orders-eu", "orders-us")


def test_pipelines_of_other_tables_or_namespaces_do_not_count() -> None:
    t = table()
    other_table = pipeline(name="customers-in", table_name="customers")
    other_namespace = load({"apiVersion": API, "kind": "HudiPipeline",
                            "metadata": {"name": "orders-copy", "namespace": "elsewhere"},
                            "spec": {"tableRef": {"name": "orders"}, "source": {"type": "files",
                                                                               "files": {"path": "/in"}}}})
    resources = ResourceSet(tables={("lake", "orders"): t}, pipelines=[pipeline(), other_table, other_namespace],
                            namespace="lake")
    assert resources.plan_table(t, SETTINGS).concurrency.writers == ("pipeline orders-in",)


def test_explicit_optimistic_with_one_writer_takes_the_lock() -> None:
    plan = plan_pipeline(table(concurrency={"mode": "optimistic"}), pipeline(), SETTINGS)
    assert every_job_control(plan) == [{**OCC, **lease()}]


def test_explicit_single_writer_with_one_writer() -> None:
    plan = plan_pipeline(table(concurrency={"mode": "singleWriter"}), pipeline(), SETTINGS)
    assert plan.concurrency.mode == "singleWriter" and every_job_control(plan) == [{}]


# --- the lock -------------------------------------------------------------------------------------------
def test_the_platform_default_lock_comes_from_the_operator_settings() -> None:
    settings = Settings.from_env({"LOCK_PROVIDER": "zookeeper", "LOCK_ZOOKEEPER_URL": "zk"})
    assert settings.planner.default_lock_provider == "zookeeper"
    assert Settings.from_env({}).planner.default_lock_provider == "kubernetesLease"
    with pytest.raises(ValueError, match="LOCK_PROVIDER='zk' is not a lock provider"):
        Settings.from_env({"LOCK_PROVIDER": "zk"})


ZK_LOCK_VALUES = {"lock.provider": "zookeeper", "lock.zookeeper.url": r"zk-0.zk\,zk-1.zk:2182",   # --set's comma
                  "lock.zookeeper.port": "2281", "lock.zookeeper.basePath": "/lake/locks"}
HMS_LOCK_VALUES = {"lock.provider": "hiveMetastore", "lock.hiveMetastore.uris": "thrift://hms:9083"}


def chart_settings(values: dict[str, str]) -> Settings:
    """The operator's settings from the environment the hudi-operator chart renders for ``values``."""
    (deployment,) = [o for o in template(CHARTS / "hudi-operator", values) if o["kind"] == "Deployment"]
    return Settings.from_env({e["name"]: e["value"] for c in deployment["spec"]["template"]["spec"]["containers"]
                              for e in c["env"] if "value" in e})


@pytest.mark.parametrize("values, provider, services", [
    ({}, "kubernetesLease", LockServices()),
    (ZK_LOCK_VALUES, "zookeeper", LockServices("zk-0.zk,zk-1.zk:2182", 2281, "/lake/locks")),
    (HMS_LOCK_VALUES, "hiveMetastore", LockServices(hive_metastore_uris="thrift://hms:9083")),
], ids=["default", "zookeeper", "hiveMetastore"])
def test_the_chart_sets_the_platform_default_lock(values, provider, services) -> None:
    settings = chart_settings(values).planner
    assert (settings.default_lock_provider, settings.lock_services) == (provider, services)


@pytest.mark.parametrize("values, complaint", [
    ({"lock.provider": "etcd"}, "/lock/provider"),
    ({"lock.provider": "zookeeper"}, "/lock/zookeeper/url"),
    ({"lock.provider": "hiveMetastore"}, "/lock/hiveMetastore/uris"),
    ({"lock.provider": "zookeeper", "lock.zookeeper.url": "zk://zk"}, "/lock/zookeeper/url"),
    ({"lock.hiveMetastore.uris": "hms:9083"}, "/lock/hiveMetastore/uris"),
    ({"lock.zookeeper.basePath": "locks"}, "/lock/zookeeper/basePath"),
])
def test_the_chart_refuses_a_platform_lock_it_cannot_take(values, complaint) -> None:
    assert complaint in helm_refusal(CHARTS / "hudi-operator", values)


PLATFORM = replace(SETTINGS, lock_services=LockServices("zk-0.zk", 2281, "/lake/locks", "thrift://platform-hms:9083"))


@pytest.mark.parametrize("provider, lock, expected", [
    # no section at all (the platform's default provider): the platform's addresses
    ("zookeeper", None, {C.ZK_CONNECT_URL.key: "zk-0.zk", C.ZK_PORT.key: "2281", C.ZK_BASE_PATH.key: "/lake/locks",
                         C.ZK_LOCK_KEY.key: "orders"}),
    # a table's fields first, field by field
    ("kubernetesLease", {"provider": "zookeeper", "zookeeper": {"url": "zk-9.team:2182", "lockKey": "o"}},
     {C.ZK_CONNECT_URL.key: "zk-9.team:2182", C.ZK_PORT.key: "2281", C.ZK_BASE_PATH.key: "/lake/locks",
      C.ZK_LOCK_KEY.key: "o"}),
    ("kubernetesLease", {"provider": "zookeeper", "zookeeper": {"port": 2182, "basePath": "/team/locks"}},
     {C.ZK_CONNECT_URL.key: "zk-0.zk", C.ZK_PORT.key: "2182", C.ZK_BASE_PATH.key: "/team/locks",
      C.ZK_LOCK_KEY.key: "orders"}),
    ("hiveMetastore", None, {C.HMS_LOCK_URIS.key: "thrift://platform-hms:9083", C.HMS_LOCK_DATABASE.key: "default",
                             C.HMS_LOCK_TABLE.key: "orders"}),
    ("zookeeper", {"provider": "hiveMetastore", "hiveMetastore": {"uris": "thrift://team-hms:9083"}},
     {C.HMS_LOCK_URIS.key: "thrift://team-hms:9083", C.HMS_LOCK_DATABASE.key: "default",
      C.HMS_LOCK_TABLE.key: "orders"}),
], ids=["zookeeper, no section", "zookeeper url of the table", "zookeeper port of the table",
        "metastore, no section", "metastore of the table"])
def test_the_platform_lock_services_fill_in_what_a_table_leaves_out(provider, lock, expected) -> None:
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}},
              **({"concurrency": {"lock": lock}} if lock else {}))
    settings = replace(PLATFORM, default_lock_provider=provider)
    plans = (plan_table(t, settings, [pipeline()]), plan_pipeline(t, pipeline(), settings))
    chosen = (lock or {"provider": provider})["provider"]
    expected = {**OCC, C.LOCK_PROVIDER.key: PROVIDER_CLASSES[chosen], **expected}
    assert every_job_control(*plans) == [expected, expected]


def test_the_table_s_catalog_sync_metastore_comes_before_the_platform_s() -> None:
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}},
              catalogSync=[{"metastoreUris": "thrift://sync-hms:9083", "database": "sales"}])
    plan = plan_table(t, replace(PLATFORM, default_lock_provider="hiveMetastore"), [pipeline()])
    assert plan.concurrency.lock.options[C.HMS_LOCK_URIS.key] == "thrift://sync-hms:9083"


@pytest.mark.parametrize("provider, lock, path", [
    ("zookeeper", None, "spec.concurrency.lock.zookeeper.url"),
    ("kubernetesLease", {"provider": "zookeeper"}, "spec.concurrency.lock.zookeeper.url"),
    ("kubernetesLease", {"provider": "zookeeper", "zookeeper": {"basePath": "/team"}},
     "spec.concurrency.lock.zookeeper.url"),
    ("hiveMetastore", None, "spec.concurrency.lock.hiveMetastore.uris"),
], ids=["platform default", "no section", "no url", "metastore"])
def test_a_lock_without_an_address_anywhere_is_refused_naming_the_field(provider, lock, path) -> None:
    """Planning with settings the operator would not start with (hudictl's, or a test's) refuses the
    table rather than crashing: the field to set is named."""
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}},
              **({"concurrency": {"lock": lock}} if lock else {}))
    problem = refusal(lambda: plan_table(t, replace(SETTINGS, default_lock_provider=provider), [pipeline()]))
    assert (problem.resource, problem.path) == ("HudiTable/orders", path)


@pytest.mark.parametrize("where", ["table", "pipeline"])
def test_jobs_of_several_writers_retry_lost_conflicts_a_bounded_number_of_times(where) -> None:
    services = {"cleaning": {"mode": "scheduled", "schedule": "@hourly"}}
    several = table(services=services)
    plans = (plan_table(several, SETTINGS, [pipeline()]), plan_pipeline(several, pipeline(), SETTINGS))
    assert [job[RETRIES] for job in every_job_control(*plans)] == ["3", "3"]
    # a single writer loses no conflicts: Hudi's default (no retry) stays
    assert RETRIES not in plan_pipeline(table(), pipeline(), SETTINGS).jobs[0].job_config["hoodieConf"]
    # a count of the user's own stays theirs
    t = table(services=services, **({"options": {RETRIES: "7"}} if where == "table" else {}))
    p = pipeline(**({"options": {RETRIES: "7"}} if where == "pipeline" else {}))
    plans = (plan_pipeline(t, p, SETTINGS), plan_table(t, SETTINGS, [p]))
    retries = {job.name: job.job_config["hoodieConf"][RETRIES] for plan in plans for job in plan.jobs}
    assert retries["orders-in-ingest"] == "7"
    assert retries["orders-clean"] == ("7" if where == "table" else "3")     # a pipeline's options are its own


def test_lock_providers_and_their_keys() -> None:
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}},
              catalogSync=[{"metastoreUris": "thrift://hms:9083", "database": "sales", "table": "orders_rt"}])

    def lock_of(lock: dict) -> dict[str, str]:
        plans = (plan_table(replace_spec(t, lock), SETTINGS, [pipeline()]),
                 plan_pipeline(replace_spec(t, lock), pipeline(), SETTINGS))
        found = every_job_control(*plans)
        assert all(job == found[0] for job in found)
        return {k: v for k, v in found[0].items() if k not in OCC}

    assert lock_of({"provider": "kubernetesLease", "kubernetesLease": {"name": "orders-lock", "durationSeconds": 30}}) \
        == {**lease(), C.LEASE_NAME.key: "orders-lock", C.LEASE_DURATION_SECONDS.key: "30"}
    # the metastore lock defaults to the catalogSync target's metastore, database and table
    assert lock_of({"provider": "hiveMetastore"}) == {
        C.LOCK_PROVIDER.key: C.HMS_LOCK_PROVIDER, C.HMS_LOCK_URIS.key: "thrift://hms:9083",
        C.HMS_LOCK_DATABASE.key: "sales", C.HMS_LOCK_TABLE.key: "orders_rt"}
    assert lock_of({"provider": "zookeeper", "zookeeper": {"url": "zk-0.zk,zk-1.zk"}}) == {
        C.LOCK_PROVIDER.key: C.ZK_LOCK_PROVIDER, C.ZK_CONNECT_URL.key: "zk-0.zk,zk-1.zk", C.ZK_PORT.key: "2181",
        C.ZK_BASE_PATH.key: "/hudi/locks", C.ZK_LOCK_KEY.key: "orders"}


def replace_spec(t, lock: dict):
    return replace(t, spec=replace(t.spec, concurrency=load_concurrency(lock)))


def load_concurrency(lock: dict):
    return table(concurrency={"lock": lock}).spec.concurrency


def test_hudictl_takes_a_lock_file_on_local_disk() -> None:
    t = table(basePath="/lake/orders", services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}})
    plan = plan_table(t, local_settings("lake"), [pipeline()])
    assert plan.concurrency.lock.provider == "fileSystem"
    assert every_job_control(plan) == [{**OCC, C.LOCK_PROVIDER.key: C.FS_LOCK_PROVIDER}]


def test_hudictl_refuses_an_object_store_table_without_a_lock() -> None:
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}})
    problem = refusal(lambda: plan_table(t, local_settings("lake"), [pipeline()]))
    assert (problem.resource, problem.path) == ("HudiTable/orders", "spec.concurrency.lock.provider")
    assert "hiveMetastore" in problem.message and "zookeeper" in problem.message
    # a single writer needs no lock, wherever it is
    assert plan_table(t, local_settings("lake"), []).concurrency.mode == "singleWriter"


# --- refused --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("concurrency, spec, path, words", [
    ({"mode": "singleWriter"}, {}, "spec.concurrency.mode", "2 jobs write the table (pipeline orders-in, clean)"),
    ({"lock": {"provider": "fileSystem"}}, {}, "spec.concurrency.lock.provider", "does not exclude other writers"),
    ({"lock": {"provider": "fileSystem", "fileSystem": {"path": "s3a://lake/locks"}}}, {"basePath": "/lake/orders"},
     "spec.concurrency.lock.provider", "a lock file on s3a://lake/locks"),
    ({"lock": {"provider": "hiveMetastore"}}, {}, "spec.concurrency.lock.hiveMetastore.uris",
     "no catalogSync target"),
    ({}, {"options": {C.WRITE_CONCURRENCY_MODE.key: C.SINGLE_WRITER}},
     f"spec.options.{C.WRITE_CONCURRENCY_MODE.key}", "a single writer, but 2 jobs"),
    ({}, {"options": {C.FAILED_WRITES_CLEANER_POLICY.key: "EAGER"}},
     f"spec.options.{C.FAILED_WRITES_CLEANER_POLICY.key}", "needs LAZY"),
    ({}, {"options": {C.LOCK_PROVIDER.key: C.ZK_LOCK_PROVIDER}, "concurrency": {"lock": {"provider": "kubernetesLease"}}},
     f"spec.options.{C.LOCK_PROVIDER.key}", "contradicts the lock the plan takes (kubernetesLease)"),
    ({}, {"options": {**CHAPTER_7, C.LOCK_PROVIDER.key: C.FS_LOCK_PROVIDER}},
     f"spec.options.{C.LOCK_PROVIDER.key}", "a lock file on s3a://lake/orders"),
    ({}, {"options": {C.LOCK_PROVIDER.key: C.IN_PROCESS_LOCK_PROVIDER}},
     f"spec.options.{C.LOCK_PROVIDER.key}", "excludes writers of one process only"),
], ids=["singleWriter", "lock file on s3", "lock folder on s3", "metastore without uris", "SINGLE_WRITER option",
        "EAGER", "two lock providers", "hand-written lock file on s3", "in-process lock"])
def test_unsafe_combinations_are_refused_with_the_field(concurrency, spec, path, words) -> None:
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}},
              **({"concurrency": concurrency} if concurrency else {}), **spec)
    for plan in (lambda: plan_table(t, SETTINGS, [pipeline()]), lambda: plan_pipeline(t, pipeline(), SETTINGS)):
        problem = refusal(plan)
        assert (problem.resource, problem.path) == ("HudiTable/orders", path)
        assert words in problem.message


def test_the_operator_reports_a_refusal_as_a_condition_naming_the_field() -> None:
    """hudictl and the operator get the same refusal: the resource set reports it per resource."""
    t = table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}},
              concurrency={"lock": {"provider": "fileSystem"}})
    resources = ResourceSet(tables={("lake", "orders"): t}, pipelines=[pipeline()], namespace="lake")
    with pytest.raises(ResourceError) as caught:
        resources.plan_table(t, SETTINGS)
    assert (caught.value.resource, caught.value.path) == ("HudiTable/orders", "spec.concurrency.lock.provider")


def test_pipelines_must_agree_on_hand_written_concurrency_options() -> None:
    t = table()
    a = pipeline(name="orders-a", options={C.LOCK_PROVIDER.key: C.ZK_LOCK_PROVIDER})
    b = pipeline(name="orders-b", options={C.LOCK_PROVIDER.key: C.FS_LOCK_PROVIDER})
    problem = refusal(lambda: plan_table(t, SETTINGS, [a, b]))
    assert (problem.resource, problem.path) == ("HudiPipeline/orders-b", f"spec.options.{C.LOCK_PROVIDER.key}")


# --- written by hand --------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["table", "pipeline"])
def test_chapter_7_properties_are_accepted_as_written(where) -> None:
    services = {"cleaning": {"mode": "scheduled", "schedule": "@hourly"}}
    t = table(services=services, **({"options": CHAPTER_7} if where == "table" else {}))
    p = pipeline(**({"options": CHAPTER_7} if where == "pipeline" else {}))
    plans = (plan_pipeline(t, p, SETTINGS), plan_table(t, SETTINGS, [p]))
    expected = {**OCC, **CHAPTER_7}
    assert every_job_control(*plans) == [expected, expected]
    assert plans[0].concurrency.lock.provider == "zookeeper"


# --- the API: spec.concurrency as load (Python) checks it (the CEL twins are in test_crd_schema) -------------
@pytest.mark.parametrize("concurrency, path", [
    ({"mode": "sometimes"}, "spec.concurrency.mode"),
    ({"lock": {"provider": "etcd"}}, "spec.concurrency.lock.provider"),
    ({"lock": {"provider": "zookeeper", "zookeeper": {"url": "zk:2181/x"}}}, "spec.concurrency.lock.zookeeper.url"),
    ({"lock": {"provider": "kubernetesLease", "kubernetesLease": {"durationSeconds": 1}}},
     "spec.concurrency.lock.kubernetesLease.durationSeconds"),
    ({"lock": {"provider": "kubernetesLease", "hiveMetastore": {"uris": "thrift://hms:9083"}}},
     "spec.concurrency.lock.hiveMetastore"),
    ({"lock": {"provider": "hiveMetastore", "hiveMetastore": {"uris": "http://hms"}}},
     "spec.concurrency.lock.hiveMetastore.uris"),
    ({"mode": "singleWriter", "lock": {"provider": "kubernetesLease"}}, "spec.concurrency.lock"),
])
def test_bad_concurrency_specs_are_refused_on_load(concurrency, path) -> None:
    with pytest.raises(SpecError) as caught:
        table(concurrency=concurrency)
    assert caught.value.path == path


# --- hudictl shows it -------------------------------------------------------------------------------------
def test_hudictl_render_and_status_show_the_decision(tmp_path, capsys) -> None:
    docs = [{"apiVersion": API, "kind": "HudiTable", "metadata": {"name": "orders"},
             "spec": {"basePath": str(tmp_path / "orders"), "recordKey": ["id"], "tableType": "MERGE_ON_READ",
                      **{k: v for k, v in MOR_SCHEDULED.items() if k != "tableType"}}},
            {"apiVersion": API, "kind": "HudiPipeline", "metadata": {"name": "orders-ingest"},
             "spec": {"tableRef": {"name": "orders"}, "source": {"type": "files", "files": {"path": "/in"}}}}]
    path = tmp_path / "lake.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    assert cli.main(["render", "-f", str(path)]) == 0
    rendered = capsys.readouterr().out
    lease_name = f"hudi-lock-orders-{hashlib.sha256(str(tmp_path / 'orders').encode()).hexdigest()[:8]}"
    header = (f"# HudiTable/orders concurrency: optimistic (3 writers: pipeline orders-ingest, compaction, clean), "
              f"lock: kubernetesLease default/{lease_name}")
    assert header in rendered.splitlines()
    assert len(list(yaml.safe_load_all(rendered))) == 6      # the comment leaves the documents as they were
    assert cli.main(["status", "-f", str(path), "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["orders"]["concurrency"] == header.split("concurrency: ", 1)[1]
