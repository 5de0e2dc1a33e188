"""The table lock on a Kubernetes Lease (``coordination.k8s.io/v1``): this platform's own provider,
``dev.hudi.lakehouse.transaction.lock.KubernetesLeaseLockProvider``, for clusters that run no ZooKeeper
and no metastore to lock with. It works as client-go's leader election on a LeaseLock does:

- the Lease ``<namespace>/<name>`` names its holder (``spec.holderIdentity``: host, pid and a uuid of
  one provider), how long a hold lasts unrenewed (``leaseDurationSeconds``), when it was taken
  (``acquireTime``) and last renewed (``renewTime``), and how often it changed hands (``leaseTransitions``);
- every write is conditional on the ``metadata.resourceVersion`` read (the API server answers a stale
  one with 409 Conflict), so of two writers acting on one reading exactly one wins;
- acquiring creates the Lease if absent, takes it over if released (empty holder) or expired, and
  otherwise polls; the holder renews it every third of the duration from a daemon thread and releases
  it by clearing the holder (the Lease stays, as client-go leaves it).

Expiry and clocks: a held Lease is expired only when (1) its ``resourceVersion`` has not changed for
``leaseDurationSeconds`` by this process's monotonic clock since it first read that version (client-go's
rule: the API server's versions, not anyone's wall clock, show the holder stopped renewing), and (2)
``renewTime + leaseDurationSeconds`` has passed by this machine's wall clock (what the fields mean to
Kubernetes and kubectl). (1) keeps takeover safe without synchronised clocks, assuming only that clocks
run at the same rate; (2) can only delay a takeover, by the skew when the holder's clock is ahead (nodes
run NTP: skew far below a lease duration is assumed, for liveness only). The holder trusts its hold for
two thirds of the duration after it sent its last successful renewal, so it stops committing before any
other writer can have taken the Lease over.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import random
import re
import threading
import time
from typing import Any

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieLockError, HoodieLockLostError
from ..storage import Storage
from ..storage.filesystems import SCHEMES, scheme_of
from .provider import LockProvider, describe_owner

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
OWNER_ANNOTATION = "lakehouse.hudi.dev/lock-owner"     # who holds it and why, for error messages
RBAC_NEEDED = "apiGroups [coordination.k8s.io], resources [leases], verbs [get, create, update]"
TRUSTED_SHARE = 2 / 3          # of the duration after the last renewal during which a holder trusts its hold
_NAME_LIMIT = 63
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


# --- pure parts ----------------------------------------------------------------------------------
def micro_time(moment: _dt.datetime) -> str:
    """A Kubernetes MicroTime: RFC 3339 in UTC with exactly six fractional digits, the layout the API
    server decodes (``isoformat`` drops the fraction at microsecond 0, which it would refuse)."""
    return moment.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> _dt.datetime | None:
    """A MicroTime or Time as the API server returns it; None when absent or unreadable."""
    if not text:
        return None
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=_dt.timezone.utc)


def holder_identity(info: dict) -> str:
    """Unique per provider instance: ``<host>_<pid>_<uuid>``."""
    return f"{info['host']}_{info['pid']}_{info['owner']}"


def lease_expired(spec: dict, unchanged_for: float, now: _dt.datetime, default_duration: int) -> bool:
    """Whether a held Lease may be taken over: its version unchanged for a duration as we measured it,
    and its renewTime plus the duration past by our clock (see the module's note on clocks)."""
    duration = spec.get("leaseDurationSeconds") or default_duration
    if unchanged_for < duration:
        return False
    renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
    return renewed is None or renewed + _dt.timedelta(seconds=duration) <= now


def held_spec(previous: dict, identity: str, duration: int, now: _dt.datetime) -> dict:
    """The spec of a Lease ``identity`` takes (or renews) from ``previous``: a new holder counts a transition."""
    renewing = previous.get("holderIdentity") == identity
    transitions = previous.get("leaseTransitions") or 0
    return {"holderIdentity": identity, "leaseDurationSeconds": duration,
            "acquireTime": previous.get("acquireTime") if renewing and previous.get("acquireTime") else micro_time(now),
            "renewTime": micro_time(now),
            "leaseTransitions": transitions if renewing else transitions + 1}


def released_spec(previous: dict, now: _dt.datetime) -> dict:
    """client-go's release: no holder, a one-second duration (so clients that ignore an empty holder
    see it expire at once), transitions kept."""
    return {**previous, "holderIdentity": "", "leaseDurationSeconds": 1,
            "acquireTime": micro_time(now), "renewTime": micro_time(now)}


def describe_lease(lease: dict | None, now: _dt.datetime) -> str:
    """Who holds the Lease, for messages."""
    if lease is None:
        return "nobody (the Lease does not exist)"
    spec = lease.get("spec") or {}
    identity = spec.get("holderIdentity") or ""
    if not identity:
        return "nobody (released)"
    try:
        owner = json.loads(((lease.get("metadata") or {}).get("annotations") or {}).get(OWNER_ANNOTATION) or "{}")
    except ValueError:
        owner = {}
    who = describe_owner(owner) if owner and holder_identity(owner) == identity else identity
    renewed = parse_time(spec.get("renewTime"))
    age = f"renewed {(now - renewed).total_seconds():.1f} s ago" if renewed else "never renewed"
    return (f"{who}: {age}, leaseDurationSeconds {spec.get('leaseDurationSeconds')}, "
            f"{spec.get('leaseTransitions') or 0} transitions")


def default_lease_name(table_name: str | None, base_path: str) -> str:
    """``hudi-lock-<table name, DNS-safe>-<8 hex of a hash of the base path URI>``: the same for every
    writer of one table however it spells the scheme (``s3a://`` is ``s3://``), at most 63 characters."""
    uri = Storage(base_path).uri("")
    scheme = scheme_of(uri)
    canonical = f"{SCHEMES.get(scheme, scheme)}://{uri.split('://', 1)[1]}"
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:8]
    table = re.sub(r"[^a-z0-9]+", "-", (table_name or "").lower()).strip("-")
    table = table[:_NAME_LIMIT - len("hudi-lock--") - len(digest)].rstrip("-")
    return "-".join(part for part in ("hudi-lock", table, digest) if part)


