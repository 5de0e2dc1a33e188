"""Parts both kinds share: the API's name, the patterns and option rules, Secret/ConfigMap
references, and the Spark settings a table gives its jobs and a pipeline or service refines."""
from __future__ import annotations

import dataclasses
import importlib.metadata
import re
from dataclasses import dataclass, field
from typing import Any

from .fields import Pattern, Rule, api_fields, kind_of, model, spec_field

API_GROUP = "lakehouse.hudi.dev"
API_VERSION = "v1alpha1"

IDENTIFIER = Pattern(r"^[A-Za-z_][A-Za-z0-9_]*$",
                     "a letter or '_' followed by letters, digits or '_' (a SQL/Hive identifier)")
DNS_NAME = Pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                   "a Kubernetes object name: lower-case letters, digits, '-' and '.'")
CONFIG_KEY = Pattern(r"^[-._a-zA-Z0-9]+$", "a Secret or ConfigMap key: letters, digits, '-', '_' and '.'")
STORAGE_URI = Pattern(r"^((s3|s3a|s3n|gs|gcs|abfs|abfss|hdfs|file)://\S+|/\S*)$",
                      "a storage URI (s3://, s3a://, s3n://, gs://, gcs://, abfs://, abfss://, hdfs://, file://) "
                      "or an absolute path for local runs")
ENDPOINT = Pattern(r"^https?://[^\s/?#]+/?$", "an http(s):// URL of a host, e.g. http://minio.storage:9000")
REGION = Pattern(r"^[a-z0-9-]+$", "a region name such as us-east-1")
CRON = Pattern(r"^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every ([0-9]+(ms|s|m|h))+"
               r"|\S+ +\S+ +\S+ +\S+ +\S+)$",
               "a cron schedule: five fields ('0 */2 * * *'), @hourly/@daily/... or '@every 30m'")
MEMORY = Pattern(r"^[0-9]+[kmgt]?$", "a Spark memory size such as 512m or 2g")
CPU = Pattern(r"^[0-9]+(\.[0-9]+)?m?$", "a Kubernetes CPU quantity such as 1, 1.5 or 1200m")

NAME_LEN = 253       # Kubernetes object names, Secret/ConfigMap keys
ID_LEN = 128         # table, database, column and rule names
URI_LEN = 2048
VALUE_LEN = 4096     # option values
OPTIONS_MAX = 128

# --- the options maps: Hudi options by name, never credentials ----------------------------------------
CREDENTIAL_REGEX = r"(?i)(password|secret|token|sasl[.]jaas|basic[.]auth)"
_HOODIE = "hoodie."


def no_credentials(where: str, exempt_prefix: str = "") -> Rule:
    """Option keys that look like credentials are refused: credentials live in Secrets. Keys under
    ``exempt_prefix`` are references, not credentials (spark.kubernetes.driver.secretKeyRef.*)."""
    bad = f"k.matches('{CREDENTIAL_REGEX}')"
    if exempt_prefix:
        bad = f"!k.startsWith('{exempt_prefix}') && {bad}"
    tail = f" looks like a credential: put credentials in a Secret and reference it ({where})"

    def offending(options: dict[str, str]) -> list[str]:
        return [k for k in options
                if re.search(CREDENTIAL_REGEX, k) and not (exempt_prefix and k.startswith(exempt_prefix))]

    return Rule(rule=f"self.all(k, !({bad}))",
                message=f"an option looks like a credential: put credentials in a Secret and reference it "
                        f"({where})",
                message_expression=f"'option ' + self.filter(k, {bad})[0] + '{tail}'",
                check=lambda m: not offending(m),
                explain=lambda m: f"option {offending(m)[0]}{tail}")


