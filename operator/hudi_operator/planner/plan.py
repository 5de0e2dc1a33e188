"""The planner's entry points: a HudiTable or a HudiPipeline in, every object that runs it out (in
the order to apply them) with the job-configs inside. Pure — no cluster, no Spark — so the
operator (Kubernetes executor) and ``hudictl run`` (local executor) share one plan."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..api import SPARK_DEFAULTS
from .concurrency import Concurrency, decide, table_pipelines
from .errors import PlanError
from .job_config import pipeline_job_config, service_account, storage_spark_conf, table_mounts
from .labels import (COMPONENT_LABEL, PIPELINE_COMPONENT, SPEC_HASH_ANNOTATION, TABLE_SERVICE_COMPONENT,
                     TRIGGERED_RUN_COMPONENT, bind_configs, object_labels, object_name, with_spec_hash)
from .services import table_services
from .settings import OperatorSettings
from .spark_app import (MAX_APP_NAME, MAX_SCHEDULED_APP_NAME, STREAMER_JOB, TABLE_SERVICE_JOB, SparkJob,
                        config_map, spark_manifest)


@dataclass(frozen=True)
class PlannedJob:
    """One job of a plan: what runs it (``application``), its job-config and the ConfigMap holding it.
    ``files`` are the ConfigMap's other keys (a schema file), found beside the job-config."""
    name: str
    job: str                                # "streamer" or "table-service"
    job_config: dict[str, Any]
    config_map: dict[str, Any]
    application: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    service: str | None = None              # the table service, for table-service jobs


@dataclass(frozen=True)
class Plan:
    jobs: tuple[PlannedJob, ...] = ()
    concurrency: Concurrency | None = None      # how the table's writers share it (planner/concurrency.py)

    @property
    def manifests(self) -> list[dict[str, Any]]:
        """Every object, in apply order: the ConfigMaps before the applications that mount them."""
        return bind_configs([j.config_map for j in self.jobs] + [j.application for j in self.jobs])


def plan_table(table, settings: OperatorSettings, pipelines=None) -> Plan:
    """The table's scheduled service jobs (none when the writers do everything inline).
    ``pipelines``: the HudiPipelines of the table's namespace (those writing it count as writers;
    None: none do)."""
    try:
        concurrency, services = table_concurrency(table, settings, table_pipelines(table, pipelines))
        return Plan(tuple(_service_job(table, service, settings) for service in services), concurrency)
    except PlanError as exc:
        raise _attributed(exc, f"HudiTable/{table.metadata.name}") from None


def table_concurrency(table, settings: OperatorSettings, pipelines: list):
    """The table's concurrency decision and its service jobs, planned with it."""
    try:
        services = table_services(table, settings)
        concurrency = decide(table, pipelines, [s.service for s in services], settings)
        if concurrency.options:
            services = table_services(table, settings, concurrency.options)
    except PlanError as exc:
        raise _attributed(exc, f"HudiTable/{table.metadata.name}") from None
    return concurrency, services


def _attributed(exc: PlanError, resource: str) -> PlanError:
    """The error with its resource: the one it already names (a refusal found while planning
    another resource), else ``resource``."""
    return exc if exc.resource else exc.of(resource)


TRIGGERED_RUN_TTL_SECONDS = 3600    # the Spark operator deletes a finished one-off run after this


def triggered_run(plan: Plan, service: str, run_id: str) -> dict[str, Any] | None:
    """A one-off run of a scheduled table service, for when its threshold is crossed before the
    schedule comes round: the scheduled application's template as a SparkApplication, named for
    ``run_id`` (the instant that crossed it, so one crossing starts one run). None when the
    service is not scheduled."""
    job = next((j for j in plan.jobs if j.service == service), None)
    if job is None or job.application["kind"] != "ScheduledSparkApplication":
        return None
    scheduled = copy.deepcopy(next(m for m in plan.manifests if m["kind"] == job.application["kind"]
                                   and m["metadata"]["name"] == job.name))
    metadata = scheduled["metadata"]
    metadata["name"] = object_name(job.name, "run", run_id[-12:], max_length=MAX_APP_NAME)
    metadata["labels"][COMPONENT_LABEL] = TRIGGERED_RUN_COMPONENT
    metadata.get("annotations", {}).pop(SPEC_HASH_ANNOTATION, None)
    spec = {**scheduled["spec"]["template"], "timeToLiveSeconds": TRIGGERED_RUN_TTL_SECONDS}
    return with_spec_hash({"apiVersion": scheduled["apiVersion"], "kind": "SparkApplication",
                           "metadata": metadata, "spec": spec})


