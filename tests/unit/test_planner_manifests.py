"""The planner: HudiTable/HudiPipeline specs → streamer job-configs and Spark operator objects.

Every plan made here goes through ``planned``/``planned_table``, which validate each manifest the way
the cluster would (the Spark operator's real CRDs from ../shared/crds, Kubernetes' own schemas for
ConfigMaps, ObjectMeta and pod rules, ConfigMap data keys) and each job-config with the job's own
parsers (``hudi_jobs.streamer.config``, ``hudi_jobs.table_service``), so no manifest or job-config
escapes validation."""
from __future__ import annotations

import copy
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_jobs.streamer import config as streamer_config
from hudi_jobs.table_service import parse_config
from hudi_operator.api import SparkSpec, load, load_spark
from hudi_operator.api.fields import api_fields, kind_of
from hudi_operator.planner import OperatorSettings, PlanError, plan_pipeline, plan_table, triggered_run
from hudi_operator.planner.labels import SPEC_HASH_ANNOTATION, spec_hash
from hudi_operator.planner.resource_set import ResourceError, ResourceSet
from hudi_operator.planner.spark_app import JOB_CONFIG_KEY
from hudictl import cli
from hudictl.run import _local_job_config
from tests.support.kubernetes_schemas import errors as kubernetes_errors
from tests.support.spark_operator_schemas import errors as spark_operator_errors
from tests.support.spark_operator_schemas import metadata_errors

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "operator" / "examples"
API = "lakehouse.hudi.dev/v1alpha1"
SETTINGS = OperatorSettings(image="registry.test/hudi-jobs:1")
CREDENTIAL_KEY = re.compile(r"(?i)(password|secret|token|sasl\.jaas|basic\.auth|sasl\.username|ssl\.ca)")
PLACEHOLDER = re.compile(r"\$\{secret:[a-z0-9.-]+/[-._a-zA-Z0-9]+\}")
CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")

TABLE = {"basePath": "s3a://lake/orders", "recordKey": ["id"], "partitionFields": ["region"],
         "orderingField": "ts", "services": {"cleaning": {"mode": "disabled"}}}
FILES = {"type": "files", "files": {"path": "s3a://landing/orders"}}
KAFKA = {"bootstrapServers": "kafka:9093", "topic": "shop.orders"}


def merged(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def table(name: str = "orders", uid: str | None = "uid-table", namespace: str | None = "lake", **spec: Any):
    metadata = {"name": name, **({"uid": uid} if uid else {}), **({"namespace": namespace} if namespace else {})}
    return load({"apiVersion": API, "kind": "HudiTable", "metadata": metadata, "spec": merged(TABLE, spec)})


def pipeline(source: dict | None = None, name: str = "orders-in", uid: str | None = "uid-pipe",
             table_name: str = "orders", **spec: Any):
    metadata = {"name": name, "namespace": "lake", **({"uid": uid} if uid else {})}
    return load({"apiVersion": API, "kind": "HudiPipeline", "metadata": metadata,
                 "spec": {"tableRef": {"name": table_name}, "source": source or FILES, **spec}})


def check_manifests(plan) -> None:
    manifests = plan.manifests
    config_maps = [m for m in manifests if m["kind"] == "ConfigMap"]
    apps = [m for m in manifests if m["kind"] != "ConfigMap"]
    assert manifests == config_maps + apps, "ConfigMaps come before the applications that mount them"
    for m in config_maps:
        assert kubernetes_errors(m) == [], m["metadata"]["name"]
        assert metadata_errors(m["metadata"]) == []
        assert all(CONFIG_KEY.fullmatch(k) and isinstance(v, str) for k, v in m["data"].items())
    for m in apps:
        assert spark_operator_errors(m) == [], m["metadata"]["name"]
    for job in plan.jobs:
        assert yaml.safe_load(job.config_map["data"][JOB_CONFIG_KEY]) == job.job_config
        volumes = {v["configMap"]["name"] for v in app_spec(job)["volumes"] if "configMap" in v}
        assert job.config_map["metadata"]["name"] in volumes
        if job.job == "streamer":
            cfg = streamer_config.resolve(streamer_config.job_fields(job.job_config, "test"), {})
            # what the job understood is what was planned: the documented round trip
            assert streamer_config.to_job_config(cfg, mask=False)["hoodieConf"] == job.job_config["hoodieConf"]
        else:
            assert parse_config(job.job_config, "test").service == job.service


def planned(t, p, settings: OperatorSettings = SETTINGS, upstream=None):
    plan = plan_pipeline(t, p, settings, upstream)
    check_manifests(plan)
    return plan


def planned_table(t, settings: OperatorSettings = SETTINGS):
    plan = plan_table(t, settings)
    check_manifests(plan)
    return plan


def only(plan):
    assert len(plan.jobs) == 1
    return plan.jobs[0]


def conf(plan) -> dict[str, str]:
    return only(plan).job_config["hoodieConf"]


def app_spec(job) -> dict[str, Any]:
    spec = job.application["spec"]
    return spec.get("template", spec)


# --- sources -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt, source_class", [("json", "JsonDFSSource"), ("csv", "CsvDFSSource"),
                                               ("parquet", "ParquetDFSSource"), ("avro", "AvroDFSSource")])
def test_file_sources(fmt, source_class):
    plan = planned(table(), pipeline({"type": "files", "files": {"path": "s3a://landing/orders", "format": fmt}}))
    job = only(plan)
    assert job.job_config["sourceClass"] == source_class
    assert conf(plan)["hoodie.streamer.source.dfs.root"] == "s3a://landing/orders"
    assert job.job_config["targetBasePath"] == "s3a://lake/orders"
    assert job.job_config["targetTable"] == "orders"


def test_csv_options_become_the_streamers_and_unknown_ones_are_refused():
    files = {"path": "/landing", "format": "csv", "csvOptions": {"header": "true", "sep": ";"}}
    options = conf(planned(table(), pipeline({"type": "files", "files": files})))
    assert options["hoodie.streamer.csv.header"] == "true" and options["hoodie.streamer.csv.sep"] == ";"
    files["csvOptions"] = {"headers": "true"}
    with pytest.raises(PlanError) as err:
        plan_pipeline(table(), pipeline({"type": "files", "files": files}), SETTINGS)
    assert err.value.path == "spec.source.files.csvOptions.headers"
    assert err.value.resource == "HudiPipeline/orders-in"


@pytest.mark.parametrize("fmt, source_class", [("json", "JsonKafkaSource"), ("avro", "AvroKafkaSource")])
def test_kafka_sources(fmt, source_class):
    kafka = {**KAFKA, "format": fmt, "startingOffsets": "earliest", "maxEventsPerBatch": 1000,
             "schemaRegistry": {"url": "http://registry:8081/"}}
    plan = planned(table(), pipeline({"type": "kafka", "kafka": kafka}))
    options = conf(plan)
    assert only(plan).job_config["sourceClass"] == source_class
    assert options["bootstrap.servers"] == "kafka:9093"
    assert options["hoodie.streamer.source.kafka.topic"] == "shop.orders"
    assert options["auto.offset.reset"] == "EARLIEST"
    assert options["hoodie.streamer.kafka.source.maxEvents"] == "1000"
    assert options["schema.registry.url"] == "http://registry:8081"
    assert options["hoodie.streamer.schemaprovider.registry.url"] == \
        "http://registry:8081/subjects/shop.orders-value/versions/latest"
    assert options["security.protocol"] == "PLAINTEXT"