HOODIE_PREFIX = Rule(
    rule=f"self.all(k, k.startsWith('{_HOODIE}'))",
    message="options are Hudi options: every key starts with 'hoodie.' (Spark settings go in "
            "spark.sparkConf)",
    message_expression=f"'option ' + self.filter(k, !k.startsWith('{_HOODIE}'))[0] + ' is not a Hudi "
                       "option: keys start with hoodie. (Spark settings go in spark.sparkConf)'",
    check=lambda m: all(k.startswith(_HOODIE) for k in m),
    explain=lambda m: f"option {next(k for k in m if not k.startswith(_HOODIE))} is not a Hudi option: "
                      "keys start with hoodie. (Spark settings go in spark.sparkConf)",
)


def hoodie_options(description: str, where: str) -> Any:
    """The extra ``hoodie.*`` options map of a table or pipeline; ``where`` says where credentials go."""
    return spec_field(description, default={}, max_properties=OPTIONS_MAX, max_length=VALUE_LEN,
                      rules=(HOODIE_PREFIX, no_credentials(where)))


def schedule_needed(service: str) -> Rule:
    """A scheduled job needs its cron schedule."""
    return Rule(rule="self.mode != 'scheduled' || has(self.schedule)",
                message=f"{service} mode 'scheduled' needs a schedule (cron, e.g. '0 * * * *')",
                field_path=".schedule",
                check=lambda s: s.mode != "scheduled" or s.schedule is not None)


# --- references ---------------------------------------------------------------------------------------
@model
class SecretKeyRef:
    """A key of a Secret in the resource's namespace: how credentials reach a job without being
    written in a spec."""
    name: str = spec_field("Name of the Secret (in the resource's namespace).", pattern=DNS_NAME,
                           max_length=NAME_LEN)
    key: str = spec_field("Key inside the Secret.", pattern=CONFIG_KEY, max_length=NAME_LEN)


@model
class ConfigMapKeyRef:
    """A key of a ConfigMap in the resource's namespace (a schema file, a SQL file)."""
    config_map_name: str = spec_field("Name of the ConfigMap (in the resource's namespace).",
                                      pattern=DNS_NAME, max_length=NAME_LEN)
    key: str = spec_field("Key inside the ConfigMap.", pattern=CONFIG_KEY, max_length=NAME_LEN)


@model
class TableRef:
    """A HudiTable in the same namespace."""
    name: str = spec_field("metadata.name of the HudiTable (same namespace).", pattern=DNS_NAME,
                           max_length=NAME_LEN)


# --- Spark -------------------------------------------------------------------------------------------
def _pinned_pyspark() -> str:
    """The pyspark version pinned in pyproject.toml, read from the installed project's metadata so
    the pin stays in one place."""
    for requirement in importlib.metadata.requires("hudi-lakehouse") or ():
        name, sep, version = requirement.partition("==")
        if sep and name.strip() == "pyspark":
            return version.split(";")[0].strip()
    raise RuntimeError("pyproject.toml pins no pyspark==<version>")


PYSPARK_VERSION = _pinned_pyspark()


K8S_MEMORY = Pattern(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$",
                     "a Kubernetes memory quantity such as 512Mi or 4Gi")
CAPABILITY = Pattern(r"^[A-Z_]+$", "a Linux capability name such as NET_BIND_SERVICE, or ALL")
PASS_THROUGH = ("passed through to the driver and executor pods as written (Kubernetes' own schema); "
                "set at a more specific level, it replaces the less specific one whole")


@model
class PodResources:
    """What the driver pod, or each executor pod, asks for; unset fields come from the less specific
    level, then the defaults."""
    cores: int | None = spec_field("Spark cores (default 1).", default=None, minimum=1)
    core_request: str | None = spec_field("Kubernetes CPU request of the pod, e.g. 500m (default: cores).",
                                          default=None, pattern=CPU, max_length=32)
    core_limit: str | None = spec_field("Kubernetes CPU limit of the pod, e.g. 1200m.", default=None, pattern=CPU,
                                        max_length=32)
    memory: str | None = spec_field("Spark memory, e.g. 2g (default: the driver 1g, each executor 2g).",
                                    default=None, pattern=MEMORY, max_length=32)
    memory_overhead: str | None = spec_field("Off-heap memory added to the pod's request, e.g. 512m (default: "
                                             "Spark's, 10% of memory).", default=None, pattern=MEMORY,
                                             max_length=32)
    memory_limit: str | None = spec_field("Kubernetes memory limit of the pod, e.g. 4Gi (default: the request, "
                                          "memory + overhead).", default=None, pattern=K8S_MEMORY, max_length=32)


