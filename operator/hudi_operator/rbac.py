"""The least-privilege RBAC rules the operator needs, in one place: the chart renders them into its
(Cluster)Role, and a test checks every request the running operator makes against them.

``namespaced_rules`` cover the watched namespaces (a Role per namespace, or a ClusterRole when
watching all); ``cluster_rules`` are cluster-scoped reads kopf needs to discover resources and
namespaces, and the cluster-wide peering object when HA peering is on."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .api import API_GROUP

SPARK_GROUP = "sparkoperator.k8s.io"
KOPF_GROUP = "kopf.dev"

Rule = dict[str, list[str]]


def namespaced_rules(peering: bool = False) -> list[Rule]:
    """``peering``: a namespaced operator's KopfPeering (a cluster-wide one uses cluster_rules')."""
    rules = [
        # The operator's own resources: kopf watches them and patches finalizers/annotations; the
        # reconcile reads them by name and lists the pipelines of a table.
        {"apiGroups": [API_GROUP], "resources": ["huditables", "hudipipelines"],
         "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": [API_GROUP], "resources": ["huditables/status", "hudipipelines/status"],
         "verbs": ["get", "patch"]},
        # The jobs it runs, and the job-configs they mount.
        {"apiGroups": [SPARK_GROUP], "resources": ["sparkapplications", "scheduledsparkapplications"],
         "verbs": ["get", "list", "watch", "create", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "create", "patch", "delete"]},
        # Kubernetes events for every action (kopf posts core/v1 events).
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    ]
    if peering:
        rules.append({"apiGroups": [KOPF_GROUP], "resources": ["kopfpeerings"],
                      "verbs": ["get", "list", "watch", "patch"]})
    return rules


def cluster_rules(peering: bool = False) -> list[Rule]:
    rules = [
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
         "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]},
    ]
    if peering:
        rules.append({"apiGroups": [KOPF_GROUP], "resources": ["clusterkopfpeerings"],
                      "verbs": ["get", "list", "watch", "patch"]})
    return rules


def allows(rules: list[Rule], verb: str, group: str, resource: str, subresource: str | None = None) -> bool:
    """Whether ``rules`` grant ``verb`` on ``group``/``resource``[/``subresource``], as the RBAC
    authorizer decides (no wildcards are used here, so none are interpreted)."""
    name = f"{resource}/{subresource}" if subresource else resource
    return any(group in r["apiGroups"] and name in r["resources"] and verb in r["verbs"] for r in rules)


def policy_rules(peering: bool = False, clusterwide: bool = True) -> dict[str, Any]:
    """Both sets for one way of running."""
    return {"namespaced": namespaced_rules(peering and not clusterwide),
            "cluster": cluster_rules(peering and clusterwide), "clusterwide": clusterwide}


COMMAND = "python -m hudi_operator.rbac --out charts/hudi-operator/files/rbac-rules.json"


def chart_rules() -> str:
    """What the chart's templates read (``.Files.Get``): the rules with and without peering, so
    the chart picks by its values and never spells a rule itself."""
    return json.dumps({"_generated": f"by `{COMMAND}` from operator/hudi_operator/rbac.py",
                       "namespaced": namespaced_rules(), "namespacedPeering": namespaced_rules(True),
                       "cluster": cluster_rules(), "clusterPeering": cluster_rules(True)}, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the operator's RBAC rules for the chart.")
    parser.add_argument("--out", type=Path, required=True, help="the chart's files/rbac-rules.json")
    out = parser.parse_args(argv).out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(chart_rules())
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
