"""The API model as the operator and the planner use it: loading the examples, defaults, the
attribute names, derived values, Spark settings merging, error messages and updates."""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_operator.api import (API_GROUP, API_VERSION, PYSPARK_VERSION, SPARK_DEFAULTS, Capabilities, DriverSpec,
                               ExecutorSpec, HudiPipelineResource, HudiTableResource, PodSecurityContext,
                               RestartPolicySpec, SecurityContext, SparkSpec, SpecError, check_update, load,
                               load_spark, to_json)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "operator" / "examples"


def example(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / name).read_text())


def refusal(resource: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as refused:
        load(resource)
    return refused.value


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_loads(name: str) -> None:
    resource = example(name)
    loaded = load(resource)
    assert loaded.kind == resource["kind"]
    assert isinstance(loaded, HudiTableResource if loaded.kind == "HudiTable" else HudiPipelineResource)
    assert (loaded.metadata.name, loaded.metadata.namespace) == (resource["metadata"]["name"], "lakehouse")
    assert load({**resource, "spec": to_json(loaded.spec)}) == loaded     # what to_json writes loads back the same


def test_every_example_pipeline_writes_an_example_table() -> None:
    resources = [example(p.name) for p in EXAMPLES.glob("*.yaml")]
    tables = {r["metadata"]["name"] for r in resources if r["kind"] == "HudiTable"}
    pipelines = [load(r) for r in resources if r["kind"] == "HudiPipeline"]
    assert {p.spec.table_ref.name for p in pipelines} <= tables
    assert {p.spec.source.type for p in pipelines} == {"files", "kafka", "hudiIncremental", "debezium"}


def test_the_api_is_lakehouse_hudi_dev_v1alpha1() -> None:
    assert (API_GROUP, API_VERSION) == ("lakehouse.hudi.dev", "v1alpha1")
    assert load(example("orders-table.yaml")).api_version == "lakehouse.hudi.dev/v1alpha1"


def test_attributes_are_the_snake_case_of_the_fields() -> None:
    table = load(example("orders-table.yaml")).spec
    assert table.services.compaction.max_delta_commits == 10
    assert table.services.compaction.spark.executor.instances == 4
    assert table.storage.credentials_secret == "lake-s3-credentials"
    assert table.spark.executor.instances == 2
    assert table.record_key == ("order_id",) and table.partition_fields == ("order_date",)
    assert table.catalog_sync[0].metastore_uris == "thrift://lakehouse-hive-metastore.hudi-platform.svc:9083"
    silver = load(example("silver-pipeline.yaml")).spec
    assert silver.source.hudi_incremental.instants_per_batch == 20
    assert silver.source.hudi_incremental.table_ref.name == "orders"
    assert [t.flatten for t in silver.transformations] == [True, None]
    kafka = load(example("orders-kafka-pipeline.yaml")).spec.source.kafka
    assert kafka.security.jaas_config_secret.key == "sasl.jaas.config"
    assert kafka.max_events_per_batch == 500000


def test_defaults_are_applied() -> None:
    table = load(example("customers-table.yaml")).spec
    assert (table.database, table.table_type, table.deletion_policy) == ("crm", "COPY_ON_WRITE", "Retain")
    assert (table.index.type, table.index.update_partition_path) == ("SIMPLE", True)
    assert (table.file_sizing.max_file_size_bytes, table.file_sizing.small_file_limit_bytes) == (125829120, 104857600)
    assert (table.cdc.enabled, table.cdc.logging_mode) == (True, "DATA_BEFORE_AFTER")
    assert (table.services.compaction.mode, table.services.compaction.max_delta_commits) == ("inline", 5)
    assert table.services.compaction.trigger_strategy == "NUM_COMMITS"
    assert (table.services.cleaning.policy, table.services.cleaning.retain_commits) == ("KEEP_LATEST_COMMITS", 10)
    assert table.services.clustering.mode == "disabled"
    assert (table.services.archival.min_commits, table.services.archival.max_commits) == (20, 30)
    assert (table.partition_fields, table.catalog_sync, table.options) == ((), (), {})
    assert table.schema is None and table.savepoints is None and table.key_generator is None
    pipeline = load(example("orders-files-pipeline.yaml")).spec
    assert (pipeline.operation, pipeline.filter_dupes, pipeline.state) == ("upsert", False, "running")
    assert (pipeline.error_table.enabled, pipeline.error_table.max_error_records) == (True, -1)
    assert (pipeline.metrics.enabled, pipeline.metrics.port) == (True, 9090)
    assert (pipeline.upgrade.rollback_on_failure, pipeline.upgrade.stable_after_seconds) == (False, 300)
    assert (pipeline.mode.min_sync_interval_seconds, pipeline.mode.concurrency_policy) == (60, "Forbid")
    assert pipeline.source.files.format == "json" and pipeline.spark is None
    debezium = example("customers-debezium-pipeline.yaml")
    del debezium["spec"]["source"]["debezium"]["kafka"]["security"]
    kafka = load(debezium).spec.source.debezium.kafka
    assert (kafka.security.protocol, kafka.starting_offsets) == ("PLAINTEXT", "earliest")


def test_metadata_and_status_come_through() -> None:
    resource = example("orders-table.yaml")
    resource["metadata"].update(uid="0b6c", generation=3, labels={"team": "sales"}, resourceVersion="77")
    resource["status"] = {"phase": "Ready", "observedGeneration": 3}
    loaded = load(resource)
    assert (loaded.metadata.uid, loaded.metadata.generation, loaded.metadata.labels) == ("0b6c", 3, {"team": "sales"})
    assert loaded.status == {"phase": "Ready", "observedGeneration": 3}
    assert load(example("orders-table.yaml")).status is None


@pytest.mark.parametrize("name, table_name, expected", [
    ("orders-silver", None, "orders_silver"),
    ("orders-silver", "silver_orders", "silver_orders"),
])
def test_effective_table_name(name: str, table_name: str | None, expected: str) -> None:
    resource = example("orders-silver-table.yaml")
    resource["metadata"]["name"] = name
    if table_name:
        resource["spec"]["tableName"] = table_name
    assert load(resource).spec.effective_table_name(name) == expected


@pytest.mark.parametrize("record_key, partitions, key_generator, expected", [
    (["id"], [], None, "NON_PARTITION"),
    (["id", "line"], [], None, "NON_PARTITION"),
    (["id"], ["day"], None, "SIMPLE"),
    (["id", "line"], ["day"], None, "COMPLEX"),
    (["id"], ["country", "day"], None, "COMPLEX"),
    (["id"], ["day"], "TIMESTAMP", "TIMESTAMP"),
])
def test_effective_key_generator(record_key: list[str], partitions: list[str], key_generator: str | None,
                                 expected: str) -> None:
    resource = example("customers-table.yaml")
    resource["spec"].update(recordKey=record_key, partitionFields=partitions)
    if key_generator:
        resource["spec"]["keyGenerator"] = key_generator
    assert load(resource).spec.effective_key_generator() == expected


def test_spark_version_default_is_the_pinned_pyspark() -> None:
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"pyspark=={PYSPARK_VERSION}" in pins
    assert SPARK_DEFAULTS.merged(load(example("customers-table.yaml")).spec.spark).spark_version == PYSPARK_VERSION


def test_a_table_spark_spec_is_as_written_and_the_defaults_lie_under_it() -> None:
    bare = load(example("customers-table.yaml")).spec.spark
    assert bare == SparkSpec()                     # the planner lays it over the platform's settings
    assert SPARK_DEFAULTS.merged(bare) == SPARK_DEFAULTS
    defaults = SPARK_DEFAULTS
    assert (defaults.driver.cores, defaults.driver.memory, defaults.executor.instances,
            defaults.executor.memory) == (1, "1g", 1, "2g")
    assert defaults.image is None                  # the operator's configured image
    orders = SPARK_DEFAULTS.merged(load(example("orders-table.yaml")).spec.spark)
    assert (orders.driver.cores, orders.driver.memory, orders.executor.instances) == (1, "2g", 2)


def test_the_default_job_pods_meet_restricted_pod_security() -> None:
    """The rules of the restricted Pod Security Standard a pod spec can break, checked on the defaults
    (the Spark image's user is 185, as the jobs' Dockerfile says)."""
    pod, container = SPARK_DEFAULTS.pod_security_context, SPARK_DEFAULTS.security_context
    assert pod.run_as_non_root is True and pod.run_as_user == 185 != 0
    assert pod.seccomp_profile.type == "RuntimeDefault"
    assert container.allow_privilege_escalation is False and container.privileged is None
    assert container.capabilities == Capabilities(drop=("ALL",))
    assert container.read_only_root_filesystem is True
    assert "USER 185" in (ROOT / "jobs" / "Dockerfile").read_text()
    restart = SPARK_DEFAULTS.restart_policy
    assert (restart.type, restart.on_failure_retries, restart.on_failure_retry_interval_seconds) == ("OnFailure", 10, 30)


def test_pipeline_spark_overrides_the_table_field_by_field() -> None:
    table = load(example("orders-table.yaml")).spec.spark
    pipeline = load(example("orders-kafka-pipeline.yaml")).spec.spark
    merged = table.merged(pipeline)
    assert merged.executor.instances == 3                                   # the pipeline's
    assert (merged.executor.memory, merged.driver.memory) == ("4g", "2g")   # the table's
    assert table.merged(None) is table


def test_merged_maps_merge_key_by_key_and_tolerations_replace() -> None:
    toleration = {"key": "spark", "operator": "Exists", "effect": "NoSchedule"}
    base = SparkSpec(image="lake/spark:1", spark_conf={"spark.a": "1", "spark.b": "1"}, node_selector={"pool": "x"},
                     tolerations=(toleration,), driver=DriverSpec(memory="1g"))
    top = SparkSpec(spark_conf={"spark.b": "2", "spark.c": "2"}, image_pull_policy="Always",
                    executor=ExecutorSpec(cores=4))
    merged = base.merged(top)
    assert merged.spark_conf == {"spark.a": "1", "spark.b": "2", "spark.c": "2"}
    assert (merged.image, merged.image_pull_policy, merged.node_selector) == ("lake/spark:1", "Always", {"pool": "x"})
    assert (merged.driver.memory, merged.executor.cores, merged.tolerations) == ("1g", 4, (toleration,))
    assert base.merged(SparkSpec(tolerations=({"key": "other"},))).tolerations == ({"key": "other"},)


def test_security_contexts_and_affinity_are_replaced_whole_and_the_restart_policy_merges() -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["spark"]}]}]}}}
    base = SPARK_DEFAULTS.merged(SparkSpec(affinity=affinity, image_pull_secrets=("regcred",)))
    # an OpenShift-style namespace assigns its own user: the pod context is replaced, not merged, so the
    # default runAsUser 185 does not survive
    openshift = PodSecurityContext(run_as_non_root=True)
    top = SparkSpec(pod_security_context=openshift, affinity={"podAntiAffinity": {}},
                    restart_policy=RestartPolicySpec(type="Always"), driver=DriverSpec(core_request="500m"))
    merged = base.merged(top)
    assert merged.pod_security_context == openshift and merged.pod_security_context.run_as_user is None
    assert merged.security_context == SPARK_DEFAULTS.security_context          # not set above: kept whole
    assert merged.affinity == {"podAntiAffinity": {}}
    assert (merged.restart_policy.type, merged.restart_policy.on_failure_retry_interval_seconds) == ("Always", 30)
    assert (merged.driver.core_request, merged.driver.memory) == ("500m", "1g")
    assert merged.image_pull_secrets == ("regcred",)
    assert base.merged(SparkSpec(security_context=SecurityContext(read_only_root_filesystem=False))
                       ).security_context == SecurityContext(read_only_root_filesystem=False)


