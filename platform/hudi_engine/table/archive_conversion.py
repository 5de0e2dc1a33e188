"""Archived instants between the two layouts, for upgrade (6 → 8) and downgrade (8 → 6); pure.

A version 6 archive holds one ``HoodieArchivedMetaEntry`` per instant file, its content as an Avro
record; the LSM history holds one record per action, its files' bytes as the active timeline held
them (commit metadata as Avro at version 8). As Hudi's ``LegacyArchivedMetaEntryReader`` does, an
upgrade groups the entries of one instant time, takes the completed entry's record as metadata
and the requested one's as plan; completion times are not in version 6 entries and stay unset.
"""
from __future__ import annotations

from itertools import groupby
from typing import Iterable

from ..timeline import avro_models as am
from ..timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, LOG_COMPACTION, REPLACE_COMMIT, Instant, State
from ..timeline.lsm import LSMRecord
from .archived_timeline import content_field, entry_for

# The pending action a completed action's plan belongs to.
_PLAN_ACTION = {COMMIT: COMPACTION, DELTA_COMMIT: LOG_COMPACTION, REPLACE_COMMIT: REPLACE_COMMIT, CLEAN: CLEAN}


def _content(instant: Instant, entry: dict) -> bytes | None:
    field = content_field(instant)
    if field is None or entry.get(field[0]) is None:
        return None
    name, kind = field
    return am.encode_instant_avro(kind, entry[name])


def records_from_entries(entries: Iterable[dict]) -> list[LSMRecord]:
    """One LSM record per completed instant of a version 6 archive (entries in archive order)."""
    records = []
    for ts, group in groupby(entries, key=lambda e: e["commitTime"]):
        states = {e.get("actionState") or State.COMPLETED.name: e for e in group}
        done = states.get(State.COMPLETED.name)
        if done is None:
            continue
        action = done["actionType"]
        requested = states.get(State.REQUESTED.name)
        plan = None
        if requested is not None:
            plan = _content(Instant(ts, requested["actionType"], State.REQUESTED), requested)
        records.append(LSMRecord(ts, None, action, _content(Instant(ts, action, State.COMPLETED), done), plan))
    return records


def entries_from_records(records: Iterable[LSMRecord]) -> list[dict]:
    """The version 6 entries of LSM records: the plan's requested entry (when it is a plan version 6
    archives, not a replace commit's workload profile), then the completed one."""
    entries = []
    for r in records:
        pending = _PLAN_ACTION.get(r.action)
        if r.plan and pending and am.writer_schema(r.plan).get("name", "").rsplit(".", 1)[-1] != "HoodieCommitMetadata":
            entries.append(entry_for(Instant(r.instant_time, pending, State.REQUESTED), r.plan))
        entries.append(entry_for(Instant(r.instant_time, r.action, State.COMPLETED), r.metadata or b""))
    return entries
