"""Which table services are due by Hudi's own triggers, and which of them may start a job now.

The thresholds are Hudi's (``hoodie.compact.inline.trigger.strategy`` with
``hoodie.compact.inline.max.delta.commits``/``.max.delta.seconds``, ``hoodie.clustering.inline.max.commits``,
``hoodie.clean.max.commits``) and so are the counting rules: the engine's own functions decide, so
the operator, ``hudictl run`` and an inline writer agree on when a service is due. A pending
compaction or clustering plan makes its execution due too; indexing is due while an index the
table's options enable is neither built nor being built, or an indexing is pending. Pure: the caller reads the timeline
and the running jobs; this decides, and says why in words a data engineer recognises."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from hudi_engine import config as C
from hudi_engine.api import (
    NUM_COMMITS_AFTER_LAST_REQUEST,
    clean_due,
    clustering_due,
    commits_since_clustering,
    compaction_due,
    delta_commits_since_compaction,
    parse_instant_time,
)
from hudi_engine.config import HoodieConfig
from hudi_jobs.table_service import CLEAN, CLUSTERING, COMPACTION, INDEXING

from ..planner.labels import SERVICE_LABEL

MERGE_ON_READ = "MERGE_ON_READ"
SERVICES = (COMPACTION, CLUSTERING, CLEAN, INDEXING)     # the services a table's state can make due
DUE, STARTED, RUNNING = "Due", "Started", "Running"


@dataclass(frozen=True)
class CompactionTrigger:
    """A table's ``services.compaction`` thresholds (Hudi's inline trigger settings)."""
    strategy: str = "NUM_COMMITS"
    max_delta_commits: int = 5
    max_delta_seconds: int = 3600


@dataclass(frozen=True)
class Triggers:
    """The triggers a table declares; None: that service is never due here (disabled, or compaction
    on a copy-on-write table)."""
    compaction: CompactionTrigger | None = None
    clustering_max_commits: int | None = None
    clean_max_commits: int | None = None
    indexing_options: tuple[tuple[str, str], ...] | None = None   # the options the indexer builds from


@dataclass(frozen=True)
class Timeline:
    """What the decision needs of a timeline: its instants (one per time, latest state), the
    completed replacecommits that are clusterings, the pending clustering plans, and whether
    instant times are UTC (else the local zone, ``hoodie.table.timeline.timezone``)."""
    instants: tuple
    clusterings: frozenset[str] = frozenset()
    pending_clusterings: tuple[str, ...] = ()
    utc: bool = False
    indexing: str | None = None          # why the indexer has work (the engine's ``indexing_due``)


@dataclass(frozen=True)
class Due:
    service: str      # compaction | clustering | clean (the table-service job's service)
    reason: str


@dataclass(frozen=True)
class Decision:
    """What to start now, and the due services held back because a job of their kind still runs."""
    launch: tuple[Due, ...]
    held: tuple[tuple[Due, str], ...]     # (due, the running job's name)


TERMINAL_STATES = frozenset({"COMPLETED", "FAILED", "SUBMISSION_FAILED"})   # a SparkApplication that ended


def on_demand(spec, scheduled: Iterable[str]) -> tuple[str, ...]:
    """The services of ``scheduled`` (those planned as a separate job) that also start when due."""
    services = spec.services
    wants = {COMPACTION: services.compaction.run_when_due, CLUSTERING: services.clustering.run_when_due,
             CLEAN: services.cleaning.run_when_due, INDEXING: services.indexing.run_when_due}
    return tuple(s for s in scheduled if wants.get(s))


def running_jobs(applications: Iterable[Mapping], service_of: Mapping[str, str]) -> dict[str, str]:
    """service → name of a SparkApplication of it that has not ended (``service_of``: the service
    label's value → the service), whether the schedule or a trigger started it."""
    running: dict[str, str] = {}
    for app in sorted(applications, key=lambda a: a["metadata"]["name"]):
        service = service_of.get((app["metadata"].get("labels") or {}).get(SERVICE_LABEL, ""))
        state = ((app.get("status") or {}).get("applicationState") or {}).get("state") or ""
        if service and state not in TERMINAL_STATES and not app["metadata"].get("deletionTimestamp"):
            running.setdefault(service, app["metadata"]["name"])
    return running


def triggers(spec, on_demand: Iterable[str] = SERVICES, options: Mapping[str, str] | None = None) -> Triggers:
    """A HudiTable spec's triggers for the services in ``on_demand``: compaction from its
    triggerStrategy/maxDeltaCommits/maxDeltaSeconds, clustering and cleaning from the table's
    options (Hudi's keys, Hudi's defaults), indexing from ``options`` (every ``hoodie.*`` option its
    job gets: which indexes are enabled)."""
    wanted = set(on_demand)
    services, cfg = spec.services, HoodieConfig(dict(spec.options))
    compaction = services.compaction
    return Triggers(
        compaction=(CompactionTrigger(compaction.trigger_strategy, compaction.max_delta_commits,
                                      compaction.max_delta_seconds)
                    if COMPACTION in wanted and compaction.mode != "disabled" and spec.table_type == MERGE_ON_READ
                    else None),
        clustering_max_commits=(cfg.get(C.CLUSTERING_INLINE_MAX_COMMITS)
                                if CLUSTERING in wanted and services.clustering.mode != "disabled" else None),
        clean_max_commits=(cfg.get(C.CLEAN_MAX_COMMITS)
                           if CLEAN in wanted and services.cleaning.mode != "disabled" else None),
        indexing_options=(tuple(sorted({**dict(spec.options), **(options or {})}.items()))
                          if INDEXING in wanted and services.indexing.mode == "scheduled" else None),
    )


def due_services(timeline: Timeline, table_triggers: Triggers, now: _dt.datetime) -> tuple[Due, ...]:
    """The services due on ``timeline`` by ``table_triggers`` at ``now``, each with its reason."""
    found = [compaction(timeline, table_triggers.compaction, now),
             clustering(timeline, table_triggers.clustering_max_commits),
             cleaning(timeline, table_triggers.clean_max_commits),
             Due(INDEXING, f"indexing due: {timeline.indexing}")
             if table_triggers.indexing_options is not None and timeline.indexing else None]
    return tuple(d for d in found if d is not None)


def compaction(timeline: Timeline, trigger: CompactionTrigger | None, now: _dt.datetime) -> Due | None:
    if trigger is None:
        return None
    pending = [i.timestamp for i in timeline.instants if i.action == COMPACTION and not i.is_completed]
    if pending:
        return Due(COMPACTION, f"compaction due: plan {pending[0]} is pending")
    return compaction_threshold(timeline, trigger, now)


def compaction_threshold(timeline: Timeline, trigger: CompactionTrigger | None, now: _dt.datetime) -> Due | None:
    """Compaction due by ``trigger`` alone (Hudi's needCompact), whether or not a plan is pending."""
    if trigger is None:
        return None
    strategy = trigger.strategy.upper()
    info = delta_commits_since_compaction(timeline.instants,
                                          after_last_request=strategy == NUM_COMMITS_AFTER_LAST_REQUEST)
    if info is None:
        return None
    elapsed = int((now - instant_datetime(info.since, timeline.utc)).total_seconds())
    if not compaction_due(strategy, trigger.max_delta_commits, trigger.max_delta_seconds, info.count, elapsed):
        return None
    return Due(COMPACTION, f"compaction due: {info.count} delta commits since {info.since}, the last compaction or "
                           f"first delta commit ({C.COMPACT_TRIGGER_STRATEGY.key}={strategy}, "
                           f"{C.COMPACT_MAX_DELTA_COMMITS.key}={trigger.max_delta_commits}, "
                           f"{C.COMPACT_MAX_DELTA_SECONDS.key}={trigger.max_delta_seconds})")


def clustering(timeline: Timeline, max_commits: int | None) -> Due | None:
    if max_commits is None:
        return None
    if timeline.pending_clusterings:
        return Due(CLUSTERING, f"clustering due: plan {timeline.pending_clusterings[0]} is pending")
    since = commits_since_clustering(timeline.instants, timeline.clusterings)
    gate = HoodieConfig({C.CLUSTERING_INLINE.key: "true", C.CLUSTERING_INLINE_MAX_COMMITS.key: str(max_commits)})
    if since == 0 or not clustering_due(since, gate):
        return None
    return Due(CLUSTERING, f"clustering due: {since} commits since the last clustering "
                           f"({C.CLUSTERING_INLINE_MAX_COMMITS.key}={max_commits})")


def cleaning(timeline: Timeline, max_commits: int | None) -> Due | None:
    if max_commits is None or not clean_due(sorted(timeline.instants, key=lambda i: i.timestamp), max_commits):
        return None
    return Due(CLEAN, f"cleaning due: {max_commits} or more commits since the last clean "
                      f"({C.CLEAN_MAX_COMMITS.key}={max_commits})")


def decide(due: Sequence[Due], running: Mapping[str, str]) -> Decision:
    """At most one job of a kind per table: a due service whose kind has a job still running
    (``running``: service → that job's name) waits for it to end."""
    launch = tuple(d for d in due if d.service not in running)
    held = tuple((d, running[d.service]) for d in due if d.service in running)
    return Decision(launch, held)


def service_status(decision: Decision, started: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """The ``status.services`` entries a decision sets: a run started (``started``: service → the
    SparkApplication), or due while a job of its kind runs (the next one waits for it to end)."""
    entries = {d.service: {"state": STARTED, "reason": d.reason, "run": started[d.service]}
               for d in decision.launch if d.service in started}
    for due, running in decision.held:
        entries[due.service] = {"state": RUNNING, "reason": f"{due.reason}; waiting for {running} to end",
                                "run": running}
    return entries


def instant_datetime(instant_time: str, utc: bool) -> _dt.datetime:
    """An instant time as an aware datetime: written in UTC, or in the writer's local zone (read as
    this process's own)."""
    naive = parse_instant_time(instant_time)
    return naive.replace(tzinfo=_dt.timezone.utc) if utc else naive.astimezone()
