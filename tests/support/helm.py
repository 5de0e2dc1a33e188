"""The real ``helm`` binary (installed by ``.ci/install-helm``, which ``make test`` runs) driving the
project's charts: lint, template, and an umbrella chart with its local subcharts built in."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "charts"


def helm_binary() -> str:
    path = Path(os.environ.get("HELM_BIN", ROOT / ".cache" / "tools" / "helm"))
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"no helm at {path}: run `bash .ci/install-helm` (make test does)")
    return str(path)


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([helm_binary(), *args], capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed:\n{done.stderr}")
    return done


def set_args(values: dict[str, str] | None) -> list[str]:
    return [arg for key, value in (values or {}).items() for arg in ("--set", f"{key}={value}")]


def template(chart: Path, values: dict[str, str] | None = None, namespace: str = "platform") -> list[dict[str, Any]]:
    """The objects ``helm template`` renders (CRDs included), as dicts."""
    done = helm("template", "release", str(chart), "--namespace", namespace, "--include-crds", *set_args(values))
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def refusal(chart: Path, values: dict[str, str]) -> str:
    """What helm says when values.schema.json refuses ``values`` (fails if it renders)."""
    done = helm("template", "release", str(chart), *set_args(values), check=False)
    assert done.returncode != 0, f"{values} rendered, but should have been refused"
    return done.stderr


def umbrella_with_local_subcharts(dest: Path) -> Path:
    """A copy of charts/hudi-lakehouse whose dependencies are only the project's own charts, built
    in with ``helm dependency build``. The third-party charts (Spark operator, Strimzi,
    kube-prometheus-stack) cannot be downloaded here, so they are left out of what is rendered."""
    chart = dest / "hudi-lakehouse"
    shutil.copytree(CHARTS / "hudi-lakehouse", chart)
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    meta["dependencies"] = [{**dep, "repository": f"file://{CHARTS / dep['name']}"}
                            for dep in meta["dependencies"] if dep["repository"].startswith("file://")]
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    helm("dependency", "build", str(chart))
    return chart