def test_kafka_credentials_are_secret_placeholders_mounted_in_driver_and_executors():
    security = {"protocol": "SASL_SSL", "saslMechanism": "SCRAM-SHA-512",
                "usernameSecret": {"name": "kafka-user", "key": "username"},
                "passwordSecret": {"name": "kafka-user", "key": "password"},
                "caSecret": {"name": "kafka-ca", "key": "ca.crt"}}
    kafka = {**KAFKA, "format": "avro", "security": security,
             "schemaRegistry": {"url": "https://registry", "basicAuthSecret": {"name": "registry", "key": "auth"}}}
    plan = planned(table(storage={"credentialsSecret": "s3-creds"}), pipeline({"type": "kafka", "kafka": kafka}))
    options = conf(plan)
    assert options["sasl.mechanism"] == "SCRAM-SHA-512"
    assert options["sasl.username"] == "${secret:kafka-user/username}"
    assert options["sasl.password"] == "${secret:kafka-user/password}"
    assert options["ssl.ca.pem"] == "${secret:kafka-ca/ca.crt}"
    assert options["basic.auth.user.info"] == "${secret:registry/auth}"
    spec = app_spec(only(plan))
    secret_volumes = {v["name"]: v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v}
    assert sorted(secret_volumes.values()) == ["kafka-ca", "kafka-user", "registry"]
    for role in ("driver", "executor"):
        mounts = {m["name"]: m["mountPath"] for m in spec[role]["volumeMounts"] if m["name"] in secret_volumes}
        assert sorted(mounts.values()) == ["/etc/hudi/secrets/kafka-ca", "/etc/hudi/secrets/kafka-user",
                                           "/etc/hudi/secrets/registry"]
        assert spec[role]["envFrom"] == [{"secretRef": {"name": "s3-creds"}}]
    assert spec["sparkConf"]["spark.kubernetes.driverEnv.HUDI_SECRETS_DIR"] == "/etc/hudi/secrets"
    assert_no_credentials(plan)


def assert_no_credentials(plan) -> None:
    """No credential in any ConfigMap, job-config or manifest: a credential-looking option holds a
    ${secret:...} placeholder and nothing else, and no Secret's content is anywhere."""
    for job in plan.jobs:
        documents = [job.job_config["hoodieConf"],
                     yaml.safe_load(job.config_map["data"][JOB_CONFIG_KEY])["hoodieConf"]]
        for options in documents:
            for key, value in options.items():
                if CREDENTIAL_KEY.search(key):
                    assert PLACEHOLDER.fullmatch(value), f"{key}={value!r} is not a secret placeholder"
    text = yaml.safe_dump(plan.manifests)
    assert "stringData" not in text and "kind: Secret" not in text


def test_no_secret_dir_without_secrets():
    spec = app_spec(only(planned(table(), pipeline())))
    assert "sparkConf" not in spec
    assert [v["name"] for v in spec["volumes"]] == ["job-config", "scratch-tmp", "scratch-work-dir"]   # see below
    assert [m["name"] for m in spec["executor"]["volumeMounts"]] == ["scratch-tmp", "scratch-work-dir"]
    assert "envFrom" not in spec["driver"]


@pytest.mark.parametrize("database, fmt, source_class, json_deserializer", [
    ("postgres", "json", "PostgresDebeziumSource", True), ("mysql", "avro", "MySqlDebeziumSource", False)])
def test_debezium_sources(database, fmt, source_class, json_deserializer):
    kafka = {**KAFKA, "format": fmt, **({"schemaRegistry": {"url": "http://registry:8081"}} if fmt == "avro" else {})}
    plan = planned(table(orderingField=None), pipeline({"type": "debezium", "debezium": {"database": database,
                                                                                          "kafka": kafka}}))
    job = only(plan)
    assert job.job_config["sourceClass"] == source_class
    assert "sourceOrderingField" not in job.job_config     # the source's own (_event_lsn / _event_seq)
    deserializer = conf(plan).get("hoodie.streamer.source.kafka.value.deserializer.class")
    assert deserializer == ("org.apache.kafka.common.serialization.StringDeserializer" if json_deserializer else None)


def test_database_sources_pass_their_password_as_a_secret_reference():
    password = {"name": "shop-db", "key": "password"}
    cdc = {"type": "postgres", "postgres": {"url": "postgresql://db:5432/shop", "table": "public.orders",
                                            "user": "hudi", "passwordSecret": password, "maxChangesPerBatch": 500}}
    plan = planned(table(orderingField=None), pipeline(cdc))
    assert only(plan).job_config["sourceClass"] == "PostgresCdcSource"
    assert {k: v for k, v in conf(plan).items() if k.startswith("hoodie.streamer.source.postgres.")} == {
        "hoodie.streamer.source.postgres.url": "postgresql://db:5432/shop",
        "hoodie.streamer.source.postgres.table": "public.orders", "hoodie.streamer.source.postgres.user": "hudi",
        "hoodie.streamer.source.postgres.password": "${secret:shop-db/password}",
        "hoodie.streamer.source.postgres.snapshot.mode": "initial",
        "hoodie.streamer.source.postgres.max.changes": "500"}
    assert "shop-db" in {v["secret"]["secretName"] for v in app_spec(only(plan))["volumes"] if "secret" in v}

    pull = {"type": "jdbc", "jdbc": {"url": "jdbc:postgresql://db:5432/shop", "table": "products",
                                     "passwordSecret": password, "incrementalColumn": "updated_at"}}
    jdbc_conf = conf(planned(table(), pipeline(pull)))
    assert {k: v for k, v in jdbc_conf.items() if k.startswith("hoodie.streamer.jdbc.")} == {
        "hoodie.streamer.jdbc.url": "jdbc:postgresql://db:5432/shop", "hoodie.streamer.jdbc.table.name": "products",
        "hoodie.streamer.jdbc.password": "${secret:shop-db/password}",
        "hoodie.streamer.jdbc.table.incr.column.name": "updated_at", "hoodie.streamer.jdbc.incr.pull": "true",
        "hoodie.streamer.jdbc.incr.fallback.to.full.fetch": "false"}


def test_hudi_incremental_reads_the_upstream_tables_base_path():
    bronze = table("bronze", basePath="s3a://lake/bronze/orders")
    silver = table("silver", basePath="s3a://lake/silver/orders")
    source = {"type": "hudiIncremental", "hudiIncremental": {"tableRef": {"name": "bronze"}, "instantsPerBatch": 3}}
    plan = planned(silver, pipeline(source, table_name="silver"), upstream={"bronze": bronze})
    assert only(plan).job_config["sourceClass"] == "HoodieIncrSource"
    assert conf(plan)["hoodie.streamer.source.hoodieincr.path"] == "s3a://lake/bronze/orders"
    assert conf(plan)["hoodie.streamer.source.hoodieincr.num_instants"] == "3"
    with pytest.raises(PlanError) as err:
        plan_pipeline(silver, pipeline(source, table_name="silver"), SETTINGS)
    assert err.value.path == "spec.source.hudiIncremental.tableRef.name" and "bronze" in err.value.message
    by_path = {"type": "hudiIncremental", "hudiIncremental": {"basePath": "/data/external"}}
    assert conf(planned(silver, pipeline(by_path, table_name="silver")))[
        "hoodie.streamer.source.hoodieincr.path"] == "/data/external"


