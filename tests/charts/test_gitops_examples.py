"""The GitOps example: the tables and pipelines a data team commits load as the operator loads them and
plan cleanly with the operator the chart installs; Argo CD and Flux install the chart the release
workflow publishes, with one set of values the umbrella chart (real helm, with the vendored
third-party charts) renders; and both tools apply things in order: CRDs and namespaces before the
tables, tables before the pipelines that write them, the platform before the lakehouse."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_operator.api import API_GROUP, API_VERSION, load
from hudi_operator.images import CHART_REGISTRY
from hudi_operator.planner import plan_pipeline, plan_table
from hudi_operator.settings import Settings
from tests.support.helm import built_umbrella, helm, load_all

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"
LAKEHOUSE = GITOPS / "lakehouse"
ARGO_APPS = GITOPS / "argocd" / "apps"
FLUX = GITOPS / "flux"
WAVE = "argocd.argoproj.io/sync-wave"
SKIP_DRY_RUN = "SkipDryRunOnMissingResource=true"


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def wave(obj: dict[str, Any]) -> int:
    return int((obj["metadata"].get("annotations") or {}).get(WAVE, "0"))


def committed() -> tuple[dict, list[dict]]:
    """The lakehouse folder as kustomize builds it: the listed files, in the kustomization's namespace
    (every YAML file of the folder listed, so nothing committed is silently left out)."""
    kustomization = yaml.safe_load((LAKEHOUSE / "kustomization.yaml").read_text())
    assert {p.name for p in LAKEHOUSE.glob("*.yaml")} - {"kustomization.yaml"} == set(kustomization["resources"])
    objects = []
    for name in kustomization["resources"]:
        for doc in documents(LAKEHOUSE / name):
            doc["metadata"]["namespace"] = kustomization["namespace"]
            objects.append(doc)
    return kustomization, objects


def argo_apps() -> dict[str, dict]:
    """The root application's children by what they sync: the platform chart or the lakehouse folder."""
    (root,) = documents(GITOPS / "argocd" / "root-application.yaml")
    assert ROOT / root["spec"]["source"]["path"] == ARGO_APPS
    apps = [doc for path in sorted(ARGO_APPS.glob("*.yaml")) for doc in documents(path)]
    assert {a["kind"] for a in apps} == {"Application"}
    (platform,) = [a for a in apps if a["spec"]["source"]["repoURL"].startswith("oci://")]
    (lakehouse,) = [a for a in apps if a["spec"]["source"].get("path") == "examples/gitops/lakehouse"]
    return {"platform": platform, "lakehouse": lakehouse}


def flux_objects() -> dict[tuple[str, str], dict]:
    docs = documents(FLUX / "cluster.yaml")
    platform = yaml.safe_load((FLUX / "platform" / "kustomization.yaml").read_text())
    assert {p.name for p in (FLUX / "platform").glob("*.yaml")} - {"kustomization.yaml"} == set(platform["resources"])
    docs += [doc for name in platform["resources"] for doc in documents(FLUX / "platform" / name)]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


@pytest.fixture(scope="module")
def platform_render(tmp_path_factory) -> list[dict]:
    """The umbrella chart as Argo CD renders it (``helm template --include-crds``) with the example's
    release name, namespace and values."""
    app = argo_apps()["platform"]
    values = tmp_path_factory.mktemp("values") / "values.yaml"
    values.write_text(yaml.safe_dump(app["spec"]["source"]["helm"]["valuesObject"]))
    chart = built_umbrella(tmp_path_factory.mktemp("chart"))
    return load_all(helm("template", app["metadata"]["name"], str(chart), "--namespace",
                         app["spec"]["destination"]["namespace"], "--include-crds", "-f", str(values)).stdout)


def test_committed_tables_and_pipelines_plan_with_the_operator_the_chart_installs(platform_render):
    """The operator's settings are read from the environment the umbrella chart gives it, so the jobs
    get the Spark service account the chart made in the tables' namespace, which the chart creates;
    the tables sync to the metastore Service the chart runs."""
    kustomization, objects = committed()
    resources = {d["kind"]: load(d) for d in objects}
    assert set(resources) == {"HudiTable", "HudiPipeline"}
    operator = next(d for d in platform_render
                    if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("hudi-operator"))
    env = {e["name"]: e["value"] for e in operator["spec"]["template"]["spec"]["containers"][0]["env"] if "value" in e}
    settings = Settings.from_env(env).planner
    plan_table(resources["HudiTable"], settings)
    plan = plan_pipeline(resources["HudiTable"], resources["HudiPipeline"], settings)
    accounts = {(d["metadata"]["namespace"], d["metadata"]["name"]) for d in platform_render
                if d["kind"] == "ServiceAccount"}
    for job in plan.jobs:
        assert (kustomization["namespace"], job.application["spec"]["template"]["driver"]["serviceAccount"]) in accounts
    assert kustomization["namespace"] in {d["metadata"]["name"] for d in platform_render if d["kind"] == "Namespace"}
    release_namespace = argo_apps()["platform"]["spec"]["destination"]["namespace"]
    services = {f"thrift://{d['metadata']['name']}.{d['metadata'].get('namespace', release_namespace)}.svc:{p['port']}"
                for d in platform_render if d["kind"] == "Service" for p in d["spec"]["ports"]}
    for sync in resources["HudiTable"].spec.catalog_sync:
        assert sync.metastore_uris in services


