"""Kubernetes' own OpenAPI schemas for its built-in kinds (ConfigMap, Deployment, Role, ...), as
published by the ``kubernetes-validate`` package, and custom resources checked against the
openAPIV3Schema of their CustomResourceDefinition: the checks the API server's schema validation
would make, since no API server can run here. Strict: a field the schema does not define is an
error, because the API server would drop it (or refuse it with ``fieldValidation=Strict``)."""
from __future__ import annotations

import copy
from typing import Any, Iterable

import kubernetes_validate

from tests.support.spark_operator_schemas import _nodes, _strict, _Validator, metadata_errors

# The oldest Kubernetes the platform supports (Strimzi 1.x needs 1.30) and the newest these schemas know.
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())

Key = tuple[str, str]     # (apiVersion, kind)


def errors(manifest: dict[str, Any]) -> list[str]:
    """Every schema problem of one built-in object, per Kubernetes version, as 'version: message'."""
    found = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(manifest, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path) or "<root>"
            found.append(f"{version}: {path}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            found.append(f"{version}: {manifest.get('apiVersion')}/{manifest.get('kind')} is not a built-in kind: {exc}")
    return found


def crd_schemas(crds: Iterable[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """The openAPIV3Schema of every served version of the given CRDs, by (apiVersion, kind)."""
    return {(f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"]): version["schema"]["openAPIV3Schema"]
            for crd in crds for version in crd["spec"]["versions"] if version.get("served")}


def structural(schema: dict[str, Any]) -> dict[str, Any]:
    """A CRD schema as a strict JSON schema: objects accept only their declared properties unless they
    preserve unknown fields; embedded resources accept apiVersion, kind and metadata; ``nullable``
    allows null. int-or-string nodes carry their own anyOf (or no type), so they need nothing."""
    schema = copy.deepcopy(schema)
    for node in _nodes(schema):
        if node.get("x-kubernetes-embedded-resource"):
            node.setdefault("properties", {})
            for field in ("apiVersion", "kind"):
                node["properties"].setdefault(field, {"type": "string"})
            node["properties"].setdefault("metadata", {"type": "object"})
        if node.get("nullable") and isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
    schema.setdefault("properties", {})
    for field in ("apiVersion", "kind"):
        schema["properties"].setdefault(field, {"type": "string"})
    return _strict(schema)


def render_errors(objects: list[dict[str, Any]], crds: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Every problem of every object of a render: built-in kinds against Kubernetes' schemas, custom
    resources against the CRDs in the same render (and ``crds``, for kinds a render uses but whose
    CRDs another chart installs). A kind with no schema at all is an error too."""
    schemas = crd_schemas([o for o in objects if o["kind"] == "CustomResourceDefinition"] + list(crds))
    validators: dict[Key, Any] = {}
    found = []
    for obj in objects:
        key = (obj.get("apiVersion", ""), obj.get("kind", ""))
        where = f"{key[1]} {obj.get('metadata', {}).get('namespace', '')}/{obj.get('metadata', {}).get('name')}"
        if key in schemas:
            if key not in validators:
                validators[key] = _Validator(structural(schemas[key]))
            problems = [f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
                        for e in validators[key].iter_errors(obj)] + metadata_errors(obj.get("metadata", {}))
        else:
            problems = errors(obj)
        found += [f"{where}: {problem}" for problem in problems]
    return found