def test_pipeline_of_another_table_is_refused():
    with pytest.raises(PlanError) as err:
        plan_pipeline(table("customers"), pipeline(), SETTINGS)
    assert err.value.path == "spec.tableRef.name"


def test_kafka_options_cannot_override_the_sources_fields():
    kafka = {**KAFKA, "options": {"fetch.max.bytes": "1048576", "auto.offset.reset": "EARLIEST"}}
    with pytest.raises(PlanError) as err:
        plan_pipeline(table(), pipeline({"type": "kafka", "kafka": kafka}), SETTINGS)
    assert err.value.path == "spec.source.kafka.options.auto.offset.reset"
    del kafka["options"]["auto.offset.reset"]
    assert conf(planned(table(), pipeline({"type": "kafka", "kafka": kafka})))["fetch.max.bytes"] == "1048576"


# --- modes ---------------------------------------------------------------------------------------
def test_continuous_mode_is_a_sparkapplication_restarted_on_failure():
    job = only(planned(table(), pipeline(mode={"type": "continuous", "minSyncIntervalSeconds": 15})))
    assert job.application["kind"] == "SparkApplication"
    assert job.job_config["continuous"] is True and job.job_config["minSyncIntervalSeconds"] == 15
    spec = job.application["spec"]
    assert spec["restartPolicy"] == {"type": "OnFailure", "onFailureRetries": 10, "onFailureRetryInterval": 30,
                                     "onSubmissionFailureRetries": 5, "onSubmissionFailureRetryInterval": 30}
    assert (spec["type"], spec["pythonVersion"], spec["mode"]) == ("Python", "3", "cluster")
    assert spec["mainApplicationFile"] == "local:///opt/hudi/jobs/main.py"
    assert spec["arguments"] == ["streamer", "--job-config", "/etc/hudi/job/job-config.yaml"]
    assert {"name": "job-config", "mountPath": "/etc/hudi/job", "readOnly": True} in spec["driver"]["volumeMounts"]


def test_scheduled_mode_is_a_scheduledsparkapplication_running_once():
    mode = {"type": "scheduled", "schedule": "*/15 * * * *", "concurrencyPolicy": "Replace"}
    job = only(planned(table(), pipeline(mode=mode)))
    assert job.application["kind"] == "ScheduledSparkApplication"
    spec = job.application["spec"]
    assert (spec["schedule"], spec["concurrencyPolicy"], spec["suspend"]) == ("*/15 * * * *", "Replace", False)
    assert spec["template"]["restartPolicy"] == {"type": "Never"}
    assert job.job_config["continuous"] is False and "minSyncIntervalSeconds" not in job.job_config


def test_suspended_pipelines_are_suspended_applications():
    continuous = only(planned(table(), pipeline(state="suspended"))).application["spec"]
    assert continuous["suspend"] is True
    scheduled = only(planned(table(), pipeline(state="suspended", mode={"type": "scheduled", "schedule": "@hourly"})))
    assert scheduled.application["spec"]["suspend"] is True and "suspend" not in scheduled.application["spec"]["template"]


# --- transformations, quality, errors, metrics ---------------------------------------------------
def test_transformations_get_ids_and_their_options():
    steps = [{"name": "add_date", "sql": "SELECT *, to_date(ts) AS day FROM <SRC>"},
             {"sqlFileRef": {"configMapName": "orders-sql", "key": "clean.sql"}},
             {"flatten": True}]
    plan = planned(table(), pipeline(transformations=steps))
    job = only(plan)
    assert job.job_config["transformerClass"] == ["add_date:SqlQueryBasedTransformer",
                                                  "t2:SqlFileBasedTransformer", "t3:FlatteningTransformer"]
    assert conf(plan)["hoodie.streamer.transformer.sql.add_date"] == steps[0]["sql"]
    assert conf(plan)["hoodie.streamer.transformer.sql.file.t2"] == "/etc/hudi/config/orders-sql/clean.sql"
    spec = app_spec(job)
    assert {"name": "config-orders-sql", "configMap": {"name": "orders-sql"}} in spec["volumes"]
    for role in ("driver", "executor"):
        assert {"name": "config-orders-sql", "mountPath": "/etc/hudi/config/orders-sql", "readOnly": True} \
            in spec[role]["volumeMounts"]


def test_transformation_problems_name_the_step():
    with pytest.raises(PlanError) as err:
        plan_pipeline(table(), pipeline(transformations=[{"sql": "SELECT 1"}]), SETTINGS)
    assert err.value.path == "spec.transformations[0].sql" and "<SRC>" in err.value.message
    clash = [{"flatten": True}, {"name": "t1", "sql": "SELECT * FROM <SRC>"}]
    with pytest.raises(PlanError) as err:
        plan_pipeline(table(), pipeline(transformations=clash), SETTINGS)
    assert err.value.path == "spec.transformations[1].name"


def test_quality_rules_error_table_and_metrics():
    rules = [{"name": "amount_positive", "expression": "amount > 0"}, {"name": "has_id", "expression": "id IS NOT NULL"}]
    plan = planned(table(), pipeline(qualityRules=rules, errorTable={"maxErrorRecords": 10, "maxErrorFraction": "0.5"},
                                     metrics={"port": 9102}))
    options = conf(plan)
    assert options["hoodie.streamer.quality.rule.amount_positive"] == "amount > 0"
    assert options["hoodie.streamer.quality.rule.has_id"] == "id IS NOT NULL"
    assert options["hoodie.errortable.enable"] == "true"
    assert options["hoodie.errortable.base.path"] == "s3a://lake/orders_errors"
    assert options["hoodie.streamer.errortable.max.error.records"] == "10"
    assert options["hoodie.streamer.errortable.max.error.fraction"] == "0.5"
    assert (options["hoodie.metrics.on"], options["hoodie.metrics.reporter.type"],
            options["hoodie.metrics.prometheus.port"]) == ("true", "PROMETHEUS", "9102")
    driver = app_spec(only(plan))["driver"]
    assert driver["ports"] == [{"name": "metrics", "containerPort": 9102, "protocol": "TCP"}]
    assert driver["annotations"]["prometheus.io/port"] == "9102"
    assert driver["annotations"]["prometheus.io/scrape"] == "true"


def test_error_table_off_and_metrics_off():
    plan = planned(table(), pipeline(errorTable={"enabled": False}, metrics={"enabled": False}))
    assert conf(plan)["hoodie.errortable.enable"] == "false"
    assert not any(k.startswith("hoodie.metrics.") for k in conf(plan))
    assert "ports" not in app_spec(only(plan))["driver"] and "annotations" not in app_spec(only(plan))["driver"]


def test_ordering_field_and_limits():
    job = only(planned(table(), pipeline(sourceOrderingField="updated_at", sourceLimit=1024, operation="insert",
                                         filterDupes=True)))
    assert (job.job_config["sourceOrderingField"], job.job_config["sourceLimit"]) == ("updated_at", 1024)
    assert (job.job_config["op"], job.job_config["filterDupes"]) == ("INSERT", True)
    assert only(planned(table(), pipeline())).job_config["sourceOrderingField"] == "ts"   # the table's


