"""The Kubeflow Spark operator's objects (sparkoperator.k8s.io/v1beta2) that run one of our PySpark
jobs, plus the ConfigMap holding its job-config: a ``SparkApplication`` for a job that runs until
stopped, a ``ScheduledSparkApplication`` for one that runs once per cron schedule."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

import yaml

from hudi_jobs.placeholders import SECRETS_DIR_ENV

from ..api import SparkSpec, to_json
from .labels import object_meta, object_name, with_spec_hash
from .settings import OperatorSettings

SPARK_API_VERSION = "sparkoperator.k8s.io/v1beta2"
SPARK_APPLICATION, SCHEDULED_SPARK_APPLICATION = "SparkApplication", "ScheduledSparkApplication"
STREAMER_JOB, TABLE_SERVICE_JOB = "streamer", "table-service"
JOB_CONFIG_KEY = "job-config.yaml"
JOB_CONFIG_VOLUME = "job-config"
METRICS_PORT_NAME = "metrics"
# Spark operator objects are named so the names it derives stay DNS labels of at most 63
# characters: "<app>-ui-svc", and a scheduled run "<app>-<19-digit UnixNano>".
MAX_APP_NAME = 63 - len("-ui-svc")
MAX_SCHEDULED_APP_NAME = MAX_APP_NAME - 20


@dataclass(frozen=True)
class Mounts:
    """What a job needs from its namespace besides the job-config."""
    secrets: tuple[str, ...] = ()          # Secret names → <secrets_dir>/<name>, driver and executors
    config_maps: tuple[str, ...] = ()      # ConfigMap names → <config_dir>/<name>, driver and executors
    env_secret: str | None = None          # a Secret whose keys become environment variables

    def __or__(self, other: Mounts) -> Mounts:
        return Mounts(tuple(dict.fromkeys(self.secrets + other.secrets)),
                      tuple(dict.fromkeys(self.config_maps + other.config_maps)),
                      self.env_secret or other.env_secret)


@dataclass(frozen=True)
class SparkJob:
    """One job to run: which entry point, its job-config's ConfigMap, Spark settings (already merged
    and defaulted), what to mount, and when it runs (``schedule`` None: until stopped)."""
    name: str
    namespace: str
    labels: dict[str, str]
    owner: Any                              # the HudiTable/HudiPipeline resource it belongs to
    job: str                                # STREAMER_JOB or TABLE_SERVICE_JOB
    config_map: str
    spark: SparkSpec
    mounts: Mounts
    service_account: str | None = None
    schedule: str | None = None
    concurrency_policy: str = "Forbid"
    metrics_port: int | None = None
    suspend: bool = False
    storage_conf: dict[str, str] = field(default_factory=dict)   # spec.storage's spark.hadoop.fs.s3a.*


def config_map(name: str, namespace: str, labels: dict[str, str], owner: Any, job_config: dict[str, Any],
               files: dict[str, str] | None = None) -> dict[str, Any]:
    """The ConfigMap holding a job-config document under ``job-config.yaml``, and the ``files``
    the job-config refers to beside it."""
    return with_spec_hash({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": object_meta(name, namespace, labels, owner),
        "data": {JOB_CONFIG_KEY: job_config_yaml(job_config), **(files or {})},
    })


def job_config_yaml(job_config: dict[str, Any]) -> str:
    return yaml.safe_dump(job_config, sort_keys=False, default_flow_style=False, allow_unicode=True)


def spark_manifest(job: SparkJob, settings: OperatorSettings) -> dict[str, Any]:
    """The SparkApplication, or the ScheduledSparkApplication when the job has a schedule."""
    app = _application_spec(job, settings)
    meta = object_meta(job.name, job.namespace, job.labels, job.owner)
    if job.schedule is None:
        return with_spec_hash({"apiVersion": SPARK_API_VERSION, "kind": SPARK_APPLICATION,
                               "metadata": meta, "spec": app})
    app["restartPolicy"] = {"type": "Never"}          # the next scheduled run is the retry
    spec = {"schedule": job.schedule, "concurrencyPolicy": job.concurrency_policy, "suspend": job.suspend,
            "successfulRunHistoryLimit": settings.successful_run_history_limit,
            "failedRunHistoryLimit": settings.failed_run_history_limit, "template": app}
    return with_spec_hash({"apiVersion": SPARK_API_VERSION, "kind": SCHEDULED_SPARK_APPLICATION,
                           "metadata": meta, "spec": spec})


def _application_spec(job: SparkJob, settings: OperatorSettings) -> dict[str, Any]:
    spark = job.spark
    volumes = [{"name": JOB_CONFIG_VOLUME, "configMap": {"name": job.config_map}}]
    shared_mounts = []
    for secret in job.mounts.secrets:
        volume = object_name("secret", secret)
        volumes.append({"name": volume, "secret": {"secretName": secret}})
        shared_mounts.append({"name": volume, "mountPath": posixpath.join(settings.secrets_dir, secret),
                              "readOnly": True})
    for name in job.mounts.config_maps:
        volume = object_name("config", name)
        volumes.append({"name": volume, "configMap": {"name": name}})
        shared_mounts.append({"name": volume, "mountPath": posixpath.join(settings.config_dir, name),
                              "readOnly": True})
    if spark.security_context and spark.security_context.read_only_root_filesystem:
        for name, path in settings.scratch_dirs:       # where Spark writes besides its own local dirs
            volumes.append({"name": name, "emptyDir": {}})
            shared_mounts.append({"name": name, "mountPath": path})
    spark_conf = {**job.storage_conf, **spark.spark_conf}      # the user's sparkConf wins
    if job.mounts.secrets:
        spark_conf[f"spark.kubernetes.driverEnv.{SECRETS_DIR_ENV}"] = settings.secrets_dir

    driver: dict[str, Any] = {
        "cores": spark.driver.cores, "memory": spark.driver.memory, "labels": dict(job.labels),
        "volumeMounts": [{"name": JOB_CONFIG_VOLUME, "mountPath": settings.job_config_dir, "readOnly": True},
                         *(dict(m) for m in shared_mounts)],
        **_resources(spark.driver),
    }
    executor: dict[str, Any] = {"instances": spark.executor.instances, "cores": spark.executor.cores,
                                "memory": spark.executor.memory, "labels": dict(job.labels),
                                **_resources(spark.executor)}
    if shared_mounts:
        executor["volumeMounts"] = [dict(m) for m in shared_mounts]
    for pod in (driver, executor):
        if job.service_account:
            pod["serviceAccount"] = job.service_account
        if job.mounts.env_secret:
            pod["envFrom"] = [{"secretRef": {"name": job.mounts.env_secret}}]
        pod.update(_pod_settings(spark))
    if job.metrics_port is not None:
        driver["ports"] = [{"name": METRICS_PORT_NAME, "containerPort": job.metrics_port, "protocol": "TCP"}]
        driver["annotations"] = {"prometheus.io/scrape": "true", "prometheus.io/port": str(job.metrics_port),
                                 "prometheus.io/path": "/metrics"}

    app: dict[str, Any] = {
        "type": "Python", "pythonVersion": "3", "mode": "cluster",
        "image": spark.image or settings.image, "sparkVersion": spark.spark_version,
        "mainApplicationFile": settings.main_application_file,
        "arguments": [job.job, "--job-config", posixpath.join(settings.job_config_dir, JOB_CONFIG_KEY)],
        "restartPolicy": _compact(to_json(spark.restart_policy), RESTART_POLICY_FIELDS),
        "volumes": volumes, "driver": driver, "executor": executor,
    }
    if spark.image_pull_policy:
        app["imagePullPolicy"] = spark.image_pull_policy
    if spark.image_pull_secrets:
        app["imagePullSecrets"] = list(spark.image_pull_secrets)
    if spark_conf:
        app["sparkConf"] = spark_conf
    if spark.node_selector:
        app["nodeSelector"] = dict(spark.node_selector)
    if job.suspend and job.schedule is None:
        app["suspend"] = True
    return app


# Our field names where the Spark operator's differ (it counts the intervals in seconds).
RESTART_POLICY_FIELDS = {"onFailureRetryIntervalSeconds": "onFailureRetryInterval",
                         "onSubmissionFailureRetryIntervalSeconds": "onSubmissionFailureRetryInterval"}
_RESOURCES = ("coreRequest", "coreLimit", "memoryOverhead", "memoryLimit")


def _resources(pod: Any) -> dict[str, Any]:
    """The optional resource settings of the driver or the executors, as the Spark operator spells them."""
    return {k: v for k, v in to_json(pod).items() if k in _RESOURCES}


def _pod_settings(spark: SparkSpec) -> dict[str, Any]:
    """What the driver and the executor pods share: scheduling and security."""
    pod: dict[str, Any] = {}
    if spark.tolerations:
        pod["tolerations"] = [dict(t) for t in spark.tolerations]
    if spark.affinity:
        pod["affinity"] = dict(spark.affinity)
    if spark.priority_class_name:
        pod["priorityClassName"] = spark.priority_class_name
    if spark.pod_security_context:
        pod["podSecurityContext"] = _compact(to_json(spark.pod_security_context))
    if spark.security_context:
        pod["securityContext"] = _compact(to_json(spark.security_context))
    return pod


def _compact(value: Any, renamed: dict[str, str] | None = None) -> Any:
    """``to_json`` output without empty lists and objects (unset, not "set to nothing"), top-level
    keys ``renamed``."""
    if isinstance(value, dict):
        out = {(renamed or {}).get(k, k): _compact(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return value
