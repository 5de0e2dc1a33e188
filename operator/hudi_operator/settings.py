"""The operator's own configuration, from its environment (the chart sets it): which namespaces it
watches, the Spark image jobs default to, how often it re-plans, where it serves metrics and
health, and the peering name that makes replicas share the work (HA) instead of racing."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from .planner import OperatorSettings
from .planner.settings import DEFAULT_IMAGE

ALL_NAMESPACES = ("", "all", "*")


@dataclass(frozen=True)
class Settings:
    namespaces: tuple[str, ...] = ()      # empty: every namespace (cluster-wide)
    image: str = DEFAULT_IMAGE
    resync_seconds: float = 60.0          # the timer that re-plans, corrects drift, refreshes status
    metrics_port: int = 9102
    health_port: int = 8080
    peering: str | None = None            # None: standalone (one replica)

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    @property
    def planner(self) -> OperatorSettings:
        return OperatorSettings(image=self.image)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """WATCH_NAMESPACES (comma list, or all/empty), SPARK_IMAGE, RESYNC_INTERVAL_SECONDS,
        METRICS_PORT, HEALTH_PORT, PEERING_NAME."""
        env = os.environ if env is None else env
        watched = env.get("WATCH_NAMESPACES", "").strip()
        namespaces = () if watched.lower() in ALL_NAMESPACES else tuple(
            n.strip() for n in watched.split(",") if n.strip())
        return cls(namespaces=namespaces,
                   image=env.get("SPARK_IMAGE") or DEFAULT_IMAGE,
                   resync_seconds=_number(env, "RESYNC_INTERVAL_SECONDS", cls.resync_seconds, float),
                   metrics_port=_number(env, "METRICS_PORT", cls.metrics_port, int),
                   health_port=_number(env, "HEALTH_PORT", cls.health_port, int),
                   peering=env.get("PEERING_NAME") or None)


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
