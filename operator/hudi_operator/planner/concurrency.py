"""How the jobs writing one table share it. The planner counts the writers it plans (each pipeline
of the table, each scheduled table service that writes the timeline) and decides: one
writer runs as Hudi's single writer; more than one (or ``spec.concurrency.mode: optimistic``) run
under optimistic concurrency control, every job with the same lock settings, LAZY rollback of
failed writes, heartbeats and a few retries of a batch that lost a write conflict. What cannot be safe is refused with the field to change.

Inline table services stay inline under OCC (Hudi runs them in the writer's lock-protected commit
path), except that of several pipelines only the first (by name) schedules compaction and
clustering inline: two writers planning those at once would each plan over the same file slices,
and Hudi asks for a single scheduler of them. The others leave them to it (``disableCompaction``
and ``hoodie.clustering.inline=false``); inline cleaning and archival stay on every writer."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from hudi_engine import config as C
from hudi_engine.storage import Storage
from hudi_jobs.table_service import CLEAN, CLUSTERING, COMPACTION, INDEXING, SAVEPOINT

from ..api.table import MERGE_ON_READ
from .errors import UNSAFE_CONCURRENCY, PlanError
from .settings import OperatorSettings

SINGLE_WRITER, OPTIMISTIC = "singleWriter", "optimistic"
KUBERNETES_LEASE, HIVE_METASTORE, ZOOKEEPER, FILE_SYSTEM = "kubernetesLease", "hiveMetastore", "zookeeper", "fileSystem"
# Table services that write the table's timeline; catalog sync only reads it (and writes the metastore).
WRITING_SERVICES = (COMPACTION, CLUSTERING, CLEAN, SAVEPOINT, INDEXING)

PROVIDER_CLASSES = {KUBERNETES_LEASE: C.LEASE_LOCK_PROVIDER, HIVE_METASTORE: C.HMS_LOCK_PROVIDER,
                    ZOOKEEPER: C.ZK_LOCK_PROVIDER, FILE_SYSTEM: C.FS_LOCK_PROVIDER}
LOCK_PREFIX = "hoodie.write.lock."
# The options a job's concurrency control is made of: only the plan sets them, or a user who agrees.
CONTROL_KEYS = (C.WRITE_CONCURRENCY_MODE.key, C.FAILED_WRITES_CLEANER_POLICY.key, C.HEARTBEAT_INTERVAL_MS.key,
                C.HEARTBEAT_TOLERABLE_MISSES.key)
LOCK_FIELD = "spec.concurrency.lock.provider"
# How often a job of a table with several writers retries a batch that lost a write conflict (Hudi's
# default, 0, fails the job at the first lost conflict): bounded, so a table fought over still fails.
CONFLICT_RETRIES = 3
_WHAT_TO_ADD = ("add spec.concurrency.lock with provider hiveMetastore (uris, or the table's catalogSync "
                "metastore) or zookeeper (url, port, basePath, lockKey)")


@dataclass(frozen=True)
class Lock:
    provider: str                       # kubernetesLease, hiveMetastore, zookeeper, fileSystem, or a class name
    options: dict[str, str]             # hoodie.write.lock.* of every job
    where: str                          # for people: the Lease, the metastore table, the znode, the folder

    def describe(self) -> str:
        return f"{self.provider} {self.where}".strip()


@dataclass(frozen=True)
class Concurrency:
    """The decision for one table: the mode, who writes, the lock they share (optimistic only) and
    the pipeline that keeps scheduling compaction and clustering inline (None: every pipeline may)."""
    mode: str
    writers: tuple[str, ...]
    lock: Lock | None = None
    inline_scheduler: str | None = None
    options: dict[str, str] = field(default_factory=dict)   # what every job of the table gets

    def summary(self) -> str:
        """``optimistic (3 writers: pipeline orders-ingest, compaction, clean), lock: kubernetesLease ...``"""
        count = f"{len(self.writers)} writer{'s' if len(self.writers) != 1 else ''}"
        text = f"{self.mode} ({count}{': ' + ', '.join(self.writers) if self.writers else ''})"
        return text + (f", lock: {self.lock.describe()}" if self.lock else "")

    def status(self) -> dict[str, Any]:
        """The HudiTable's status.concurrency."""
        out: dict[str, Any] = {"mode": self.mode, "writers": list(self.writers)}
        if self.lock:
            out["lock"] = self.lock.describe()
        return out

    def shared_by_pipelines(self) -> bool:
        """Several pipelines write the table: each keeps its own source checkpoint."""
        return sum(w.startswith("pipeline ") for w in self.writers) > 1

    def keeps_inline_scheduling(self, pipeline_name: str) -> bool:
        return self.inline_scheduler is None or self.inline_scheduler == pipeline_name


