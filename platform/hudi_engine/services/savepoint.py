"""Savepoints (``<commit ts>.savepoint``) and restoring a table to one (``<ts>.restore``).

A savepoint records the file names of the table's latest slices at a completed commit; cleaning
keeps those files, so the table can be restored to that commit later. A restore plans the
instants after the savepoint, rolls them back newest first with the ordinary rollback (whose
instants it then folds into its own metadata, as Hudi does), and completes. A restore killed half
way is resumed from its plan by the next restore or writer.
"""
from __future__ import annotations

import getpass
import posixpath
import time
from collections import defaultdict
from dataclasses import dataclass

from ..errors import HoodieError
from ..metadata_table.reader import table_view
from ..table.meta_client import HoodieTable
from ..table.retention import check_read_instant
from ..timeline.avro_models import RESTORE_PLAN, decode_instant_avro, encode_instant_avro
from ..timeline.instant import (
    FILE_WRITING_ACTIONS,
    RESTORE,
    SAVEPOINT,
    WRITE_ACTIONS,
    Instant,
    State,
    new_instant_time,
)
from ..transaction.commit import complete
from ..transaction.recovery import rollback_failed_writes
from ..transaction.restore import execute_restore


@dataclass(frozen=True)
class SavepointInfo:
    instant: str
    savepointed_by: str
    savepointed_at: int
    comments: str
    files: int


def create_savepoint(table: HoodieTable, instant_time: str | None = None, user: str | None = None,
                     comments: str = "") -> Instant:
    """Savepoint a completed commit (the latest when None)."""
    timeline = table.timeline
    target = (timeline.get(instant_time) if instant_time else timeline.last_completed_write())
    if target is None or not target.is_completed or target.action not in WRITE_ACTIONS:
        done = [i.timestamp for i in timeline.completed_writes()]
        raise HoodieError(f"cannot savepoint {instant_time or 'the table'}: not a completed commit of "
                          f"{table.name}; completed commits: {done[-10:]}")
    if any(s.timestamp == target.timestamp for s in timeline.filter([SAVEPOINT], completed=True)):
        raise HoodieError(f"{target.timestamp} is already savepointed")
    check_read_instant(table, target.timestamp, "savepoint instant")
    files: dict[str, list[str]] = defaultdict(list)
    for s in table_view(table).latest_file_slices(as_of=target.timestamp):
        names = ([s.base_file.path] if s.base_file else []) + [f.path for f in s.log_files]
        files[s.partition].extend(posixpath.basename(n) for n in names)
    metadata = {
        "savepointedBy": user or getpass.getuser(),
        "savepointedAt": int(time.time()),
        "comments": comments,
        "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": sorted(names)}
                              for p, names in sorted(files.items())},
    }
    inflight = timeline.transition_to_inflight(Instant(target.timestamp, SAVEPOINT, State.REQUESTED))
    return complete(table, inflight, metadata)


def list_savepoints(table: HoodieTable) -> list[SavepointInfo]:
    out = []
    for sp in table.timeline.filter([SAVEPOINT], completed=True):
        meta = decode_instant_avro(table.timeline.read_details(sp))
        out.append(SavepointInfo(sp.timestamp, meta["savepointedBy"], meta["savepointedAt"], meta["comments"],
                                 sum(len(p["savepointDataFile"]) for p in meta["partitionMetadata"].values())))
    return out


def _savepoint(table: HoodieTable, instant_time: str) -> Instant:
    found = [s for s in table.timeline.filter([SAVEPOINT]) if s.timestamp == instant_time]
    if not found:
        raise HoodieError(f"no savepoint {instant_time} in {table.name}; savepoints: "
                          f"{[s.instant for s in list_savepoints(table)]}")
    return found[0]


def delete_savepoint(table: HoodieTable, instant_time: str) -> None:
    """Drop a savepoint: the next clean may then delete the files it kept."""
    sp = _savepoint(table, instant_time)
    timeline = table.timeline
    for found in reversed(timeline.files_of(sp)):   # completed first; its name holds its completion time (8+)
        table.storage.delete(timeline.path_of(found))


def restore_to_savepoint(table: HoodieTable, instant_time: str) -> Instant:
    """Roll the table back to a savepointed commit (or finish a restore a killed run left)."""
    pending = table.timeline.pending([RESTORE])
    if pending:
        return execute_restore(rollback_failed_writes(table), pending[0])
    return execute_restore(table.reload(), schedule_restore(table, instant_time))


def schedule_restore(table: HoodieTable, instant_time: str) -> Instant:
    """Write the restore plan: every write and compaction after the savepoint, newest first."""
    sp = _savepoint(table, instant_time)
    if not sp.is_completed:
        raise HoodieError(f"savepoint {instant_time} never completed; create it again first")
    later = [s.instant for s in list_savepoints(table) if s.instant > instant_time]
    if later:
        raise HoodieError(f"savepoints {later} are newer than {instant_time}: delete them first "
                          f"(hudictl savepoint delete), a restore would leave them pointing at nothing")
    table = rollback_failed_writes(table)
    timeline = table.timeline
    # Every write, and compactions/clusterings pending or done.
    doomed = [i for i in reversed(timeline.filter(FILE_WRITING_ACTIONS, after=instant_time))]
    plan = {"instantsToRollback": [{"commitTime": i.timestamp, "action": i.action} for i in doomed],
            "version": 2, "savepointToRestoreTimestamp": instant_time}
    return timeline.create_requested(
        Instant(new_instant_time(timeline.last_instant_time), RESTORE, State.REQUESTED),
        encode_instant_avro(RESTORE_PLAN, plan))