def plan_pipeline(table, pipeline, settings: OperatorSettings, upstream=None, pipelines=None) -> Plan:
    """The ingestion job of ``pipeline`` into ``table``. ``upstream`` maps the names of the HudiTables
    the pipeline reads by tableRef (its hudiIncremental source, its views) to them, looked up by the
    caller in the same namespace;
    ``pipelines``: the other HudiPipelines of the namespace (None: this one is the table's only one),
    for the table's concurrency control."""
    try:
        concurrency, _ = table_concurrency(table, settings, table_pipelines(table, pipelines, pipeline))
        return Plan((_pipeline_job(table, pipeline, settings, upstream, concurrency),), concurrency)
    except PlanError as exc:
        raise _attributed(exc, f"HudiPipeline/{pipeline.metadata.name}") from None


def job_spark(table, override, settings: OperatorSettings):
    """The Spark settings of one job, from the least specific level up: the built-in defaults, the
    platform's (the operator's job defaults), the table's, the pipeline's or table service's."""
    return SPARK_DEFAULTS.merged(settings.job_defaults).merged(table.spec.spark).merged(override)


def _pipeline_job(table, pipeline, settings: OperatorSettings, upstream, concurrency: Concurrency) -> PlannedJob:
    spec = pipeline.spec
    config = pipeline_job_config(table, pipeline, settings, upstream, concurrency)
    scheduled = spec.mode.type == "scheduled"
    name = object_name(pipeline.metadata.name, "ingest",
                       max_length=MAX_SCHEDULED_APP_NAME if scheduled else MAX_APP_NAME)
    namespace = pipeline.metadata.namespace or settings.namespace
    labels = object_labels(PIPELINE_COMPONENT, table.metadata.name, pipeline=pipeline.metadata.name)
    spark = job_spark(table, spec.spark, settings)
    config_name = object_name(name, "config")
    job = SparkJob(name=name, namespace=namespace, labels=labels, owner=pipeline, job=STREAMER_JOB,
                   config_map=config_name, spark=spark, mounts=config.mounts,
                   service_account=service_account(table, spark, settings),
                   schedule=spec.mode.schedule if scheduled else None,
                   concurrency_policy=spec.mode.concurrency_policy,
                   metrics_port=spec.metrics.port if spec.metrics.enabled else None,
                   suspend=spec.state == "suspended", storage_conf=storage_spark_conf(table))
    return PlannedJob(name=name, job=STREAMER_JOB, job_config=config.document,
                      config_map=config_map(config_name, namespace, labels, pipeline, config.document, config.files),
                      application=spark_manifest(job, settings), files=config.files)


def _service_job(table, service, settings: OperatorSettings) -> PlannedJob:
    name = object_name(table.metadata.name, service.suffix, max_length=MAX_SCHEDULED_APP_NAME)
    namespace = table.metadata.namespace or settings.namespace
    labels = object_labels(TABLE_SERVICE_COMPONENT, table.metadata.name, service=service.suffix)
    spark = job_spark(table, service.spark, settings)
    config_name = object_name(name, "config")
    job = SparkJob(name=name, namespace=namespace, labels=labels, owner=table, job=TABLE_SERVICE_JOB,
                   config_map=config_name, spark=spark, mounts=table_mounts(table),
                   service_account=service_account(table, spark, settings), schedule=service.schedule,
                   storage_conf=storage_spark_conf(table))
    return PlannedJob(name=name, job=TABLE_SERVICE_JOB, job_config=service.job_config,
                      config_map=config_map(config_name, namespace, labels, table, service.job_config),
                      application=spark_manifest(job, settings), service=service.service)