def table_pipelines(table, pipelines: Iterable | None, this=None) -> list:
    """The pipelines writing ``table``, by name (stable), ``this`` (a pipeline being planned, with the
    spec in effect) in place of its namesake. Suspended ones count: they resume from their checkpoint
    under the same lock, and suspending one must not re-plan (and so restart) every other job."""
    found = {p.metadata.name: p for p in pipelines or () if p.spec.table_ref.name == table.metadata.name}
    if this is not None:
        found[this.metadata.name] = this
    return [found[name] for name in sorted(found)]


def writers(table, pipelines: list, services: Iterable[str]) -> tuple[str, ...]:
    """Who writes the table: its running pipelines, then its scheduled services that write."""
    return (*(f"pipeline {p.metadata.name}" for p in pipelines),
            *(s for s in services if s in WRITING_SERVICES))


def decide(table, pipelines: list, services: Iterable[str], settings: OperatorSettings) -> Concurrency:
    """The table's concurrency control, from its writers, ``spec.concurrency`` and the concurrency
    options a user wrote by hand in the table's or the pipelines' ``options`` (which must agree)."""
    spec = table.spec.concurrency
    found = writers(table, pipelines, services)
    given = _given_options(table, pipelines)
    given_mode = given.get(C.WRITE_CONCURRENCY_MODE.key)
    # Hudi's asynchronous indexer always takes the lock: writers started later must see its plan.
    several = len(found) > 1 or INDEXING in found
    if spec.mode == SINGLE_WRITER or given_mode == C.SINGLE_WRITER:
        where = ("spec.concurrency.mode" if spec.mode == SINGLE_WRITER
                 else f"spec.options.{C.WRITE_CONCURRENCY_MODE.key}")
        if several:
            jobs = f"{len(found)} job{'s' if len(found) != 1 else ''}"
            why = "; the asynchronous indexer needs the lock" if INDEXING in found else ""
            raise _refused(where, f"a single writer, but {jobs} write the table ({', '.join(found)}){why}: set "
                                  "spec.concurrency.mode to auto (or optimistic), or leave services inline and keep "
                                  "one pipeline")
        if given_mode == C.OPTIMISTIC_CONCURRENCY_CONTROL:
            raise _refused(f"spec.options.{C.WRITE_CONCURRENCY_MODE.key}", "contradicts spec.concurrency.mode "
                                                                          "singleWriter: remove one of them")
        return Concurrency(SINGLE_WRITER, found)
    if not several and spec.mode == "auto" and given_mode != C.OPTIMISTIC_CONCURRENCY_CONTROL:
        return Concurrency(SINGLE_WRITER, found)
    failed_writes = given.get(C.FAILED_WRITES_CLEANER_POLICY.key, "LAZY")
    if failed_writes.upper() != "LAZY":
        raise _refused(f"spec.options.{C.FAILED_WRITES_CLEANER_POLICY.key}",
                       f"{failed_writes} rolls back the pending writes of the other writers; optimistic "
                       "concurrency control needs LAZY (only writes whose heartbeat expired): set it to LAZY or "
                       "remove it")
    lock = _lock(table, given, settings)
    retries = C.NUM_RETRIES_ON_CONFLICT_FAILURES.key
    options = {C.WRITE_CONCURRENCY_MODE.key: C.OPTIMISTIC_CONCURRENCY_CONTROL,
               C.FAILED_WRITES_CLEANER_POLICY.key: "LAZY",
               C.HEARTBEAT_INTERVAL_MS.key: str(C.HEARTBEAT_INTERVAL_MS.default),
               C.HEARTBEAT_TOLERABLE_MISSES.key: str(C.HEARTBEAT_TOLERABLE_MISSES.default),
               # a user's own count stays theirs (a pipeline's own options override this in its jobs)
               retries: table.spec.options.get(retries, str(CONFLICT_RETRIES)),
               **lock.options, **given}
    scheduler = pipelines[0].metadata.name if len(pipelines) > 1 and _schedules_inline(table) else None
    return Concurrency(OPTIMISTIC, found, lock, scheduler, options)


def _refused(path: str, message: str, resource: str | None = None) -> PlanError:
    return PlanError(path, message, resource, UNSAFE_CONCURRENCY)