@model
class DriverSpec(PodResources):
    """Resources of the Spark driver."""


@model
class ExecutorSpec(PodResources):
    """Resources of each Spark executor, and how many run."""
    instances: int | None = spec_field("Number of executors (default 1).", default=None, minimum=1)


@model
class RestartPolicySpec:
    """How the Spark operator restarts a continuous pipeline's job (its ``restartPolicy``); scheduled
    runs are never restarted, the next run is the retry. Retries back off linearly: the n-th waits
    n × the interval (the Spark operator counts attempts until the spec changes)."""
    type: str | None = spec_field("OnFailure: restart after a failure, at most onFailureRetries times, then "
                                  "the pipeline is Failed (Degraded); Always: restart whenever the job ends, "
                                  "without limit (upgrade.rollbackOnFailure then never fires); Never "
                                  "(default OnFailure).", default=None, enum=("OnFailure", "Always", "Never"))
    on_failure_retries: int | None = spec_field("OnFailure: restarts after the job failed (default 10).",
                                                default=None, minimum=0, maximum=1000)
    on_failure_retry_interval_seconds: int | None = spec_field(
        "Seconds before the first restart after a failure; the n-th waits n times this (default 30).",
        default=None, minimum=1, maximum=86400)
    on_submission_failure_retries: int | None = spec_field("OnFailure: new submissions after a failed "
                                                           "submission (default 5).", default=None, minimum=0,
                                                           maximum=1000)
    on_submission_failure_retry_interval_seconds: int | None = spec_field(
        "Seconds before the first resubmission; the n-th waits n times this (default 30).", default=None,
        minimum=1, maximum=86400)


# --- pod security: the Kubernetes fields the Spark operator applies, typed so the API server checks them --
@model
class SecurityProfile:
    """A seccomp or AppArmor profile of a pod or container (the two share Kubernetes' shape)."""
    type: str = spec_field("RuntimeDefault (seccomp's is what restricted Pod Security asks for), Localhost or "
                           "Unconfined.", enum=("RuntimeDefault", "Localhost", "Unconfined"))
    localhost_profile: str | None = spec_field("Localhost: the profile on the node (seccomp: its path).",
                                               default=None, max_length=NAME_LEN)


@model
class SELinuxOptions:
    """SELinux labels of a pod or container."""
    user: str | None = spec_field("SELinux user.", default=None, max_length=NAME_LEN)
    role: str | None = spec_field("SELinux role.", default=None, max_length=NAME_LEN)
    type: str | None = spec_field("SELinux type.", default=None, max_length=NAME_LEN)
    level: str | None = spec_field("SELinux level.", default=None, max_length=NAME_LEN)


@model
class Capabilities:
    """Linux capabilities added to and dropped from a container."""
    add: tuple[str, ...] = spec_field("Capabilities added.", default=(), max_items=32, pattern=CAPABILITY,
                                      max_length=64)
    drop: tuple[str, ...] = spec_field("Capabilities dropped (ALL: every one).", default=(), max_items=64,
                                       pattern=CAPABILITY, max_length=64)


