"""The kopf handlers: they read the world (the resources, their children, a table's timeline), hand
it to the pure reconcile functions and apply what those decide. Every trigger — create, update,
resume, the resync timer, a change of an owned Spark application — runs the same reconcile of
one object, serialized per object, so they never race each other.

What only the operator can detect (a missing target table, a spec it cannot plan, an unreadable
base path) becomes a Degraded condition with the reason and what to do, never a crash loop;
Kubernetes API failures are retried by kopf with backoff."""
from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
from collections import defaultdict
from typing import Any, Callable

import kopf

from hudi_engine.api import HoodieTable
from hudi_engine.errors import HoodieError
from hudi_engine.storage import Storage
from hudi_jobs.table_service import INDEXING

from . import api
from .kube import (
    CONFIG_MAP,
    HUDI_PIPELINE,
    HUDI_TABLE,
    SCHEDULED_SPARK_APPLICATION,
    SPARK,
    SPARK_APPLICATION,
    ApiError,
    Kind,
    Kube,
    client_from_environment,
)
from .metrics import METRICS
from .planner import PlanError, plan_pipeline, plan_table, triggered_run
from .planner.errors import PLAN_FAILED
from .planner.labels import (
    COMPONENT_LABEL,
    MANAGED_BY_LABEL,
    MANAGER,
    MAX_LABEL,
    PIPELINE_COMPONENT,
    PIPELINE_LABEL,
    SERVICE_LABEL,
    TABLE_LABEL,
    TABLE_SERVICE_COMPONENT,
    label_value,
)
from .reconcile import children, lifecycle, services_due, table_status
from .reconcile.conditions import DEGRADED, degraded_status, find
from .settings import Settings

SETTINGS = Settings.from_env()
GROUP, VERSION = api.API_GROUP, api.API_VERSION
SPARK_GROUP, SPARK_VERSION = SPARK.split("/")
FINALIZER = f"{GROUP}/finalizer"
CHILD_KINDS = (CONFIG_MAP, SPARK_APPLICATION, SCHEDULED_SPARK_APPLICATION)
DELETION_RETRY_SECONDS = 15
DELETION_POLL_SECONDS = 2
EVENT_MESSAGE_LIMIT = 1024
log = logging.getLogger("hudi_operator")


class Degraded(Exception):
    """A problem the user fixes (reason: CamelCase; message: what is wrong and what to do)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason, self.message = reason, message


# --- wiring -----------------------------------------------------------------------------------------
@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    settings.persistence.finalizer = FINALIZER
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=GROUP, key="last-handled-configuration")
    settings.posting.level = logging.WARNING     # kopf's own log lines; our events are posted explicitly
    settings.peering.lifetime = SETTINGS.peering_lifetime
    # A resource deleted while its resync timer is mid-reconcile keeps its finalizer until kopf sees
    # the timer gone; kopf looks again only every 60 s by default, which held deletions up for a minute.
    settings.background.cancellation_polling = DELETION_POLL_SECONDS
    memo.kube = Kube(client_from_environment())
    memo.locks = defaultdict(asyncio.Lock)
    memo.tables = {}                             # (namespace, table) → TableObservation, for pipelines
    METRICS.serve(SETTINGS.metrics_port)


@kopf.on.create(GROUP, VERSION, "huditables")
@kopf.on.update(GROUP, VERSION, "huditables")
@kopf.on.resume(GROUP, VERSION, "huditables")
async def table_changed(name: str, namespace: str, memo: kopf.Memo, **_: Any) -> None:
    """A table's jobs and status, then its pipelines: their plans are made from the table too."""
    await _retrying("HudiTable", reconcile_table(memo, namespace, name))
    for pipeline in await _io(_pipelines_of, memo.kube, namespace, name):
        await _retrying("HudiPipeline", reconcile_pipeline(memo, namespace, pipeline["metadata"]["name"]))


@kopf.on.create(GROUP, VERSION, "hudipipelines")
@kopf.on.update(GROUP, VERSION, "hudipipelines")
@kopf.on.resume(GROUP, VERSION, "hudipipelines")
async def pipeline_changed(name: str, namespace: str, spec: kopf.Spec, memo: kopf.Memo, **_: Any) -> None:
    await _retrying("HudiPipeline", reconcile_pipeline(memo, namespace, name))
    await _writers_changed(memo, namespace, (spec.get("tableRef") or {}).get("name"), name)


