"""The streamer's metrics in Prometheus form, pushed to a Pushgateway (a run-once job is gone
before any scrape) or served for scraping (a long-running continuous streamer).

Reporting never stops ingestion: a Pushgateway that cannot be reached is logged and counted in
``push_failures``, and the next push carries everything again since counters are cumulative.
"""
from __future__ import annotations

import datetime as dt
import logging
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    delete_from_gateway,
    pushadd_to_gateway,
    start_http_server,
)

from hudi_engine.api import parse_instant_time
from hudi_engine.config import TIMELINE_TIMEZONE, ConfigProperty, HoodieConfig
from hudi_engine.errors import HoodieConfigError

from .keys import metrics as K

log = logging.getLogger(__name__)

SUPPORTED_REPORTERS = (K.PUSHGATEWAY, K.PROMETHEUS)
PUSH_TIMEOUT_S = 5.0               # a slow gateway delays a batch by at most this
# Spark batches and table services take seconds to an hour, not milliseconds.
DURATION_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
# Labels the metrics use themselves, or that the Pushgateway and histograms own.
RESERVED_LABELS = ("table", "kind", "action", "job", "le")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


@dataclass(frozen=True)
class MetricsSettings:
    reporter: str                  # K.PUSHGATEWAY or K.PROMETHEUS
    labels: dict[str, str] = field(default_factory=dict)
    gateway: str = ""              # host:port, or an https URL
    job_name: str = ""
    report_period_s: int = 30
    delete_on_shutdown: bool = True
    prometheus_port: int = 9090


def parse_labels(text: str) -> dict[str, str]:
    """``k1:v1,k2:v2`` (the value may hold further colons) as a dict of Prometheus labels."""
    labels: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, colon, value = item.partition(":")
        name, value = name.strip(), value.strip()
        where = f"{K.PUSHGATEWAY_LABELS.key}={text!r}"
        if not colon or not value:
            raise HoodieConfigError(f"{where}: label {item!r} has no value; write each label as key:value")
        if not _LABEL_NAME.fullmatch(name) or name.startswith("__"):
            raise HoodieConfigError(f"{where}: {name!r} is not a Prometheus label name; use letters, "
                                    "digits and underscores, not starting with a digit or '__'")
        if name in RESERVED_LABELS:
            raise HoodieConfigError(f"{where}: the label {name!r} is set by the streamer or the "
                                    f"Pushgateway; rename it (reserved: {', '.join(RESERVED_LABELS)})")
        if name in labels:
            raise HoodieConfigError(f"{where}: the label {name!r} is given twice "
                                    f"({labels[name]!r} and {value!r}); keep one")
        labels[name] = value
    return labels


def metrics_settings(props: Mapping[str, str], table_name: str) -> MetricsSettings | None:
    """The reporter the options ask for, or None when metrics are off."""
    cfg = HoodieConfig(props)
    if not cfg.get(K.METRICS_ON):
        return None
    reporter = cfg.get_str(K.REPORTER_TYPE).upper()
    if reporter not in SUPPORTED_REPORTERS:
        how = "is not set (Hudi's default is GRAPHITE)" if not cfg.contains(K.REPORTER_TYPE) else \
            f"={reporter} is not supported"
        raise HoodieConfigError(f"{K.REPORTER_TYPE.key} {how}; with {K.METRICS_ON.key}=true set it to "
                                f"one of {', '.join(SUPPORTED_REPORTERS)}")
    labels = parse_labels(cfg.get_str(K.PUSHGATEWAY_LABELS) or "")
    if reporter == K.PROMETHEUS:
        return MetricsSettings(K.PROMETHEUS, labels, prometheus_port=_port(cfg, K.PROMETHEUS_PORT, 0))
    period = cfg.get(K.PUSHGATEWAY_REPORT_PERIOD)
    if period <= 0:
        raise HoodieConfigError(f"{K.PUSHGATEWAY_REPORT_PERIOD.key}={period} must be a positive "
                                "number of seconds")
    return MetricsSettings(
        K.PUSHGATEWAY, labels,
        gateway=gateway_address(cfg.get_str(K.PUSHGATEWAY_HOST), _port(cfg, K.PUSHGATEWAY_PORT, 1)),
        job_name=pushgateway_job_name(cfg.get_str(K.PUSHGATEWAY_JOB_NAME) or "", table_name,
                          cfg.get(K.PUSHGATEWAY_RANDOM_JOB_NAME_SUFFIX)),
        report_period_s=period,
        delete_on_shutdown=cfg.get(K.PUSHGATEWAY_DELETE_ON_SHUTDOWN))


