"""Streamer metrics against a real Pushgateway and a real Prometheus server (Debian's binaries,
started by the tests on free loopback ports); option parsing is checked first without servers."""
from __future__ import annotations

import datetime as dt
import socket
import time
import urllib.request

import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.metrics import StreamerMetrics, commit_epoch, metrics_settings, parse_labels
from tests.support.prometheus import query, samples, start_prometheus, start_pushgateway
from tests.support.services import free_port

BASE_PATH = "/lake/orders"
COMMIT_EPOCH = 1_700_000_000.0


def value(found: dict, name: str, **labels: str) -> float | None:
    """The one sample named ``name`` whose labels include ``labels``; None when there is none."""
    matches = [v for (n, ls), v in found.items() if n == name and set(labels.items()) <= ls]
    assert len(matches) <= 1, f"{len(matches)} samples of {name} match {labels}"
    return matches[0] if matches else None


def bucket(found: dict, upper: float, name: str, **labels: str) -> float | None:
    """A histogram bucket by its bound (Python writes le="5.0", Go's Pushgateway le="5")."""
    les = {ls for (n, ls) in found if n == f"{name}_bucket" and set(labels.items()) <= ls
           and float(dict(ls)["le"]) == upper}
    return value(found, f"{name}_bucket", le=dict(next(iter(les)))["le"], **labels) if les else None


def two_batches(metrics: StreamerMetrics) -> None:
    metrics.record_batch(records_read=10, records_written=9, records_errored=1, duration_seconds=2.0,
                         lag_records=100, lag_seconds=30.0, commit_instant="20240101000000000",
                         commit_time_epoch=COMMIT_EPOCH - 60)
    metrics.record_batch(records_read=5, records_written=5, records_errored=0, duration_seconds=4.0,
                         lag_records=20, lag_seconds=3.5, commit_instant="20240101000100000",
                         commit_time_epoch=COMMIT_EPOCH)


def assert_two_batches(found: dict, **labels: str) -> None:
    expected = {"hudi_streamer_records_read_total": 15, "hudi_streamer_records_written_total": 14,
                "hudi_streamer_records_errored_total": 1, "hudi_streamer_batches_total": 2,
                "hudi_streamer_last_batch_records": 5, "hudi_streamer_source_lag_records": 20,
                "hudi_streamer_source_lag_seconds": 3.5,
                "hudi_streamer_last_commit_timestamp_seconds": COMMIT_EPOCH,
                "hudi_streamer_batch_duration_seconds_count": 2,
                "hudi_streamer_batch_duration_seconds_sum": 6.0}
    assert {name: value(found, name, **labels) for name in expected} == expected
    assert bucket(found, 1.0, "hudi_streamer_batch_duration_seconds", **labels) == 0
    assert bucket(found, 2.5, "hudi_streamer_batch_duration_seconds", **labels) == 1
    assert bucket(found, 5.0, "hudi_streamer_batch_duration_seconds", **labels) == 2


def gateway_props(gateway_port: int, **extra: str) -> dict[str, str]:
    return {"hoodie.metrics.on": "true", "hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY",
            "hoodie.metrics.pushgateway.host": "127.0.0.1",
            "hoodie.metrics.pushgateway.port": str(gateway_port), **extra}


# --- options, without servers ---------------------------------------------------------------------

def test_report_labels_parse_as_hudi_writes_them():
    assert parse_labels("") == {}
    assert parse_labels(" env:prod , team:data:eng,") == {"env": "prod", "team": "data:eng"}


@pytest.mark.parametrize("text, complaint", [
    ("env:prod,env:dev", "given twice"),
    ("env", "has no value"),
    ("env:", "has no value"),
    ("1env:x", "not a Prometheus label name"),
    ("__env:x", "not a Prometheus label name"),
    ("table:x", "set by the streamer"),
    ("job:x", "set by the streamer"),
])
def test_bad_report_labels_are_rejected_with_the_option_named(text, complaint):
    with pytest.raises(HoodieConfigError, match=complaint) as error:
        parse_labels(text)
    assert "hoodie.metrics.pushgateway.report.labels" in str(error.value)


def test_metrics_are_off_by_default_and_calls_do_nothing():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    # Reporter options without hoodie.metrics.on: nothing may be built, served or pushed.
    metrics = StreamerMetrics.from_props({"hoodie.metrics.reporter.type": "PROMETHEUS",
                                          "hoodie.metrics.prometheus.port": str(port)}, "orders", BASE_PATH)
    with taken, metrics:
        assert not metrics.enabled and metrics.registry is None and metrics.port is None
        two_batches(metrics)
        metrics.record_no_data()
        metrics.record_failure("IOError")
        metrics.record_table_service("compaction", 1.0)
        assert metrics.push_failures == 0