@model
class PodSecurityContext:
    """The securityContext of the driver and executor pods (Kubernetes' PodSecurityContext)."""
    run_as_user: int | None = spec_field("User id of the containers (185: the Spark image's spark user).",
                                         default=None, minimum=0)
    run_as_group: int | None = spec_field("Group id of the containers.", default=None, minimum=0)
    run_as_non_root: bool | None = spec_field("Refuse to start a container that would run as root.",
                                              default=None)
    fs_group: int | None = spec_field("Group owning mounted volumes.", default=None, minimum=0)
    fs_group_change_policy: str | None = spec_field("When volume ownership is changed to fsGroup.",
                                                    default=None, enum=("OnRootMismatch", "Always"))
    supplemental_groups: tuple[int, ...] = spec_field("Extra group ids of the containers.", default=(),
                                                      max_items=32, minimum=0)
    seccomp_profile: SecurityProfile | None = spec_field("Seccomp profile.", default=None)
    app_armor_profile: SecurityProfile | None = spec_field("AppArmor profile.", default=None)
    se_linux_options: SELinuxOptions | None = spec_field("SELinux labels.", default=None)


@model
class SecurityContext:
    """The securityContext of the driver and executor containers (Kubernetes' SecurityContext)."""
    run_as_user: int | None = spec_field("User id of the container.", default=None, minimum=0)
    run_as_group: int | None = spec_field("Group id of the container.", default=None, minimum=0)
    run_as_non_root: bool | None = spec_field("Refuse to start the container as root.", default=None)
    allow_privilege_escalation: bool | None = spec_field("Whether a process may gain more privileges than its "
                                                         "parent (false: restricted Pod Security).", default=None)
    privileged: bool | None = spec_field("Run as a privileged container.", default=None)
    read_only_root_filesystem: bool | None = spec_field(
        "Mount the image read-only; the jobs then get emptyDir volumes at /tmp and Spark's work-dir.",
        default=None)
    capabilities: Capabilities | None = spec_field("Capabilities added and dropped (restricted Pod Security: "
                                                   "drop ALL).", default=None)
    seccomp_profile: SecurityProfile | None = spec_field("Seccomp profile (over the pod's).", default=None)
    app_armor_profile: SecurityProfile | None = spec_field("AppArmor profile (over the pod's).", default=None)
    se_linux_options: SELinuxOptions | None = spec_field("SELinux labels (over the pod's).", default=None)


