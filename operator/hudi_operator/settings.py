"""The operator's own configuration, from its environment (the chart sets it): which namespaces it
watches, the Spark image and the platform-wide Spark settings jobs default to, how often it
re-plans, where it serves metrics and health, and the peering name that makes replicas share the
work (HA) instead of racing."""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from typing import Mapping

from .api import SparkSpec, load_spark
from .planner import OperatorSettings
from .planner.settings import DEFAULT_IMAGE

ALL_NAMESPACES = ("", "all", "*")


@dataclass(frozen=True)
class Settings:
    namespaces: tuple[str, ...] = ()      # empty: every namespace (cluster-wide)
    image: str = DEFAULT_IMAGE
    spark_service_account: str | None = None   # the jobs' service account when a resource names none
    job_defaults: SparkSpec = field(default_factory=SparkSpec)   # every job's Spark settings, under the table's
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
                                job_defaults=self.job_defaults)

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
        (JSON in the shape of a HudiTable's spec.spark), RESYNC_INTERVAL_SECONDS, METRICS_PORT,
        HEALTH_PORT, PEERING_NAME, PEERING_PRIORITY, PEERING_LIFETIME_SECONDS."""
        env = os.environ if env is None else env
        watched = env.get("WATCH_NAMESPACES", "").strip()
        namespaces = () if watched.lower() in ALL_NAMESPACES else tuple(
            n.strip() for n in watched.split(",") if n.strip())
        return cls(namespaces=namespaces,
                   image=env.get("SPARK_IMAGE") or DEFAULT_IMAGE,
                   spark_service_account=env.get("SPARK_SERVICE_ACCOUNT") or None,
                   job_defaults=_job_defaults(env.get("JOB_DEFAULTS", "")),
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