@pytest.mark.parametrize("reporter, complaint", [
    (None, "is not set .Hudi's default is GRAPHITE."),
    ("GRAPHITE", "use one of PROMETHEUS_PUSHGATEWAY, PROMETHEUS"),
    ("JMX", "use one of PROMETHEUS_PUSHGATEWAY, PROMETHEUS"),
])
def test_unsupported_reporters_are_rejected_listing_the_supported_ones(reporter, complaint):
    props = {"hoodie.metrics.on": "true"}
    if reporter:
        props["hoodie.metrics.reporter.type"] = reporter
    with pytest.raises(HoodieConfigError, match=complaint) as error:
        metrics_settings(props, "orders")
    assert "hoodie.metrics.reporter.type" in str(error.value)


def test_pushgateway_settings_follow_hudis_defaults():
    settings = metrics_settings({"hoodie.metrics.on": "true",
                                 "hoodie.metrics.reporter.type": "prometheus_pushgateway"}, "orders")
    assert (settings.reporter, settings.gateway, settings.report_period_s, settings.delete_on_shutdown,
            settings.labels) == ("PROMETHEUS_PUSHGATEWAY", "localhost:9091", 30, True, {})
    assert settings.job_name.startswith("hudi-streamer-orders-")
    assert settings.job_name != metrics_settings({"hoodie.metrics.on": "true", "hoodie.metrics.reporter.type":
                                                  "PROMETHEUS_PUSHGATEWAY"}, "orders").job_name
    fixed = metrics_settings(gateway_props(443, **{"hoodie.metrics.pushgateway.job.name": "ingest",
                                                   "hoodie.metrics.pushgateway.random.job.name.suffix": "false"}),
                             "orders")
    assert (fixed.job_name, fixed.gateway) == ("ingest", "https://127.0.0.1:443")
    served = metrics_settings({"hoodie.metrics.on": "true", "hoodie.metrics.reporter.type": "PROMETHEUS"}, "o")
    assert (served.reporter, served.prometheus_port) == ("PROMETHEUS", 9090)


@pytest.mark.parametrize("key, bad", [
    ("hoodie.metrics.pushgateway.report.period.seconds", "0"),
    ("hoodie.metrics.pushgateway.port", "0"),
    ("hoodie.metrics.pushgateway.port", "70000"),
    ("hoodie.metrics.pushgateway.port", "ninety"),
    ("hoodie.metrics.on", "yes"),
])
def test_bad_values_name_their_option(key, bad):
    with pytest.raises(HoodieConfigError, match=key.replace(".", r"\.")):
        metrics_settings(gateway_props(9091, **{key: bad}), "orders")


def test_commit_time_falls_back_to_the_instant():
    assert commit_epoch("20240102030405678", 5.0, utc=True) == 5.0
    assert commit_epoch(None, None, utc=True) is None
    expected = dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc).timestamp()
    assert commit_epoch("20240102030405678", None, utc=True) == pytest.approx(expected)
    assert commit_epoch("20240102030405678", None, utc=False) == pytest.approx(
        dt.datetime(2024, 1, 2, 3, 4, 5, 678000).timestamp())


# --- a real Pushgateway ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pushgateway(tmp_path_factory):
    service = start_pushgateway(tmp_path_factory.mktemp("pushgateway"))
    yield service
    service.stop()


def test_pushgateway_holds_each_batch_with_table_and_report_labels(pushgateway):
    props = gateway_props(pushgateway.port, **{"hoodie.metrics.pushgateway.report.labels": "env:test,team:data",
                                               "hoodie.metrics.pushgateway.delete.on.shutdown": "false"})
    with StreamerMetrics.from_props(props, "orders", BASE_PATH) as metrics:
        labels = {"job": metrics.job_name, "table": "orders", "env": "test", "team": "data"}
        metrics.record_batch(records_read=3, records_written=3, records_errored=0, duration_seconds=1.0,
                             lag_records=None, lag_seconds=None, commit_instant="20240101000000000",
                             commit_time_epoch=None)
        after_one = samples(f"{pushgateway.url}/metrics")
        assert value(after_one, "hudi_streamer_records_written_total", **labels) == 3
        assert value(after_one, "hudi_streamer_source_lag_records", **labels) is None   # unknown, not 0

        metrics.record_batch(records_read=7, records_written=6, records_errored=1, duration_seconds=2.0,
                             lag_records=40, lag_seconds=12.0, commit_instant="20240101000100000",
                             commit_time_epoch=COMMIT_EPOCH)
        metrics.record_failure("HoodieWriteError")
        metrics.record_table_service("compaction", 7.0)
        found = samples(f"{pushgateway.url}/metrics")
        assert metrics.push_failures == 0
    assert value(found, "hudi_streamer_records_read_total", **labels) == 10
    assert value(found, "hudi_streamer_records_written_total", **labels) == 9
    assert value(found, "hudi_streamer_records_errored_total", **labels) == 1
    assert value(found, "hudi_streamer_batches_total", **labels) == 2
    assert value(found, "hudi_streamer_last_batch_records", **labels) == 6
    assert value(found, "hudi_streamer_source_lag_records", **labels) == 40
    assert value(found, "hudi_streamer_source_lag_seconds", **labels) == 12.0
    assert value(found, "hudi_streamer_last_commit_timestamp_seconds", **labels) == COMMIT_EPOCH
    assert value(found, "hudi_streamer_batch_duration_seconds_count", **labels) == 2
    assert value(found, "hudi_streamer_batch_duration_seconds_sum", **labels) == 3.0
    assert value(found, "hudi_streamer_batch_failures_total", kind="HoodieWriteError", **labels) == 1
    assert value(found, "hudi_streamer_table_service_duration_seconds_sum", action="compaction", **labels) == 7.0
    # Kept after close (delete.on.shutdown=false), with the final push's values.
    assert value(samples(f"{pushgateway.url}/metrics"), "hudi_streamer_batches_total", **labels) == 2


