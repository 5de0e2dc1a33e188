"""A Prometheus server of one's own on this machine (Debian's ``prometheus`` package), with its
config and data in a folder, on a loopback port: the demo lakehouse's monitoring, and the tests'
Prometheus and Pushgateway."""
from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .local_process import stop_group, wait_until

PROMETHEUS_NAMES = ("prometheus",)
INSTALL_HINT = "Prometheus is not installed: run `make services` (Debian's prometheus package)"
START_TIMEOUT_S = 30


def find(names: tuple[str, ...]) -> str | None:
    """The first of ``names`` on PATH."""
    return next((found for found in map(shutil.which, names) if found), None)


@dataclass
class LocalService:
    """A Prometheus-family server (Prometheus, Pushgateway): both answer ``/-/ready``."""
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
        def ready() -> bool:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as response:
                return response.status == 200

        wait_until(self.process, ready, f"{self.name} on port {self.port}", self.log, START_TIMEOUT_S, 0.1)

    def stop(self) -> None:
        stop_group(self.process, timeout_s=10)


def start_service(name: str, command: list[str], port: int, folder: Path) -> LocalService:
    """``command`` (which listens on ``port``) in ``folder``, its output in ``<name>.log``; returns once ready."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=folder, start_new_session=True)
    service = LocalService(name, process, port, log)
    try:
        service.wait_until_ready()
    except Exception:
        service.stop()
        raise
    return service


def start(folder: Path, port: int, config: dict[str, Any], rule_groups: tuple[dict, ...] = ()) -> LocalService:
    """Prometheus with ``config`` (prometheus.yml as a dict) and the recording and alerting
    ``rule_groups`` it evaluates, its data in ``folder``."""
    exe = find(PROMETHEUS_NAMES)
    if exe is None:
        raise RuntimeError(INSTALL_HINT)
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    config = dict(config)
    if rule_groups:
        (folder / "rules.yml").write_text(json.dumps({"groups": list(rule_groups)}))
        config["rule_files"] = [str(folder / "rules.yml")]
    (folder / "prometheus.yml").write_text(json.dumps(config))       # JSON is YAML
    return start_service("prometheus", [exe, f"--config.file={folder / 'prometheus.yml'}",
                                        f"--storage.tsdb.path={folder / 'data'}",
                                        f"--web.listen-address=127.0.0.1:{port}"], port, folder)


def api(prometheus: LocalService, path: str, **params: str) -> dict:
    """Prometheus' JSON answer to ``/api/v1/<path>``, an error's too (``status``, ``error``)."""
    url = f"{prometheus.url}/api/v1/{path}?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:       # a bad query: 400 or 422 with the reason as JSON
        with error:
            return json.load(error)


def query(prometheus: LocalService, promql: str) -> list[dict]:
    """The instant vector Prometheus answers for ``promql`` (``/api/v1/query``)."""
    answer = api(prometheus, "query", query=promql)
    if answer.get("status") != "success":
        raise RuntimeError(f"Prometheus refused {promql!r}: {answer.get('error', answer)}")
    return answer["data"]["result"]