# --- the table's settings ------------------------------------------------------------------------
def test_metadata_table_settings_become_hoodie_options():
    options = conf(planned(table(metadataTable={"columnStats": True, "columnStatsColumns": ["amount", "day"],
                                                "recordIndex": True}), pipeline()))
    assert {k: options[k] for k in options if k.startswith("hoodie.metadata.")} == {
        "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.column.stats.column.list": "amount,day",
        "hoodie.metadata.index.bloom.filter.enable": "false",
        "hoodie.metadata.global.record.level.index.enable": "true"}
    off = conf(planned(table(metadataTable={"enabled": False}), pipeline()))
    assert off["hoodie.metadata.enable"] == "false"


def test_table_settings_become_hoodie_options():
    t = table(recordKey=["id", "line"], partitionFields=["region", "day"], hiveStylePartitioning=True,
              index={"type": "GLOBAL_BLOOM", "updatePartitionPath": False, "numBuckets": 16},
              fileSizing={"maxFileSizeBytes": 2000, "smallFileLimitBytes": 1000},
              cdc={"enabled": True, "loggingMode": "OP_KEY_ONLY"}, database="sales", tableName="orders_v2",
              services={"archival": {"minCommits": 12, "maxCommits": 15}})
    options = conf(planned(t, pipeline()))
    assert {k: options[k] for k in (
        "hoodie.table.name", "hoodie.database.name", "hoodie.datasource.write.recordkey.field",
        "hoodie.datasource.write.partitionpath.field", "hoodie.datasource.write.keygenerator.type",
        "hoodie.datasource.write.hive_style_partitioning", "hoodie.index.type",
        "hoodie.bloom.index.update.partition.path", "hoodie.bucket.index.num.buckets", "hoodie.parquet.max.file.size",
        "hoodie.parquet.small.file.limit", "hoodie.table.cdc.enabled", "hoodie.table.cdc.supplemental.logging.mode",
        "hoodie.datasource.write.precombine.field", "hoodie.keep.min.commits", "hoodie.keep.max.commits")} == {
        "hoodie.table.name": "orders_v2", "hoodie.database.name": "sales",
        "hoodie.datasource.write.recordkey.field": "id,line",
        "hoodie.datasource.write.partitionpath.field": "region,day",
        "hoodie.datasource.write.keygenerator.type": "COMPLEX",
        "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.index.type": "GLOBAL_BLOOM",
        "hoodie.bloom.index.update.partition.path": "false", "hoodie.bucket.index.num.buckets": "16", "hoodie.parquet.max.file.size": "2000",
        "hoodie.parquet.small.file.limit": "1000", "hoodie.table.cdc.enabled": "true",
        "hoodie.table.cdc.supplemental.logging.mode": "OP_KEY_ONLY",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.keep.min.commits": "12",
        "hoodie.keep.max.commits": "15"}


@pytest.mark.parametrize("partitions, key_generator", [([], "NON_PARTITION"), (["region"], "SIMPLE")])
def test_key_generator_is_derived(partitions, key_generator):
    options = conf(planned(table(partitionFields=partitions), pipeline()))
    assert options["hoodie.datasource.write.keygenerator.type"] == key_generator
    assert options["hoodie.datasource.write.partitionpath.field"] == ",".join(partitions)