def test_delete_on_shutdown_removes_the_jobs_group(pushgateway):
    metrics = StreamerMetrics.from_props(gateway_props(pushgateway.port), "orders", BASE_PATH)
    two_batches(metrics)
    assert_two_batches(samples(f"{pushgateway.url}/metrics"), job=metrics.job_name)
    metrics.close()
    left = samples(f"{pushgateway.url}/metrics")
    assert [key for key in left if ("job", metrics.job_name) in key[1]] == []
    assert metrics.push_failures == 0


def test_background_push_carries_rounds_without_data(pushgateway):
    props = gateway_props(pushgateway.port, **{"hoodie.metrics.pushgateway.report.period.seconds": "1"})
    with StreamerMetrics.from_props(props, "orders", BASE_PATH) as metrics:
        metrics.record_no_data()
        metrics.record_no_data()
        deadline = time.monotonic() + 5
        seen = None
        while seen != 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            seen = value(samples(f"{pushgateway.url}/metrics"), "hudi_streamer_rounds_without_data_total",
                         job=metrics.job_name, table="orders")
        assert seen == 2


def test_a_pushgateway_that_is_down_does_not_fail_ingestion():
    """No server at all on the port: every push is refused."""
    metrics = StreamerMetrics.from_props(gateway_props(free_port()), "orders", BASE_PATH)
    two_batches(metrics)
    metrics.record_failure("IOError")
    metrics.close()
    # two batches + the failure + the final push + the delete
    assert metrics.push_failures == 5


# --- the served endpoint, and a real Prometheus server ---------------------------------------------

def served_props(**extra: str) -> dict[str, str]:
    return {"hoodie.metrics.on": "true", "hoodie.metrics.reporter.type": "PROMETHEUS",
            "hoodie.metrics.prometheus.port": "0", **extra}


def test_served_endpoint_answers_scrapes_until_closed():
    with StreamerMetrics.from_props(served_props(**{"hoodie.metrics.pushgateway.report.labels": "env:test"}),
                                    "orders", BASE_PATH) as metrics:
        two_batches(metrics)
        metrics.record_no_data()
        found = samples(f"http://127.0.0.1:{metrics.port}/metrics")
    assert value(found, "hudi_streamer_rounds_without_data_total", table="orders", env="test") == 1
    assert_two_batches(found, table="orders", env="test")
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{metrics.port}/metrics", timeout=2)


def test_a_taken_port_is_reported_with_its_option():
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(HoodieConfigError, match=r"hoodie\.metrics\.prometheus\.port"):
            StreamerMetrics.from_props(served_props(**{"hoodie.metrics.prometheus.port": str(port)}),
                                       "orders", BASE_PATH)


def test_prometheus_scrapes_the_served_endpoint_and_the_pushgateway(pushgateway, tmp_path):
    served = StreamerMetrics.from_props(served_props(), "orders_served", BASE_PATH)
    pushed = StreamerMetrics.from_props(gateway_props(pushgateway.port), "orders_pushed", BASE_PATH)
    prometheus = start_prometheus(tmp_path, {"hudi-served": f"127.0.0.1:{served.port}",
                                             "pushgateway": pushgateway.address},
                                  honor_labels=("pushgateway",))
    try:
        two_batches(served)
        two_batches(pushed)
        deadline, answer = time.monotonic() + 15, {}
        while len(answer) < 2 and time.monotonic() < deadline:
            time.sleep(0.25)
            answer = {r["metric"]["table"]: r for r in query(prometheus, "hudi_streamer_records_written_total")
                      if r["metric"].get("table") in ("orders_served", "orders_pushed")}
        assert set(answer) == {"orders_served", "orders_pushed"}, answer
        assert answer["orders_served"]["metric"]["job"] == "hudi-served"
        assert answer["orders_pushed"]["metric"]["job"] == pushed.job_name
        assert [float(answer[t]["value"][1]) for t in ("orders_served", "orders_pushed")] == [14.0, 14.0]
    finally:
        prometheus.stop()
        served.close()
        pushed.close()
