"""The Kubeflow Spark operator's own CRDs as validators of the manifests the planner generates: no
API server can run here, so this is what it would check — the openAPIV3Schema, the list-type
rules, and the ObjectMeta rules every object's metadata must follow.

The CRDs are read from ``../shared/crds/spark-operator`` and nowhere else: the release the umbrella
chart pins (a test holds them equal to the vendored chart's ``crds/``), so a manifest cannot pass
against a newer development CRD while failing on the operator that is installed.

The schemas are applied strictly: a field the CRD does not define is an error, because the API
server would silently prune it and the job would run without it."""
from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
GROUP_VERSION = "sparkoperator.k8s.io/v1beta2"
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


CRD_DIR = ROOT.parent / "shared" / "crds" / "spark-operator"
KINDS = ("SparkApplication", "ScheduledSparkApplication")


@lru_cache(maxsize=None)
def schemas() -> dict[str, dict]:
    """openAPIV3Schema of each kind (SparkApplication, ScheduledSparkApplication) at v1beta2."""
    found = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            for version in crd["spec"]["versions"]:
                if f"{crd['spec']['group']}/{version['name']}" == GROUP_VERSION:
                    found[crd["spec"]["names"]["kind"]] = _strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    missing = [kind for kind in KINDS if kind not in found]
    if missing:
        raise FileNotFoundError(f"no {GROUP_VERSION} CRD of {', '.join(missing)} under {CRD_DIR}: the Spark "
                                "operator release the umbrella chart pins must be there")
    return found


def errors(manifest: dict[str, Any]) -> list[str]:
    """Every problem the API server would report for a Spark operator object, as 'path: message'."""
    kind = manifest.get("kind")
    if manifest.get("apiVersion") != GROUP_VERSION or kind not in schemas():
        return [f"apiVersion/kind: {manifest.get('apiVersion')}/{kind} is not a {GROUP_VERSION} Spark operator kind"]
    validator = _Validator(schemas()[kind])
    found = [f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
             for e in validator.iter_errors(manifest)]
    spec = manifest.get("spec", {})
    app = spec.get("template", {}) if kind == "ScheduledSparkApplication" else spec
    return found + metadata_errors(manifest.get("metadata", {})) + pod_errors(app)


def pod_errors(app: dict[str, Any]) -> list[str]:
    """What Kubernetes rejects when the Spark operator creates the pods: volumes with a duplicate or
    invalid name, a mount of an undeclared volume, two mounts at one path."""
    names = [v.get("name", "") for v in app.get("volumes") or ()]
    found = [f"spec.volumes: {n!r} is not a DNS-1123 label" for n in names
             if not (len(n) <= 63 and _DNS1123_LABEL.fullmatch(n))]
    found += [f"spec.volumes: {n!r} declared twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for role in ("driver", "executor"):
        mounts = app.get(role, {}).get("volumeMounts") or ()
        found += [f"spec.{role}.volumeMounts: {m['name']!r} is not in spec.volumes"
                  for m in mounts if m.get("name") not in names]
        paths = [m.get("mountPath") for m in mounts]
        found += [f"spec.{role}.volumeMounts: two mounts at {p}" for p in sorted({p for p in paths if paths.count(p) > 1})]
    return found


def metadata_errors(metadata: dict[str, Any]) -> list[str]:
    """ObjectMeta rules: a DNS-1123 name, valid label keys and values, string annotations."""
    found = []
    name = metadata.get("name", "")
    if not (len(name) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(name)):
        found.append(f"metadata.name: {name!r} is not a DNS-1123 subdomain")
    for key, value in (metadata.get("labels") or {}).items():
        if not _qualified_key(key):
            found.append(f"metadata.labels: key {key!r} is not a qualified name")
        if not (isinstance(value, str) and len(value) <= 63 and _LABEL_VALUE.fullmatch(value)):
            found.append(f"metadata.labels.{key}: {value!r} is not a valid label value")
    for key, value in (metadata.get("annotations") or {}).items():
        if not _qualified_key(key) or not isinstance(value, str):
            found.append(f"metadata.annotations.{key}: key must be a qualified name and value a string")
    for ref in metadata.get("ownerReferences") or ():
        missing = {"apiVersion", "kind", "name", "uid"} - set(ref)
        if missing:
            found.append(f"metadata.ownerReferences: {ref} lacks {sorted(missing)}")
    return found


def _qualified_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return (not prefix or (len(prefix) <= 253 and bool(_DNS1123_SUBDOMAIN.fullmatch(prefix)))) and \
        len(name) <= 63 and bool(_QUALIFIED_NAME.fullmatch(name))


def _strict(schema: dict) -> dict:
    """Objects with declared properties accept no others (unless they preserve unknown fields)."""
    for node in _nodes(schema):
        if ("properties" in node and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")):
            node["additionalProperties"] = False
    # metadata is the API server's ObjectMeta, checked by metadata_errors
    schema["properties"]["metadata"] = {"type": "object"}
    return schema


def _nodes(node: Any) -> Iterator[dict]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def _list_type(validator, list_type, instance, schema):
    """x-kubernetes-list-type: 'set' items are unique; 'map' items are unique by their map keys."""
    if not isinstance(instance, list):
        return
    if list_type == "set":
        seen = [repr(item) for item in instance]
        if len(seen) != len(set(seen)):
            yield jsonschema.ValidationError(f"duplicate items in a list of type set: {instance}")
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys", ())
        seen = [tuple(item.get(k) for k in keys) for item in instance if isinstance(item, dict)]
        if len(seen) != len(set(seen)):
            yield jsonschema.ValidationError(f"duplicate entries by {list(keys)} in {instance}")


_Validator = jsonschema.validators.extend(jsonschema.Draft4Validator, {"x-kubernetes-list-type": _list_type})