def test_timestamp_key_generator_needs_its_options():
    with pytest.raises(PlanError) as err:
        plan_pipeline(table(keyGenerator="TIMESTAMP"), pipeline(), SETTINGS)
    assert err.value.path == "spec.keyGenerator" and "hoodie.keygen.timebased.timestamp.type" in err.value.message
    t = table(keyGenerator="TIMESTAMP", options={"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                                                  "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"})
    assert conf(planned(t, pipeline()))["hoodie.datasource.write.keygenerator.type"] == "TIMESTAMP"


def test_options_of_pipeline_win_over_tables_which_win_over_generated():
    t = table(options={"hoodie.parquet.max.file.size": "1000000", "hoodie.parquet.compression.codec": "zstd"})
    p = pipeline(options={"hoodie.parquet.compression.codec": "snappy", "hoodie.metrics.prometheus.port": "9300"})
    options = conf(planned(t, p))
    assert options["hoodie.parquet.max.file.size"] == "1000000"
    assert options["hoodie.parquet.compression.codec"] == "snappy"
    assert options["hoodie.metrics.prometheus.port"] == "9300"


def test_merge_on_read_inline_compaction_runs_in_the_writer():
    t = table(tableType="MERGE_ON_READ", services={"compaction": {"maxDeltaCommits": 3, "triggerStrategy": "NUM_OR_TIME",
                                                                  "maxDeltaSeconds": 600}})
    plan = planned(t, pipeline())
    assert "disableCompaction" not in only(plan).job_config
    assert only(plan).job_config["tableType"] == "MERGE_ON_READ"
    assert {k: conf(plan)[k] for k in ("hoodie.compact.inline.trigger.strategy", "hoodie.compact.inline.max.delta.commits",
                                       "hoodie.compact.inline.max.delta.seconds")} == {
        "hoodie.compact.inline.trigger.strategy": "NUM_OR_TIME", "hoodie.compact.inline.max.delta.commits": "3",
        "hoodie.compact.inline.max.delta.seconds": "600"}
    assert planned_table(t).jobs == ()


@pytest.mark.parametrize("mode", ["scheduled", "disabled"])
def test_merge_on_read_compaction_elsewhere_disables_the_writers(mode):
    compaction = {"mode": mode, "maxDeltaCommits": 7, **({"schedule": "0 */2 * * *"} if mode == "scheduled" else {})}
    t = table(tableType="MERGE_ON_READ", services={"compaction": compaction})
    plan = planned(t, pipeline())
    assert only(plan).job_config["disableCompaction"] is True
    assert not any(k.startswith("hoodie.compact.") for k in conf(plan))
    services = planned_table(t).jobs
    assert [s.service for s in services] == (["compaction"] if mode == "scheduled" else [])


def test_scheduled_compaction_is_a_table_service_job():
    compaction = {"mode": "scheduled", "schedule": "0 */2 * * *", "maxDeltaCommits": 7,
                  "spark": {"executor": {"instances": 4, "memory": "4g"}}}
    t = table(tableType="MERGE_ON_READ", services={"compaction": compaction}, spark={"executor": {"cores": 2}},
              options={"hoodie.compaction.target.io": "2048"})
    job = only(planned_table(t))
    assert job.name == "orders-compaction" and job.application["kind"] == "ScheduledSparkApplication"
    assert job.application["spec"]["schedule"] == "0 */2 * * *"
    assert job.job_config["service"] == "compaction" and job.job_config["basePath"] == "s3a://lake/orders"
    assert job.job_config["tableName"] == "orders"
    assert job.job_config["hoodieConf"]["hoodie.compact.inline.max.delta.commits"] == "7"
    assert job.job_config["hoodieConf"]["hoodie.compaction.target.io"] == "2048"
    template = job.application["spec"]["template"]
    assert template["arguments"] == ["table-service", "--job-config", "/etc/hudi/job/job-config.yaml"]
    assert (template["executor"]["instances"], template["executor"]["memory"], template["executor"]["cores"]) == (4, "4g", 2)
    assert job.application["metadata"]["labels"]["app.kubernetes.io/component"] == "table-service"
    assert job.application["metadata"]["ownerReferences"][0]["kind"] == "HudiTable"


def test_catalog_sync_in_every_commit_and_on_a_schedule():
    t = table(catalogSync=[{"metastoreUris": "thrift://hms:9083", "table": "orders_rt"}], database="sales")
    plan = planned(t, pipeline())
    assert only(plan).job_config["enableSync"] is True
    assert {k: v for k, v in conf(plan).items() if "hive_sync" in k} == {
        "hoodie.datasource.hive_sync.mode": "hms", "hoodie.datasource.hive_sync.metastore.uris": "thrift://hms:9083",
        "hoodie.datasource.hive_sync.database": "sales", "hoodie.datasource.hive_sync.table": "orders_rt"}
    job = only(planned_table(t, OperatorSettings(catalog_sync_schedule="*/30 * * * *")))
    assert job.service == "catalogSync" and job.name == "orders-catalog-sync"
    assert job.application["spec"]["schedule"] == "*/30 * * * *"
    assert job.job_config["hoodieConf"]["hoodie.datasource.hive_sync.metastore.uris"] == "thrift://hms:9083"
    two = [{"metastoreUris": "thrift://a:9083"}, {"metastoreUris": "thrift://b:9083"}]
    with pytest.raises(PlanError) as err:
        plan_table(table(catalogSync=two), SETTINGS)
    assert err.value.path == "spec.catalogSync[1]"


def test_copy_on_write_has_no_compaction():
    plan = planned(table(services={"compaction": {"mode": "disabled"}}), pipeline())
    assert "disableCompaction" not in only(plan).job_config
    assert not any(k.startswith("hoodie.compact.") for k in conf(plan))


def test_scheduled_clustering_is_a_table_service_job_that_waits_for_commits():
    clustering = {"mode": "scheduled", "schedule": "@hourly", "sortColumns": ["city", "ts"], "layout": "HILBERT"}
    job = only(planned_table(table(services={"clustering": clustering})))
    assert job.name == "orders-clustering" and job.application["spec"]["schedule"] == "@hourly"
    assert job.job_config["service"] == "clustering"
    hoodie = job.job_config["hoodieConf"]
    assert (hoodie["hoodie.clustering.async.enabled"], hoodie["hoodie.layout.optimize.strategy"],
            hoodie["hoodie.clustering.plan.strategy.sort.columns"]) == ("true", "hilbert", "city,ts")
    assert hoodie["hoodie.clustering.plan.strategy.target.file.max.bytes"] == hoodie["hoodie.parquet.max.file.size"]
    # The writers leave it to the job.
    assert "hoodie.clustering.inline" not in conf(planned(table(services={"clustering": clustering}), pipeline()))


def test_inline_cleaning_and_clustering_reach_the_writer():
    cleaning = {"mode": "inline", "policy": "KEEP_LATEST_FILE_VERSIONS", "retainFileVersions": 2}
    clustering = {"mode": "inline", "targetFileSizeBytes": 268435456}
    plan = planned(table(services={"cleaning": cleaning, "clustering": clustering}), pipeline())
    assert conf(plan)["hoodie.clean.automatic"] == "true"
    assert conf(plan)["hoodie.cleaner.policy"] == "KEEP_LATEST_FILE_VERSIONS"
    assert conf(plan)["hoodie.cleaner.fileversions.retained"] == "2"
    assert conf(plan)["hoodie.clustering.inline"] == "true"
    assert conf(plan)["hoodie.layout.optimize.strategy"] == "linear"
    assert conf(plan)["hoodie.clustering.plan.strategy.target.file.max.bytes"] == "268435456"
    assert "hoodie.clustering.plan.strategy.sort.columns" not in conf(plan)
    assert plan_table(table(services={"cleaning": cleaning, "clustering": clustering}), SETTINGS).jobs == ()


def test_scheduled_cleaning_is_a_table_service_job_and_the_writer_does_not_clean():
    cleaning = {"mode": "scheduled", "schedule": "@daily", "retainCommits": 4}
    t = table(services={"cleaning": cleaning})
    job = only(planned_table(t))
    assert job.name == "orders-clean" and job.application["spec"]["schedule"] == "@daily"
    assert job.job_config["service"] == "clean"
    assert job.job_config["hoodieConf"]["hoodie.cleaner.commits.retained"] == "4"
    assert conf(planned(t, pipeline()))["hoodie.clean.automatic"] == "false"


def test_scheduled_savepoints_are_a_table_service_job():
    job = only(planned_table(table(savepoints={"schedule": "0 0 * * 0", "keep": 3})))
    assert job.name == "orders-savepoint" and job.application["spec"]["schedule"] == "0 0 * * 0"
    assert (job.job_config["service"], job.job_config["keepSavepoints"]) == ("savepoint", 3)


def test_declared_columns_become_the_sources_schema_file():
    columns = [{"name": "id", "type": "long", "nullable": False}, {"name": "amount", "type": "decimal", "precision": 10,
                                                                    "scale": 2}]
    plan = planned(table(schema={"columns": columns}), pipeline())
    job = only(plan)
    assert job.job_config["schemaproviderClass"] == "FilebasedSchemaProvider"
    assert conf(plan)["hoodie.streamer.schemaprovider.source.schema.file"] == "/etc/hudi/job/source-schema.avsc"
    avro = yaml.safe_load(job.config_map["data"]["source-schema.avsc"])
    assert [f["name"] for f in avro["fields"]] == ["id", "amount"] and avro["fields"][0]["type"] == "long"
    assert avro["fields"][1]["type"][1]["logicalType"] == "decimal"
    ref = planned(table(schema={"avroSchemaRef": {"configMapName": "orders-schema", "key": "orders.avsc"}}), pipeline())
    assert conf(ref)["hoodie.streamer.schemaprovider.source.schema.file"] == "/etc/hudi/config/orders-schema/orders.avsc"
    assert {"name": "config-orders-schema", "configMap": {"name": "orders-schema"}} in app_spec(only(ref))["volumes"]
    reshaped = planned(table(schema={"columns": columns}),
                       pipeline(transformations=[{"sql": "SELECT *, 1 AS one FROM <SRC>"}]))
    assert "schemaproviderClass" not in only(reshaped).job_config


# --- objects: names, labels, owners, Spark settings ----------------------------------------------
def test_labels_owner_references_and_spec_hash():
    plan = planned(table(), pipeline())
    for manifest in plan.manifests:
        meta = manifest["metadata"]
        assert meta["namespace"] == "lake"
        assert meta["labels"] == {"app.kubernetes.io/name": "hudi-lakehouse", "app.kubernetes.io/managed-by": "hudi-operator",
                                  "app.kubernetes.io/component": "pipeline", "lakehouse.hudi.dev/table": "orders",
                                  "lakehouse.hudi.dev/pipeline": "orders-in"}
        assert meta["ownerReferences"] == [{"apiVersion": API, "kind": "HudiPipeline", "name": "orders-in",
                                            "uid": "uid-pipe", "controller": True, "blockOwnerDeletion": True}]
        assert meta["annotations"][SPEC_HASH_ANNOTATION] == spec_hash(manifest)
    assert [m["metadata"]["name"] for m in plan.manifests] == ["orders-in-ingest-config", "orders-in-ingest"]
    assert planned(table(), pipeline()).manifests == plan.manifests               # stable
    changed = planned(table(), pipeline(sourceLimit=5)).manifests
    assert [m["metadata"]["annotations"][SPEC_HASH_ANNOTATION] for m in changed] != \
        [m["metadata"]["annotations"][SPEC_HASH_ANNOTATION] for m in plan.manifests]


def test_without_uid_there_are_no_owner_references_and_the_settings_namespace_applies():
    plan = planned(table(uid=None, namespace=None), pipeline(uid=None), OperatorSettings(namespace="ns1"))
    assert all("ownerReferences" not in m["metadata"] for m in plan.manifests)
    t = table(uid=None, namespace=None, catalogSync=[{"metastoreUris": "thrift://hms:9083"}])
    services = planned_table(t, OperatorSettings(namespace="ns1"))
    assert {m["metadata"]["namespace"] for m in services.manifests} == {"ns1"}
    assert all("ownerReferences" not in m["metadata"] for m in services.manifests)


def test_long_names_are_cut_with_a_hash_and_stay_stable():
    long_name = "orders-from-the-european-webshop-landing-zone-in-json-lines"
    scheduled = only(planned(table(), pipeline(name=long_name, mode={"type": "scheduled", "schedule": "@hourly"})))
    continuous = only(planned(table(), pipeline(name=long_name)))
    other = only(planned(table(), pipeline(name=long_name + "-2")))
    # the Spark operator's derived names stay DNS labels: "<app>-ui-svc", a run "<app>-<UnixNano>"
    assert len(f"{continuous.name}-ui-svc") <= 63
    assert len(f"{scheduled.name}-{2**63 - 1}-ui-svc") <= 63
    assert scheduled.name.startswith("orders-from-the") and re.search(r"-[0-9a-f]{8}$", scheduled.name)
    assert other.name != continuous.name
    assert continuous.name == only(planned(table(), pipeline(name=long_name))).name
    assert len(continuous.config_map["metadata"]["name"]) <= 63


def test_spark_settings_merge_table_then_pipeline():
    t = table(spark={"image": "registry.test/custom:2", "serviceAccountName": "spark-jobs",
                     "driver": {"memory": "2g", "coreLimit": "1200m"}, "executor": {"instances": 2, "memory": "4g"},
                     "sparkConf": {"spark.sql.shuffle.partitions": "64"}, "nodeSelector": {"pool": "spark"},
                     "tolerations": [{"key": "spark", "operator": "Exists", "effect": "NoSchedule"}]})
    p = pipeline(spark={"executor": {"instances": 5}, "sparkConf": {"spark.sql.ansi.enabled": "true"},
                        "imagePullPolicy": "Always"})
    spec = only(planned(t, p)).application["spec"]
    assert (spec["image"], spec["imagePullPolicy"], spec["sparkVersion"]) == ("registry.test/custom:2", "Always", "4.1.1")
    assert (spec["driver"]["memory"], spec["driver"]["coreLimit"], spec["driver"]["cores"]) == ("2g", "1200m", 1)
    assert (spec["executor"]["instances"], spec["executor"]["memory"]) == (5, "4g")
    assert spec["sparkConf"] == {"spark.sql.shuffle.partitions": "64", "spark.sql.ansi.enabled": "true"}
    assert spec["nodeSelector"] == {"pool": "spark"}
    for role in ("driver", "executor"):
        assert spec[role]["serviceAccount"] == "spark-jobs"
        assert spec[role]["tolerations"] == [{"key": "spark", "operator": "Exists", "effect": "NoSchedule"}]
    assert only(planned(table(), pipeline())).application["spec"]["image"] == "registry.test/hudi-jobs:1"


# --- job pods: security, scheduling, resources, restarts ---------------------------------------------
AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["spark"]}]}]}}}
EVERY_POD_SETTING = {   # every pod-level field of spec.spark, set (a test below keeps it complete)
    "imagePullSecrets": ["regcred"], "priorityClassName": "lakehouse-streaming", "affinity": AFFINITY,
    "tolerations": [{"key": "spark", "operator": "Exists", "effect": "NoSchedule"}], "nodeSelector": {"pool": "spark"},
    "podSecurityContext": {"runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True, "fsGroup": 1000,
                           "fsGroupChangePolicy": "OnRootMismatch", "supplementalGroups": [2000],
                           "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/spark.json"},
                           "appArmorProfile": {"type": "RuntimeDefault"},
                           "seLinuxOptions": {"user": "system_u", "role": "system_r", "type": "spc_t", "level": "s0"}},
    "securityContext": {"runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True,
                        "allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": False,
                        "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                        "seccompProfile": {"type": "RuntimeDefault"}, "appArmorProfile": {"type": "Unconfined"},
                        "seLinuxOptions": {"level": "s0:c1"}},
    "driver": {"cores": 2, "coreRequest": "1500m", "coreLimit": "2", "memory": "3g", "memoryOverhead": "512m",
               "memoryLimit": "4Gi"},
    "executor": {"instances": 3, "cores": 4, "coreRequest": "3", "coreLimit": "4", "memory": "8g",
                 "memoryOverhead": "1g", "memoryLimit": "10Gi"},
    "restartPolicy": {"type": "Always", "onFailureRetries": 0, "onFailureRetryIntervalSeconds": 60,
                      "onSubmissionFailureRetries": 2, "onSubmissionFailureRetryIntervalSeconds": 120},
}


