"""``hudictl render`` of every example, run as a user runs it, and every SparkApplication and
ScheduledSparkApplication it prints validated against the CRDs of the Spark operator release the
umbrella chart pins (2.5.2) — also with every pipeline suspended, since ``spec.suspend`` is what an
older release refused. The CRDs the validator reads are checked to be that release's."""
from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.helm import vendored_charts
from tests.support.spark_operator_schemas import CRD_DIR
from tests.support.spark_operator_schemas import errors as spark_operator_errors

ROOT = Path(__file__).resolve().parents[2]
API_GROUP = "lakehouse.hudi.dev/"
SPARK_KINDS = ("SparkApplication", "ScheduledSparkApplication")
# Each set is rendered together: a pipeline's table (and upstream table) must be among the files.
EXAMPLE_SETS = {"operator/examples": ROOT / "operator" / "examples",
                "examples/gitops/lakehouse": ROOT / "examples" / "gitops" / "lakehouse",
                "examples/lakehouse": ROOT / "examples" / "lakehouse"}


def resource_files(folder: Path) -> list[Path]:
    """The YAML files of HudiTables and HudiPipelines (a kustomization or Argo CD file is not one)."""
    found = []
    for path in sorted(folder.glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if any(str(d.get("apiVersion", "")).startswith(API_GROUP) for d in docs):
            found.append(path)
    return found


def suspended_copies(files: list[Path], dest: Path) -> list[Path]:
    """The files with ``state: suspended`` on every HudiPipeline."""
    copies = []
    for path in files:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        for doc in docs:
            if doc.get("kind") == "HudiPipeline":
                doc["spec"]["state"] = "suspended"
        copy = dest / path.name
        copy.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        copies.append(copy)
    return copies


def hudictl_render(files: list[Path]) -> list[dict[str, Any]]:
    """What ``hudictl render -f ...`` prints, run as its own process through the installed command."""
    hudictl = shutil.which("hudictl", path=str(Path(sys.executable).parent))
    assert hudictl, "the hudictl command is not installed in this environment (pip install -e .)"
    args = [arg for path in files for arg in ("-f", str(path))]
    done = subprocess.run([hudictl, "render", *args, "--namespace", "lakehouse"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def pipelines_in(files: list[Path]) -> int:
    return sum(1 for path in files for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "HudiPipeline")


@pytest.mark.parametrize("state", ["running", "suspended"])
@pytest.mark.parametrize("name", sorted(EXAMPLE_SETS))
def test_every_spark_object_hudictl_renders_for_an_example_is_valid_for_the_pinned_spark_operator(
        name: str, state: str, tmp_path: Path) -> None:
    files = resource_files(EXAMPLE_SETS[name])
    assert files, f"no HudiTable/HudiPipeline files in {name}"
    if state == "suspended":
        files = suspended_copies(files, tmp_path)
    manifests = hudictl_render(files)
    apps = [m for m in manifests if m["kind"] in SPARK_KINDS]
    assert {m["kind"] for m in manifests} <= {"ConfigMap", *SPARK_KINDS}
    assert len([a for a in apps if a["metadata"]["labels"].get("app.kubernetes.io/component") == "pipeline"]) \
        == pipelines_in(files)
    for app in apps:
        assert spark_operator_errors(app) == [], f"{app['kind']}/{app['metadata']['name']}"
    for app in apps:
        if app["metadata"]["labels"].get("app.kubernetes.io/component") != "pipeline":
            continue              # a table service runs on its schedule whatever its pipelines do
        suspended = app["spec"].get("suspend", False)
        assert suspended is (state == "suspended"), f"{app['kind']}/{app['metadata']['name']}"


def test_the_validating_crds_are_the_pinned_spark_operator_releases() -> None:
    """``../shared/crds/spark-operator`` holds exactly the CRDs of the spark-operator chart version the
    umbrella chart depends on (its vendored archive, what ``helm dependency build`` fetches)."""
    chart = yaml.safe_load((ROOT / "charts" / "hudi-lakehouse" / "Chart.yaml").read_text())
    version = next(d["version"] for d in chart["dependencies"] if d["name"] == "spark-operator")
    archive = vendored_charts() / f"spark-operator-{version}.tgz"
    with tarfile.open(archive) as tar:
        shipped = {Path(m.name).name: tar.extractfile(m).read() for m in tar.getmembers()
                   if m.isfile() and Path(m.name).parent.as_posix() == "spark-operator/crds"}
    used = {p.name: p.read_bytes() for p in CRD_DIR.glob("*.yaml")}
    assert used and set(used) <= set(shipped)
    for name, content in used.items():
        assert yaml.safe_load(io.BytesIO(content)) == yaml.safe_load(io.BytesIO(shipped[name])), name
    sparkapp = yaml.safe_load(used["sparkoperator.k8s.io_sparkapplications.yaml"])
    spec = sparkapp["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert "suspend" in spec       # added in 2.4.0: what a suspended pipeline's SparkApplication sets


@pytest.mark.parametrize("name", sorted(EXAMPLE_SETS))
def test_every_hoodie_key_planned_for_an_example_is_one_the_engine_knows(name: str) -> None:
    """The operator plans only options the jobs act on: none would draw the unknown-key warning."""
    import importlib
    import pkgutil

    import hudi_jobs.keys
    from hudi_engine.config import unknown_keys
    from hudictl.render import read_documents
    from hudi_operator.planner import OperatorSettings
    from hudi_operator.planner.resource_set import ResourceSet

    for module in pkgutil.iter_modules(hudi_jobs.keys.__path__):
        importlib.import_module(f"hudi_jobs.keys.{module.name}")
    resources = ResourceSet.from_documents(read_documents([str(p) for p in resource_files(EXAMPLE_SETS[name])]),
                                           "lakehouse")
    settings = OperatorSettings(namespace="lakehouse")                   # as hudictl render plans
    jobs = [job for table in resources.tables.values() for job in resources.plan_table(table, settings).jobs]
    jobs += [resources.plan_pipeline(p, settings).jobs[0] for p in resources.pipelines_in_order()]
    assert len(jobs) > pipelines_in(resource_files(EXAMPLE_SETS[name]))         # table services too
    for job in jobs:
        conf = job.job_config.get("hoodieConf") or job.job_config.get("options") or {}
        assert conf, f"{job.name}: no options found in {sorted(job.job_config)}"
        assert unknown_keys(conf) == {}, job.name