def _schedules_inline(table) -> bool:
    services = table.spec.services
    return ((table.spec.table_type == MERGE_ON_READ and services.compaction.mode == "inline")
            or services.clustering.mode == "inline")


def _is_control(key: str) -> bool:
    return key in CONTROL_KEYS or key.startswith(LOCK_PREFIX)


def _given_options(table, pipelines: list) -> dict[str, str]:
    """The concurrency options written by hand; every job must get the same, so a pipeline's must
    agree with the table's and with the other pipelines'."""
    given = {k: v for k, v in table.spec.options.items() if _is_control(k)}
    origin = dict.fromkeys(given, "the HudiTable's spec.options")
    for pipeline in pipelines:
        for key, value in pipeline.spec.options.items():
            if not _is_control(key):
                continue
            if key in given and given[key] != value:
                raise _refused(f"spec.options.{key}",
                               f"HudiPipeline {pipeline.metadata.name} sets {value!r}, {origin[key]} "
                               f"{given[key]!r}: every job of a table shares its concurrency settings; set them "
                               "once in the HudiTable (spec.concurrency, or spec.options)",
                               f"HudiPipeline/{pipeline.metadata.name}")
            given.setdefault(key, value)
            origin.setdefault(key, f"HudiPipeline {pipeline.metadata.name}")
    return given


def _lock(table, given: dict[str, str], settings: OperatorSettings) -> Lock:
    """The lock of the table: spec.concurrency.lock, else one written by hand in options, else the
    platform's default (none without a cluster: a lock file for local paths)."""
    lock_spec = table.spec.concurrency.lock
    given_class = given.get(C.LOCK_PROVIDER.key)
    if lock_spec is None and given_class:
        _check_given_lock(table, given)
        return Lock(_provider_name(given_class), {}, "(spec.options)")
    provider = lock_spec.provider if lock_spec else settings.default_lock_provider
    local = Storage(table.spec.base_path).is_local
    if provider is None:
        if not local:
            raise _refused(LOCK_FIELD, f"several jobs write the table and its basePath {table.spec.base_path} is on "
                                       f"object storage, where a lock file is not safe and no cluster provides a "
                                       f"Lease: {_WHAT_TO_ADD}")
        provider = FILE_SYSTEM
    lock = _PROVIDERS[provider](table, lock_spec, settings)
    if given_class and given_class != PROVIDER_CLASSES[provider]:
        raise _refused(f"spec.options.{C.LOCK_PROVIDER.key}", f"{given_class} contradicts the lock the plan takes "
                                                               f"({provider}): remove the option, or choose the "
                                                               f"provider in {LOCK_FIELD}")
    for key, value in lock.options.items():
        if key in given and given[key] != value:
            raise _refused(f"spec.options.{key}", f"{given[key]!r} contradicts {value!r} of the {provider} lock: "
                                                 "remove the option, or set it in spec.concurrency.lock")
    return lock


def _check_given_lock(table, given: dict[str, str]) -> None:
    """A lock written by hand is taken as written, unless it cannot exclude the other jobs: an
    in-process lock (each job is its own process) or a lock file on object storage."""
    provider, path = given[C.LOCK_PROVIDER.key], given.get(C.LOCK_FILESYSTEM_PATH.key)
    field_name = f"spec.options.{C.LOCK_PROVIDER.key}"
    if provider == C.IN_PROCESS_LOCK_PROVIDER:
        raise _refused(field_name, "an in-process lock excludes writers of one process only, and each job of "
                                  f"the table is its own: remove it and set {LOCK_FIELD}")
    if provider == C.FS_LOCK_PROVIDER:
        _check_lock_file(table, path, field_name)


def _check_lock_file(table, path: str | None, field_name: str) -> None:
    """A lock file excludes other writers only where files are created atomically: local or shared
    POSIX disks (the engine refuses it elsewhere too)."""
    where = path or table.spec.base_path
    if not Storage(where).is_local:
        raise _refused(field_name, f"a lock file on {where} (object storage or a remote file system) does not "
                                   f"exclude other writers: {_WHAT_TO_ADD}, or kubernetesLease on a cluster")


def _provider_name(class_name: str) -> str:
    return next((name for name, cls in PROVIDER_CLASSES.items() if cls == class_name), class_name)


def _section(lock_spec, attribute: str):
    return getattr(lock_spec, attribute) if lock_spec else None