def schema_fields(cls, depth: int = 2) -> set[str]:
    """The field paths of a model class, ``depth`` levels deep (deeper types, such as a seccomp
    profile, are shared by the fields above them)."""
    out = set()
    for f in api_fields(cls):
        out.add(f.json_name)
        if kind_of(f.type) == "object" and depth > 1:
            out |= {f"{f.json_name}.{sub}" for sub in schema_fields(f.type, depth - 1)}
    return out


def set_fields(value: dict, depth: int = 2) -> set[str]:
    out = set()
    for key, sub in value.items():
        out.add(key)
        if isinstance(sub, dict) and depth > 1 and key not in ("affinity", "nodeSelector"):
            out |= {f"{key}.{k}" for k in set_fields(sub, depth - 1)}
    return out


def test_every_job_pod_setting_reaches_both_pods_as_the_spark_operator_spells_it():
    """Set on the table, each is in the SparkApplication where the Spark operator 2.5.2 reads it (the
    manifests are validated against its CRDs in ``planned``)."""
    untested = {"image", "sparkVersion", "imagePullPolicy", "serviceAccountName", "sparkConf"}   # tested elsewhere
    assert schema_fields(SparkSpec) - untested == set_fields(EVERY_POD_SETTING)
    spec = only(planned(table(spark=EVERY_POD_SETTING), pipeline())).application["spec"]
    assert spec["imagePullSecrets"] == ["regcred"] and spec["nodeSelector"] == {"pool": "spark"}
    assert spec["restartPolicy"] == {"type": "Always", "onFailureRetries": 0, "onFailureRetryInterval": 60,
                                     "onSubmissionFailureRetries": 2, "onSubmissionFailureRetryInterval": 120}
    for role in ("driver", "executor"):
        pod = spec[role]
        assert pod["podSecurityContext"] == EVERY_POD_SETTING["podSecurityContext"]
        assert pod["securityContext"] == EVERY_POD_SETTING["securityContext"]
        assert (pod["affinity"], pod["priorityClassName"]) == (AFFINITY, "lakehouse-streaming")
        assert pod["tolerations"] == EVERY_POD_SETTING["tolerations"]
        assert {k: pod[k] for k in EVERY_POD_SETTING[role]} == EVERY_POD_SETTING[role]
    assert [v["name"] for v in spec["volumes"]] == ["job-config"]      # a writable root: no scratch volumes