@model
class SparkSpec:
    """How a job's SparkApplication runs. A table's spark settings are the defaults of all its jobs;
    a pipeline's or a table service's override them field by field (see ``merged``)."""
    image: str | None = spec_field("Spark image of the jobs (default: the operator's configured image).",
                                   default=None, max_length=512)
    spark_version: str | None = spec_field(f"Spark version of the image (default {PYSPARK_VERSION}, the "
                                           "pinned pyspark).", default=None,
                                           pattern=Pattern(r"^[0-9]+\.[0-9]+\.[0-9]+$", "a version like 4.1.1"),
                                           max_length=32)
    image_pull_policy: str | None = spec_field("Image pull policy of the driver and executors.",
                                               default=None, enum=("Always", "IfNotPresent", "Never"))
    image_pull_secrets: tuple[str, ...] = spec_field("Secrets (docker-registry, in the resource's namespace) "
                                                     "the image is pulled with; a non-empty list replaces the "
                                                     "less specific one.", default=(), max_items=16,
                                                     pattern=DNS_NAME, max_length=NAME_LEN)
    service_account_name: str | None = spec_field("Service account of the driver (workload identity, "
                                                  "RBAC to create executors).", default=None,
                                                  pattern=DNS_NAME, max_length=NAME_LEN)
    driver: DriverSpec = spec_field("Driver resources.", default=DriverSpec)
    executor: ExecutorSpec = spec_field("Executor resources.", default=ExecutorSpec)
    spark_conf: dict[str, str] = spec_field(
        "Extra Spark settings (spark.*); merged key by key over the table's. Credentials go in "
        "storage.credentialsSecret, not here.", default={}, max_properties=OPTIONS_MAX, max_length=VALUE_LEN,
        rules=(no_credentials("storage.credentialsSecret", exempt_prefix="spark.kubernetes."),))
    node_selector: dict[str, str] = spec_field("Node labels the driver and executor pods must match; "
                                               "merged key by key over the table's.", default={},
                                               max_properties=32, max_length=NAME_LEN)
    tolerations: tuple[dict[str, Any], ...] = spec_field(
        "Kubernetes tolerations of the driver and executor pods (passed through as written); a "
        "non-empty list replaces the table's.", default=(), max_items=32)
    affinity: dict[str, Any] | None = spec_field(f"Kubernetes affinity of the driver and executor pods, "
                                                 f"{PASS_THROUGH}.", default=None)
    priority_class_name: str | None = spec_field("PriorityClass of the driver and executor pods.", default=None,
                                                 pattern=DNS_NAME, max_length=NAME_LEN)
    pod_security_context: PodSecurityContext | None = spec_field(
        "securityContext of the driver and executor pods (default: restricted Pod Security, user 185); set at "
        "a more specific level, it replaces the less specific one whole.", default=None, atomic=True)
    security_context: SecurityContext | None = spec_field(
        "securityContext of the driver and executor containers (default: no privilege escalation, ALL "
        "capabilities dropped, read-only root filesystem); set at a more specific level, it replaces the "
        "less specific one whole.", default=None, atomic=True)
    restart_policy: RestartPolicySpec = spec_field("Restarts of a continuous pipeline's job after failures "
                                                   "(field by field over the table's).",
                                                   default=RestartPolicySpec)

    def merged(self, override: SparkSpec | None) -> SparkSpec:
        """These settings with ``override``'s on top, field by field: scalars the override sets win,
        maps merge key by key, objects field by field, except the atomic ones (security contexts) and
        pass-through ones (affinity), which the override replaces whole, as it does non-empty lists.
        ``None`` changes nothing."""
        return self if override is None else _overlay(self, override)


def _overlay(base: Any, top: Any) -> Any:
    changes = {}
    for f in api_fields(type(base)):
        old, new = getattr(base, f.name), getattr(top, f.name)
        kind = kind_of(f.type)
        if kind == "object" and not f.info.atomic and old is not None and new is not None:
            changes[f.name] = _overlay(old, new)
        elif kind == "map":
            changes[f.name] = {**old, **new}
        elif new is not None and new != ():
            changes[f.name] = new
    return dataclasses.replace(base, **changes)


#: What a job gets for what neither the platform (the operator's JOB_DEFAULTS), the table nor the
#: pipeline sets (the image: the operator's). The pods run as the Spark image's non-root user (185)
#: under restricted Pod Security; the root filesystem is read-only, so the planner gives the jobs
#: emptyDir volumes where Spark writes (/tmp and the image's work-dir; spark.local.dir is Spark's own
#: emptyDir). A continuous job is restarted 10 times after failures, 30 s × n apart.
SPARK_DEFAULTS = SparkSpec(
    spark_version=PYSPARK_VERSION, driver=DriverSpec(cores=1, memory="1g"),
    executor=ExecutorSpec(instances=1, cores=1, memory="2g"),
    pod_security_context=PodSecurityContext(run_as_user=185, run_as_group=185, run_as_non_root=True, fs_group=185,
                                            seccomp_profile=SecurityProfile(type="RuntimeDefault")),
    security_context=SecurityContext(allow_privilege_escalation=False, read_only_root_filesystem=True,
                                     capabilities=Capabilities(drop=("ALL",))),
    restart_policy=RestartPolicySpec(type="OnFailure", on_failure_retries=10, on_failure_retry_interval_seconds=30,
                                     on_submission_failure_retries=5,
                                     on_submission_failure_retry_interval_seconds=30))


# --- the object around a spec ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ObjectMeta:
    """The parts of metadata the operator uses."""
    name: str
    namespace: str | None = None
    uid: str | None = None
    generation: int | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
