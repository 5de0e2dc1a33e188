"""The GitOps example: the tables and pipelines a data team commits load as the operator loads them and
plan cleanly; the kustomization lists them; the Argo CD and Flux objects point at real folders of this
repository, and the chart values they carry are accepted by the umbrella chart's schema (real helm)."""
from pathlib import Path

import yaml

from hudi_operator.api import load
from hudi_operator.planner import plan_pipeline, plan_table
from hudi_operator.settings import Settings
from tests.support.helm import helm, umbrella_with_local_subcharts
from tests.support.kubernetes_schemas import errors as kubernetes_errors

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def committed() -> tuple[dict, dict]:
    kustomization = yaml.safe_load((GITOPS / "lakehouse" / "kustomization.yaml").read_text())
    resources = {}
    for name in kustomization["resources"]:
        (doc,) = documents(GITOPS / "lakehouse" / name)
        doc["metadata"]["namespace"] = kustomization["namespace"]
        resources[doc["kind"]] = load(doc)
    listed = {p.name for p in (GITOPS / "lakehouse").glob("*.yaml")} - {"kustomization.yaml", "argocd-application.yaml"}
    assert listed == set(kustomization["resources"])
    return kustomization, resources


def test_committed_tables_and_pipelines_plan_with_the_operator_the_chart_installs(tmp_path):
    """The operator's settings are read from the environment the umbrella chart gives it, so the jobs
    get the Spark service account the chart made in the tables' namespace."""
    kustomization, resources = committed()
    assert set(resources) == {"HudiTable", "HudiPipeline"}
    objects = [d for d in yaml.safe_load_all(helm("template", "r", str(umbrella_with_local_subcharts(tmp_path))).stdout) if d]
    operator = next(d for d in objects if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("hudi-operator"))
    env = {e["name"]: e["value"] for e in operator["spec"]["template"]["spec"]["containers"][0]["env"] if "value" in e}
    settings = Settings.from_env(env).planner
    plan_table(resources["HudiTable"], settings)
    plan = plan_pipeline(resources["HudiTable"], resources["HudiPipeline"], settings)
    accounts = {(d["metadata"]["namespace"], d["metadata"]["name"]) for d in objects if d["kind"] == "ServiceAccount"}
    for job in plan.jobs:
        assert (kustomization["namespace"], job.application["spec"]["template"]["driver"]["serviceAccount"]) in accounts


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
