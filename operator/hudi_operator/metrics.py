"""Prometheus metrics of the operator, on a registry of its own (not the process-global default, so
nothing else's collectors leak into the endpoint): reconciliations by kind and result and how long
they took, each pipeline's and table's phase, and each table's pending compactions and clusterings
and commit age (computed at scrape time, so the age grows between reconciliations as it really
does).

Every per-resource series carries ``namespace`` and the resource's name (``pipeline`` or ``table``),
so an alert or a dashboard can say which one; the chart's ServiceMonitor honours these labels over
the scrape target's own ``namespace`` (the operator's)."""
from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# A reconcile reads the API and a table's timeline: milliseconds to tens of seconds on object stores.
RECONCILE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass
class _Table:
    pending_compactions: int = 0
    pending_clusterings: int = 0
    committed: float | None = None          # epoch seconds of the newest completed commit


class _State(Collector):
    """Gauges over what the last reconciliations saw, keyed by (namespace, name)."""

    def __init__(self) -> None:
        self.pipeline_phases: dict[tuple[str, str], str] = {}
        self.table_phases: dict[tuple[str, str], str] = {}
        self.tables: dict[tuple[str, str], _Table] = {}

    def collect(self) -> Iterator[Metric]:
        yield _phases("hudi_operator_pipeline_phase", "The HudiPipeline's phase (1 for the current one).",
                      "pipeline", self.pipeline_phases)
        yield _phases("hudi_operator_table_phase", "The HudiTable's phase (1 for the current one).",
                      "table", self.table_phases)
        pending = GaugeMetricFamily("hudi_operator_table_pending_compactions",
                                    "Compactions requested and not yet completed.", labels=["namespace", "table"])
        clusterings = GaugeMetricFamily("hudi_operator_table_pending_clusterings",
                                        "Clusterings requested and not yet completed.", labels=["namespace", "table"])
        age = GaugeMetricFamily("hudi_operator_table_last_commit_age_seconds",
                                "Seconds since the table's newest completed commit.", labels=["namespace", "table"])
        now = time.time()
        for (namespace, name), table in sorted(self.tables.items()):
            pending.add_metric([namespace, name], table.pending_compactions)
            clusterings.add_metric([namespace, name], table.pending_clusterings)
            if table.committed is not None:
                age.add_metric([namespace, name], max(now - table.committed, 0.0))
        yield pending
        yield clusterings
        yield age


def _phases(name: str, documentation: str, kind_label: str, phases: dict[tuple[str, str], str]) -> Metric:
    family = GaugeMetricFamily(name, documentation, labels=["namespace", kind_label, "phase"])
    for (namespace, resource), phase in sorted(phases.items()):
        family.add_metric([namespace, resource, phase], 1)
    return family


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.reconciliations = Counter("hudi_operator_reconciliations", "Reconciliations by kind and result "
                                       "(ok, degraded, error).", ["kind", "result"], registry=self.registry)
        self.durations = Histogram("hudi_operator_reconcile_duration_seconds", "Time one reconciliation took.",
                                   ["kind"], buckets=RECONCILE_BUCKETS, registry=self.registry)
        self._state = _State()
        self.registry.register(self._state)

    def reconciled(self, kind: str, result: str) -> None:
        self.reconciliations.labels(kind=kind, result=result).inc()

    def timed(self, kind: str) -> AbstractContextManager:
        """Observes the duration of the reconciliation run inside it (also when it raises)."""
        return self.durations.labels(kind=kind).time()

    def pipeline(self, namespace: str, name: str, phase: str | None) -> None:
        """Record a pipeline's phase; None forgets a deleted pipeline."""
        _remember(self._state.pipeline_phases, (namespace, name), phase)

    def table_phase(self, namespace: str, name: str, phase: str | None) -> None:
        """Record a table's phase; None forgets it."""
        _remember(self._state.table_phases, (namespace, name), phase)

    def table(self, namespace: str, name: str, *, pending_compactions: int, pending_clusterings: int,
              last_commit_epoch: float | None) -> None:
        """What the table's timeline showed at its last reconciliation."""
        self._state.tables[(namespace, name)] = _Table(pending_compactions, pending_clusterings, last_commit_epoch)

    def forget_table(self, namespace: str, name: str) -> None:
        """A deleted table: none of its series stays behind."""
        self._state.tables.pop((namespace, name), None)
        self._state.table_phases.pop((namespace, name), None)

    def serve(self, port: int, address: str = "0.0.0.0"):
        """Serve ``/metrics`` on ``port`` (0: a free one); returns the HTTP server (its
        ``server_address`` holds the bound port, ``shutdown()`` stops it)."""
        server, _ = start_http_server(port, addr=address, registry=self.registry)
        return server


def _remember(phases: dict[tuple[str, str], str], key: tuple[str, str], phase: str | None) -> None:
    if phase is None:
        phases.pop(key, None)
    else:
        phases[key] = phase


METRICS = Metrics()