async def _writers_changed(memo: kopf.Memo, namespace: str, table: str | None, pipeline: str) -> None:
    """A pipeline came, changed or went: the table's other jobs are planned again, as its writers
    (and so their concurrency control) may have changed."""
    if not table:
        return
    await _retrying("HudiTable", reconcile_table(memo, namespace, table))
    for other in await _io(_pipelines_of, memo.kube, namespace, table):
        if other["metadata"]["name"] != pipeline:
            await _retrying("HudiPipeline", reconcile_pipeline(memo, namespace, other["metadata"]["name"]))


@kopf.timer(GROUP, VERSION, "huditables", interval=SETTINGS.resync_seconds, initial_delay=SETTINGS.resync_seconds)
async def table_resync(name: str, namespace: str, memo: kopf.Memo, **_: Any) -> None:
    """Re-plan, put back what drifted, and read the timeline again."""
    await _retrying("HudiTable", reconcile_table(memo, namespace, name))


@kopf.timer(GROUP, VERSION, "hudipipelines", interval=SETTINGS.resync_seconds,
            initial_delay=SETTINGS.resync_seconds)
async def pipeline_resync(name: str, namespace: str, memo: kopf.Memo, **_: Any) -> None:
    await _retrying("HudiPipeline", reconcile_pipeline(memo, namespace, name))


@kopf.on.event(SPARK_GROUP, SPARK_VERSION, "sparkapplications", labels={MANAGED_BY_LABEL: MANAGER})
@kopf.on.event(SPARK_GROUP, SPARK_VERSION, "scheduledsparkapplications", labels={MANAGED_BY_LABEL: MANAGER})
async def spark_application_event(body: kopf.Body, namespace: str, memo: kopf.Memo, **_: Any) -> None:
    """The Spark operator moved one of our jobs: reconcile its owner now (its state goes into the
    owner's status, and a replaced job is created again once the old one is gone)."""
    labels = body.get("metadata", {}).get("labels") or {}
    if labels.get(COMPONENT_LABEL) == PIPELINE_COMPONENT:
        name = await _io(_owning_pipeline, memo.kube, namespace, dict(body))
        if name:
            await _retrying("HudiPipeline", reconcile_pipeline(memo, namespace, name))
    elif labels.get(COMPONENT_LABEL) == TABLE_SERVICE_COMPONENT:
        name = _owner_name(dict(body), "HudiTable")
        if name:
            await _retrying("HudiTable", reconcile_table(memo, namespace, name))


@kopf.on.delete(GROUP, VERSION, "hudipipelines")
async def pipeline_deleted(body: kopf.Body, name: str, namespace: str, memo: kopf.Memo, **_: Any) -> None:
    """Stop the job before the pipeline goes (its objects would be garbage-collected too, but a
    table being deleted waits for its writers to be gone)."""
    owner = dict(body)
    live = await _io(_children, memo.kube, namespace, {PIPELINE_LABEL: label_value(name),
                                                        COMPONENT_LABEL: PIPELINE_COMPONENT})
    uid = body["metadata"].get("uid")
    for obj in sorted(live, key=lambda o: o["kind"] == "ConfigMap"):
        if children.controller_uid(obj) == uid:
            await _io(memo.kube.delete, Kind(obj["apiVersion"], obj["kind"]), namespace, obj["metadata"]["name"])
            _event(owner, lifecycle.NORMAL, "Deleted", f"{obj['kind']} {obj['metadata']['name']} deleted")
    METRICS.pipeline(namespace, name, None)
    memo.locks.pop(("HudiPipeline", namespace, name), None)
    await _writers_changed(memo, namespace, ((body.get("spec") or {}).get("tableRef") or {}).get("name"), name)


