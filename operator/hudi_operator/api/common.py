"""Parts both kinds share: the API's name, the patterns and option rules, Secret/ConfigMap
references, and the Spark settings a table gives its jobs and a pipeline or service refines."""
from __future__ import annotations

import dataclasses
import importlib.metadata
import re
from dataclasses import dataclass, field
from typing import Any

from .fields import Pattern, Rule, model, spec_field

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


@model
class DriverSpec:
    """Resources of the Spark driver; unset fields come from the table, then the defaults."""
    cores: int | None = spec_field("Driver CPU cores (default 1).", default=None, minimum=1)
    core_limit: str | None = spec_field("Kubernetes CPU limit of the driver pod, e.g. 1200m.",
                                        default=None, pattern=CPU, max_length=32)
    memory: str | None = spec_field("Driver memory, e.g. 1g (default 1g).", default=None, pattern=MEMORY,
                                    max_length=32)


@model
class ExecutorSpec:
    """Resources of the Spark executors; unset fields come from the table, then the defaults."""
    instances: int | None = spec_field("Number of executors (default 1).", default=None, minimum=1)
    cores: int | None = spec_field("CPU cores per executor (default 1).", default=None, minimum=1)
    memory: str | None = spec_field("Memory per executor, e.g. 2g (default 2g).", default=None,
                                    pattern=MEMORY, max_length=32)


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

    def merged(self, override: SparkSpec | None) -> SparkSpec:
        """These settings with ``override``'s on top, field by field: scalars the override sets win,
        maps merge key by key, a non-empty tolerations list replaces. ``None`` changes nothing."""
        return self if override is None else _overlay(self, override)


def _overlay(base: Any, top: Any) -> Any:
    changes = {}
    for f in dataclasses.fields(base):
        old, new = getattr(base, f.name), getattr(top, f.name)
        if dataclasses.is_dataclass(old):
            changes[f.name] = _overlay(old, new)
        elif isinstance(old, dict):
            changes[f.name] = {**old, **new}
        elif new is not None and new != ():
            changes[f.name] = new
    return dataclasses.replace(base, **changes)


#: What a job gets for what neither the table nor the pipeline sets (the image: the operator's).
SPARK_DEFAULTS = SparkSpec(spark_version=PYSPARK_VERSION, driver=DriverSpec(cores=1, memory="1g"),
                           executor=ExecutorSpec(instances=1, cores=1, memory="2g"))


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