def test_platform_job_defaults_load_as_a_tables_spark_settings() -> None:
    defaults = load_spark({"imagePullSecrets": ["regcred"], "priorityClassName": "lakehouse",
                           "podSecurityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                           "restartPolicy": {"onFailureRetries": 50}}, "JOB_DEFAULTS")
    assert defaults.image_pull_secrets == ("regcred",) and defaults.restart_policy.on_failure_retries == 50
    assert defaults.pod_security_context.seccomp_profile.type == "RuntimeDefault"
    for raw, path in [({"securityContext": {"readOnlyRootFileSystem": True}}, "JOB_DEFAULTS.securityContext."
                                                                               "readOnlyRootFileSystem"),
                      ({"podSecurityContext": {"seccompProfile": {"type": "runtime/default"}}},
                       "JOB_DEFAULTS.podSecurityContext.seccompProfile.type"),
                      ({"restartPolicy": {"onFailureRetryIntervalSeconds": 0}},
                       "JOB_DEFAULTS.restartPolicy.onFailureRetryIntervalSeconds"),
                      ({"imagePullSecrets": ["Reg_Cred"]}, "JOB_DEFAULTS.imagePullSecrets[0]")]:
        with pytest.raises(SpecError) as refused:
            load_spark(raw, "JOB_DEFAULTS")
        assert refused.value.path == path


def test_error_names_the_field_and_says_what_to_do() -> None:
    resource = example("orders-kafka-pipeline.yaml")
    del resource["spec"]["source"]["kafka"]["security"]["jaasConfigSecret"]
    assert str(refusal(resource)) == (
        "spec.source.kafka: security.protocol SASL_SSL needs usernameSecret and passwordSecret, or "
        "jaasConfigSecret (Secret references); credentials are never written in the spec")


@pytest.mark.parametrize("change, path, message", [
    (lambda s: s.update(record_key=s.pop("recordKey")), "spec.record_key",
     "unknown field 'record_key'; did you mean 'recordKey'?"),
    (lambda s: s.update(basepath=s.pop("basePath")), "spec.basepath", "did you mean 'basePath'?"),
    (lambda s: s["services"].update(compacton={}), "spec.services.compacton", "did you mean 'compaction'?"),
    (lambda s: s.update(zzz=1), "spec.zzz", "valid fields: tableName, database, basePath"),
    (lambda s: s.update(hiveStylePartitioning="yes"), "spec.hiveStylePartitioning", "must be true or false"),
    (lambda s: s["services"]["compaction"].update(maxDeltaCommits="5"), "spec.services.compaction.maxDeltaCommits",
     "must be a whole number, got '5' (a string)"),
    (lambda s: s.update(database=5), "spec.database", "must be a string, got 5 (a number); quote it in YAML"),
    (lambda s: s.update(partitionFields="order_date"), "spec.partitionFields", "must be a list"),
    (lambda s: s["catalogSync"][0].update(metastoreUris="hive:9083"), "spec.catalogSync[0].metastoreUris",
     "must be thrift://host:port"),
    (lambda s: s["spark"]["driver"].update(memory="2GB"), "spec.spark.driver.memory",
     "must be a Spark memory size such as 512m or 2g, got '2GB'"),
    (lambda s: s.update(deletionPolicy="delete"), "spec.deletionPolicy",
     "must be one of Retain, Delete, got 'delete'; did you mean 'Delete'?"),
])
def test_field_errors(change: Any, path: str, message: str) -> None:
    resource = example("orders-table.yaml")
    change(resource["spec"])
    refused = refusal(resource)
    assert (refused.path, message in refused.message) == (path, True), refused


@pytest.mark.parametrize("change, path, message", [
    (lambda r: r.update(apiVersion="lakehouse.hudi.dev/v1"), "apiVersion", "must be lakehouse.hudi.dev/v1alpha1"),
    (lambda r: r.update(kind="HudiTabel"), "kind", "must be one of HudiTable, HudiPipeline"),
    (lambda r: r["metadata"].pop("name"), "metadata.name", "is required"),
    (lambda r: r["metadata"].update(name="Orders"), "metadata.name", "a Kubernetes object name"),
    (lambda r: r.pop("spec"), "spec", "is required"),
    (lambda r: r.update(sepc={}), "sepc", "did you mean 'spec'?"),
])
def test_resource_errors(change: Any, path: str, message: str) -> None:
    resource = example("orders-table.yaml")
    change(resource)
    refused = refusal(resource)
    assert (refused.path, message in refused.message) == (path, True), refused


def test_nulls_count_as_absent() -> None:
    resource = example("orders-files-pipeline.yaml")
    resource["spec"].update(operation=None, spark=None)
    spec = load(resource).spec
    assert (spec.operation, spec.spark) == ("upsert", None)


def test_check_update_refuses_a_new_identity_and_allows_the_rest() -> None:
    old = example("orders-table.yaml")
    new = copy.deepcopy(old)
    new["spec"]["tableType"] = "COPY_ON_WRITE"
    new["spec"]["services"]["compaction"]["mode"] = "disabled"
    with pytest.raises(SpecError) as refused:
        check_update(old, new)
    assert (refused.value.path, refused.value.message) == (
        "spec.tableType", "tableType cannot change: a table's type is fixed when it is created; create a new "
                          "HudiTable and migrate the data into it")
    with pytest.raises(SpecError):
        check_update(load(old), load(new))          # loaded resources too
    moved = copy.deepcopy(old)
    moved["spec"]["basePath"] = "s3a://lake/bronze/orders_v2"
    with pytest.raises(SpecError) as refused:
        check_update(old, moved)
    assert refused.value.path == "spec.basePath"
    changed = copy.deepcopy(old)
    changed["spec"]["services"]["compaction"]["maxDeltaCommits"] = 3
    changed["spec"]["spark"]["restartPolicy"] = {"type": "Always"}
    check_update(old, changed)
    pipeline = example("orders-files-pipeline.yaml")
    with pytest.raises(SpecError) as refused:
        check_update(old, pipeline)
    assert refused.value.path == "kind"