@kopf.on.delete(GROUP, VERSION, "huditables")
async def table_deleted(body: kopf.Body, name: str, namespace: str, memo: kopf.Memo, **_: Any) -> None:
    """deletionPolicy Retain leaves the data; Delete removes the files at basePath, but only once no
    pipeline writes the table any more (until then the deletion waits, and says why)."""
    owner = dict(body)
    try:
        table = api.load(owner)
        policy, base_path = table.spec.deletion_policy, table.spec.base_path
    except api.SpecError:
        policy, base_path = "Retain", None      # an unreadable spec never deletes data
    await _write_status(memo.kube, HUDI_TABLE, owner, {"phase": "Deleting"})
    if policy == "Delete":
        writers = await _io(_writers, memo.kube, namespace, name)
        if writers:
            message = f"waiting for {', '.join(writers)} to be deleted before deleting the data at {base_path}"
            await _write_status(memo.kube, HUDI_TABLE, owner, {"phase": "Deleting", "message": message})
            raise kopf.TemporaryError(message, delay=DELETION_RETRY_SECONDS)
        try:
            await asyncio.to_thread(_delete_data, base_path)
        except (OSError, ValueError) as exc:
            message = f"cannot delete the data at {base_path}: {exc}"
            _event(owner, lifecycle.WARNING, "DataDeletionFailed", message)
            raise kopf.TemporaryError(message, delay=DELETION_RETRY_SECONDS) from exc
        _event(owner, lifecycle.NORMAL, "DataDeleted", f"deleted the table's files at {base_path}")
    else:
        _event(owner, lifecycle.NORMAL, "DataRetained", f"deletionPolicy {policy}: the data at "
                                                        f"{base_path or 'basePath'} is kept")
    METRICS.forget_table(namespace, name)
    memo.tables.pop((namespace, name), None)
    memo.locks.pop(("HudiTable", namespace, name), None)


# --- reconcile: one object, read → decide (pure) → apply -----------------------------------------------
async def reconcile_pipeline(memo: kopf.Memo, namespace: str, name: str) -> None:
    async with memo.locks[("HudiPipeline", namespace, name)]:
        body = await _io(memo.kube.get, HUDI_PIPELINE, namespace, name)
        if body is None or body["metadata"].get("deletionTimestamp"):
            return
        now = _now()
        try:
            status = await _converge_pipeline(memo, body, now)
            result = "degraded" if status["phase"] == lifecycle.DEGRADED_PHASE else "ok"
        except Degraded as problem:
            status = _degraded(body, problem, now)
            result = "degraded"
        await _write_status(memo.kube, HUDI_PIPELINE, body, status)
        METRICS.pipeline(namespace, name, status["phase"])
        METRICS.reconciled("HudiPipeline", result)


async def reconcile_table(memo: kopf.Memo, namespace: str, name: str) -> None:
    async with memo.locks[("HudiTable", namespace, name)]:
        body = await _io(memo.kube.get, HUDI_TABLE, namespace, name)
        if body is None or body["metadata"].get("deletionTimestamp"):
            return
        now = _now()
        try:
            status = await _converge_table(memo, body, now)
            result = "ok"
        except Degraded as problem:
            status = _degraded(body, problem, now)
            result = "degraded"
        previous = body.get("status") or {}
        if status["phase"] != previous.get("phase") and status["phase"] != DEGRADED:
            _event(body, lifecycle.NORMAL, status["phase"], status["message"])
        await _write_status(memo.kube, HUDI_TABLE, body, status)
        METRICS.table_phase(namespace, name, status["phase"])
        METRICS.reconciled("HudiTable", result)


async def _converge_pipeline(memo: kopf.Memo, body: dict[str, Any], now: _dt.datetime) -> dict[str, Any]:
    kube, namespace, name = memo.kube, body["metadata"]["namespace"], body["metadata"]["name"]
    pipeline = _load(body, "InvalidSpec")
    table_name = pipeline.spec.table_ref.name
    table = _load(await _required_table(kube, namespace, table_name, "TableNotFound", "spec.tableRef.name"),
                  "TableInvalid")
    upstream = {}
    for path, upstream_name in pipeline.spec.upstream_refs():
        upstream[upstream_name] = _load(await _required_table(kube, namespace, upstream_name, "UpstreamTableNotFound",
                                                              path), "UpstreamTableInvalid")
    live = await _io(_children, kube, namespace, {PIPELINE_LABEL: label_value(name),
                                                   COMPONENT_LABEL: PIPELINE_COMPONENT})
    previous = body.get("status") or {}
    upgrade = pipeline.spec.upgrade
    intent = lifecycle.Intent(lifecycle.canonical(body["spec"]), pipeline.spec.state, upgrade.rollback_on_failure,
                              upgrade.stable_after_seconds, body["metadata"].get("generation"))
    in_effect = lifecycle.spec_in_effect(previous, intent.spec_json)
    pipelines = await _io(_namespace_pipelines, kube, namespace)
    desired = _pipeline_manifests(body, in_effect, table, upstream, pipelines)
    app = lifecycle.observe([o for o in live if o["kind"] in children.SPARK_KINDS],
                            children.spark_application(desired))
    decision = lifecycle.step(intent, previous, app, now)
    if decision.spec != in_effect:
        desired = _pipeline_manifests(body, decision.spec, table, upstream, pipelines)
    await _apply(kube, body, children.diff(desired, live, body["metadata"].get("uid")))
    for event in decision.events:
        _event(body, event.type, event.reason, event.message)
    status = dict(decision.status)
    observed = memo.tables.get((namespace, table_name))
    if observed is not None:
        status.update(lastCommitInstant=observed.last_commit_instant,
                      checkpoint=observed.checkpoint_of(body["metadata"]["name"]))
    return status


