"""The HudiPipeline job lifecycle, after the Flink Kubernetes operator's.

``spec.state`` says whether the job should run; ``status.reconciliation`` remembers the spec last
acted upon (``lastReconciledSpec``), the last one that ran stably (``lastStableSpec``) and where an
upgrade stands (DEPLOYED, UPGRADING, ROLLING_BACK, ROLLED_BACK). A spec change is applied once:
the Spark job is replaced by one made from the new spec. Suspending sets the Spark operator's
``spec.suspend`` (it stops the driver); resuming clears it and the streamer carries on from the
checkpoint its last commit recorded. With
``upgrade.rollbackOnFailure`` a job that fails after an upgrade, before it ran stably, goes back
to the last stable spec until the user changes the spec again.

``step`` is pure: the handler passes the user's spec, the previous status, the observed Spark
application and the clock, and applies the decision (plan ``Decision.spec``, converge the children
to that plan, write ``Decision.status``)."""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..planner.labels import SPEC_HASH_ANNOTATION
from .conditions import DEGRADED, PROGRESSING, READY, Condition, merge

RUN, SUSPEND = "running", "suspended"
DEPLOYED, UPGRADING, ROLLING_BACK, ROLLED_BACK = "DEPLOYED", "UPGRADING", "ROLLING_BACK", "ROLLED_BACK"
PENDING, DEPLOYING, RUNNING, SUSPENDED, FAILED, SUCCEEDED, DEGRADED_PHASE = (
    "Pending", "Deploying", "Running", "Suspended", "Failed", "Succeeded", "Degraded")
SPARK_APPLICATION, SCHEDULED_SPARK_APPLICATION = "SparkApplication", "ScheduledSparkApplication"

# The Spark operator's applicationState.state values, by what they mean for the pipeline.
_STARTING = {"", "NEW", "SUBMITTED", "PENDING_RERUN", "INVALIDATING"}
_RESTARTING = {"FAILING"}
_DONE = {"SUCCEEDING", "COMPLETED"}
_FAILED = {"FAILED", "SUBMISSION_FAILED"}
_SUSPENSION = {"SUSPENDING", "SUSPENDED", "RESUMING"}
_SCHEDULE_FAILED = {"FailedValidation"}

NORMAL, WARNING = "Normal", "Warning"


@dataclass(frozen=True)
class Event:
    type: str      # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True)
class Intent:
    """What the user asks for, from the HudiPipeline object."""
    spec_json: str                 # the spec as written (``canonical``), what lastReconciledSpec records
    state: str = RUN
    rollback_on_failure: bool = False
    stable_after_seconds: int = 300
    generation: int | None = None


@dataclass(frozen=True)
class AppObservation:
    """The pipeline's Spark job as listed. ``current``: made from the spec in effect (its spec-hash
    is the plan's, and it is not being deleted), so its state is the state of that spec's run."""
    kind: str
    name: str
    current: bool
    state: str = ""                   # applicationState.state (a scheduled app's: its last run's)
    submission_attempts: int = 0
    execution_attempts: int = 0
    last_submission_time: str | None = None
    schedule_state: str | None = None  # ScheduledSparkApplication.status.scheduleState
    error: str = ""


@dataclass(frozen=True)
class Decision:
    spec: str                      # the spec JSON to plan and apply now
    status: dict[str, Any]         # the status to write (a full replacement of the lifecycle's fields)
    events: tuple[Event, ...] = field(default=())


def canonical(spec: dict[str, Any]) -> str:
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def spec_in_effect(status: dict[str, Any] | None, spec_json: str) -> str:
    """The spec whose job should be running: the user's, or while rolled back (and the user has not
    changed the job since) the last stable one, under the user's current ``state``."""
    rec = (status or {}).get("reconciliation") or {}
    stable, last = rec.get("lastStableSpec"), rec.get("lastReconciledSpec")
    if rec.get("state") in (ROLLING_BACK, ROLLED_BACK) and stable and last and _job(last) == _job(spec_json):
        return _with_state(stable, _state(spec_json))
    return spec_json


