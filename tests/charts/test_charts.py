"""The Helm charts, through a real ``helm`` (v4, from .ci/install-helm): lint and template with default
and non-default values; every rendered object checked against Kubernetes' own schemas
(kubernetes-validate) or, for custom resources, the CRDs in the render or the vendored third-party
charts' (ServiceMonitor, PrometheusRule, PodMonitor); assertions on what matters to a
platform team (RBAC scope from rbac.py, probes, hardening, labels, alerts on real metrics checked by
Prometheus' own promtool); values.schema.json refusing bad values by name. No cluster is involved."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from hudi_operator import rbac
from tests.support.helm import by_kind, CHARTS, helm, refusal, set_args, template, vendored_crds
from tests.support.kubernetes_schemas import render_errors
from tests.support.prometheus import exported_series_names

OPERATOR, METASTORE, UMBRELLA = CHARTS / "hudi-operator", CHARTS / "hive-metastore", CHARTS / "hudi-lakehouse"
WORKLOADS = ("Deployment", "StatefulSet")

OPERATOR_VALUES = {
    "default": {},
    "namespaced-ha": {"watchNamespaces": "{lake,analytics}", "replicaCount": "2",
                      "metrics.serviceMonitor.enabled": "true", "metrics.prometheusRule.enabled": "true",
                      "networkPolicy.enabled": "true", "storageCredentialsSecret": "lake-keys",
                      "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn": "arn:aws:iam::1:role/lake"},
    "clusterwide-ha": {"replicaCount": "3", "logVerbose": "true"},
}
METASTORE_VALUES = {
    "default": {"global.storage.bucket": "lake"},       # what the umbrella passes
    "external": {"database.mode": "external", "database.external.host": "pg.db", "database.passwordSecret": "pg-auth",
                 "networkPolicy.enabled": "true", "warehouseDir": "gs://lake/warehouse"},
}


def containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    pod = workload["spec"]["template"]["spec"]
    return pod.get("initContainers", []) + pod["containers"]


# --- lint and render -------------------------------------------------------------------------------------
@pytest.mark.parametrize("chart, values", [(OPERATOR, v) for v in OPERATOR_VALUES.values()] +
                         [(METASTORE, v) for v in METASTORE_VALUES.values()], ids=lambda v: str(v)[-40:])
def test_charts_lint_strictly_and_every_object_validates(chart, values):
    helm("lint", str(chart), "--strict", *set_args(values))
    objects = template(chart, values)
    assert objects
    assert render_errors(objects, vendored_crds()) == []


# --- what the operator's chart grants and runs -----------------------------------------------------------
def rules_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["rules"]


def test_namespaced_operator_gets_a_role_per_namespace_with_exactly_rbac_py_rules():
    objects = template(OPERATOR, OPERATOR_VALUES["namespaced-ha"])
    roles = by_kind(objects, "Role")
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["analytics", "lake"]
    assert all(rules_of(r) == rbac.namespaced_rules(peering=True) for r in roles)
    (cluster_role,) = by_kind(objects, "ClusterRole")
    assert rules_of(cluster_role) == rbac.cluster_rules()          # cluster-wide: reads for discovery only
    bindings = by_kind(objects, "RoleBinding")
    assert {b["subjects"][0]["name"] for b in bindings} == {"release-hudi-operator"}
    assert sorted(p["metadata"]["namespace"] for p in by_kind(objects, "KopfPeering")) == ["analytics", "lake"]
    env = {e["name"]: e.get("value") for e in containers(by_kind(objects, "Deployment")[0])[0]["env"]}
    assert env["WATCH_NAMESPACES"] == "lake,analytics" and env["PEERING_NAME"] == "hudi-operator"


def test_clusterwide_operator_gets_one_cluster_role_and_a_cluster_peering_when_replicated():
    objects = template(OPERATOR, OPERATOR_VALUES["clusterwide-ha"])
    assert by_kind(objects, "Role") == []
    (cluster_role,) = by_kind(objects, "ClusterRole")
    assert rules_of(cluster_role) == rbac.cluster_rules(peering=True) + rbac.namespaced_rules()
    assert [p["metadata"]["name"] for p in by_kind(objects, "ClusterKopfPeering")] == ["hudi-operator"]
    single = template(OPERATOR)
    assert by_kind(single, "ClusterKopfPeering") == [] and "PEERING_NAME" not in json.dumps(single)


def test_chart_rbac_file_is_generated_from_rbac_py():
    path = OPERATOR / "files" / "rbac-rules.json"
    assert path.read_text() == rbac.chart_rules(), f"stale: run `{rbac.COMMAND}`"


@pytest.mark.parametrize("chart, values", [(OPERATOR, OPERATOR_VALUES["namespaced-ha"]),
                                           (METASTORE, METASTORE_VALUES["default"])], ids=["operator", "metastore"])
def test_every_pod_is_hardened_probed_and_bounded(chart, values):
    for workload in [o for o in template(chart, values) if o["kind"] in WORKLOADS]:
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
        for container in containers(workload):
            where = f"{workload['metadata']['name']}/{container['name']}"
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False, where
            assert security["capabilities"]["drop"] == ["ALL"], where
            assert {"requests", "limits"} <= set(container["resources"]), where
            if container in pod["containers"]:    # Kubernetes allows init containers (run to completion) no probes
                assert "livenessProbe" in container and "readinessProbe" in container, where


@pytest.mark.parametrize("chart", [OPERATOR, METASTORE], ids=["operator", "metastore"])
def test_every_object_carries_the_platform_labels(chart):
    for obj in template(chart, METASTORE_VALUES["default"] if chart == METASTORE else {}):
        if obj["kind"] == "CustomResourceDefinition":
            continue
        labels = obj["metadata"].get("labels", {})
        assert labels.get("app.kubernetes.io/part-of") == "hudi-lakehouse", obj["metadata"]["name"]
        assert labels.get("app.kubernetes.io/managed-by") == "Helm", obj["metadata"]["name"]


def test_operator_probes_and_metrics_port_are_what_the_operator_serves():
    (deployment,) = by_kind(template(OPERATOR), "Deployment")
    (container,) = containers(deployment)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert (str(ports["health"]), str(ports["metrics"])) == (env["HEALTH_PORT"], env["METRICS_PORT"])
    assert container["command"] == ["python", "-m", "hudi_operator"]
    assert env["SPARK_IMAGE"] == "ghcr.io/hudi-lakehouse/spark-jobs:0.1.0"        # the planner's default image
    from hudi_operator.planner.settings import DEFAULT_IMAGE
    assert env["SPARK_IMAGE"] == DEFAULT_IMAGE


def test_alerts_use_only_metrics_the_operator_exports_and_promtool_accepts_them(tmp_path):
    (rule,) = by_kind(template(OPERATOR, OPERATOR_VALUES["namespaced-ha"]), "PrometheusRule")
    alerts = {r["alert"]: r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]}
    assert {"HudiPipelineFailing", "HudiTableCommitStale", "HudiCompactionsPilingUp"} <= set(alerts)
    exported = exported_series_names()     # the operator's and the streamer's
    for name, expr in alerts.items():
        used = set(re.findall(r"\b(hudi_[a-z_]+)\b", expr))
        assert (used or "up{" in expr) and used <= exported, f"{name} uses {used - exported}"   # up: scrapes
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    promtool = shutil.which("promtool")
    assert promtool, "promtool comes with Debian's prometheus package (.ci/install-services)"
    done = subprocess.run([promtool, "check", "rules", str(rules_file)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# --- values.schema.json ----------------------------------------------------------------------------------
@pytest.mark.parametrize("chart, values, message", [
    (OPERATOR, {"replicaCount": "0"}, "/replicaCount"),
    (OPERATOR, {"resources.limits": "null"}, "missing property 'limits'"),
    (OPERATOR, {"securityContext.readOnlyRootFilesystem": "false"}, "/securityContext/readOnlyRootFilesystem"),
    (OPERATOR, {"watchNamespaces": "{Lake_Zone}"}, "/watchNamespaces/0"),
    (OPERATOR, {"storageCredentialsSecret": "AKIAIOSFODNN7/secret"}, "/storageCredentialsSecret"),
    (OPERATOR, {"podSecurityContext.runAsNonRoot": "false"}, "/podSecurityContext/runAsNonRoot"),
    (OPERATOR, {"imagePolicy": "x"}, "imagePolicy"),
    (METASTORE, {"database.mode": "external"}, "/database/external/host"),
    (METASTORE, {"database.mode": "sqlite"}, "/database/mode"),
    (METASTORE, {"warehouseDir": "/warehouse"}, "/warehouseDir"),
    (METASTORE, {}, "set warehouseDir (e.g. s3a://my-bucket/warehouse), or global.storage.bucket"),
], ids=lambda v: str(v)[:50])
def test_bad_values_are_refused_naming_the_field(chart, values, message):
    assert message in refusal(chart, values)


@pytest.mark.parametrize("chart", [OPERATOR, METASTORE, UMBRELLA], ids=lambda c: c.name)
def test_no_secret_value_in_default_values(chart):
    def walk(node: Any, path: str = ""):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, f"{path}.{key}")
        else:
            yield path, node
    for path, value in walk(yaml.safe_load((chart / "values.yaml").read_text())):
        if re.search(r"(?i)(password|secretkey|token|accesskey)$", path.split(".")[-1]):
            assert value in ("", None), f"{chart.name} values{path} holds a secret value"
