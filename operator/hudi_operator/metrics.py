"""Prometheus metrics of the operator, on a registry of its own (not the process-global default, so
nothing else's collectors leak into the endpoint): reconciliations by kind and result, pipelines
by phase, and each table's pending compactions and commit age (computed at scrape time, so the
age grows between reconciliations as it really does)."""
from __future__ import annotations

import time
from collections import Counter as _Tally
from typing import Iterator

from prometheus_client import CollectorRegistry, Counter, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

PIPELINE_PHASES = ("Pending", "Deploying", "Running", "Suspended", "Failed", "Succeeded", "Degraded")


class _State(Collector):
    """Gauges over what the last reconciliations saw, keyed by (namespace, name)."""

    def __init__(self) -> None:
        self.phases: dict[tuple[str, str], str] = {}
        self.tables: dict[tuple[str, str], tuple[int, float | None]] = {}   # pending compactions, commit epoch

    def collect(self) -> Iterator[Metric]:
        by_phase = GaugeMetricFamily("hudi_operator_pipelines", "HudiPipelines by phase.", labels=["phase"])
        counts = _Tally(self.phases.values())
        for phase in PIPELINE_PHASES:
            by_phase.add_metric([phase], counts.get(phase, 0))
        yield by_phase
        pending = GaugeMetricFamily("hudi_operator_table_pending_compactions",
                                    "Compactions requested and not yet completed.", labels=["namespace", "table"])
        age = GaugeMetricFamily("hudi_operator_table_last_commit_age_seconds",
                                "Seconds since the table's newest completed commit.", labels=["namespace", "table"])
        now = time.time()
        for (namespace, name), (compactions, committed) in sorted(self.tables.items()):
            pending.add_metric([namespace, name], compactions)
            if committed is not None:
                age.add_metric([namespace, name], max(now - committed, 0.0))
        yield pending
        yield age


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.reconciliations = Counter("hudi_operator_reconciliations", "Reconciliations by kind and result "
                                       "(ok, degraded, error).", ["kind", "result"], registry=self.registry)
        self._state = _State()
        self.registry.register(self._state)

    def reconciled(self, kind: str, result: str) -> None:
        self.reconciliations.labels(kind=kind, result=result).inc()

    def pipeline(self, namespace: str, name: str, phase: str | None) -> None:
        """Record a pipeline's phase; None forgets a deleted pipeline."""
        if phase is None:
            self._state.phases.pop((namespace, name), None)
        else:
            self._state.phases[(namespace, name)] = phase

    def table(self, namespace: str, name: str, pending_compactions: int | None = None,
              last_commit_epoch: float | None = None, forget: bool = False) -> None:
        if forget:
            self._state.tables.pop((namespace, name), None)
        elif pending_compactions is not None:
            self._state.tables[(namespace, name)] = (pending_compactions, last_commit_epoch)

    def serve(self, port: int) -> None:
        start_http_server(port, registry=self.registry)


METRICS = Metrics()