def observe(live: Iterable[dict[str, Any]], expected: dict[str, Any] | None) -> AppObservation | None:
    """The Spark job ``expected`` (the planned Spark manifest of the spec in effect) names, among the
    live Spark objects of the pipeline; for a ScheduledSparkApplication the state is its last run's."""
    if expected is None:
        return None
    by_key = {(o.get("kind"), o.get("metadata", {}).get("name")): o for o in live}
    kind, name = expected["kind"], expected["metadata"]["name"]
    app = by_key.get((kind, name))
    if app is None:
        return None
    meta = app.get("metadata", {})
    current = (not meta.get("deletionTimestamp") and (meta.get("annotations") or {}).get(SPEC_HASH_ANNOTATION)
               == expected["metadata"]["annotations"][SPEC_HASH_ANNOTATION])
    status = app.get("status") or {}
    if kind == SCHEDULED_SPARK_APPLICATION:
        run = by_key.get((SPARK_APPLICATION, status.get("lastRunName"))) if status.get("lastRunName") else None
        run_status = (run or {}).get("status") or {}
        return AppObservation(kind, name, bool(current), _app_state(run_status),
                              run_status.get("submissionAttempts") or 0, run_status.get("executionAttempts") or 0,
                              status.get("lastRun") or run_status.get("lastSubmissionAttemptTime"),
                              status.get("scheduleState"), status.get("reason") or _app_error(run_status))
    return AppObservation(kind, name, bool(current), _app_state(status), status.get("submissionAttempts") or 0,
                          status.get("executionAttempts") or 0, status.get("lastSubmissionAttemptTime"),
                          None, _app_error(status))


def step(intent: Intent, status: dict[str, Any] | None, app: AppObservation | None,
         now: _dt.datetime) -> Decision:
    """One reconciliation of the lifecycle. ``app`` is observed against ``spec_in_effect(status,
    intent.spec_json)``, the job the previous status asked for."""
    status = status or {}
    rec = status.get("reconciliation") or {}
    last, stable, state = rec.get("lastReconciledSpec"), rec.get("lastStableSpec"), rec.get("state")
    gen = intent.generation
    events: list[Event] = []

    if last is None:
        state = DEPLOYED
        events.append(Event(NORMAL, "Deploying", f"deploying generation {gen}"))
    elif _job(last) != _job(intent.spec_json):
        state = UPGRADING
        events.append(Event(NORMAL, "Upgrading", f"the spec changed: replacing the job with generation {gen}"))
    if last is not None and _state(last) != intent.state:
        events.append(Event(NORMAL, "Suspending" if intent.state == SUSPEND else "Resuming",
                            "stopping the job; it resumes from its checkpoint" if intent.state == SUSPEND
                            else "starting the job again from its last checkpoint"))
    effective = spec_in_effect({"reconciliation": {**rec, "lastReconciledSpec": intent.spec_json,
                                                   "state": state}}, intent.spec_json)
    job = app if app is not None and app.current else None
    restarts = max(job.execution_attempts - 1, 0) if job else status.get("restarts", 0)

    if intent.state == SUSPEND:
        stopped = app is None or (job is not None and (job.kind == SCHEDULED_SPARK_APPLICATION
                                                       or job.state == "SUSPENDED"))
        phase, reason, message = ((SUSPENDED, "Suspended", "suspended: no job runs") if stopped
                                  else (DEPLOYING, "Suspending", f"stopping {app.kind} {app.name}"))
    elif job is None:
        reason = {UPGRADING: "Upgrading", ROLLING_BACK: "RollingBack"}.get(state, "Deploying")
        phase, message = DEPLOYING, "waiting for the Spark job of the current spec to start"
    else:
        phase, reason, message = _phase(job)
        if job.state in _DONE or (job.kind == SPARK_APPLICATION and job.state == "RUNNING"
                                  and _seconds_since(job.last_submission_time, now) >= intent.stable_after_seconds):
            if stable is None or _job(stable) != _job(effective):
                events.append(Event(NORMAL, "Stable", "the job runs stably: this spec is the last stable one"))
                stable = effective
            if state == UPGRADING:
                state = DEPLOYED
        if state == ROLLING_BACK:
            state = ROLLED_BACK
            events.append(Event(WARNING, "RolledBack", "running the last stable spec; change the spec to retry"))
        if phase == FAILED and state == UPGRADING and intent.rollback_on_failure and stable \
                and _job(stable) != _job(intent.spec_json):
            state = ROLLING_BACK
            phase, reason = DEPLOYING, "RollingBack"
            message = (f"the job failed after the upgrade ({job.error or job.state}): "
                       "rolling back to the last stable spec")
            events.append(Event(WARNING, "RollingBack", message))
            effective = _with_state(stable, intent.state)
        elif phase == FAILED and status.get("phase") != FAILED:
            events.append(Event(WARNING, "Failed", message))
        elif phase == SUCCEEDED and status.get("phase") != SUCCEEDED:
            events.append(Event(NORMAL, "Succeeded", message))
    if phase == SUSPENDED and status.get("phase") != SUSPENDED:
        events.append(Event(NORMAL, "Suspended", message))
    if phase == RUNNING and status.get("phase") != RUNNING:
        events.append(Event(NORMAL, "Running", message))

    progressing = phase in (PENDING, DEPLOYING) or (state in (UPGRADING, ROLLING_BACK) and phase != FAILED)
    if progressing and phase not in (PENDING, DEPLOYING):
        progress = ("Upgrading", f"the new spec becomes the last stable one after {intent.stable_after_seconds}s "
                                 "running without failure")
    else:
        progress = (reason, message) if progressing else ("Stable", "")
    new_status = {
        "observedGeneration": gen,
        "phase": phase,
        "message": message,
        "restarts": restarts,
        "reconciliation": {"lastReconciledSpec": intent.spec_json, "lastStableSpec": stable, "state": state},
        "sparkApplication": _app_status(app),
        "conditions": merge(status.get("conditions"), (
            Condition(READY, phase in (RUNNING, SUCCEEDED), phase if phase in (RUNNING, SUCCEEDED) else reason,
                      message),
            Condition(PROGRESSING, progressing, *progress),
            Condition(DEGRADED, phase == FAILED, reason if phase == FAILED else "Healthy",
                      message if phase == FAILED else ""),
        ), gen, now),
    }
    return Decision(effective, new_status, tuple(events))


