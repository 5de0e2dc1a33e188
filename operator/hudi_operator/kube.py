"""The Kubernetes API calls the handlers make, through the official client's ApiClient (its auth,
TLS and kubeconfig handling) but with plain JSON dicts in and out: the planner's manifests are
dicts, and every kind here (core, Spark operator, our own) is addressed the same way."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import kubernetes

from .api import API_GROUP, API_VERSION

MERGE_PATCH = "application/merge-patch+json"
LAKEHOUSE = f"{API_GROUP}/{API_VERSION}"
SPARK = "sparkoperator.k8s.io/v1beta2"
PLURALS = {
    ("v1", "ConfigMap"): "configmaps",
    (SPARK, "SparkApplication"): "sparkapplications",
    (SPARK, "ScheduledSparkApplication"): "scheduledsparkapplications",
    (LAKEHOUSE, "HudiTable"): "huditables",
    (LAKEHOUSE, "HudiPipeline"): "hudipipelines",
}


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


@dataclass(frozen=True)
class Kind:
    api_version: str
    kind: str

    @property
    def plural(self) -> str:
        return PLURALS[(self.api_version, self.kind)]

    def path(self, namespace: str, name: str | None = None, subresource: str | None = None) -> str:
        root = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        return "/".join(p for p in (f"{root}/namespaces/{namespace}/{self.plural}", name, subresource) if p)


CONFIG_MAP = Kind("v1", "ConfigMap")
SPARK_APPLICATION = Kind(SPARK, "SparkApplication")
SCHEDULED_SPARK_APPLICATION = Kind(SPARK, "ScheduledSparkApplication")
HUDI_TABLE = Kind(LAKEHOUSE, "HudiTable")
HUDI_PIPELINE = Kind(LAKEHOUSE, "HudiPipeline")


def client_from_environment() -> kubernetes.client.ApiClient:
    """In a pod: its service account; elsewhere: the kubeconfig ($KUBECONFIG), as kopf logs in."""
    try:
        kubernetes.config.load_incluster_config()
    except kubernetes.config.ConfigException:
        kubernetes.config.load_kube_config()
    return kubernetes.client.ApiClient()


class Kube:
    """Blocking calls (the handlers run them in threads). 404 reads as None / nothing to do."""

    def __init__(self, client: kubernetes.client.ApiClient):
        self.client = client

    def get(self, kind: Kind, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._call("GET", kind.path(namespace, name))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def list(self, kind: Kind, namespace: str, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
        query = {"labelSelector": ",".join(f"{k}={v}" for k, v in labels.items())} if labels else None
        items = self._call("GET", kind.path(namespace), query=query).get("items") or []
        for item in items:          # list items carry no apiVersion/kind of their own
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
        return items

    def create(self, manifest: dict[str, Any]) -> None:
        kind, namespace = Kind(manifest["apiVersion"], manifest["kind"]), manifest["metadata"]["namespace"]
        try:
            self._call("POST", kind.path(namespace), body=manifest)
        except ApiError as exc:
            if exc.status != 409:   # created meanwhile: the next reconcile compares it
                raise

    def patch(self, kind: Kind, namespace: str, name: str, patch: dict[str, Any],
              subresource: str | None = None) -> None:
        self._call("PATCH", kind.path(namespace, name, subresource), body=patch, content_type=MERGE_PATCH)

    def delete(self, kind: Kind, namespace: str, name: str) -> None:
        try:
            self._call("DELETE", kind.path(namespace, name), body={"propagationPolicy": "Background"})
        except ApiError as exc:
            if exc.status != 404:
                raise

    def _call(self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None,
              content_type: str = "application/json") -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        request = self.client.param_serialize(method, path, query_params=list((query or {}).items()),
                                              header_params=headers, body=body, auth_settings=["BearerToken"])
        response = self.client.call_api(*request)
        data = response.read()
        if response.status >= 400:
            raise ApiError(response.status, _message(data))
        return json.loads(data) if data else {}


def _message(data: bytes | None) -> str:
    try:
        return json.loads(data or b"{}").get("message") or (data or b"").decode(errors="replace")
    except ValueError:
        return (data or b"").decode(errors="replace")
