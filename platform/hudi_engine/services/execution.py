"""Running pending table-service plans (compaction, clustering) safely beside other jobs.

A job executing a plan keeps a heartbeat on it (``.hoodie/.heartbeat/<instant>``), as writers do.
Another job finds the plan with a fresh heartbeat and leaves it alone; an inflight plan whose
heartbeat expired (or never existed) was interrupted, so it is rolled back to requested and run
again. With several writers the check and the heartbeat's start happen under the table lock, so
two jobs never both take one plan.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterable

from ..concurrency.heartbeat import Heartbeat, heartbeat_expired
from ..concurrency.locks import table_lock
from ..concurrency.settings import concurrency
from ..config import HoodieConfig
from ..errors import HoodieError
from ..table.meta_client import HoodieTable
from ..timeline.instant import Instant, State
from ..transaction.recovery import rollback

log = logging.getLogger(__name__)


def run_pending(noun: str, table: HoodieTable, pending: Iterable[tuple[Instant, Any]], instant_time: str | None,
                options: dict | None, execute: Callable[[HoodieTable, Instant, Any], str]) -> list[str]:
    """Execute the pending plans (one, or all oldest first) with ``execute(table, requested,
    detail)``; returns the completed instants."""
    cfg = HoodieConfig({**(options or {}), **table.props})
    conc = concurrency(cfg)
    done, busy, seen = [], [], []
    for instant, detail in pending:
        ts = instant.timestamp
        seen.append(ts)
        if instant_time is not None and ts != instant_time:
            continue
        with table_lock(table.storage.base_uri, cfg, f"starting {noun} {ts}", table.name, conc.occ):
            table = table.reload()
            current = table.timeline.get(ts)
            if current is None or current.is_completed:
                continue
            if not heartbeat_expired(table.storage, ts, conc.heartbeat_expiry_ms):
                log.info(f"{noun} {ts} is being executed by another job (its heartbeat is fresh); leaving it")
                busy.append(ts)
                continue
            if current.state == State.INFLIGHT:
                log.info(f"{noun} {ts} was interrupted; rolling it back to run it again")
                rollback(table, current, keep_requested=True)
                table = table.reload()
            heartbeat = Heartbeat(table.storage, ts, conc.heartbeat_interval_ms).start()
        try:
            done.append(execute(table, Instant(ts, instant.action, State.REQUESTED), detail))
        finally:
            heartbeat.stop()
    if instant_time is not None and not done and instant_time not in busy:
        raise HoodieError(f"no pending {noun} {instant_time} in {table.name}; pending ones: {seen}")
    return done

