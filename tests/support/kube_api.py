"""kmock's Kubernetes emulator made into the API server stand-in the tests need (no API server can
run here): it fills in what the real one sets (uid, generation bumped by spec changes,
resourceVersion, generateName, creationTimestamp), honours label selectors on lists, fails a JSON
patch whose test fails with 422, creates objects on a server-side apply (as helm 4 installs), and
refuses objects the schemas reject (Kubernetes' own for built-in kinds, the Spark operator's CRDs),
and reports a Kubernetes version the charts support.

Writes behave as the real server's optimistic concurrency: one at a time; a PUT replaces the whole
object; an update (PUT) or patch carrying a stale ``metadata.resourceVersion`` gets 409 Conflict, a
PUT without one 422 for kinds that refuse unconditional updates (Leases); a create of an existing name
409 AlreadyExists. Leases are checked as the API server decodes and validates them (MicroTime with
six fractional digits, a positive duration, no negative transitions). ``deny`` makes requests of one
user to one resource answer 403 Forbidden, as RBAC would."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import itertools
import re
import threading
import uuid
from pathlib import Path
from typing import Any, Iterator

import aiohttp.web
import jsonpatch
import kmock
import yaml

from tests.support.kubernetes_schemas import errors as kubernetes_errors
from tests.support.spark_operator_schemas import GROUP_VERSION as SPARK_GROUP_VERSION
from tests.support.spark_operator_schemas import errors as spark_operator_errors

VERBS = {"get", "list", "watch", "create", "update", "patch", "delete"}
WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# Resources whose registry strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate).
CONDITIONAL_UPDATES_ONLY = {"leases"}
LEASES = "coordination.k8s.io/v1/leases"
# metav1.MicroTime as the API server decodes it (Go layout 2006-01-02T15:04:05.000000Z07:00).
MICRO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)")


class ApiServer(kmock.KubernetesEmulator):
    versions = itertools.count(1)
    kubernetes_version = (1, 33, 0)        # kmock says 1.26, older than the charts' kubeVersion allows
    denied: frozenset[tuple[str, str]] = frozenset()

    def deny(self, user: str, resource: str) -> None:
        """Answer 403 to every request of ``user`` (token ``token-<user>``) on ``resource``, as the API
        server does when no Role grants it."""
        self.denied = self.denied | {(user, resource)}

    async def _serve_server_version(self, request: kmock.Request) -> Any:
        major, minor, patch = self.kubernetes_version
        return {**await super()._serve_server_version(request), "major": str(major), "minor": str(minor),
                "gitVersion": f"v{major}.{minor}.{patch}"}

    async def _handle(self, request: kmock.Request) -> Any:
        if request.resource is None:
            return await super()._handle(request)
        self._authorize(request)
        if request.method not in WRITES:
            return await super()._handle(request)
        if "_writes" not in self.__dict__:
            self._writes = asyncio.Lock()
        async with self._writes:          # one write at a time: a version is checked and bumped at once
            if request.method == "PUT" and request.name and request.subresource is None:
                return await self._replace(request)
            self._check_preconditions(request)
            return await self._write(request)

    def _authorize(self, request: kmock.Request) -> None:
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer token-")
        if any(user == token and kmock.resource(resource) == request.resource for user, resource in self.denied):
            verb = {"GET": "list" if request.name is None else "get", "POST": "create", "PUT": "update",
                    "PATCH": "patch", "DELETE": "delete"}.get(request.method, request.method.lower())
            name = f' "{request.name}"' if request.name else ""
            raise kmock.KubernetesError(
                status=403, reason="Forbidden",
                message=f'{_qualified(request.resource)}{name} is forbidden: User "{token}" cannot {verb} resource '
                        f'"{request.resource.plural}" in API group "{request.resource.group}" in the namespace '
                        f'"{request.namespace}"')

    def _check_preconditions(self, request: kmock.Request) -> None:
        """A create of a name that exists, or a patch from a stale resourceVersion, is refused."""
        data = request.data
        if request.action == kmock.action.CREATE and isinstance(data, dict):
            meta = data.get("metadata") or {}
            key = (request.resource, request.namespace or meta.get("namespace"), meta.get("name"))
            if meta.get("name") and key in self.objects and not self.objects[key].deleted:
                raise _status(409, "AlreadyExists", f'{_qualified(request.resource)} "{meta["name"]}" already exists',
                              request, meta["name"])
        elif request.action == kmock.action.UPDATE and isinstance(data, dict) and self._exists(request):
            sent = (data.get("metadata") or {}).get("resourceVersion")
            if sent and sent != self.objects[request.resource, request.namespace, request.name]["metadata"].get(
                    "resourceVersion"):
                raise _conflict(request)

    async def _replace(self, request: kmock.Request) -> aiohttp.web.Response:
        """PUT: the body replaces the object, if it carries the current resourceVersion."""
        data = request.data
        if not self._exists(request):
            raise _status(404, "NotFound", f'{_qualified(request.resource)} "{request.name}" not found', request,
                          request.name)
        if not isinstance(data, dict):
            raise _status(400, "BadRequest", "the body of an update must be an object", request, request.name)
        key = (request.resource, request.namespace, request.name)
        current = self.objects[key].raw
        meta = data.setdefault("metadata", {})
        sent = meta.get("resourceVersion")
        if not sent and request.resource.plural in CONDITIONAL_UPDATES_ONLY:
            raise _status(422, "Invalid", f'{request.resource.plural.capitalize()} "{request.name}" is invalid: '
                          "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
                          request, request.name)
        if sent and sent != current["metadata"].get("resourceVersion"):
            raise _conflict(request)
        if meta.get("name", request.name) != request.name:
            raise _status(400, "BadRequest", f"the name of the object ({meta['name']}) does not match the name on "
                          f"the URL ({request.name})", request, request.name)
        old_meta = current["metadata"]
        for field in ("name", "namespace", "uid", "creationTimestamp"):
            if field in old_meta:
                meta[field] = old_meta[field]
        changed = data.get("spec") != current.get("spec")
        meta["generation"] = old_meta.get("generation", 1) + (1 if changed else 0)
        meta["resourceVersion"] = str(next(self.versions))
        self._validate(data)
        self.objects[key] = data
        await self._buses[request.resource].put({"type": "MODIFIED", "object": data})
        return aiohttp.web.json_response(data)

    def _validate(self, data: dict[str, Any]) -> None:
        undecodable = decode_errors(data)
        if undecodable:
            raise kmock.KubernetesError(status=400, reason="BadRequest", message="; ".join(undecodable))
        problems = schema_errors(data)
        if problems:
            raise kmock.KubernetesError(status=422, reason="Invalid", message="; ".join(problems))

    async def _write(self, request: kmock.Request) -> Any:
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
            self._validate(data)
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
    if any("is not a built-in kind" in problem for problem in found):
        return []
    return found + (lease_errors(body) if _is_lease(body) else [])


def _is_lease(body: dict[str, Any]) -> bool:
    return (body.get("apiVersion"), body.get("kind")) == ("coordination.k8s.io/v1", "Lease")


def lease_errors(body: dict[str, Any]) -> list[str]:
    """The API server's ValidateLeaseSpec (the OpenAPI schema cannot say these; it checks the types)."""
    spec = body.get("spec") or {}
    found = []
    if isinstance(spec.get("leaseDurationSeconds"), int) and spec["leaseDurationSeconds"] <= 0:
        found.append(f"spec.leaseDurationSeconds: Invalid value: {spec['leaseDurationSeconds']}: must be greater than 0")
    if isinstance(spec.get("leaseTransitions"), int) and spec["leaseTransitions"] < 0:
        found.append(f"spec.leaseTransitions: Invalid value: {spec['leaseTransitions']}: "
                     "must be greater than or equal to 0")
    return found


