"""The GitOps example: the tables and pipelines a data team commits load as the operator loads them and
plan cleanly; the kustomization lists them; the Argo CD and Flux objects point at real folders of this
repository, and the chart values they carry are accepted by the umbrella chart's schema (real helm)."""
from pathlib import Path

import yaml

from hudi_operator.api import load
from hudi_operator.planner import OperatorSettings, plan_pipeline, plan_table
from tests.support.helm import helm, umbrella_with_local_subcharts
from tests.support.kubernetes_schemas import errors as kubernetes_errors

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_committed_tables_and_pipelines_load_and_plan():
    kustomization = yaml.safe_load((GITOPS / "lakehouse" / "kustomization.yaml").read_text())
    resources = {}
    for name in kustomization["resources"]:
        (doc,) = documents(GITOPS / "lakehouse" / name)
        doc["metadata"]["namespace"] = kustomization["namespace"]
        resources[doc["kind"]] = load(doc)
    assert set(resources) == {"HudiTable", "HudiPipeline"}
    settings = OperatorSettings(image="ghcr.io/hudi-lakehouse/spark-jobs:0.1.0")
    plan_table(resources["HudiTable"], settings)
    plan = plan_pipeline(resources["HudiTable"], resources["HudiPipeline"], settings)
    assert plan.jobs and all(job.application["spec"]["template"]["driver"]["serviceAccount"] == "hudi-spark"
                             for job in plan.jobs)
    listed = {p.name for p in (GITOPS / "lakehouse").glob("*.yaml")} - {"kustomization.yaml", "argocd-application.yaml"}
    assert listed == set(kustomization["resources"])


def test_argo_and_flux_point_at_this_repository_and_their_values_pass_the_chart_schema(tmp_path):
    chart = umbrella_with_local_subcharts(tmp_path)
    apps = documents(GITOPS / "platform" / "argocd-application.yaml") + \
        documents(GITOPS / "lakehouse" / "argocd-application.yaml")
    for app in apps:
        assert (ROOT / app["spec"]["source"]["path"]).is_dir(), app["spec"]["source"]["path"]
    release = next(d for d in documents(GITOPS / "platform" / "flux-helmrelease.yaml") if d["kind"] == "HelmRelease")
    assert (ROOT / release["spec"]["chart"]["spec"]["chart"]).is_dir()
    for values in (apps[0]["spec"]["source"]["helm"]["valuesObject"], release["spec"]["values"]):
        file = tmp_path / "values.yaml"
        file.write_text(yaml.safe_dump(values))
        rendered = [d for d in yaml.safe_load_all(helm("template", "r", str(chart), "-f", str(file)).stdout) if d]
        (account,) = [d for d in rendered if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == "hudi-spark"]
        assert kubernetes_errors(account) == []
