"""The operator's own configuration, from its environment (the chart sets it): which namespaces it
watches, the Spark image and the platform-wide Spark settings jobs default to, how often it
re-plans, where it serves metrics and health, and the peering name that makes replicas share the
work (HA) instead of racing."""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass, field
from typing import Mapping

from .api import SparkSpec, load_spark
from .api.fields import Pattern
from .api.table import LOCK_PROVIDERS, THRIFT_URIS, ZK_HOSTS, ZNODE_PATH
from .planner import LockServices, OperatorSettings
from .planner.settings import DEFAULT_IMAGE

ALL_NAMESPACES = ("", "all", "*")


@dataclass(frozen=True)
class Settings:
    namespaces: tuple[str, ...] = ()      # empty: every namespace (cluster-wide)
    image: str = DEFAULT_IMAGE
    spark_service_account: str | None = None   # the jobs' service account when a resource names none
    job_defaults: SparkSpec = field(default_factory=SparkSpec)   # every job's Spark settings, under the table's
    lock_provider: str = "kubernetesLease"    # of tables with several writers whose spec names no lock
    lock_services: LockServices = field(default_factory=LockServices)   # where the platform's ZooKeeper/HMS are
    resync_seconds: float = 60.0          # the timer that re-plans, corrects drift, refreshes status
    metrics_port: int = 9102
    health_port: int = 8080
    peering: str | None = None            # None: standalone (one replica)
    priority: int | None = None           # None: from the start time (see peering_priority)
    peering_lifetime: int = 60            # seconds a silent replica still counts as alive: the failover time

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    @property
    def planner(self) -> OperatorSettings:
        return OperatorSettings(image=self.image, service_account=self.spark_service_account,
                                job_defaults=self.job_defaults, default_lock_provider=self.lock_provider,
                                lock_services=self.lock_services)

    def peering_priority(self, started: float) -> int:
        """Replicas of one Deployment share their environment, and kopf pauses every replica when
        two share a priority; so unless one is set, the replica that started first leads (a later
        start means a lower priority) and the rest stand by, ties broken at random."""
        if self.priority is not None:
            return self.priority
        return (2**31 - int(started)) * 1000 + random.randrange(1000)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """WATCH_NAMESPACES (comma list, or all/empty), SPARK_IMAGE, SPARK_SERVICE_ACCOUNT, JOB_DEFAULTS
        (JSON in the shape of a HudiTable's spec.spark), LOCK_PROVIDER (a spec.concurrency.lock.provider),
        LOCK_ZOOKEEPER_URL, LOCK_ZOOKEEPER_PORT, LOCK_ZOOKEEPER_BASE_PATH, LOCK_HIVE_METASTORE_URIS,
        RESYNC_INTERVAL_SECONDS, METRICS_PORT,
        HEALTH_PORT, PEERING_NAME, PEERING_PRIORITY, PEERING_LIFETIME_SECONDS."""
        env = os.environ if env is None else env
        watched = env.get("WATCH_NAMESPACES", "").strip()
        namespaces = () if watched.lower() in ALL_NAMESPACES else tuple(
            n.strip() for n in watched.split(",") if n.strip())
        lock_provider = _lock_provider(env.get("LOCK_PROVIDER", ""))
        return cls(namespaces=namespaces,
                   image=env.get("SPARK_IMAGE") or DEFAULT_IMAGE,
                   spark_service_account=env.get("SPARK_SERVICE_ACCOUNT") or None,
                   job_defaults=_job_defaults(env.get("JOB_DEFAULTS", "")),
                   lock_provider=lock_provider,
                   lock_services=_lock_services(env, lock_provider),
                   resync_seconds=_number(env, "RESYNC_INTERVAL_SECONDS", cls.resync_seconds, float),
                   metrics_port=_number(env, "METRICS_PORT", cls.metrics_port, int),
                   health_port=_number(env, "HEALTH_PORT", cls.health_port, int),
                   peering=env.get("PEERING_NAME") or None,
                   priority=_number(env, "PEERING_PRIORITY", None, int),
                   peering_lifetime=_number(env, "PEERING_LIFETIME_SECONDS", cls.peering_lifetime, int))


def _job_defaults(raw: str) -> SparkSpec:
    """JOB_DEFAULTS: the platform's Spark settings of every job, checked as the CRD checks a table's
    spec.spark, so a bad value stops the operator at start with the field named (a SpecError,
    which is a ValueError, at JOB_DEFAULTS.<field>)."""
    if not raw.strip():
        return SparkSpec()
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"JOB_DEFAULTS is not JSON: {exc}") from None
    return load_spark(parsed, "JOB_DEFAULTS")


def _lock_provider(raw: str) -> str:
    """LOCK_PROVIDER: one of spec.concurrency.lock.provider's values (a typo stops the operator at start)."""
    provider = raw.strip() or Settings.lock_provider
    if provider not in LOCK_PROVIDERS:
        raise ValueError(f"LOCK_PROVIDER={raw!r} is not a lock provider; use one of {', '.join(LOCK_PROVIDERS)}")
    return provider


def _lock_services(env: Mapping[str, str], provider: str) -> LockServices:
    """LOCK_ZOOKEEPER_* and LOCK_HIVE_METASTORE_URIS: the platform's lock services, checked as the CRD
    checks a table's spec.concurrency.lock; the one the default provider needs must be set, so a
    platform whose default lock cannot be taken stops at start rather than refusing every table."""
    defaults = LockServices()
    services = LockServices(
        zookeeper_url=_matching(env, "LOCK_ZOOKEEPER_URL", ZK_HOSTS),
        zookeeper_port=_number(env, "LOCK_ZOOKEEPER_PORT", defaults.zookeeper_port, int),
        zookeeper_base_path=_matching(env, "LOCK_ZOOKEEPER_BASE_PATH", ZNODE_PATH) or defaults.zookeeper_base_path,
        hive_metastore_uris=_matching(env, "LOCK_HIVE_METASTORE_URIS", THRIFT_URIS))
    needed = {"zookeeper": ("LOCK_ZOOKEEPER_URL", services.zookeeper_url, "lock.zookeeper.url"),
              "hiveMetastore": ("LOCK_HIVE_METASTORE_URIS", services.hive_metastore_uris, "lock.hiveMetastore.uris")}
    name, value, chart_value = needed.get(provider, ("", "not needed", ""))
    if not value:
        raise ValueError(f"LOCK_PROVIDER={provider} needs {name}: the platform's default lock has no address "
                         f"(the hudi-operator chart's {chart_value})")
    if services.zookeeper_port > 65535:
        raise ValueError(f"LOCK_ZOOKEEPER_PORT={services.zookeeper_port} is not a port (1-65535)")
    return services


def _matching(env: Mapping[str, str], name: str, pattern: Pattern) -> str | None:
    raw = (env.get(name) or "").strip()
    if raw and not re.fullmatch(pattern.regex, raw):
        raise ValueError(f"{name}={raw!r} is not {pattern.meaning}")
    return raw or None


def _number(env: Mapping[str, str], name: str, default, kind):
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if value <= 0:
        raise ValueError(f"{name}={raw!r} must be positive")
    return value