def _phase(job: AppObservation) -> tuple[str, str, str]:
    where = f"{job.kind} {job.name}"
    if job.schedule_state in _SCHEDULE_FAILED:
        return FAILED, "ScheduleInvalid", f"{where}: {job.error or job.schedule_state}"
    if job.state in _FAILED:
        return FAILED, "SparkApplicationFailed", f"{where} {job.state}: {job.error or 'see the driver log'}"
    if job.state in _DONE:
        return SUCCEEDED, "Completed", f"{where} completed"
    if job.state in _SUSPENSION:
        return DEPLOYING, "Resuming", f"{where} {job.state}: resuming"
    if job.state in _RESTARTING:
        return DEPLOYING, "Restarting", f"{where} failed and is restarted by the Spark operator"
    if job.state == "RUNNING" or job.kind == SCHEDULED_SPARK_APPLICATION:
        return RUNNING, "Running", (f"{where} running" if job.state == "RUNNING"
                                    else f"{where} scheduled ({job.schedule_state or 'new'})")
    if job.state in _STARTING:
        return DEPLOYING, "Starting", f"{where} {job.state or 'submitted'}"
    return DEGRADED_PHASE, "SparkApplicationUnknown", f"{where} is in state {job.state}"


def _app_status(app: AppObservation | None) -> dict[str, Any] | None:
    if app is None:
        return None
    return {"name": app.name, "kind": app.kind, "state": app.state,
            "submissionAttempts": app.submission_attempts, "lastSubmissionTime": app.last_submission_time}


def _app_state(status: dict[str, Any]) -> str:
    return ((status.get("applicationState") or {}).get("state")) or ""


def _app_error(status: dict[str, Any]) -> str:
    return ((status.get("applicationState") or {}).get("errorMessage")) or ""


def _seconds_since(rfc3339: str | None, now: _dt.datetime) -> float:
    if not rfc3339:
        return 0.0
    then = _dt.datetime.fromisoformat(rfc3339.replace("Z", "+00:00"))
    return (now - then).total_seconds()


def _job(spec_json: str) -> dict[str, Any]:
    """The spec without ``state``: what the job is, as opposed to whether it runs."""
    spec = json.loads(spec_json)
    spec.pop("state", None)
    return spec


def _state(spec_json: str) -> str:
    return json.loads(spec_json).get("state") or RUN


def _with_state(spec_json: str, state: str) -> str:
    spec = json.loads(spec_json)
    spec["state"] = state
    return canonical(spec)
