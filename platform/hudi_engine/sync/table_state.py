"""What the Hudi side says, read from one timeline snapshot so a sync only ever sees completed
instants: completed writes with their completion times, the partitions they touched, and which
partitions still hold live file groups."""
from __future__ import annotations

import datetime as _dt
from typing import Iterable

from .. import config as C
from ..file_group.fs_view import FileSystemView
from ..table.meta_client import HoodieTable
from ..timeline.instant import format_instant_time
from ..timeline.timeline import META_DIR
from .partitions import CompletedWrite


def completed_writes(table: HoodieTable) -> list[CompletedWrite]:
    """Completed commits, delta commits and replace commits, oldest first. Hudi 1.x timelines
    name the completion time; for table version 6 it is the completed instant file's modification
    time, as Hudi 0.14+ reads it."""
    instants = table.timeline.completed_writes()
    if table.layout_version >= 2:
        return [CompletedWrite(i.timestamp, i.completion_time) for i in instants]
    utc = table.config.get_str(C.TIMELINE_TIMEZONE).upper() == "UTC"
    mtimes = {f.path.rsplit("/", 1)[-1]: f.mtime_ns for f in table.storage.list(META_DIR)}
    return [CompletedWrite(i.timestamp, _instant_time(mtimes.get(i.file_name()), utc)) for i in instants]


def touched_partitions(table: HoodieTable, writes: Iterable[CompletedWrite]) -> set[str]:
    """Partitions the writes added files to or replaced file groups in (delete_partition and
    insert_overwrite name the partitions they empty under partitionToReplaceFileIds)."""
    touched: set[str] = set()
    for write in writes:
        meta = table.timeline.commit_metadata(table.timeline.get(write.timestamp))
        touched.update(meta.get("partitionToWriteStats") or {})
        touched.update(meta.get("partitionToReplaceFileIds") or {})
    touched.discard("")
    return touched


def live_partitions(table: HoodieTable, candidates: Iterable[str] | None = None) -> set[str]:
    """Partitions with at least one file group visible at the snapshot (not replaced, not of a
    pending or failed write). Lists only the candidates when given, the whole table otherwise."""
    files = None if candidates is None else [f for p in candidates for f in table.storage.list(p)]
    view = FileSystemView(table.storage, table.timeline, files)
    return {s.partition for s in view.latest_file_slices()} - {""}


def _instant_time(mtime_ns: int | None, utc: bool) -> str | None:
    if mtime_ns is None:
        return None
    moment = _dt.datetime.fromtimestamp(mtime_ns / 1e9, _dt.timezone.utc if utc else None)
    return format_instant_time(moment)