def test_default_job_pods_are_restricted_with_scratch_volumes_where_spark_writes():
    spec = only(planned(table(), pipeline())).application["spec"]
    scratch = {v["name"]: v for v in spec["volumes"] if "emptyDir" in v}
    assert scratch == {"scratch-tmp": {"name": "scratch-tmp", "emptyDir": {}},
                       "scratch-work-dir": {"name": "scratch-work-dir", "emptyDir": {}}}
    for role in ("driver", "executor"):
        pod = spec[role]
        assert pod["podSecurityContext"] == {"runAsUser": 185, "runAsGroup": 185, "runAsNonRoot": True,
                                             "fsGroup": 185, "seccompProfile": {"type": "RuntimeDefault"}}
        assert pod["securityContext"] == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                          "capabilities": {"drop": ["ALL"]}}
        mounts = {m["name"]: m["mountPath"] for m in pod["volumeMounts"] if m["name"] in scratch}
        assert mounts == {"scratch-tmp": "/tmp", "scratch-work-dir": "/opt/spark/work-dir"}
        assert not {"affinity", "priorityClassName", "coreRequest", "memoryOverhead"} & set(pod)
    assert "imagePullSecrets" not in spec
    workdir = re.findall(r"^WORKDIR (\S+)$", (ROOT / "jobs" / "Dockerfile").read_text(), re.M)[-1]
    assert workdir in mounts.values()           # the jobs image's work-dir is a scratch volume


def test_job_settings_layer_platform_then_table_then_pipeline():
    platform = OperatorSettings(image="registry.test/hudi-jobs:1", job_defaults=load_spark({
        "imagePullSecrets": ["platform-pull"], "priorityClassName": "platform", "nodeSelector": {"pool": "spark"},
        "podSecurityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "restartPolicy": {"onFailureRetries": 100, "onFailureRetryIntervalSeconds": 10},
        "driver": {"memory": "2g"}}, "JOB_DEFAULTS"))
    t = table(spark={"priorityClassName": "orders", "nodeSelector": {"zone": "a"},
                     "restartPolicy": {"onFailureRetryIntervalSeconds": 20}})
    p = pipeline(spark={"imagePullSecrets": ["team-pull"], "restartPolicy": {"type": "Always"}})
    spec = only(planned(t, p, platform)).application["spec"]
    assert spec["imagePullSecrets"] == ["team-pull"]                     # the pipeline's list replaces
    assert spec["nodeSelector"] == {"pool": "spark", "zone": "a"}         # maps merge key by key
    assert spec["restartPolicy"] == {"type": "Always", "onFailureRetries": 100, "onFailureRetryInterval": 20,
                                     "onSubmissionFailureRetries": 5, "onSubmissionFailureRetryInterval": 30}
    assert spec["driver"]["priorityClassName"] == "orders" and spec["driver"]["memory"] == "2g"
    # the platform's pod context replaced the built-in one whole: no user id is forced (OpenShift assigns one)
    assert spec["driver"]["podSecurityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    services = planned_table(table(tableType="MERGE_ON_READ", spark={"priorityClassName": "orders"}, services={
        "compaction": {"mode": "scheduled", "schedule": "@hourly", "spark": {"priorityClassName": "batch"}}}), platform)
    template = only(services).application["spec"]["template"]
    assert template["driver"]["priorityClassName"] == "batch"             # the service's override
    assert template["imagePullSecrets"] == ["platform-pull"]
    assert template["restartPolicy"] == {"type": "Never"}                 # scheduled: the next run is the retry


def test_a_pipeline_restart_policy_never_reaches_its_scheduled_runs():
    mode = {"type": "scheduled", "schedule": "@hourly"}
    job = only(planned(table(), pipeline(mode=mode, spark={"restartPolicy": {"type": "Always"}})))
    assert job.application["spec"]["template"]["restartPolicy"] == {"type": "Never"}


def test_storage_service_account_wins():
    t = table(spark={"serviceAccountName": "spark"}, storage={"serviceAccountName": "lake-writer"})
    spec = only(planned(t, pipeline())).application["spec"]
    assert spec["driver"]["serviceAccount"] == spec["executor"]["serviceAccount"] == "lake-writer"


def test_the_installations_service_account_serves_tables_that_name_none():
    installed = OperatorSettings(image="registry.test/hudi-jobs:1", service_account="hudi-spark")
    accounts = [only(planned(t, pipeline(), installed)).application["spec"]["driver"].get("serviceAccount")
                for t in (table(), table(spark={"serviceAccountName": "spark"}))]
    assert accounts == ["hudi-spark", "spark"]
    assert "serviceAccount" not in only(planned(table(), pipeline())).application["spec"]["driver"]


# --- resource sets and hudictl render ------------------------------------------------------------
def resource_docs(*docs: dict) -> list[tuple[str, dict]]:
    return [(f"test document {i}", d) for i, d in enumerate(docs, start=1)]


def doc(kind: str, name: str, spec: dict) -> dict:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


BRONZE_SILVER = [
    doc("HudiPipeline", "silver-in", {"tableRef": {"name": "silver"}, "source": {
        "type": "hudiIncremental", "hudiIncremental": {"tableRef": {"name": "bronze"}}}}),
    doc("HudiTable", "silver", merged(TABLE, {"basePath": "/lake/silver"})),
    doc("HudiPipeline", "bronze-in", {"tableRef": {"name": "bronze"}, "source": FILES}),
    doc("HudiTable", "bronze", merged(TABLE, {"basePath": "/lake/bronze"})),
]


def test_pipelines_run_after_the_pipelines_writing_their_upstream():
    resources = ResourceSet.from_documents(resource_docs(*BRONZE_SILVER), "default")
    assert [p.metadata.name for p in resources.pipelines_in_order()] == ["bronze-in", "silver-in"]
    silver = next(p for p in resources.pipelines if p.metadata.name == "silver-in")
    assert conf(resources.plan_pipeline(silver, SETTINGS))["hoodie.streamer.source.hoodieincr.path"] == "/lake/bronze"