def own_namespace() -> str:
    """The pod's namespace (its service account's); off a cluster the kubeconfig context's, as kubectl."""
    try:
        with open(SERVICE_ACCOUNT_NAMESPACE) as f:
            found = f.read().strip()
        if found:
            return found
    except OSError:
        pass
    from kubernetes import config

    try:
        _, active = config.list_kube_config_contexts(os.environ.get("KUBECONFIG") or None)
    except (config.ConfigException, OSError):
        return "default"
    return ((active or {}).get("context") or {}).get("namespace") or "default"


def api_client_from_environment() -> Any:
    """The in-cluster service account's client; off a cluster, the kubeconfig's (local runs)."""
    from kubernetes import client, config

    configuration = client.Configuration()
    try:
        config.load_incluster_config(client_configuration=configuration)
    except config.ConfigException:
        try:
            config.load_kube_config(os.environ.get("KUBECONFIG") or None, client_configuration=configuration)
        except (config.ConfigException, OSError) as exc:
            raise HoodieConfigError(
                f"{C.LEASE_LOCK_PROVIDER} needs the Kubernetes API: this process runs in no pod (no service "
                f"account) and has no usable kubeconfig ({exc}). Run the job on the cluster, set KUBECONFIG, or "
                f"choose another {C.LOCK_PROVIDER.key}") from None
    return client.ApiClient(configuration)


# --- the provider --------------------------------------------------------------------------------
class _Conflict(Exception):
    """409: the Lease changed since it was read (or was created meanwhile)."""


class _Absent(Exception):
    """404 on a read: there is no Lease yet."""


class _Unavailable(Exception):
    """The API server could not be reached or failed; worth retrying."""


class _Lost(Exception):
    """A renewal found another holder."""