def decode_errors(body: dict[str, Any]) -> list[str]:
    """What the API server cannot even decode (400): a Lease's MicroTime fields in another layout."""
    if not _is_lease(body):
        return []
    spec = body.get("spec") or {}
    return [f"spec.{field}: cannot parse {spec[field]!r} as a MicroTime (RFC 3339 with six fractional digits)"
            for field in ("acquireTime", "renewTime") if spec.get(field) is not None
            and not (isinstance(spec[field], str) and MICRO_TIME.fullmatch(spec[field]))]


def _qualified(resource: Any) -> str:
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def _status(code: int, reason: str, message: str, request: kmock.Request, name: str) -> kmock.KubernetesError:
    return kmock.KubernetesError(status=code, reason=reason, message=message,
                                 details={"name": name, "group": request.resource.group,
                                          "kind": request.resource.plural})


def _conflict(request: kmock.Request) -> kmock.KubernetesError:
    return _status(409, "Conflict", f'Operation cannot be fulfilled on {_qualified(request.resource)} '
                   f'"{request.name}": the object has been modified; please apply your changes to the latest '
                   "version and try again", request, request.name)


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def declare(server: kmock.KubernetesEmulator, resource: str, kind: str, namespaced: bool = True,
            status: bool = False) -> None:
    """Make ``resource`` ('group/version/plural', 'v1/plural' for the core group) served."""
    server.resources[resource] = kmock.ResourceInfo(kind=kind, singular=kind.lower(), namespaced=namespaced,
                                                    verbs=VERBS, subresources={"status"} if status else set())


def write_kubeconfig(path: Path, server: kmock.KubernetesEmulator | str, user: str, namespace: str = "default") -> Path:
    """A kubeconfig pointing at the stand-in (or its URL); the user's token is ``token-<user>``."""
    url = server if isinstance(server, str) else str(server.url).rstrip("/")
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "kmock",
        "clusters": [{"name": "kmock", "cluster": {"server": url}}],
        "users": [{"name": user, "user": {"token": f"token-{user}"}}],
        "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": user, "namespace": namespace}}]}))
    return path


@contextlib.contextmanager
def serving_in_thread(server: ApiServer) -> Iterator[str]:
    """The stand-in on a loopback port, its event loop in a thread of its own, for clients that block
    (the official Kubernetes client, other processes); yields its URL."""
    loop = asyncio.new_event_loop()
    url: concurrent.futures.Future[str] = concurrent.futures.Future()
    stop: list[asyncio.Event] = []

    async def serve() -> None:
        stop.append(asyncio.Event())
        try:
            async with server, kmock.Server(server):
                url.set_result(str(server.url).rstrip("/"))
                await stop[0].wait()
        except BaseException as exc:
            if not url.done():
                url.set_exception(exc)
            raise

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), name="kube-api-stand-in", daemon=True)
    thread.start()
    try:
        yield url.result(timeout=30)
    finally:
        loop.call_soon_threadsafe(stop[0].set)
        thread.join(30)
        loop.close()


def api_client(url: str, user: str) -> Any:
    """An official Kubernetes client for the stand-in at ``url``, authenticated as ``user``."""
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = url
    configuration.api_key = {"authorization": f"token-{user}"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(configuration)