def test_argo_and_flux_install_the_published_chart_with_the_same_values():
    """Both point at the chart the release workflow pushes to the chart registry (images.py names
    it), at the version Chart.yaml says, under one release name, with the same values (rendered by
    the test above)."""
    platform = argo_apps()["platform"]
    flux = flux_objects()
    source, release = flux[("OCIRepository", "hudi-lakehouse")], flux[("HelmRelease", "hudi-lakehouse")]
    assert source["spec"]["url"].startswith(f"{CHART_REGISTRY}/")
    chart_name = source["spec"]["url"].removeprefix(f"{CHART_REGISTRY}/")
    chart = yaml.safe_load((ROOT / "charts" / chart_name / "Chart.yaml").read_text())
    assert platform["spec"]["source"] == {**platform["spec"]["source"], "repoURL": source["spec"]["url"],
                                          "targetRevision": chart["version"], "path": "."}
    assert source["spec"]["ref"] == {"tag": chart["version"]}
    assert source["spec"]["layerSelector"]["mediaType"] == "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": source["metadata"]["name"]}
    assert release["metadata"]["namespace"] == source["metadata"]["namespace"]
    assert (release["spec"]["releaseName"], release["metadata"]["namespace"]) == (
        platform["metadata"]["name"], platform["spec"]["destination"]["namespace"])
    assert release["spec"]["values"] == platform["spec"]["source"]["helm"]["valuesObject"]


def test_argo_syncs_crds_and_namespaces_then_tables_then_pipelines(platform_render):
    """Argo CD starts a sync wave once the waves before it are Healthy: the platform Application
    (CRDs at wave -10 within it) before the lakehouse one, whose namespace the platform creates;
    inside the lakehouse, tables before the pipelines that write them. Both may be synced before
    their CRDs are served (SkipDryRunOnMissingResource)."""
    apps = argo_apps()
    assert wave(apps["platform"]) < wave(apps["lakehouse"])
    for app in apps.values():
        assert SKIP_DRY_RUN in app["spec"]["syncPolicy"]["syncOptions"], app["metadata"]["name"]
    own_crds = [d for d in platform_render if d["kind"] == "CustomResourceDefinition"
                and d["spec"]["group"] == API_GROUP]
    assert {d["spec"]["names"]["kind"] for d in own_crds} == {"HudiTable", "HudiPipeline"}
    rest = [wave(d) for d in platform_render if d["kind"] != "CustomResourceDefinition"]
    assert max(wave(d) for d in own_crds) < min(rest)

    _, objects = committed()
    lakehouse_namespace = apps["lakehouse"]["spec"]["destination"]["namespace"]
    assert "CreateNamespace=true" not in apps["lakehouse"]["spec"]["syncPolicy"]["syncOptions"]
    assert lakehouse_namespace in {d["metadata"]["name"] for d in platform_render if d["kind"] == "Namespace"}
    by_kind: dict[str, list[int]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(wave(obj))
    assert max(by_kind.pop("Namespace", [-1])) < min(by_kind["HudiTable"])
    assert max(by_kind["HudiTable"]) < min(by_kind["HudiPipeline"])


def test_flux_creates_its_namespaces_and_applies_the_lakehouse_after_the_platform(platform_render):
    """Flux has no waves: the lakehouse Kustomization depends on the platform's, which is Ready only
    once its HelmRelease is (wait); the platform's folder makes the release's namespace and the chart
    makes the lakehouse's; CRDs are created and replaced on install and upgrade; the custom kinds
    have health expressions, so the lakehouse is Ready only when its tables and pipelines are."""
    flux = flux_objects()
    platform, lakehouse = flux[("Kustomization", "hudi-platform")], flux[("Kustomization", "lakehouse")]
    assert lakehouse["spec"]["dependsOn"] == [{"name": platform["metadata"]["name"]}]
    assert platform["spec"]["wait"] is True and lakehouse["spec"]["wait"] is True
    for kustomization in (platform, lakehouse):
        assert (ROOT / kustomization["spec"]["path"]).resolve().is_dir()
        assert kustomization["spec"]["sourceRef"]["name"] in {name for kind, name in flux if kind == "GitRepository"}
    assert (ROOT / platform["spec"]["path"]).resolve() == FLUX / "platform"
    assert (ROOT / lakehouse["spec"]["path"]).resolve() == LAKEHOUSE

    release = flux[("HelmRelease", "hudi-lakehouse")]
    namespaces = {name for kind, name in flux if kind == "Namespace"}
    assert {release["metadata"]["namespace"], flux[("OCIRepository", "hudi-lakehouse")]["metadata"]["namespace"]} \
        <= namespaces
    kustomization, _ = committed()
    assert kustomization["namespace"] in {d["metadata"]["name"] for d in platform_render if d["kind"] == "Namespace"}
    assert release["spec"]["install"]["crds"] == release["spec"]["upgrade"]["crds"] == "CreateReplace"

    checks = {(e["apiVersion"], e["kind"]) for e in lakehouse["spec"]["healthCheckExprs"]}
    assert checks == {(f"{API_GROUP}/{API_VERSION}", kind) for kind in ("HudiTable", "HudiPipeline")}