class KubernetesLeaseLockProvider(LockProvider):
    """One table's lock on one Lease. ``api_client``: an official Kubernetes ``ApiClient`` (tests give
    one for a stand-in); by default the pod's service account, or the kubeconfig off a cluster."""
    kind = "Kubernetes Lease"

    def __init__(self, namespace: str, lease_name: str, duration_s: int = 60, poll_ms: int = 1000,
                 purpose: str = "", api_client: Any = None):
        if duration_s < 1:
            raise HoodieConfigError(f"{C.LEASE_DURATION_SECONDS.key}={duration_s} must be at least 1 second")
        if not (len(lease_name) <= 253 and _DNS_SUBDOMAIN.fullmatch(lease_name)):
            raise HoodieConfigError(f"{C.LEASE_NAME.key}={lease_name!r} is not a Kubernetes object name "
                                    "(lower-case letters, digits, '-' and '.', at most 253 characters)")
        super().__init__(f"{namespace}/{lease_name}", purpose)
        self.namespace, self.lease_name, self.duration_s = namespace, lease_name, duration_s
        self.identity = holder_identity(self.info)
        self.poll_s = max(0.01, poll_ms / 1000)
        self._owns_client = api_client is None
        self._client = api_client if api_client is not None else api_client_from_environment()
        self._timeout = min(10.0, max(1.0, duration_s / 3))
        self._state = threading.Lock()
        self._lease: dict | None = None     # what we last wrote while holding it
        self._renewed_at = 0.0              # monotonic time our last successful write was sent
        self._lost: str | None = None
        self._seen: tuple[str, float] | None = None    # (resourceVersion, monotonic time first read)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    @classmethod
    def for_table(cls, base_path: str, cfg: HoodieConfig, table_name: str | None = None, purpose: str = "",
                  api_client: Any = None) -> "KubernetesLeaseLockProvider":
        name = cfg.get_str(C.LEASE_NAME) or default_lease_name(table_name or cfg.get_str(C.TABLE_NAME), base_path)
        namespace = cfg.get_str(C.LEASE_NAMESPACE) or own_namespace()
        return cls(namespace, name, cfg.get(C.LEASE_DURATION_SECONDS), cfg.get(C.LOCK_WAIT_TIME_MS_BETWEEN_RETRY),
                   purpose, api_client)

    # --- acquiring ---------------------------------------------------------------------------------
    def try_lock(self, timeout: float) -> bool:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                lease = self._read()
                if lease is None:
                    if self._create():
                        return True
                    continue                      # created by another writer at the same moment: read it
                if self._may_take(lease) and self._take(lease):
                    return True
            except _Unavailable as exc:
                log.warning(f"the Kubernetes API did not answer for the Lease {self.name} ({exc}); retrying")
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, self.poll_s * random.uniform(1.0, 1.5)))

    def _may_take(self, lease: dict) -> bool:
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if not holder or holder == self.identity:
            return True
        unchanged_for = time.monotonic() - self._seen[1] if self._seen else 0.0
        return lease_expired(spec, unchanged_for, _now(), self.duration_s)

    def _create(self) -> bool:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.lease_name, "namespace": self.namespace,
                             "annotations": {OWNER_ANNOTATION: json.dumps(self.info)}},
                "spec": {**held_spec({}, self.identity, self.duration_s, _now()), "leaseTransitions": 0}}
        sent = time.monotonic()
        try:
            lease = self._request("create", "POST", body=body)
        except _Conflict:
            return False
        self._hold(lease, sent)
        return True

    def _take(self, lease: dict) -> bool:
        """Replace the Lease read (its resourceVersion) with us as holder: a 409 means another writer won."""
        previous = lease.get("spec") or {}
        meta = lease.get("metadata") or {}
        body = {**lease, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}),
                                                              OWNER_ANNOTATION: json.dumps(self.info)}},
                "spec": held_spec(previous, self.identity, self.duration_s, _now())}
        sent = time.monotonic()
        try:
            written = self._request("update", "PUT", body=body)
        except _Conflict:
            return False
        if previous.get("holderIdentity") and previous.get("holderIdentity") != self.identity:
            log.info(f"took over the expired Lease {self.name} of {describe_lease(lease, _now())}")
        self._hold(written, sent)
        return True

    def _hold(self, lease: dict, sent: float) -> None:
        with self._state:
            self._lease, self._renewed_at, self._lost = lease, sent, None
        if self._renewer is not None and self._renewer.is_alive():
            return                                # taken again while held: the running renewer goes on
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew_loop, name=f"hudi-lease-renewer {self.name}",
                                         daemon=True)
        self._renewer.start()

    # --- holding -----------------------------------------------------------------------------------
    def _renew_loop(self) -> None:
        every = self.duration_s / 3
        wait = every
        while not self._stop.wait(wait):
            try:
                self._renew_once()
                wait = every
            except _Lost:
                return
            except (_Unavailable, HoodieLockError) as exc:
                log.warning(f"could not renew the Lease {self.name} ({exc}); retrying")
                wait = min(every, self.poll_s)

    def _renew_once(self) -> None:
        """renewTime now, conditional on the version we last wrote; another holder means we lost it."""
        with self._state:
            lease = self._lease
        while lease is not None:
            body = {**lease, "spec": {**lease["spec"], "renewTime": micro_time(_now())}}
            sent = time.monotonic()
            try:
                written = self._request("update", "PUT", body=body)
            except _Conflict:
                current = self._read()
                if current is not None and (current.get("spec") or {}).get("holderIdentity") == self.identity:
                    lease = current               # only its metadata changed (labels, say): still ours
                    continue
                with self._state:
                    self._lost = f"taken over by {describe_lease(current, _now())}"
                raise _Lost() from None
            with self._state:
                self._lease, self._renewed_at = written, sent
            return

    def check_held(self) -> None:
        with self._state:
            lost, renewed_at = self._lost, self._renewed_at
        if lost is None:
            try:
                current = self._read()
            except (_Unavailable, HoodieLockError):
                current = {"spec": {"holderIdentity": self.identity}}      # judged by our renewals alone
            if (current is None or (current.get("spec") or {}).get("holderIdentity") != self.identity):
                lost = f"now held by {describe_lease(current, _now())}"
        silent = time.monotonic() - renewed_at
        if lost is None and silent >= self.duration_s * TRUSTED_SHARE:
            lost = f"not renewed for {silent:.1f} s, so another writer may take it over any moment"
        if lost is not None:
            raise HoodieLockLostError(
                f"the Kubernetes Lease {self.name} was lost while held ({lost}); it expires "
                f"{C.LEASE_DURATION_SECONDS.key}={self.duration_s} s after its last renewal. Retry the write; "
                "if this recurs, check that the job is not starved of CPU and that the API server answers")

    # --- releasing ---------------------------------------------------------------------------------
    def unlock(self) -> None:
        """Clear the holder (conditional on our version): the next writer takes it without waiting."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        with self._state:
            lease, lost, self._lease = self._lease, self._lost, None
        while lease is not None and lost is None:
            meta = lease.get("metadata") or {}
            annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != OWNER_ANNOTATION}
            body = {**lease, "metadata": {**meta, "annotations": annotations},
                    "spec": released_spec(lease.get("spec") or {}, _now())}
            try:
                self._request("update", "PUT", body=body)
                return
            except _Conflict:
                try:
                    lease = self._read()
                except (_Unavailable, HoodieLockError):
                    lease = None
                if lease is not None and (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                    return                        # taken over meanwhile: nothing of ours to release
            except (_Unavailable, HoodieLockError) as exc:
                log.warning(f"could not release the Lease {self.name} ({exc}); it expires "
                            f"{self.duration_s} s after its last renewal")
                return

    def holder(self) -> str:
        try:
            return describe_lease(self._read(), _now())
        except (_Unavailable, HoodieLockError) as exc:
            return f"unknown (the Lease could not be read: {exc})"

    def stale_hint(self) -> str:
        return (f"the Lease expires its leaseDurationSeconds (ours: {C.LEASE_DURATION_SECONDS.key}="
                f"{self.duration_s}) after its last renewal and is then taken over")

    def close(self) -> None:
        self._stop.set()
        if self._owns_client:
            self._client.close()

    # --- the API -----------------------------------------------------------------------------------
    def _read(self) -> dict | None:
        try:
            lease = self._request("get", "GET")
        except _Absent:
            return None
        version = (lease.get("metadata") or {}).get("resourceVersion") or ""
        if self._seen is None or self._seen[0] != version:
            self._seen = (version, time.monotonic())
        return lease

    def _request(self, verb: str, method: str, body: dict | None = None) -> dict:
        """One call on the Lease, its JSON answer as the server sent it. Raw JSON both ways: the client's
        typed models would re-format MicroTimes (``isoformat`` drops the fraction at microsecond 0)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        path = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases" + ("" if method == "POST" else "/{name}")
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            request = self._client.param_serialize(method, path, {"namespace": self.namespace, "name": self.lease_name},
                                                   header_params=headers, body=body, auth_settings=["BearerToken"])
            response = self._client.call_api(*request, _request_timeout=self._timeout)
            response.read()
        except (ApiException, HTTPError) as exc:       # no answer: connection, TLS, timeout
            raise _Unavailable(f"{verb}: {exc}") from None
        status, message = response.status, _message(response.data)
        if 200 <= status <= 299:
            return json.loads(response.data)
        if status == 409:
            raise _Conflict(message)
        if status == 404 and verb == "get":
            raise _Absent()
        if status in (401, 403):
            raise HoodieLockError(
                f"the Kubernetes API refused to {verb} the Lease {self.lease_name} in namespace {self.namespace} "
                f"({status} {response.reason}: {message}). Writers of the table lock through it: give their "
                f"service account a Role in namespace {self.namespace} with {RBAC_NEEDED} (the hudi-lakehouse "
                f"chart's spark-jobs Role has it), or choose another {C.LOCK_PROVIDER.key}")
        if status in (400, 404, 422):
            raise HoodieLockError(f"the Kubernetes API refused to {verb} the Lease {self.name} "
                                  f"({status} {response.reason}: {message})")
        raise _Unavailable(f"{verb}: {status} {response.reason}: {message}")


def _message(body: bytes | None) -> str:
    """The message of the API server's Status, else the raw body."""
    try:
        return str(json.loads(body or b"").get("message") or body)
    except (ValueError, AttributeError):
        return (body or b"").decode(errors="replace")[:500]


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)
