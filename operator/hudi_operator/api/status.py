"""What the operator writes back: the status of each kind, in Kubernetes' conventions
(observedGeneration, phase, metav1.Condition-shaped conditions) and the Flink operator's style
(the job's lifecycle and the last stable spec)."""
from __future__ import annotations

from typing import Any

from .common import NAME_LEN
from .fields import Pattern, model, spec_field

_REASON = Pattern(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$", "a CamelCase reason")
_INSTANT_LEN = 32
_SPEC_JSON_LEN = 262144


@model
class Condition:
    """A standard condition (metav1.Condition)."""
    type: str = spec_field("Condition type (Ready, Progressing, Degraded).", max_length=316)
    status: str = spec_field("Whether the condition holds.", enum=("True", "False", "Unknown"))
    reason: str = spec_field("Why, in one CamelCase word.", pattern=_REASON, min_length=1, max_length=1024)
    message: str = spec_field("Why, for people.", max_length=32768)
    last_transition_time: str = spec_field("When the status last changed.", format="date-time", max_length=64)
    observed_generation: int | None = spec_field("The generation the condition was set for.", default=None,
                                                 minimum=0)


def _conditions() -> Any:
    return spec_field("Standard conditions.", default=None, max_items=16, list_map_keys=("type",))


@model
class ServiceStatus:
    """The latest run of one table service."""
    name: str | None = spec_field("The child object that runs it (a SparkApplication).", default=None,
                                  max_length=NAME_LEN)
    last_run: str | None = spec_field("When it last ran.", default=None, format="date-time", max_length=64)
    state: str | None = spec_field("State of that run (Due: Hudi's trigger says it should run now).", default=None,
                                   max_length=64)
    reason: str | None = spec_field("Why it is due, or why its last on-demand run started.", default=None,
                                    max_length=1024)
    run: str | None = spec_field("The SparkApplication started when it was last due.", default=None,
                                 max_length=NAME_LEN)


@model
class ConcurrencyStatus:
    """How the planner made the table's writers share it."""
    mode: str | None = spec_field("singleWriter or optimistic.", default=None, enum=("singleWriter", "optimistic"))
    writers: tuple[str, ...] | None = spec_field("The jobs that write the table (pipeline <name>, compaction, "
                                                 "clustering, clean, savepoint).", default=None, max_items=64,
                                                 max_length=NAME_LEN + 16)
    lock: str | None = spec_field("The lock they share: provider and where.", default=None, max_length=4096)


@model
class HudiTableStatus:
    """The table as last observed on storage."""
    observed_generation: int | None = spec_field("The generation this status describes.", default=None,
                                                 minimum=0)
    phase: str | None = spec_field("Summary state.", default=None, enum=("Pending", "Ready", "Degraded", "Deleting"))
    conditions: tuple[Condition, ...] | None = _conditions()
    table_version: int | None = spec_field("Hudi table version (hoodie.table.version).", default=None, minimum=0)
    last_commit_instant: str | None = spec_field("Newest completed instant.", default=None,
                                                 max_length=_INSTANT_LEN)
    last_commit_time: str | None = spec_field("When it completed.", default=None, format="date-time",
                                              max_length=64)
    pending_compactions: int | None = spec_field("Compactions requested, not yet completed.", default=None,
                                                 minimum=0)
    pending_clusterings: int | None = spec_field("Clusterings requested, not yet completed.", default=None,
                                                 minimum=0)
    commits_since_compaction: int | None = spec_field("Delta commits since the last compaction.", default=None,
                                                      minimum=0)
    services: dict[str, ServiceStatus] | None = spec_field("Table services by name (compaction, cleaning, "
                                                           "clustering, savepoints, catalogSync).", default=None,
                                                           max_properties=16)
    concurrency: ConcurrencyStatus | None = spec_field("The writers and their concurrency control.",
                                                       default=None)
    message: str | None = spec_field("What needs attention, for people.", default=None, max_length=32768)


@model
class ReconciliationStatus:
    """Which spec runs, and which last ran well (for rollback)."""
    last_reconciled_spec: str | None = spec_field("The spec last deployed (JSON).", default=None,
                                                  max_length=_SPEC_JSON_LEN)
    last_stable_spec: str | None = spec_field("The last spec that ran stableAfterSeconds without failing "
                                              "(JSON).", default=None, max_length=_SPEC_JSON_LEN)
    state: str | None = spec_field("Where the deployment stands.", default=None,
                                   enum=("DEPLOYED", "UPGRADING", "ROLLING_BACK", "ROLLED_BACK"))


@model
class SparkApplicationStatus:
    """The Spark operator's object that runs the pipeline."""
    name: str | None = spec_field("Its name.", default=None, max_length=NAME_LEN)
    kind: str | None = spec_field("Its kind.", default=None, enum=("SparkApplication", "ScheduledSparkApplication"))
    state: str | None = spec_field("Its status.applicationState.state.", default=None, max_length=64)
    submission_attempts: int | None = spec_field("Its submission attempts.", default=None, minimum=0)
    last_submission_time: str | None = spec_field("When it was last submitted.", default=None,
                                                  format="date-time", max_length=64)


@model
class HudiPipelineStatus:
    """The pipeline's job as last observed."""
    observed_generation: int | None = spec_field("The generation this status describes.", default=None,
                                                 minimum=0)
    phase: str | None = spec_field("Summary state.", default=None,
                                   enum=("Pending", "Deploying", "Running", "Suspended", "Failed", "Succeeded",
                                         "Degraded"))
    conditions: tuple[Condition, ...] | None = _conditions()
    reconciliation: ReconciliationStatus | None = spec_field("Deployment of spec changes.", default=None)
    spark_application: SparkApplicationStatus | None = spec_field("The running job.", default=None)
    last_commit_instant: str | None = spec_field("Newest instant the pipeline committed.", default=None,
                                                 max_length=_INSTANT_LEN)
    checkpoint: str | None = spec_field("Source checkpoint of that commit.", default=None, max_length=65536)
    restarts: int | None = spec_field("Times the job was restarted after failing.", default=None, minimum=0)
    message: str | None = spec_field("What needs attention, for people.", default=None, max_length=32768)
