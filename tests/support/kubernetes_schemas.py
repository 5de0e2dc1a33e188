"""Kubernetes' own OpenAPI schemas for its built-in kinds (ConfigMap, Deployment, Role, ...), as
published by the ``kubernetes-validate`` package: the check the API server's schema validation
would make, since no API server can run here. Strict: a field the schema does not define is an
error, because the API server would drop it (or refuse it with ``fieldValidation=Strict``)."""
from __future__ import annotations

from typing import Any

import kubernetes_validate

# The oldest Kubernetes the platform supports (CEL rules with messageExpression and transition
# rules are GA from 1.29) and the newest these schemas know.
KUBERNETES_VERSIONS = ("1.29.0", kubernetes_validate.latest_version())


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
