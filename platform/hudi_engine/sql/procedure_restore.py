"""Procedures that keep or rewind a table's state: savepoints (show, create, delete, restore to one)
and the rollback of its latest commit. They call the engine's savepoint service and its rollback
(``transaction.recovery``); as in Hudi, a savepoint the service refuses to make, delete or restore
gives ``false`` (with the reason logged), while an instant that is not there is an error."""
from __future__ import annotations

import logging
from typing import Callable

from ..concurrency.locks import locked_table
from ..errors import HoodieError, HoodieTimelineError
from ..metadata_table.layout import open_mdt, table_partitions
from ..services.savepoint import create_savepoint as savepoint, delete_savepoint as drop_savepoint, \
    restore_to_savepoint
from ..table.meta_client import HoodieTable
from ..timeline.instant import COMMIT, COMPACTION, FILE_WRITING_ACTIONS, SAVEPOINT, WRITE_ACTIONS, Instant, State
from ..transaction.recovery import rollback
from .procedure_context import Invocation

log = logging.getLogger(__name__)


def _attempt(what: str, action: Callable[[], object]) -> bool:
    try:
        action()
    except HoodieError as e:
        log.warning("%s failed: %s", what, e)
        return False
    return True


def _savepoints(table: HoodieTable) -> list[str]:
    return [s.timestamp for s in table.timeline.filter([SAVEPOINT], completed=True)]


def _chosen_savepoints(inv: Invocation, several: bool) -> list[str]:
    """``instant_time`` (comma separated when ``several``), or the latest savepoint when empty;
    each must exist."""
    existing = _savepoints(inv.table)
    if not existing:
        raise HoodieTimelineError(f"{inv.table.name} has no completed savepoint")
    given = inv.args["instant_time"]
    wanted = [t.strip() for t in (given.split(",") if several else [given]) if t.strip()] or existing[-1:]
    missing = [t for t in wanted if t not in existing]
    if missing:
        raise HoodieTimelineError(f"no savepoint {missing} in {inv.table.name}; its savepoints: {existing}")
    return wanted


def show_savepoints(inv: Invocation) -> list[tuple]:
    return [(ts,) for ts in reversed(_savepoints(inv.table))]


def create_savepoint(inv: Invocation) -> list[tuple]:
    table, args = inv.table, inv.args
    commits = [i.timestamp for i in table.timeline.completed_writes()]
    ts = args["commit_time"] or (commits[-1] if commits else "")
    if ts not in commits:
        raise HoodieTimelineError(f"commit {ts or '(latest)'} is not a completed commit of {table.name}; "
                                  f"its latest commits: {commits[-10:]}")
    ok = _attempt(f"savepoint of {ts}", lambda: savepoint(table, ts, args["user"] or None, args["comments"]))
    return [(ok,)]


def delete_savepoint(inv: Invocation) -> list[tuple]:
    ok = True
    for ts in _chosen_savepoints(inv, several=True):
        ok = _attempt(f"deleting savepoint {ts}", lambda: drop_savepoint(inv.table.reload(), ts)) and ok
    return [(ok,)]


def rollback_to_savepoint(inv: Invocation) -> list[tuple]:
    ts, = _chosen_savepoints(inv, several=False)
    ok = _attempt(f"restore to savepoint {ts}", lambda: restore_to_savepoint(inv.table, ts))
    inv.refresh_catalog()
    return [(ok,)]


def rollback_to_instant(inv: Invocation) -> list[tuple]:
    """Roll back one commit, Hudi's ``rollback_to_instant``: the table's latest write (completed or
    not); its files go, or its log blocks are voided, and the metadata table follows."""
    ts = inv.args["instant_time"]
    with locked_table(inv.table, inv.table.config, f"rolling back {ts}") as table:
        if table.timeline.get(ts) is None:
            raise HoodieTimelineError(f"no instant {ts} on the active timeline of {table.name}")
        target = next((i for i in table.timeline.filter(WRITE_ACTIONS) if i.timestamp == ts), None)
        if target is None:
            log.warning("rollback_to_instant: %s is no commit of %s; nothing rolled back", ts, table.name)
            return [(False,)]
        _check_rollback(table, target)
        rollback(table, target, spark=inv.spark)
    inv.refresh_catalog()
    return [(True,)]


def _check_rollback(table: HoodieTable, target: Instant) -> None:
    """Hudi's rules for rolling back a commit, and the metadata table's: only the newest, never a
    savepointed one, and not one the metadata table has compacted into its base files (its records
    could not be taken out again; a restore rebuilds the metadata table instead)."""
    ts = target.timestamp
    later = [i.timestamp for i in table.timeline.filter(FILE_WRITING_ACTIONS, after=ts)]
    if later:
        raise HoodieError(f"cannot roll back {ts}: {table.name} has later commits {later}; roll those back first")
    if ts in _savepoints(table):
        raise HoodieError(f"cannot roll back {ts}: it is savepointed; delete the savepoint first")
    if target.action == COMMIT and target.is_completed and table.storage.exists(
            table.timeline.path_of(Instant(ts, COMPACTION, State.REQUESTED))):
        raise HoodieError(f"cannot roll back {ts}: it is a completed compaction; restore a savepoint instead")
    mdt = open_mdt(table) if table_partitions(table) else None
    # The metadata table's compactions and initializations are a data instant's time plus a suffix.
    merged = [i.timestamp for i in mdt.timeline.completed_writes()
              if len(i.timestamp) > len(ts) and i.timestamp[:len(ts)] >= ts] if mdt is not None else []
    if merged:
        raise HoodieError(f"cannot roll back {ts}: the metadata table of {table.name} already merged it into "
                          f"its base files ({merged[0]}); restore a savepoint instead (rollback_to_savepoint)")