def test_views_and_a_sql_source_order_gold_after_what_it_reads():
    gold = [doc("HudiTable", "gold", merged(TABLE, {"basePath": "/lake/gold"})),
            doc("HudiPipeline", "gold-in", {"tableRef": {"name": "gold"}, "views": [
                {"name": "orders", "tableRef": {"name": "silver"}}, {"name": "fx", "basePath": "/lake/bronze"}],
                "source": {"type": "sql", "sql": {"query": "SELECT * FROM orders JOIN fx USING (id)"}}})]
    resources = ResourceSet.from_documents(resource_docs(*gold, *BRONZE_SILVER), "default")
    assert [p.metadata.name for p in resources.pipelines_in_order()] == ["bronze-in", "silver-in", "gold-in"]
    job = conf(resources.plan_pipeline(resources.pipelines[0], SETTINGS))
    assert {k: v for k, v in job.items() if k.startswith("hoodie.streamer.s")} == {
        "hoodie.streamer.sql.view.orders": "/lake/silver", "hoodie.streamer.sql.view.fx": "/lake/bronze",
        "hoodie.streamer.source.sql.sql.query": "SELECT * FROM orders JOIN fx USING (id)"}
    missing = [gold[0], doc("HudiPipeline", "gold-in", {**gold[1]["spec"], "views": [
        {"name": "orders", "tableRef": {"name": "nowhere"}}]})]
    alone = ResourceSet.from_documents(resource_docs(*missing), "default")
    with pytest.raises(ResourceError) as err:
        alone.plan_pipeline(alone.pipelines[0], SETTINGS)
    assert err.value.path == "spec.views[0].tableRef.name" and "nowhere" in err.value.message


def test_a_cycle_of_pipelines_is_refused():
    docs = [doc("HudiTable", "a", merged(TABLE, {"basePath": "/lake/a"})),
            doc("HudiTable", "b", merged(TABLE, {"basePath": "/lake/b"})),
            doc("HudiPipeline", "a-in", {"tableRef": {"name": "a"}, "source": {
                "type": "hudiIncremental", "hudiIncremental": {"tableRef": {"name": "b"}}}}),
            doc("HudiPipeline", "b-in", {"tableRef": {"name": "b"}, "source": {
                "type": "hudiIncremental", "hudiIncremental": {"basePath": "/lake/a"}}})]
    with pytest.raises(ResourceError) as err:
        ResourceSet.from_documents(resource_docs(*docs), "default").pipelines_in_order()
    assert "cycle" in err.value.message


def test_render_prints_every_object_in_apply_order(tmp_path, capsys):
    path = tmp_path / "lake.yaml"
    path.write_text(yaml.safe_dump_all(BRONZE_SILVER))
    assert cli.main(["render", "-f", str(path), "--namespace", "analytics", "--image", "registry.test/x:3"]) == 0
    manifests = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [
        ("ConfigMap", "bronze-in-ingest-config"), ("SparkApplication", "bronze-in-ingest"),
        ("ConfigMap", "silver-in-ingest-config"), ("SparkApplication", "silver-in-ingest")]
    assert {m["metadata"]["namespace"] for m in manifests} == {"analytics"}
    assert all("ownerReferences" not in m["metadata"] for m in manifests)
    for m in manifests:
        if m["kind"] == "ConfigMap":
            job_config = yaml.safe_load(m["data"][JOB_CONFIG_KEY])
            streamer_config.resolve(streamer_config.job_fields(job_config, "rendered"), {})
        else:
            assert spark_operator_errors(m) == [] and m["spec"]["image"] == "registry.test/x:3"


def test_render_reports_each_bad_resource_and_exits_2(tmp_path, capsys):
    bad_table = doc("HudiTable", "broken", merged(TABLE, {"basePath": "/lake/broken", "catalogSync": [
        {"metastoreUris": "thrift://a:9083"}, {"metastoreUris": "thrift://b:9083"}]}))
    typo = doc("HudiTable", "typo", {"basePth": "/x", "recordKey": ["id"]})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump_all([*BRONZE_SILVER, bad_table]))
    assert cli.main(["render", "-f", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "hudictl: HudiTable/broken: spec.catalogSync[1]: one catalog target per table is supported for now; keep "
        "one (a metastore with several URIs is one target: thrift://a,thrift://b)")
    path.write_text(yaml.safe_dump(typo))
    assert cli.main(["render", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hudictl: {path} document 1 (HudiTable/typo): spec") and "basePth" in err


@pytest.mark.parametrize("command", ["render", "run"])
def test_help_has_an_example(command, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    assert f"hudictl {command} -f" in capsys.readouterr().out


def test_local_run_once_turns_continuous_jobs_into_one_batch_on_a_free_metrics_port():
    job_config = only(planned(table(), pipeline())).job_config
    local = _local_job_config(job_config, once=True)
    assert local["continuous"] is False and "minSyncIntervalSeconds" not in local
    port = int(local["hoodieConf"]["hoodie.metrics.prometheus.port"])
    assert port not in (0, 9090)                    # a port of its own, which --metrics-targets can name
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))                 # free
    assert job_config["continuous"] is True                                   # the plan is untouched
    assert _local_job_config(job_config, once=False)["continuous"] is True


def test_planning_and_rendering_import_no_pyspark():
    code = ("import sys, hudi_operator.planner, hudi_operator.planner.resource_set, hudictl.render, hudictl.run; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


# --- the examples --------------------------------------------------------------------------------
def example_resources() -> ResourceSet:
    """Every example file, as one set (pipelines find their tables across files)."""
    docs = [(f"{p.name} document {i}", d) for p in sorted(EXAMPLES.glob("*.yaml"))
            for i, d in enumerate(yaml.safe_load_all(p.read_text()), start=1)]
    return ResourceSet.from_documents(docs, "default")


def test_every_example_pipeline_plans_into_valid_objects():
    resources = example_resources()
    assert len(resources.pipelines) >= 4
    for pipeline_resource in resources.pipelines_in_order():
        check_manifests(resources.plan_pipeline(pipeline_resource, SETTINGS))


def test_every_example_table_plans_into_valid_objects():
    resources = example_resources()
    problems = []
    for table_resource in resources.tables.values():
        try:
            check_manifests(resources.plan_table(table_resource, SETTINGS))
        except ResourceError as exc:
            problems.append(str(exc))
    assert problems == []


def test_a_triggered_compaction_run_is_the_scheduled_template_as_one_valid_application():
    plan = plan_table(table(tableType="MERGE_ON_READ", services={"compaction": {"mode": "scheduled",
                                                                                 "schedule": "@hourly"}}), SETTINGS)
    run = triggered_run(plan, "compaction", "20261123094301234")
    scheduled = next(m for m in plan.manifests if m["kind"] == "ScheduledSparkApplication")
    assert run["kind"] == "SparkApplication" and run["metadata"]["name"] == "orders-compaction-run-123094301234"
    assert {k: v for k, v in run["spec"].items() if k != "timeToLiveSeconds"} == {
        k: v for k, v in scheduled["spec"]["template"].items()}
    assert run["metadata"]["ownerReferences"] == scheduled["metadata"]["ownerReferences"]
    assert run["metadata"]["annotations"][SPEC_HASH_ANNOTATION] == spec_hash(run)
    assert spark_operator_errors(run) == [] and metadata_errors(run["metadata"]) == []
    assert triggered_run(plan, "catalogSync", "1") is None                  # not a scheduled service here
    inline = plan_table(table(tableType="MERGE_ON_READ"), SETTINGS)
    assert triggered_run(inline, "compaction", "1") is None
