"""What a HudiTable's status says about its data, read from the table's own timeline (no JVM, no
Spark): the last commit, the table services waiting to run, and whether compaction is due by the
trigger the table declares. The operator reports what is due; the jobs decide and run it."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Mapping

from hudi_engine import config as C
from hudi_engine.api import (
    COMPACTION,
    HoodieTable,
    completed_clusterings,
    delta_commits_since_compaction,
    indexing_due,
    pending_clusterings,
)
from hudi_engine.errors import HoodieError
from hudi_jobs.streamer.checkpoint import CommitInfo, resolve_checkpoint, writer_ids

from . import services_due
from .conditions import merge, of_phase, timestamp
from .services_due import DUE, CompactionTrigger, Due, Triggers

MERGE_ON_READ = "MERGE_ON_READ"
PENDING, READY, DEGRADED = "Pending", "Ready", "Degraded"


def compaction_trigger(spec) -> CompactionTrigger | None:
    """A HudiTable spec's compaction thresholds, or None when compaction is disabled."""
    compaction = spec.services.compaction
    if compaction.mode == "disabled":
        return None
    return CompactionTrigger(compaction.trigger_strategy, compaction.max_delta_commits, compaction.max_delta_seconds)


@dataclass(frozen=True)
class TableObservation:
    table_version: int
    table_type: str
    last_commit_instant: str | None
    last_commit_time: _dt.datetime | None
    pending_compactions: int
    pending_clusterings: int
    commits_since_compaction: int | None   # None on copy-on-write tables: they never compact
    compaction_due: bool
    checkpoint: str | None                 # where a streamer writing this table resumes
    due: tuple[Due, ...] = ()              # services a separate job should run now, with the reason
    # Tables several streamers write: each one's checkpoint, by its multiwriter checkpoint id
    writer_checkpoints: Mapping[str, str] = field(default_factory=dict)

    def checkpoint_of(self, writer_id: str) -> str | None:
        """Where the streamer with this id resumes (the pipeline's name, on a shared table); on a
        table one streamer writes, the table's checkpoint."""
        return self.writer_checkpoints.get(writer_id, self.checkpoint)

    def commit_age_seconds(self, now: _dt.datetime) -> float | None:
        if self.last_commit_time is None:
            return None
        return max((now - self.last_commit_time).total_seconds(), 0.0)

    def status(self) -> dict[str, Any]:
        """The HudiTable status fields this observation fills (camelCase, as the API writes them)."""
        return {"tableVersion": self.table_version,
                "lastCommitInstant": self.last_commit_instant,
                "lastCommitTime": timestamp(self.last_commit_time) if self.last_commit_time else None,
                "pendingCompactions": self.pending_compactions,
                "pendingClusterings": self.pending_clusterings,
                "commitsSinceCompaction": self.commits_since_compaction}


def observe(table: HoodieTable, trigger: CompactionTrigger | None, now: _dt.datetime,
            on_demand: Triggers = Triggers()) -> TableObservation:
    """Read the timeline once: ``trigger`` None means compaction is not the table's concern (a
    copy-on-write table, or compaction disabled), so it is never due. ``on_demand``: the triggers
    of the services a separate job runs when due (``due`` lists those due now)."""
    timeline = table.timeline
    last = timeline.last_completed_write()
    pending = timeline.pending()
    since = delta_commits_since_compaction(timeline.instants) if table.table_type == MERGE_ON_READ else None
    facts = timeline_facts(table, on_demand)
    return TableObservation(
        table_version=table.version,
        table_type=table.table_type,
        last_commit_instant=last.timestamp if last else None,
        last_commit_time=instant_datetime(last.timestamp, table) if last else None,
        pending_compactions=sum(1 for i in pending if i.action == COMPACTION),
        pending_clusterings=len(facts.pending_clusterings),
        commits_since_compaction=(since.count if since else 0) if table.table_type == MERGE_ON_READ else None,
        compaction_due=_compaction_due(table, facts, trigger, now),
        due=services_due.due_services(facts, on_demand, now),
        **_checkpoints(table),
    )


def timeline_facts(table: HoodieTable, on_demand: Triggers = Triggers()) -> services_due.Timeline:
    """What the due-service decision reads of a table (the metadata table's partitions too, when
    indexing starts on demand)."""
    options = on_demand.indexing_options
    return services_due.Timeline(tuple(table.timeline.instants), completed_clusterings(table),
                                 tuple(i.timestamp for i, _ in pending_clusterings(table)), _utc(table),
                                 indexing_due(table, dict(options)) if options is not None else None)


def instant_datetime(instant_time: str, table: HoodieTable) -> _dt.datetime:
    """An instant time as an aware datetime: instants are written in UTC or in the writer's local
    time (``hoodie.table.timeline.timezone``); LOCAL is read as the operator's own zone."""
    return services_due.instant_datetime(instant_time, _utc(table))


def _utc(table: HoodieTable) -> bool:
    return (table.config.get_str(C.TIMELINE_TIMEZONE) or "LOCAL").upper() == "UTC"


def _compaction_due(table: HoodieTable, facts: services_due.Timeline, trigger: CompactionTrigger | None,
                    now: _dt.datetime) -> bool:
    """The compaction trigger's threshold is crossed (a pending plan alone does not count here)."""
    if table.table_type != MERGE_ON_READ:
        return False
    return services_due.compaction_threshold(facts, trigger, now) is not None


def _checkpoints(table: HoodieTable) -> dict[str, Any]:
    """The source positions the newest delta/commits carry, resolved as the streamers resume: the
    table's one streamer's, or each one's on a table several write."""
    commits = [CommitInfo(i.timestamp, i.action, table.timeline.commit_metadata(i).get("extraMetadata") or {})
               for i in table.timeline.completed_writes()]
    ids = writer_ids(commits)
    if ids:
        found = {i: resolve_checkpoint(commits, table.table_type, None, None, i) for i in ids}
        return {"checkpoint": None, "writer_checkpoints": {i: c for i, c in found.items() if c is not None}}
    try:
        return {"checkpoint": resolve_checkpoint(commits, table.table_type, None, None)}
    except HoodieError:
        return {"checkpoint": None}



def status(observation: TableObservation | None, services: dict[str, dict[str, Any]],
           previous: dict[str, Any] | None, generation: int | None, now: _dt.datetime) -> dict[str, Any]:
    """The HudiTable status: Pending until the first commit creates the table at basePath, then
    Ready with what the timeline says. ``services``: each table service's child and last run; a
    compaction that is due by the table's trigger is marked so."""
    services = {name: dict(entry) for name, entry in services.items()}
    if observation is None:
        phase, reason = PENDING, "NoTableYet"
        message = "no Hudi table at basePath yet: the first commit of a pipeline creates it"
        fields: dict[str, Any] = {}
    else:
        phase, reason = READY, READY
        fields = observation.status()
        message = (f"table version {observation.table_version}, last commit "
                   f"{observation.last_commit_instant or 'none'}")
        if observation.compaction_due:
            services.setdefault("compaction", {})["state"] = DUE
            message += "; compaction is due"
        for due in observation.due:
            services.setdefault(due.service, {}).update(state=DUE, reason=due.reason)
    conditions = merge((previous or {}).get("conditions"),
                       of_phase(phase, reason, message, (READY,), (PENDING,), (DEGRADED,)), generation, now)
    return {"observedGeneration": generation, "phase": phase, "message": message, "conditions": conditions,
            "services": services or None, **fields}
