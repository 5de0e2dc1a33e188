"""``hudictl run --table-services`` beside continuous pipelines: each table's scheduled services run
as processes of their own when their cron schedule comes round, and (``runWhenDue``) as soon as
Hudi's triggers say they are due, at most one process per service of a table at a time. That is what
the Spark operator's scheduler and the operator's due-service launches do in a cluster, so the same
multi-writer setup runs on one machine. The decision which services are due is the operator's own
(``hudi_operator.reconcile.services_due``)."""
from __future__ import annotations

import datetime as _dt
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .cron import Schedule, parse

TERMINATE_WAIT_SECONDS = 60
# How often idle on-demand services look at their tables' timelines: a listing and a few reads each
# time, which on an object store are paid requests, so not on every one-second tick.
DUE_CHECK_SECONDS = 10.0


@dataclass
class Slot:
    """One service of one table, and its process while it runs."""
    table: Any
    job: Any
    job_dir: Path
    schedule: Schedule | None
    on_demand: bool
    next_fire: _dt.datetime | None = None
    process: subprocess.Popen | None = None
    started: float = 0.0
    launched_for: str | None = None         # the newest commit when an on-demand run last started

    @property
    def name(self) -> str:
        return f"HudiTable/{self.table.metadata.name} {self.job.service}"


@dataclass
class ServiceScheduler:
    """Starts service processes (``start(job, job_dir)``) as their schedules and triggers say."""
    slots: list[Slot]
    start: Callable[[Any, Path], subprocess.Popen]
    storage: Callable[[Any], dict[str, str]]      # a job's storage settings, to read its table's timeline
    failures: list[str] = field(default_factory=list)
    runs: int = 0
    checked_at: float = float("-inf")       # monotonic time of the last look at the timelines

    @classmethod
    def of(cls, services: list, start: Callable[[Any, Path], subprocess.Popen], now: _dt.datetime,
           storage: Callable[[Any], dict[str, str]]) -> "ServiceScheduler":
        """``services``: (table, planned job, job folder) of each scheduled service; ``now`` in
        local time, the zone the Spark operator reads schedules in by default."""
        from hudi_operator.reconcile.services_due import on_demand
        slots = []
        for table, job, job_dir in services:
            cron = (job.application.get("spec") or {}).get("schedule")
            schedule = parse(cron) if cron else None
            slots.append(Slot(table, job, job_dir, schedule, bool(on_demand(table.spec, [job.service])),
                              schedule.next_after(now) if schedule else None))
        return cls(slots, start, storage)

    def tick(self, now: _dt.datetime) -> None:
        """Reap the runs that ended, then start what is due: by schedule (``now``, local time) or by
        the table's timeline."""
        for slot in self.slots:
            self._reap(slot)
        due: dict[str, tuple[dict[str, Any], str | None]] = {}
        if time.monotonic() - self.checked_at >= DUE_CHECK_SECONDS:
            self.checked_at = time.monotonic()
            due = self._due_by_table([s for s in self.slots if s.on_demand and s.process is None])
        for slot in self.slots:
            if slot.process is not None:
                continue
            reason = None
            if slot.next_fire is not None and now >= slot.next_fire:
                reason = f"its schedule '{slot.schedule.text}' came round"
                slot.next_fire = slot.schedule.next_after(now)
            found, newest = due.get(slot.table.metadata.name, ({}, None))
            if reason is None and slot.job.service in found and newest != slot.launched_for:
                reason, slot.launched_for = found[slot.job.service].reason, newest
            if reason is not None:
                _say(f"{slot.name}: started, {reason}")
                slot.process, slot.started = self.start(slot.job, slot.job_dir), time.monotonic()
                self.runs += 1

    def stop(self, terminate: bool) -> None:
        """Let the running services finish (``terminate``: ask them to stop now; a rerun is safe)."""
        for slot in self.slots:
            if slot.process is not None and terminate:
                slot.process.terminate()
        for slot in self.slots:
            if slot.process is not None:
                try:
                    slot.process.wait(timeout=TERMINATE_WAIT_SECONDS if terminate else None)
                except subprocess.TimeoutExpired:
                    slot.process.kill()
                    slot.process.wait()
                self._reap(slot)

    def _reap(self, slot: Slot) -> None:
        if slot.process is None or slot.process.poll() is None:
            return
        code, took = slot.process.returncode, time.monotonic() - slot.started
        slot.process = None
        if code == 0:
            _say(f"{slot.name}: done in {took:.0f}s")
        else:
            self.failures.append(slot.name)
            _say(f"{slot.name}: failed with exit code {code} after {took:.0f}s (see its output above)")

    def _due_by_table(self, slots: list[Slot]) -> dict[str, tuple[dict[str, Any], str | None]]:
        """Per table with an idle on-demand service: its due services and its newest commit."""
        from hudi_engine.api import HoodieTable
        from hudi_engine.errors import HoodieError
        from hudi_engine.storage.options import scoped
        from hudi_operator.reconcile import services_due, table_status

        now = _dt.datetime.now(_dt.timezone.utc)
        found = {}
        for table in {s.table.metadata.name: s.table for s in slots}.values():
            mine = [s for s in slots if s.table is table]
            wanted = [s.job.service for s in mine]
            try:
                with scoped(self.storage(mine[0].job)):
                    if not HoodieTable.exists(table.spec.base_path):
                        continue
                    hoodie = HoodieTable.load(table.spec.base_path)
                    facts = table_status.timeline_facts(hoodie)
            except (OSError, HoodieError, ValueError) as exc:      # a writer mid-commit: look again next tick
                _say(f"HudiTable/{table.metadata.name}: cannot read its timeline now ({exc})")
                continue
            due = services_due.due_services(facts, services_due.triggers(table.spec, wanted), now)
            newest = hoodie.timeline.last_completed_write()
            found[table.metadata.name] = ({d.service: d for d in due}, newest.timestamp if newest else None)
        return found


def _say(message: str) -> None:
    print(f"hudictl run: {message}", file=sys.stderr, flush=True)
