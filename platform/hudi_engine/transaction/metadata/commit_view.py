"""The table's latest file slices just before one action completes and as they will be once it has.

Every index kept in step with a write, compaction or clustering needs one or both: the record
index the base files it replaces, the secondary index each touched file group before and after,
partition stats and expression indexes every file of a touched partition after. They come from one
listing of the table (the metadata table's files partition, or storage) taken once per commit.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...file_group.fs_view import FileSlice, FileSystemView
from ...metadata_table.reader import table_view
from ...storage import FileInfo
from ...table.meta_client import HoodieTable

SliceKey = tuple[str, str]          # (partition, file id)


@dataclass(frozen=True)
class CommitView:
    """``before``: every latest slice of the table; ``after``: the latest slices of the partitions
    the action touched (written to, or file groups replaced in) once it completes."""
    touched: frozenset[str]
    before: dict[SliceKey, FileSlice]
    after: dict[SliceKey, FileSlice]

    def after_slices(self) -> list[FileSlice]:
        return list(self.after.values())


EMPTY_VIEW = CommitView(frozenset(), {}, {})     # what an action that needs no view passes on


def touched_partitions(meta: dict) -> frozenset[str]:
    return frozenset(meta.get("partitionToWriteStats") or {}) | frozenset(meta.get("partitionToReplaceFileIds") or {})


def commit_view(table: HoodieTable, instant: str, meta: dict, written: list[FileInfo]) -> CommitView:
    """The view of pending ``instant`` (completing with ``meta``, having written ``written``)."""
    view = table_view(table)
    before = {(s.partition, s.file_id): s for s in view.latest_file_slices()}
    touched = touched_partitions(meta)
    if not touched:
        return CommitView(touched, before, {})
    pending = table.timeline.get(instant)
    if pending is None:
        raise ValueError(f"instant {instant} is not pending on {table.name}'s timeline")
    listing = {f.path: f for f in view.data_files()}
    listing.update({f.path: f for f in written})
    after_view = FileSystemView(table.storage, table.timeline.with_completed(pending, meta), list(listing.values()))
    after = {(s.partition, s.file_id): s for s in after_view.latest_file_slices(partitions=set(touched))}
    return CommitView(touched, before, after)
