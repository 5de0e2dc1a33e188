"""Names, labels, owner references and the spec-hash annotation every generated object carries,
so `kubectl get -l` finds a table's or pipeline's jobs and Kubernetes deletes them with it."""
from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any, Iterable

APP_LABEL, APP = "app.kubernetes.io/name", "hudi-lakehouse"
MANAGED_BY_LABEL, MANAGER = "app.kubernetes.io/managed-by", "hudi-operator"
COMPONENT_LABEL = "app.kubernetes.io/component"
PIPELINE_COMPONENT, TABLE_SERVICE_COMPONENT = "pipeline", "table-service"
TRIGGERED_RUN_COMPONENT = "table-service-run"     # a one-off run started because a threshold was crossed
TABLE_LABEL = "lakehouse.hudi.dev/table"
PIPELINE_LABEL = "lakehouse.hudi.dev/pipeline"
SERVICE_LABEL = "lakehouse.hudi.dev/service"
SPEC_HASH_ANNOTATION = "lakehouse.hudi.dev/spec-hash"

MAX_LABEL = 63
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


def object_name(*parts: str, max_length: int = MAX_LABEL) -> str:
    """A DNS-1035 label (what Services made from it need) from the parts joined by '-', stable:
    too long a name keeps its start and ends with a hash of the whole."""
    joined = _NOT_DNS.sub("-", "-".join(parts).lower()).strip("-")
    if not joined[:1].isalpha():
        joined = f"h-{joined}"
    if len(joined) <= max_length:
        return joined
    digest = _digest(joined)[:8]
    return f"{joined[:max_length - len(digest) - 1].rstrip('-')}-{digest}"


def label_value(value: str) -> str:
    """A valid label value: at most 63 characters, a hash suffix when cut."""
    if len(value) <= MAX_LABEL:
        return value
    digest = _digest(value)[:8]
    return f"{value[:MAX_LABEL - len(digest) - 1].rstrip('-_.')}-{digest}"


def object_labels(component: str, table: str, pipeline: str | None = None,
                  service: str | None = None) -> dict[str, str]:
    labels = {APP_LABEL: APP, MANAGED_BY_LABEL: MANAGER, COMPONENT_LABEL: component,
              TABLE_LABEL: label_value(table)}
    if pipeline is not None:
        labels[PIPELINE_LABEL] = label_value(pipeline)
    if service is not None:
        labels[SERVICE_LABEL] = service
    return labels


def owner_references(resource: Any) -> list[dict[str, Any]]:
    """The controller reference to a HudiTable/HudiPipeline; none without a uid (``hudictl
    render`` of a file), since Kubernetes rejects a reference without one."""
    if not resource.metadata.uid:
        return []
    return [{"apiVersion": resource.api_version, "kind": resource.kind, "name": resource.metadata.name,
             "uid": resource.metadata.uid, "controller": True, "blockOwnerDeletion": True}]


def object_meta(name: str, namespace: str, labels: dict[str, str], owner: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    refs = owner_references(owner)
    if refs:
        meta["ownerReferences"] = refs
    return meta


def with_spec_hash(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest annotated with the hash of everything it asks for (what the specs and the
    operator's settings produced): the operator updates an object whose hash differs from the
    plan's, and a live object that no longer matches its own annotation was changed by hand."""
    manifest.setdefault("metadata", {}).setdefault("annotations", {})[SPEC_HASH_ANNOTATION] = spec_hash(manifest)
    return manifest


def spec_hash(manifest: dict[str, Any]) -> str:
    """Hash of a manifest's desired state: labels, owner references and spec/data, not the
    server's fields nor the annotation itself."""
    meta = manifest.get("metadata", {})
    desired = {"apiVersion": manifest.get("apiVersion"), "kind": manifest.get("kind"),
               "name": meta.get("name"), "labels": meta.get("labels"),
               "ownerReferences": meta.get("ownerReferences"),
               "spec": manifest.get("spec"), "data": manifest.get("data")}
    return _digest(json.dumps(desired, sort_keys=True, separators=(",", ":")))[:16]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


SPARK_KINDS = ("SparkApplication", "ScheduledSparkApplication")
CONFIG_HASH_ANNOTATION = "lakehouse.hudi.dev/config-hash"


def bind_configs(manifests: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The manifests with each Spark application's driver annotated with the hash of the planned
    ConfigMaps it mounts, and its spec-hash made again: a changed job-config then changes the
    application's spec, so the job is replaced and runs the new config (a running driver never
    re-reads its config)."""
    manifests = list(manifests)
    config_hashes = {m["metadata"]["name"]: m["metadata"]["annotations"][SPEC_HASH_ANNOTATION]
                     for m in manifests if m["kind"] == "ConfigMap"}
    for i, manifest in enumerate(manifests):
        if manifest["kind"] not in SPARK_KINDS:
            continue
        bound = copy.deepcopy(manifest)
        app = bound["spec"]["template"] if bound["kind"] == "ScheduledSparkApplication" else bound["spec"]
        mounted = sorted(v["configMap"]["name"] for v in app.get("volumes") or () if "configMap" in v)
        hashes = [config_hashes[name] for name in mounted if name in config_hashes]
        if hashes:
            digest = hashlib.sha256(",".join(hashes).encode()).hexdigest()[:16]
            app.setdefault("driver", {}).setdefault("annotations", {})[CONFIG_HASH_ANNOTATION] = digest
            manifests[i] = with_spec_hash(bound)
    return manifests
