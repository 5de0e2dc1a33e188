"""A real Pushgateway and a real Prometheus server (Debian's packages, installed by
``.ci/install-services``), each started on a free loopback port with its files in a temp folder.

Without the binaries a test is skipped, except under CI (``CI=true``), where they must exist."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.support.services import free_port, not_installed, stop_group

PUSHGATEWAY_NAMES = ("prometheus-pushgateway", "pushgateway")    # Debian's name, upstream's name
PROMETHEUS_NAMES = ("prometheus",)
START_TIMEOUT_S = 30


def binary(names: tuple[str, ...]) -> str:
    """The first of ``names`` on PATH; skips the test when none is (fails under CI)."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    not_installed(f"{names[0]} is not installed; run .ci/install-services")


@dataclass
class Service:
    name: str
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.log.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{self.name} was not ready on {self.port} within {START_TIMEOUT_S}s; see {self.log}")

    def stop(self) -> None:
        stop_group(self.process, timeout_s=10)


def _start(name: str, command: list[str], port: int, workdir: Path) -> Service:
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"{name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=workdir,
                                   start_new_session=True)
    service = Service(name, process, port, log)
    try:
        service.wait_until_ready()
    except Exception:
        service.stop()
        raise
    return service


def start_pushgateway(workdir: Path) -> Service:
    port = free_port()
    return _start("pushgateway", [binary(PUSHGATEWAY_NAMES), f"--web.listen-address=127.0.0.1:{port}"],
                  port, workdir)


def start_prometheus(workdir: Path, scrape: dict[str, str], honor_labels: tuple[str, ...] = (),
                     interval_s: float = 0.5, scrape_configs: tuple[dict, ...] = (),
                     rule_groups: tuple[dict, ...] = ()) -> Service:
    """Prometheus scraping each ``job name -> host:port`` of ``scrape``; the jobs named in
    ``honor_labels`` (a Pushgateway's) keep the pushed ``job`` labels. ``scrape_configs`` are
    further jobs as written (e.g. from ``monitor_scrape_config``); ``rule_groups`` are recording and
    alerting rule groups it evaluates (a PrometheusRule's ``spec.groups``)."""
    exe, port = binary(PROMETHEUS_NAMES), free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    config = {"global": {"scrape_interval": f"{int(interval_s * 1000)}ms",
                         "evaluation_interval": f"{int(interval_s * 1000)}ms"},
              "scrape_configs": [{"job_name": job, "honor_labels": job in honor_labels,
                                  "static_configs": [{"targets": [target]}]}
                                 for job, target in scrape.items()] + list(scrape_configs)}
    if rule_groups:
        (workdir / "rules.yml").write_text(json.dumps({"groups": list(rule_groups)}))
        config["rule_files"] = [str(workdir / "rules.yml")]
    (workdir / "prometheus.yml").write_text(json.dumps(config))       # JSON is YAML
    return _start("prometheus", [exe, f"--config.file={workdir / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={workdir / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], port, workdir)


def samples(url: str) -> dict[tuple[str, frozenset], float]:
    """The samples of a text exposition (``/metrics``), keyed by name and label set."""
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def api(prometheus: Service, path: str, **params: str) -> dict:
    """Prometheus' JSON answer to ``/api/v1/<path>``, an error's too (``status``, ``error``)."""
    url = f"{prometheus.url}/api/v1/{path}?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:       # a bad query: 400 or 422 with the reason as JSON
        with error:
            return json.load(error)


def query(prometheus: Service, promql: str) -> list[dict]:
    """The instant vector Prometheus answers for ``promql`` (``/api/v1/query``)."""
    answer = api(prometheus, "query", query=promql)
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


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