async def _converge_table(memo: kopf.Memo, body: dict[str, Any], now: _dt.datetime) -> dict[str, Any]:
    kube, namespace, name = memo.kube, body["metadata"]["namespace"], body["metadata"]["name"]
    table = _load(body, "InvalidSpec")
    try:
        plan = plan_table(table, SETTINGS.planner, await _io(_namespace_pipelines, kube, namespace))
    except PlanError as exc:
        raise Degraded(exc.reason, f"{exc.path}: {exc.message}") from None
    live = await _io(_children, kube, namespace, {TABLE_LABEL: label_value(name),
                                                   COMPONENT_LABEL: TABLE_SERVICE_COMPONENT})
    await _apply(kube, body, children.diff(plan.manifests, live, body["metadata"].get("uid")))
    on_demand = services_due.on_demand(table.spec, [job.service for job in plan.jobs])
    indexing = next((job.job_config["hoodieConf"] for job in plan.jobs if job.service == INDEXING), None)
    observed = await asyncio.to_thread(_observe_storage, table, now,
                                       services_due.triggers(table.spec, on_demand, indexing))
    if observed is not None and observed.table_type != table.spec.table_type:
        raise Degraded("TableTypeMismatch", f"the table at {table.spec.base_path} is {observed.table_type}, "
                                            f"the spec says {table.spec.table_type}; a table's type cannot "
                                            "change: restore spec.tableType or use a new basePath")
    previous = body.get("status") or {}
    status = table_status.status(observed, _services(plan, live), previous, body["metadata"].get("generation"), now)
    status["concurrency"] = plan.concurrency.status()
    was_due = ((previous.get("services") or {}).get("compaction") or {}).get("state") == table_status.DUE
    if observed is not None and observed.compaction_due and not was_due:
        _event(body, lifecycle.NORMAL, "CompactionDue",
               f"{observed.commits_since_compaction} delta commits since the last compaction")
    if observed is not None and observed.due:
        started = await _launch_due(kube, body, plan, observed)
        status["services"] = {**(status["services"] or {}), **{
            service: {**(status["services"] or {}).get(service, {}), **entry}
            for service, entry in started.items()}}
    memo.tables[(namespace, name)] = observed
    if observed is not None:
        committed = observed.last_commit_time.timestamp() if observed.last_commit_time else None
        METRICS.table(namespace, name, pending_compactions=observed.pending_compactions,
                      pending_clusterings=observed.pending_clusterings, last_commit_epoch=committed)
    return status


async def _launch_due(kube: Kube, body: dict[str, Any], plan: Any,
                      observed: table_status.TableObservation) -> dict[str, dict[str, str]]:
    """Start a one-off run of each due service whose kind has no job running (one at a time per
    table), named for the newest commit so one state of the timeline starts one run; returns the
    status.services entries saying what started and why, or what it waits for."""
    namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
    service_of = {job.application["metadata"]["labels"].get(SERVICE_LABEL): job.service for job in plan.jobs}
    apps = await _io(kube.list, SPARK_APPLICATION, namespace, {MANAGED_BY_LABEL: MANAGER,
                                                                TABLE_LABEL: label_value(name)})
    decision = services_due.decide(observed.due, services_due.running_jobs(apps, service_of))
    started = {}
    for due in decision.launch:
        run = triggered_run(plan, due.service, observed.last_commit_instant or "0")
        if run is None or any(a["metadata"]["name"] == run["metadata"]["name"] for a in apps):
            continue                    # this timeline already had its run (it ended; wait for a new commit)
        await _io(kube.create, run)
        started[due.service] = run["metadata"]["name"]
        _event(body, lifecycle.NORMAL, f"{due.service[:1].upper()}{due.service[1:]}Triggered",
               f"{due.reason}: started {run['metadata']['name']}")
    return services_due.service_status(decision, started)


