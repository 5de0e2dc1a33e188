"""Undoing what failed: rollbacks of data-table instants (the metadata table kept in step) and the
clean-up every action does first, as Hudi's writers do."""
from __future__ import annotations

from ..concurrency.heartbeat import delete_heartbeat, heartbeat_expired
from ..table.meta_client import HoodieTable
from ..table.pending import pending_clusterings
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import ROLLBACK, WRITE_ACTIONS, Instant, State
from . import rollback as _rollback
from .metadata.listener import MetadataSync
from .rollback import execute_rollback


def rollback(table: HoodieTable, instant: Instant, keep_requested: bool = False, spark=None) -> Instant:
    """Roll back one pending (or, for a restore, completed) instant of a data table: its files
    go, log files it appended to get a command block, and the metadata table follows."""
    return _rollback.rollback(table, instant, keep_requested, MetadataSync(spark))


def rollback_failed_writes(table: HoodieTable, policy: str = "EAGER",
                           heartbeat_expiry_ms: int | None = None, spark=None) -> HoodieTable:
    """Finish pending rollbacks, then roll back failed writes; returns the reloaded table.

    EAGER (single writer): every pending write failed. LAZY (several writers; run under the table
    lock): only pending writes whose heartbeat expired or is missing, never a live writer's.
    NEVER: none. A pending clustering plan is never a failed write."""
    timeline = table.timeline
    for pending in timeline.pending([ROLLBACK]):
        plan = decode_instant_avro(timeline.read_details(
            Instant(pending.timestamp, ROLLBACK, State.REQUESTED)))
        execute_rollback(table, pending, plan, listener=MetadataSync(spark))
    # A pending clustering is a plan, not a failed write: its own runs execute or roll it back.
    clusterings = {i.timestamp for i, _ in pending_clusterings(table)}
    failed = [] if policy == "NEVER" else [i for i in timeline.pending(WRITE_ACTIONS)
                                           if i.timestamp not in clusterings]
    if policy == "LAZY":
        failed = [i for i in failed if heartbeat_expired(table.storage, i.timestamp, heartbeat_expiry_ms or 0)]
    for instant in failed:
        rollback(table.reload(), instant, spark=spark)
        if policy == "LAZY":
            delete_heartbeat(table.storage, instant.timestamp)
    return table.reload() if (failed or timeline.pending([ROLLBACK])) else table
