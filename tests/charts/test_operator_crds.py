"""The operator chart's CRDs on ``helm upgrade``: Helm installs a chart's ``crds/`` once and never
upgrades them, so HudiTable and HudiPipeline are templates (a release's manifest, which every
``helm upgrade`` applies), kept on uninstall (deleting a CRD deletes every table and pipeline with
it) and ordered first by Argo CD (sync wave -10), through the real ``helm``. No cluster is
involved: what is checked is what Helm and Argo CD act on, the rendered objects and their
annotations."""
from __future__ import annotations

from typing import Any

import yaml

from hudi_operator.api.crds import ANNOTATIONS, crd_manifests, peering_crds
from tests.support.helm import CHARTS, helm

OPERATOR = CHARTS / "hudi-operator"
KEEP, WAVE = "helm.sh/resource-policy", "argocd.argoproj.io/sync-wave"


def rendered(*flags: str) -> list[dict[str, Any]]:
    done = helm("template", "release", str(OPERATOR), "--namespace", "platform", *flags)
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def crds_of(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "CustomResourceDefinition"}


def test_the_apis_crds_are_release_templates_so_helm_upgrade_applies_them():
    """Without --include-crds, ``helm template`` prints what a release's manifest holds: what
    ``helm upgrade`` applies. The API's CRDs are there, exactly as generated from the model."""
    templated = crds_of(rendered())
    assert templated == {m["metadata"]["name"]: m for m in crd_manifests()}
    assert {"huditables.lakehouse.hudi.dev", "hudipipelines.lakehouse.hudi.dev"} == set(templated)


def test_kopfs_peering_crds_stay_in_crds_installed_before_the_peerings_that_use_them():
    """kopf's peering kinds never change, and the chart creates KopfPeerings of them in the same
    release: Helm installs crds/ first, so the first install of an HA operator works."""
    with_crds = crds_of(rendered("--include-crds", "--set", "replicaCount=2"))
    peering = {m["metadata"]["name"]: m for m in peering_crds()}
    assert {name: with_crds[name] for name in peering} == peering
    assert not set(peering) & set(crds_of(rendered()))


def test_every_crd_is_kept_on_uninstall_and_applied_first_by_argo_cd():
    objects = rendered("--include-crds", "--set", "replicaCount=2", "--set", "metrics.serviceMonitor.enabled=true")
    crds = crds_of(objects)
    assert len(crds) == 4
    for name, crd in crds.items():
        annotations = crd["metadata"]["annotations"]
        assert annotations[KEEP] == "keep", name
        assert annotations[WAVE] == "-10", name              # a string, as Argo CD reads annotations
    assert ANNOTATIONS == {KEEP: "keep", WAVE: "-10"}
    others = [o for o in objects if o["kind"] != "CustomResourceDefinition"]
    assert others and all(int((o["metadata"].get("annotations") or {}).get(WAVE, "0")) > -10 for o in others)


def test_teams_whose_admins_manage_crds_can_leave_them_out():
    assert crds_of(rendered("--set", "crds.install=false")) == {}
    assert "/crds/install" in helm("template", "release", str(OPERATOR), "--set", "crds.install=yes",
                                   check=False).stderr
