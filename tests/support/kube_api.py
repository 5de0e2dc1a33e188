"""kmock's Kubernetes emulator made into the API server stand-in the tests need (no API server can
run here): it fills in what the real one sets (uid, generation bumped by spec changes,
resourceVersion, generateName, creationTimestamp), honours label selectors on lists, fails a JSON
patch whose test fails with 422, creates objects on a server-side apply (as helm 4 installs), and
refuses objects the schemas reject (Kubernetes' own for built-in kinds, the Spark operator's CRDs),
and reports a Kubernetes version the charts support."""
from __future__ import annotations

import datetime as dt
import itertools
import uuid
from pathlib import Path
from typing import Any

import jsonpatch
import kmock
import yaml

from tests.support.kubernetes_schemas import errors as kubernetes_errors
from tests.support.spark_operator_schemas import GROUP_VERSION as SPARK_GROUP_VERSION
from tests.support.spark_operator_schemas import errors as spark_operator_errors

VERBS = {"get", "list", "watch", "create", "update", "patch", "delete"}


class ApiServer(kmock.KubernetesEmulator):
    versions = itertools.count(1)
    kubernetes_version = (1, 33, 0)        # kmock says 1.26, older than the charts' kubeVersion allows

    async def _serve_server_version(self, request: kmock.Request) -> Any:
        major, minor, patch = self.kubernetes_version
        return {**await super()._serve_server_version(request), "major": str(major), "minor": str(minor),
                "gitVersion": f"v{major}.{minor}.{patch}"}

    async def _handle(self, request: kmock.Request) -> Any:
        data = request.data
        if request.resource is not None and request.action == kmock.action.UPDATE and isinstance(data, list):
            # A JSON patch (kopf's finalizers): its resourceVersion test fails with 422, as on a real
            # server, so kopf retries from a fresh object; a passing patch bumps resourceVersion.
            current = self.objects[request.resource, request.namespace, request.name]
            try:
                jsonpatch.apply_patch(current.raw, data)
            except jsonpatch.JsonPatchException as exc:
                raise kmock.KubernetesError(status=422, reason="Invalid", message=str(exc)) from None
            data.append({"op": "replace", "path": "/metadata/resourceVersion", "value": str(next(self.versions))})
        applied = _is_apply(request) and not self._exists(request)
        if isinstance(data, dict) and (request.action == kmock.action.CREATE or applied):
            self._fill_in_new(request, data)
        elif request.action == kmock.action.UPDATE and isinstance(data, dict):
            meta = data.setdefault("metadata", {})
            meta["resourceVersion"] = str(next(self.versions))
            if request.subresource is None and "spec" in data:
                current = self.objects[request.resource, request.namespace, request.name]
                meta["generation"] = current["metadata"].get("generation", 1) + 1
        if (request.method in ("POST", "PUT") or applied) and isinstance(data, dict):
            problems = schema_errors(data)
            if problems:
                raise kmock.KubernetesError(status=422, reason="Invalid", message="; ".join(problems))
        if applied:
            self.objects[request.resource, request.namespace, request.name] = data
        return await super()._handle(request)

    def _exists(self, request: kmock.Request) -> bool:
        key = (request.resource, request.namespace, request.name)
        return key in self.objects and not self.objects[key].deleted

    def _fill_in_new(self, request: kmock.Request, data: dict[str, Any]) -> None:
        meta = data.setdefault("metadata", {})
        meta["resourceVersion"] = str(next(self.versions))
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:8]}"
        if request.namespace:
            meta.setdefault("namespace", request.namespace)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("generation", 1)
        meta.setdefault("creationTimestamp", now())

    async def _serve_list(self, request: kmock.Request) -> Any:
        listing = await super()._serve_list(request)
        selector = request.params.get("labelSelector")
        if selector:
            wanted = dict(term.split("=", 1) for term in selector.split(","))
            listing["items"] = [o for o in listing["items"]
                                if wanted.items() <= ((o.get("metadata") or {}).get("labels") or {}).items()]
        return listing


def _is_apply(request: kmock.Request) -> bool:
    return request.method == "PATCH" and "apply-patch" in (request.headers.get("Content-Type") or "")


def schema_errors(body: dict[str, Any]) -> list[str]:
    """What the API server's schema validation would refuse, for the kinds whose schema is here (a
    body without apiVersion/kind, as kopf posts its events, takes them from the URL: not checked)."""
    if not {"apiVersion", "kind"} <= set(body):
        return []
    if body.get("apiVersion") == SPARK_GROUP_VERSION:
        return spark_operator_errors(body)
    found = kubernetes_errors(body)
    return [] if any("is not a built-in kind" in problem for problem in found) else found


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def declare(server: kmock.KubernetesEmulator, resource: str, kind: str, namespaced: bool = True,
            status: bool = False) -> None:
    """Make ``resource`` ('group/version/plural', 'v1/plural' for the core group) served."""
    server.resources[resource] = kmock.ResourceInfo(kind=kind, singular=kind.lower(), namespaced=namespaced,
                                                    verbs=VERBS, subresources={"status"} if status else set())


def write_kubeconfig(path: Path, server: kmock.KubernetesEmulator, user: str, namespace: str = "default") -> Path:
    """A kubeconfig pointing at the stand-in; the user's token is ``token-<user>``."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "kmock",
        "clusters": [{"name": "kmock", "cluster": {"server": str(server.url).rstrip("/")}}],
        "users": [{"name": user, "user": {"token": f"token-{user}"}}],
        "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": user, "namespace": namespace}}]}))
    return path