def gateway_address(host: str, port: int) -> str:
    """Like Hudi, port 443 means https; anything else is plain http."""
    return f"https://{host}:{port}" if port == 443 else f"{host}:{port}"


def pushgateway_job_name(configured: str, table_name: str, random_suffix: bool) -> str:
    name = configured.strip() or f"hudi-streamer-{table_name}"
    return f"{name}-{random.getrandbits(48):012x}" if random_suffix else name


def commit_epoch(commit_instant: str | None, commit_time_epoch: float | None, utc: bool) -> float | None:
    """Epoch seconds of a commit: as given, else read from its instant time."""
    if commit_time_epoch is not None or not commit_instant:
        return commit_time_epoch
    moment = parse_instant_time(commit_instant)
    if utc:
        return moment.replace(tzinfo=dt.timezone.utc).timestamp()
    return moment.timestamp()


def _port(cfg: HoodieConfig, prop: ConfigProperty, lowest: int) -> int:
    port = cfg.get(prop)
    if not lowest <= port <= 65535:
        raise HoodieConfigError(f"{prop.key}={port} is not a port; use {lowest}..65535")
    return port


class StreamerMetrics:
    """What the streamer reports after each round. Built disabled when ``hoodie.metrics.on`` is
    false: every call then returns at once and nothing is registered, pushed or served."""

    def __init__(self, settings: MetricsSettings | None, table_name: str, base_path: str,
                 utc_timeline: bool = False):
        self.settings, self.table_name, self.base_path = settings, table_name, base_path
        self.utc_timeline = utc_timeline
        self.push_failures = 0
        self.port: int | None = None       # the served endpoint's bound port (PROMETHEUS)
        self.registry: CollectorRegistry | None = None
        self._closed = False
        if settings is None:
            return
        self.registry = CollectorRegistry()
        self._labels = {"table": table_name, **settings.labels}
        self._define_metrics(list(self._labels))
        self._server = self._stop = self._pusher = None
        self._push_lock = threading.Lock()
        if settings.reporter == K.PROMETHEUS:
            self._serve(settings.prometheus_port)
        else:
            self._stop = threading.Event()
            self._pusher = threading.Thread(target=self._push_every_period, daemon=True,
                                            name=f"hudi-metrics-push-{table_name}")
            self._pusher.start()

    @classmethod
    def from_props(cls, props: Mapping[str, str], table_name: str, base_path: str) -> StreamerMetrics:
        utc = (HoodieConfig(props).get_str(TIMELINE_TIMEZONE) or "").upper() == "UTC"
        return cls(metrics_settings(props, table_name), table_name, base_path, utc)

    @property
    def enabled(self) -> bool:
        return self.settings is not None

    @property
    def job_name(self) -> str | None:
        """The Pushgateway job the metrics are grouped under (with its random suffix, if any)."""
        return self.settings.job_name if self.settings and self.settings.reporter == K.PUSHGATEWAY else None

    def _define_metrics(self, names: list[str]) -> None:
        def counter(name: str, doc: str, extra: tuple[str, ...] = ()) -> Counter:
            return Counter(name, doc, names + list(extra), registry=self.registry)

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, names, registry=self.registry)

        def histogram(name: str, doc: str, extra: tuple[str, ...] = ()) -> Histogram:
            return Histogram(name, doc, names + list(extra), registry=self.registry, buckets=DURATION_BUCKETS)

        own = self._labels
        # Plain counters and the batch histogram exist from the start (at zero); the gauges appear
        # once there is a value, so an unknown lag is absent rather than a false 0.
        self._records_read = counter("hudi_streamer_records_read_total",
                                     "Records fetched from the source.").labels(**own)
        self._records_written = counter("hudi_streamer_records_written_total",
                                        "Records written to the table.").labels(**own)
        self._records_errored = counter("hudi_streamer_records_errored_total",
                                        "Records that went to the error table.").labels(**own)
        self._batches = counter("hudi_streamer_batches_total", "Batches processed.").labels(**own)
        self._no_data = counter("hudi_streamer_rounds_without_data_total",
                                "Rounds that found nothing new in the source.").labels(**own)
        self._failures = counter("hudi_streamer_batch_failures_total",
                                 "Batches that failed, by exception kind.", ("kind",))
        self._batch_duration = histogram("hudi_streamer_batch_duration_seconds",
                                         "Time to fetch, transform and write one batch.").labels(**own)
        self._lag_records = gauge("hudi_streamer_source_lag_records",
                                  "Records still waiting in the source after the last batch.")
        self._lag_seconds = gauge("hudi_streamer_source_lag_seconds",
                                  "Age of the oldest record still waiting in the source.")
        self._last_commit = gauge("hudi_streamer_last_commit_timestamp_seconds",
                                  "Epoch seconds of the last commit the streamer made.")
        self._last_batch = gauge("hudi_streamer_last_batch_records", "Records written by the last batch.")
        self._service_duration = histogram("hudi_streamer_table_service_duration_seconds",
                                           "Time a table service (compaction, clean...) took.", ("action",))

    def record_batch(self, *, records_read: int, records_written: int, records_errored: int,
                     duration_seconds: float, lag_records: int | None, lag_seconds: float | None,
                     commit_instant: str | None, commit_time_epoch: float | None) -> None:
        if not self.enabled:
            return
        own = self._labels
        self._records_read.inc(records_read)
        self._records_written.inc(records_written)
        self._records_errored.inc(records_errored)
        self._batches.inc()
        self._batch_duration.observe(duration_seconds)
        self._last_batch.labels(**own).set(records_written)
        if lag_records is not None:
            self._lag_records.labels(**own).set(lag_records)
        if lag_seconds is not None:
            self._lag_seconds.labels(**own).set(lag_seconds)
        epoch = commit_epoch(commit_instant, commit_time_epoch, self.utc_timeline)
        if epoch is not None:
            self._last_commit.labels(**own).set(epoch)
        self._push()

    def record_no_data(self) -> None:
        """Not pushed at once (such rounds come every few seconds): the periodic push carries it."""
        if self.enabled:
            self._no_data.inc()

    def record_failure(self, kind: str) -> None:
        """Pushed at once: a failing streamer may be about to exit."""
        if self.enabled:
            self._failures.labels(**self._labels, kind=kind).inc()
            self._push()

    def record_table_service(self, action: str, duration_seconds: float) -> None:
        if self.enabled:
            self._service_duration.labels(**self._labels, action=action).observe(duration_seconds)
            self._push()

    def close(self) -> None:
        """The final push (then the group's deletion, when configured), or the server's stop."""
        if not self.enabled or self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            return
        self._stop.set()
        self._pusher.join()
        self._push()
        if self.settings.delete_on_shutdown:
            self._talk_to_gateway("delete the metrics group from", lambda: delete_from_gateway(
                self.settings.gateway, job=self.settings.job_name, grouping_key=self.settings.labels,
                timeout=PUSH_TIMEOUT_S))

    def __enter__(self) -> StreamerMetrics:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _serve(self, port: int) -> None:
        try:
            self._server, _ = start_http_server(port, registry=self.registry)
        except OSError as exc:
            raise HoodieConfigError(
                f"cannot serve the metrics of {self.table_name} ({self.base_path}) on port {port}: {exc}; "
                f"set {K.PROMETHEUS_PORT.key} to a free port, or 0 to pick one") from exc
        self.port = self._server.server_address[1]
        log.info("serving the metrics of %s on http://0.0.0.0:%d/metrics", self.table_name, self.port)

    def _push(self) -> None:
        if self.settings.reporter == K.PUSHGATEWAY:
            self._talk_to_gateway("push metrics to", lambda: pushadd_to_gateway(
                self.settings.gateway, job=self.settings.job_name, registry=self.registry,
                grouping_key=self.settings.labels, timeout=PUSH_TIMEOUT_S))

    def _push_every_period(self) -> None:
        while not self._stop.wait(self.settings.report_period_s):
            self._push()

    def _talk_to_gateway(self, what: str, call: Callable[[], None]) -> None:
        with self._push_lock:
            try:
                call()
            except OSError as exc:     # refused, timed out, or an HTTP error status
                self.push_failures += 1
                log.warning("could not %s the Pushgateway at %s (job %s, table %s at %s): %s; "
                            "ingestion goes on", what, self.settings.gateway, self.settings.job_name,
                            self.table_name, self.base_path, exc)
