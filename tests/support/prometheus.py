"""A real Pushgateway and a real Prometheus server (Debian's packages, installed by
``.ci/install-services``), each started on a free loopback port with its files in a temp folder.

Without the binaries a test is skipped, except under CI (``CI=true``), where they must exist."""
from __future__ import annotations

import re
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from hudictl import local_prometheus
from hudictl.local_prometheus import LocalService
from hudictl.local_prometheus import api as api, query as query      # re-exported for the tests
from tests.support.services import free_port, not_installed

PUSHGATEWAY_NAMES = ("prometheus-pushgateway", "pushgateway")    # Debian's name, upstream's name


def binary(names: tuple[str, ...]) -> str:
    """The first of ``names`` on PATH; skips the test when none is (fails under CI)."""
    found = local_prometheus.find(names)
    if found is None:
        not_installed(f"{names[0]} is not installed; run .ci/install-services")
    return found


def start_pushgateway(workdir: Path) -> LocalService:
    port = free_port()
    return local_prometheus.start_service("pushgateway", [binary(PUSHGATEWAY_NAMES),
                                                          f"--web.listen-address=127.0.0.1:{port}"], port, workdir)


def start_prometheus(workdir: Path, scrape: dict[str, str], honor_labels: tuple[str, ...] = (),
                     interval_s: float = 0.5, scrape_configs: tuple[dict, ...] = (),
                     rule_groups: tuple[dict, ...] = ()) -> LocalService:
    """Prometheus scraping each ``job name -> host:port`` of ``scrape``; the jobs named in
    ``honor_labels`` (a Pushgateway's) keep the pushed ``job`` labels. ``scrape_configs`` are
    further jobs as written (e.g. from ``monitor_scrape_config``); ``rule_groups`` are recording and
    alerting rule groups it evaluates (a PrometheusRule's ``spec.groups``)."""
    binary(local_prometheus.PROMETHEUS_NAMES)
    config = {"global": {"scrape_interval": f"{int(interval_s * 1000)}ms",
                         "evaluation_interval": f"{int(interval_s * 1000)}ms"},
              "scrape_configs": [{"job_name": job, "honor_labels": job in honor_labels,
                                  "static_configs": [{"targets": [target]}]}
                                 for job, target in scrape.items()] + list(scrape_configs)}
    return local_prometheus.start(workdir, free_port(), config, rule_groups)


def samples(url: str) -> dict[tuple[str, frozenset], float]:
    """The samples of a text exposition (``/metrics``), keyed by name and label set."""
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


# --- the Prometheus operator's monitors, without Kubernetes -------------------------------------------
def k8s_label_name(name: str) -> str:
    """A Kubernetes label name as service discovery spells it in ``__meta_*`` labels."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def monitor_scrape_config(monitor: dict, targets: dict[str, dict[str, str]]) -> dict:
    """The scrape job the Prometheus operator generates for a rendered PodMonitor or ServiceMonitor
    (its first endpoint), with Kubernetes service discovery replaced by static targets, each
    ``host:port`` carrying the ``__meta_kubernetes_*`` labels discovery would give it. As the
    operator does: keep only targets whose labels match the selector and whose port has the
    endpoint's name; set namespace, pod, container (and service), job and endpoint; then apply the
    monitor's own relabelings. No cluster can run here, so this is how the monitor's selection and
    labels meet a real Prometheus."""
    kind, spec = monitor["kind"], monitor["spec"]
    pod = kind == "PodMonitor"
    endpoint = (spec["podMetricsEndpoints"] if pod else spec["endpoints"])[0]
    owner = "pod" if pod else "service"
    relabel = []
    for name, value in spec["selector"].get("matchLabels", {}).items():
        label = k8s_label_name(name)
        relabel.append({"action": "keep", "regex": f"({re.escape(value)});true",
                        "source_labels": [f"__meta_kubernetes_{owner}_label_{label}",
                                          f"__meta_kubernetes_{owner}_labelpresent_{label}"]})
    port_label = "__meta_kubernetes_pod_container_port_name" if pod else "__meta_kubernetes_endpoint_port_name"
    relabel.append({"action": "keep", "source_labels": [port_label], "regex": endpoint["port"]})
    copies = {"namespace": "__meta_kubernetes_namespace", "pod": "__meta_kubernetes_pod_name",
              "container": "__meta_kubernetes_pod_container_name"}
    if not pod:
        copies["service"] = "__meta_kubernetes_service_name"
    relabel += [{"source_labels": [source], "target_label": label} for label, source in copies.items()]
    relabel.append({"target_label": "job", "replacement": f"{monitor['metadata']['namespace']}/"
                    f"{monitor['metadata']['name']}"} if pod else
                   {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job"})
    relabel.append({"target_label": "endpoint", "replacement": endpoint["port"]})
    relabel += [{_SNAKE.get(key, key): value for key, value in rule.items()}
                for rule in endpoint.get("relabelings", ())]
    return {"job_name": f"{kind.lower()}/{monitor['metadata']['namespace']}/{monitor['metadata']['name']}/0",
            "honor_labels": bool(endpoint.get("honorLabels", False)),
            "metrics_path": endpoint.get("path", "/metrics"),
            "static_configs": [{"targets": [target], "labels": meta} for target, meta in targets.items()],
            "relabel_configs": relabel}


_SNAKE = {"sourceLabels": "source_labels", "targetLabel": "target_label"}


def discovered_pod(namespace: str, pod: str, container: str, labels: dict[str, str], port_name: str = "",
                   service: dict | None = None) -> dict[str, str]:
    """The ``__meta_kubernetes_*`` labels Kubernetes service discovery gives a pod's port (its
    ``service``'s too, when found through one: role endpoints)."""
    meta = {"__meta_kubernetes_namespace": namespace, "__meta_kubernetes_pod_name": pod,
            "__meta_kubernetes_pod_container_name": container,
            "__meta_kubernetes_pod_container_port_name": port_name}
    meta.update(_labels("pod", labels))
    if service is not None:
        meta["__meta_kubernetes_service_name"] = service["metadata"]["name"]
        meta["__meta_kubernetes_endpoint_port_name"] = port_name
        meta.update(_labels("service", service["metadata"].get("labels", {})))
    return meta


def _labels(owner: str, labels: dict[str, str]) -> dict[str, str]:
    return {key: value for name, label in labels.items() for key, value in (
        (f"__meta_kubernetes_{owner}_label_{k8s_label_name(name)}", label),
        (f"__meta_kubernetes_{owner}_labelpresent_{k8s_label_name(name)}", "true"))}


def exported_series_names() -> set[str]:
    """Every series name the operator and the streamer export: counters with ``_total``,
    histograms as ``_bucket``, ``_sum`` and ``_count``, read from their registries."""
    from hudi_jobs.keys import metrics as K
    from hudi_jobs.metrics import MetricsSettings, StreamerMetrics
    from hudi_operator.metrics import Metrics

    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}
    with StreamerMetrics(MetricsSettings(K.PROMETHEUS, prometheus_port=0), "t", "/t") as streamer:
        families = [*Metrics().registry.collect(), *streamer.registry.collect()]
    return {family.name + suffix for family in families for suffix in suffixes.get(family.type, ("",))}
