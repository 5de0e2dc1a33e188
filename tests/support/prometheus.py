"""A real Pushgateway and a real Prometheus server (Debian's packages, installed by
``.ci/install-services``), each started on a free loopback port with its files in a temp folder.

Without the binaries a test is skipped, except under CI (``CI=true``), where they must exist."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
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
                     interval_s: float = 0.5) -> Service:
    """Prometheus scraping each ``job name -> host:port`` of ``scrape``; the jobs named in
    ``honor_labels`` (a Pushgateway's) keep the pushed ``job`` labels."""
    exe, port = binary(PROMETHEUS_NAMES), free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    config = {"global": {"scrape_interval": f"{int(interval_s * 1000)}ms",
                         "evaluation_interval": f"{int(interval_s * 1000)}ms"},
              "scrape_configs": [{"job_name": job, "honor_labels": job in honor_labels,
                                  "static_configs": [{"targets": [target]}]}
                                 for job, target in scrape.items()]}
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


def query(prometheus: Service, promql: str) -> list[dict]:
    """The instant vector Prometheus answers for ``promql`` (``/api/v1/query``)."""
    url = f"{prometheus.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as response:
        answer = json.load(response)
    assert answer["status"] == "success", answer
    return answer["data"]["result"]