# --- helpers: reading ----------------------------------------------------------------------------------
def _load(body: dict[str, Any], reason: str) -> Any:
    try:
        return api.load(body)
    except api.SpecError as exc:
        kind, name = body.get("kind"), body["metadata"]["name"]
        raise Degraded(reason, f"{kind} {name}: {exc.path}: {exc.message}") from None


async def _required_table(kube: Kube, namespace: str, name: str, reason: str, field: str) -> dict[str, Any]:
    body = await _io(kube.get, HUDI_TABLE, namespace, name)
    if body is None:
        raise Degraded(reason, f"HudiTable {name} does not exist in namespace {namespace}: create it, or fix {field}")
    if body["metadata"].get("deletionTimestamp"):
        raise Degraded(reason, f"HudiTable {name} is being deleted")
    return body


def _pipeline_manifests(body: dict[str, Any], spec_json: str, table: Any, upstream: Any,
                        pipelines: list[Any]) -> list[dict[str, Any]]:
    """The planned objects of the pipeline with ``spec_json`` as its spec (the user's, or the last
    stable one), in apply order; ``pipelines``: the namespace's, for the table's writers."""
    try:
        pipeline = api.load({**body, "spec": json.loads(spec_json)})
        return plan_pipeline(table, pipeline, SETTINGS.planner, upstream, pipelines).manifests
    except (api.SpecError, PlanError) as exc:
        raise Degraded(getattr(exc, "reason", PLAN_FAILED), f"{exc.path}: {exc.message}") from None


