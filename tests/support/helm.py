"""The real ``helm`` binary (installed by ``.ci/install-helm``, which ``make test`` runs) driving the
project's charts: lint, template, and the umbrella chart built with ALL its dependencies offline, as
``helm dependency build`` would: the project's charts packaged, and the third-party ones from the
vendored archives (``../shared/vendor/charts``, or ``$VENDORED_CHARTS``), which no machine here could
download."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "charts"
UMBRELLA = CHARTS / "hudi-lakehouse"


def vendored_charts() -> Path:
    return Path(os.environ.get("VENDORED_CHARTS", ROOT.parent / "shared" / "vendor" / "charts"))


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


# PyYAML resolves a plain `=` to YAML 1.1's "value" tag, which its safe constructor cannot build
# (kube-prometheus-stack's rules contain `- =`); Kubernetes' YAML reads it as the string "=".
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RenderLoader(_Loader):  # type: ignore[misc, valid-type]
    """The safe loader, reading the YAML 1.1 value indicator `=` as the string it is to Kubernetes."""


RenderLoader.add_constructor("tag:yaml.org,2002:value", yaml.SafeLoader.construct_yaml_str)


def load_all(text: str) -> list[dict[str, Any]]:
    """The non-empty documents of a multi-document YAML stream (a render), safely loaded."""
    return [doc for doc in yaml.load_all(text, Loader=RenderLoader) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The rendered objects of one kind."""
    return [o for o in objects if o["kind"] == kind]


def set_args(values: dict[str, str] | None) -> list[str]:
    return [arg for key, value in (values or {}).items() for arg in ("--set", f"{key}={value}")]


def template(chart: Path, values: dict[str, str] | None = None, namespace: str = "platform",
             values_files: tuple[Path, ...] = (), release: str = "release") -> list[dict[str, Any]]:
    """The objects ``helm template`` renders (CRDs included), as dicts."""
    return load_all(template_text(chart, values, namespace, values_files, release))


def template_text(chart: Path, values: dict[str, str] | None = None, namespace: str = "platform",
                  values_files: tuple[Path, ...] = (), release: str = "release") -> str:
    """What ``helm template`` prints (CRDs included)."""
    files = [arg for path in values_files for arg in ("--values", str(path))]
    return helm("template", release, str(chart), "--namespace", namespace, "--include-crds", *files,
                *set_args(values)).stdout


def refusal(chart: Path, values: dict[str, str], values_files: tuple[Path, ...] = ()) -> str:
    """What helm says when the chart refuses ``values`` (fails if it renders)."""
    files = [arg for path in values_files for arg in ("--values", str(path))]
    done = helm("template", "release", str(chart), *files, *set_args(values), check=False)
    assert done.returncode != 0, f"{values} rendered, but should have been refused"
    return done.stderr


def built_umbrella(dest: Path) -> Path:
    """A copy of charts/hudi-lakehouse under ``dest`` with every dependency in its charts/ folder, as
    ``helm dependency build`` leaves it: the project's charts packaged by ``helm package``, the
    third-party ones copied from the vendored archives of exactly the versions Chart.yaml pins."""
    chart = dest / "hudi-lakehouse"
    shutil.copytree(UMBRELLA, chart, ignore=shutil.ignore_patterns("charts", "Chart.lock"))
    (chart / "charts").mkdir()
    for dep in yaml.safe_load((chart / "Chart.yaml").read_text())["dependencies"]:
        if dep["repository"].startswith("file://"):
            local = (UMBRELLA / dep["repository"].removeprefix("file://")).resolve()
            assert yaml.safe_load((local / "Chart.yaml").read_text())["version"] == dep["version"], local
            helm("package", str(local), "--destination", str(chart / "charts"))
        else:
            archive = vendored_charts() / f"{dep['name']}-{dep['version']}.tgz"
            if not archive.is_file():
                raise FileNotFoundError(f"{archive} is missing: {dep['name']} {dep['version']} is what "
                                        f"Chart.yaml pins (see the vendored charts' README)")
            shutil.copy(archive, chart / "charts")
    return chart


@functools.cache
def vendored_crds() -> list[dict[str, Any]]:
    """The CustomResourceDefinitions the vendored third-party charts install (Prometheus operator's,
    Strimzi's, the Spark operator's): the schemas of kinds our charts render on their own, e.g. the
    operator chart's ServiceMonitor."""
    found = []
    for archive in sorted(vendored_charts().glob("*.tgz")):
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")         # a chart's own crds/ folder holds plain YAML
                if member.isfile() and parts[-2:-1] == ["crds"] and parts[-1].endswith((".yaml", ".yml")):
                    text = tar.extractfile(member).read().decode()
                    found += [d for d in load_all(text) if d.get("kind") == "CustomResourceDefinition"]
    return found
