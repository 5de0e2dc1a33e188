"""Restoring a table to a savepoint: the plan's instants are rolled back newest first, then the
restore completes. A restore a killed run left is finished by the next writer before it writes."""
from __future__ import annotations

import time

from ..table.meta_client import HoodieTable
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import COMPACTION, RESTORE, SAVEPOINT, Instant, State
from .commit import complete
from .metadata.writer import drop_for_restore
from .recovery import rollback, rollback_failed_writes


def finish_pending_restore(table: HoodieTable) -> HoodieTable:
    """What a writer does first, as Hudi's does: complete a restore a killed run left half done."""
    pending = table.timeline.pending([RESTORE])
    if not pending:
        return table
    execute_restore(rollback_failed_writes(table), pending[0])
    return table.reload()


def execute_restore(table: HoodieTable, restore: Instant) -> Instant:
    """Roll back every instant a restore plan lists, newest first, and complete the restore."""
    started = time.monotonic()
    table = drop_for_restore(table)
    timeline = table.timeline
    plan = decode_instant_avro(timeline.read_details(Instant(restore.timestamp, RESTORE, State.REQUESTED)))
    if restore.state == State.REQUESTED:
        restore = timeline.transition_to_inflight(restore)
    rollbacks: dict[str, list[dict]] = {}
    for target in plan["instantsToRollback"]:
        ts = target["commitTime"]
        table = table.reload()
        instant = next((i for i in table.timeline.instants if i.timestamp == ts
                        and i.action != SAVEPOINT), None)
        if instant is not None:  # else rolled back before a crash; its rollback is ours already
            done = rollback(table, instant)
            rollbacks[ts] = [decode_instant_avro(table.reload().timeline.read_details(done))]
            for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
                table.storage.delete(table.timeline.path_of(Instant(done.timestamp, done.action, state)))
        for state in (State.INFLIGHT, State.REQUESTED):  # a compaction's plan goes too
            table.storage.delete(table.timeline.path_of(Instant(ts, COMPACTION, state)))
    metadata = {
        "startRestoreTime": restore.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": [t["commitTime"] for t in plan["instantsToRollback"]],
        "hoodieRestoreMetadata": rollbacks,
        "version": 1,
        "restoreInstantInfo": plan["instantsToRollback"],
    }
    return complete(table.reload(), restore, metadata)