def _children(kube: Kube, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    selector = {MANAGED_BY_LABEL: MANAGER, **labels}
    return [obj for kind in CHILD_KINDS for obj in kube.list(kind, namespace, selector)]


def _namespace_pipelines(kube: Kube, namespace: str) -> list[Any]:
    """The namespace's HudiPipelines that load and are not being deleted: the planner counts those
    writing a table as its writers (an invalid one is Degraded and runs nothing new)."""
    found = []
    for body in kube.list(HUDI_PIPELINE, namespace):
        if body["metadata"].get("deletionTimestamp"):
            continue
        try:
            found.append(api.load(body))
        except api.SpecError:
            continue
    return found


def _pipelines_of(kube: Kube, namespace: str, table: str) -> list[dict[str, Any]]:
    return [p for p in kube.list(HUDI_PIPELINE, namespace)
            if ((p.get("spec") or {}).get("tableRef") or {}).get("name") == table]


def _writers(kube: Kube, namespace: str, table: str) -> list[str]:
    """What still writes the table: its pipelines, and their Spark jobs until those are gone."""
    pipelines = [f"HudiPipeline {p['metadata']['name']}" for p in _pipelines_of(kube, namespace, table)]
    jobs = [f"{o['kind']} {o['metadata']['name']}"
            for kind in (SPARK_APPLICATION, SCHEDULED_SPARK_APPLICATION)
            for o in kube.list(kind, namespace, {MANAGED_BY_LABEL: MANAGER, TABLE_LABEL: label_value(table),
                                                 COMPONENT_LABEL: PIPELINE_COMPONENT})]
    return pipelines + jobs


def _owner_name(obj: dict[str, Any], kind: str) -> str | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("kind") == kind and ref.get("apiVersion", "").startswith(f"{GROUP}/"):
            return ref.get("name")
    return None


def _owning_pipeline(kube: Kube, namespace: str, obj: dict[str, Any]) -> str | None:
    """The pipeline a Spark object runs: its owner, or (a scheduled run, owned by its
    ScheduledSparkApplication) the pipeline its labels name."""
    owner = _owner_name(obj, "HudiPipeline")
    if owner:
        return owner
    value = (obj.get("metadata", {}).get("labels") or {}).get(PIPELINE_LABEL)
    if not value:
        return None
    if len(value) < MAX_LABEL:          # shorter than the limit: never cut, so it is the name
        return value
    return next((p["metadata"]["name"] for p in kube.list(HUDI_PIPELINE, namespace)
                 if label_value(p["metadata"]["name"]) == value), None)


def _observe_storage(table: Any, now: _dt.datetime,
                     on_demand: services_due.Triggers) -> table_status.TableObservation | None:
    """The table's timeline, or None before its first commit created it."""
    base_path = table.spec.base_path
    trigger = table_status.compaction_trigger(table.spec)
    try:
        if not HoodieTable.exists(base_path):
            return None
        return table_status.observe(HoodieTable.load(base_path), trigger, now, on_demand)
    except (OSError, HoodieError, ValueError) as exc:
        raise Degraded("BasePathUnreadable", f"cannot read the table at {base_path}: {exc}. Check the path and "
                                             "that the operator can read it (storage credentials)") from None


def _services(plan: Any, live: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each scheduled table service: its child object and the Spark operator's word on its runs."""
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in live}
    services = {}
    for job in plan.jobs:
        app = job.application
        status = (by_name.get((app["kind"], app["metadata"]["name"])) or {}).get("status") or {}
        services[job.service] = {"name": app["metadata"]["name"], "lastRun": status.get("lastRun"),
                                 "state": status.get("scheduleState") or "Pending"}
    return services


def _delete_data(base_path: str) -> None:
    storage = Storage(base_path)
    if not storage.root.strip("/"):
        raise ValueError(f"refusing to delete the root of a file system ({base_path})")
    storage.delete_dir("")


# --- helpers: writing ----------------------------------------------------------------------------------
async def _apply(kube: Kube, owner: dict[str, Any], actions: list[children.Action]) -> None:
    conflicts = []
    for action in actions:
        kind = Kind(action.api_version, action.kind)
        if action.verb == children.CREATE:
            await _io(kube.create, action.body)
        elif action.verb == children.PATCH:
            await _io(kube.patch, kind, action.namespace, action.name, action.body)
        elif action.verb == children.DELETE:
            await _io(kube.delete, kind, action.namespace, action.name)
        else:
            conflicts.append(action.message)
            continue
        _event(owner, lifecycle.NORMAL, action.reason, action.message)
    if conflicts:
        raise Degraded("NameConflict", "; ".join(conflicts))


def _degraded(body: dict[str, Any], problem: Degraded, now: _dt.datetime) -> dict[str, Any]:
    """The Degraded status, and a Warning event the first time this reason shows up."""
    previous = body.get("status") or {}
    held = find(previous.get("conditions"), DEGRADED)
    if not (held and held.get("status") == "True" and held.get("reason") == problem.reason):
        _event(body, lifecycle.WARNING, problem.reason, problem.message)
        log.warning("%s %s/%s degraded: %s", body.get("kind"), body["metadata"]["namespace"],
                    body["metadata"]["name"], problem.message)
    return degraded_status(previous, problem.reason, problem.message, body["metadata"].get("generation"), now)


async def _write_status(kube: Kube, kind: Kind, body: dict[str, Any], status: dict[str, Any]) -> None:
    """Patch the status subresource, only with what changed (an unchanged resync writes nothing).
    Nulls in the patch delete fields, so they are compared as absent."""
    previous = body.get("status") or {}
    changed = {k: v for k, v in status.items() if previous.get(k) != _without_nulls(v)}
    if changed:
        await _io(kube.patch, kind, body["metadata"]["namespace"], body["metadata"]["name"], {"status": changed},
                  "status")
        body["status"] = {**previous, **{k: _without_nulls(v) for k, v in changed.items()}}


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _event(body: dict[str, Any], type_: str, reason: str, message: str) -> None:
    kopf.event(body, type=type_, reason=reason, message=message[:EVENT_MESSAGE_LIMIT])


async def _retrying(kind: str, reconcile: Any) -> None:
    """Kubernetes API failures are retried by kopf with backoff (counted as errors)."""
    try:
        with METRICS.timed(kind):
            await reconcile
    except ApiError as exc:
        METRICS.reconciled(kind, "error")
        raise kopf.TemporaryError(f"Kubernetes API: {exc}", delay=10) from exc


async def _io(fn: Callable[..., Any], *args: Any) -> Any:
    """A blocking call (the Kubernetes client, storage) off the event loop."""
    return await asyncio.to_thread(fn, *args)


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)