def _lease(table, lock_spec, settings: OperatorSettings) -> Lock:
    section = _section(lock_spec, "kubernetes_lease")
    name = (section.name if section and section.name else lease_name(table))
    namespace = table.metadata.namespace or settings.namespace
    duration = section.duration_seconds if section else C.LEASE_DURATION_SECONDS.default
    return Lock(KUBERNETES_LEASE, {C.LOCK_PROVIDER.key: C.LEASE_LOCK_PROVIDER, C.LEASE_NAMESPACE.key: namespace,
                                   C.LEASE_NAME.key: name, C.LEASE_DURATION_SECONDS.key: str(duration)}, f"{namespace}/{name}")


def lease_name(table) -> str:
    """hudi-lock-<table name, DNS-safe>-<8 hex of a hash of the base path URI>, within 63 characters."""
    digest = hashlib.sha256(table.spec.base_path.rstrip("/").encode()).hexdigest()[:8]
    name = table.spec.effective_table_name(table.metadata.name)
    safe = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63 - len("hudi-lock--") - 8].strip("-")
    return f"hudi-lock-{safe}-{digest}" if safe else f"hudi-lock-{digest}"


def _hive_metastore(table, lock_spec, settings: OperatorSettings) -> Lock:
    """The metastore of spec.concurrency.lock.hiveMetastore, else the table's catalogSync target's, else
    the platform's (the operator's lock.hiveMetastore.uris)."""
    section = _section(lock_spec, "hive_metastore")
    target = table.spec.catalog_sync[0] if table.spec.catalog_sync else None
    uris = ((section.uris if section else None) or (target.metastore_uris if target else None)
            or settings.lock_services.hive_metastore_uris)
    if not uris:
        raise _refused("spec.concurrency.lock.hiveMetastore.uris",
                       "the hiveMetastore lock needs the metastore's thrift URIs and neither the table (no "
                       "catalogSync target) nor the platform names one: set uris (thrift://host:9083), or choose "
                       f"another {LOCK_FIELD}")
    database = ((section.database if section else None) or (target.database if target else None)
                or table.spec.database)
    name = ((section.table if section else None) or (target.table if target else None)
            or table.spec.effective_table_name(table.metadata.name))
    return Lock(HIVE_METASTORE, {C.LOCK_PROVIDER.key: C.HMS_LOCK_PROVIDER, C.HMS_LOCK_URIS.key: uris,
                                 C.HMS_LOCK_DATABASE.key: database, C.HMS_LOCK_TABLE.key: name}, f"{database}.{name} at {uris}")


def _zookeeper(table, lock_spec, settings: OperatorSettings) -> Lock:
    """Each field of spec.concurrency.lock.zookeeper, else the platform's (the operator's lock.zookeeper)."""
    section = _section(lock_spec, "zookeeper")
    platform = settings.lock_services
    url = _field(section, "url") or platform.zookeeper_url
    if not url:
        raise _refused("spec.concurrency.lock.zookeeper.url",
                       "the zookeeper lock needs the ensemble's hosts and the platform names none: set url "
                       f"(host:2181, several separated by commas), or choose another {LOCK_FIELD}")
    port = _field(section, "port") or platform.zookeeper_port
    base_path = _field(section, "base_path") or platform.zookeeper_base_path
    key = _field(section, "lock_key") or table.spec.effective_table_name(table.metadata.name)
    return Lock(ZOOKEEPER, {C.LOCK_PROVIDER.key: C.ZK_LOCK_PROVIDER, C.ZK_CONNECT_URL.key: url,
                            C.ZK_PORT.key: str(port), C.ZK_BASE_PATH.key: base_path,
                            C.ZK_LOCK_KEY.key: key}, f"{url} {base_path.rstrip('/')}/{key}")


def _field(section, attribute: str):
    return getattr(section, attribute) if section else None


def _file_system(table, lock_spec, settings: OperatorSettings) -> Lock:
    section = _section(lock_spec, "file_system")
    path = section.path if section else None
    _check_lock_file(table, path, LOCK_FIELD)
    options = {C.LOCK_PROVIDER.key: C.FS_LOCK_PROVIDER}
    if path:
        options[C.LOCK_FILESYSTEM_PATH.key] = path
    return Lock(FILE_SYSTEM, options, path or f"{table.spec.base_path.rstrip('/')}/.hoodie/.aux")


_PROVIDERS = {KUBERNETES_LEASE: _lease, HIVE_METASTORE: _hive_metastore, ZOOKEEPER: _zookeeper,
              FILE_SYSTEM: _file_system}
