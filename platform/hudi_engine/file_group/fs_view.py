"""File groups and file slices visible at an instant: the table's state, derived from a listing
and the timeline alone (files of uncommitted or rolled back instants are never visible)."""
from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field

from ..storage import FileInfo, Storage
from ..timeline.instant import REPLACE_COMMIT
from ..timeline.timeline import META_DIR, Timeline
from .naming import parse_base_file_name, parse_log_file_name


@dataclass(frozen=True)
class BaseFile:
    path: str          # relative to the base path
    file_id: str
    instant: str
    size: int


@dataclass(frozen=True)
class LogFile:
    path: str
    file_id: str
    instant: str
    version: int
    size: int
    write_token: str = ""

    @property
    def order(self) -> tuple[str, int, str]:
        """Hudi's log file order within a slice: instant, version, then write token."""
        return self.instant, self.version, self.write_token


@dataclass
class FileSlice:
    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)


@dataclass
class FileGroup:
    partition: str
    file_id: str
    slices: list[FileSlice] = field(default_factory=list)

    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None


def partition_of(path: str) -> str:
    return posixpath.dirname(path)


class FileSystemView:
    """A one-listing view of the table; ask it for the slices at any completed instant."""

    def __init__(self, storage: Storage, timeline: Timeline, files: list[FileInfo] | None = None):
        self.storage = storage
        self.timeline = timeline
        self._files = files if files is not None else [
            f for f in storage.list("", recursive=True)
            if not (f.path == META_DIR or f.path.startswith(META_DIR + "/"))]

    def data_files(self) -> list[FileInfo]:
        """The listing this view was built from (everything outside ``.hoodie/``)."""
        return list(self._files)

    def partitions(self) -> list[str]:
        return sorted({partition_of(f.path) for f in self._files if parse_base_file_name(
            posixpath.basename(f.path)) or parse_log_file_name(posixpath.basename(f.path))})

    def replaced_file_groups(self, as_of: str | None = None) -> set[tuple[str, str]]:
        replaced: set[tuple[str, str]] = set()
        for instant in self.timeline.filter([REPLACE_COMMIT], completed=True, until=as_of):
            meta = self.timeline.commit_metadata(instant)
            for partition, file_ids in (meta.get("partitionToReplaceFileIds") or {}).items():
                replaced.update((partition, fid) for fid in file_ids)
        return replaced

    def file_groups(self, as_of: str | None = None, partitions: set[str] | None = None,
                    include_replaced: bool = False) -> list[FileGroup]:
        """File groups with the slices committed at or before ``as_of`` (latest when None)."""
        committed = {i.timestamp for i in self.timeline.completed_writes(until=as_of)}
        # Instants older than the active timeline were archived after completing (as Hudi assumes).
        start = self.timeline.start
        slices: dict[tuple[str, str], dict[str, FileSlice]] = defaultdict(dict)
        logs: list[tuple[str, LogFile]] = []
        for f in self._files:
            partition, name = partition_of(f.path), posixpath.basename(f.path)
            if partitions is not None and partition not in partitions:
                continue
            base = parse_base_file_name(name)
            if base is not None:
                if base.instant in committed or (start is not None and base.instant < start
                                                 and (as_of is None or base.instant <= as_of)):
                    slices[(partition, base.file_id)][base.instant] = FileSlice(
                        partition, base.file_id, base.instant,
                        BaseFile(f.path, base.file_id, base.instant, f.size))
                continue
            log = parse_log_file_name(name)
            if log is not None and not log.is_cdc:
                logs.append((partition, LogFile(f.path, log.file_id, log.instant, log.version, f.size,
                                                 log.write_token or "")))
        self._attach_logs(slices, logs, as_of)
        replaced = set() if include_replaced else self.replaced_file_groups(as_of)
        groups = []
        for (partition, file_id), by_instant in slices.items():
            if (partition, file_id) in replaced:
                continue
            groups.append(FileGroup(partition, file_id, _fold_baseless(
                [by_instant[k] for k in sorted(by_instant)])))
        return sorted(groups, key=lambda g: (g.partition, g.file_id))

    def _attach_logs(self, slices, logs, as_of) -> None:
        """Each log file joins the slice it was written against.

        Table version 6 names a log file after its slice's base instant, so it joins the latest
        base at or before that name. Hudi 1.x names it after its own delta commit and slices by
        completion time: it joins the latest base requested before that commit completed (a
        pending one joins the latest slice). A log named by an instant older than the active
        timeline (archived, or a table upgraded from version 6) joins the latest base at or before
        its name. A log with no base before it starts a slice."""
        by_completion = self.timeline.layout_version >= 2
        start = self.timeline.start
        for partition, log in sorted(logs, key=lambda x: x[1].order):
            if as_of is not None and log.instant > as_of:
                continue
            group = slices[(partition, log.file_id)]
            if by_completion and not (start is not None and log.instant < start):
                instant = self.timeline.get(log.instant)
                done = instant.completion_time if instant is not None and instant.is_completed else None
                bases = [k for k in group if done is None or k < done]
            else:
                bases = [k for k in group if k <= log.instant]
            key = max(bases) if bases else log.instant
            group.setdefault(key, FileSlice(partition, log.file_id, key)).log_files.append(log)
        for key in [k for k, g in slices.items() if not g]:
            del slices[key]

    def latest_file_slices(self, as_of: str | None = None,
                           partitions: set[str] | None = None) -> list[FileSlice]:
        return [g.latest_slice() for g in self.file_groups(as_of, partitions) if g.slices]


def _fold_baseless(slices: list[FileSlice]) -> list[FileSlice]:
    """A slice with logs but no committed base file after an earlier slice is a compaction not
    finished (as of the query): its logs still merge onto the earlier base, as Hudi's merged
    file slice view does."""
    folded: list[FileSlice] = []
    for s in slices:
        if s.base_file is None and folded:
            prev = folded[-1]
            folded[-1] = FileSlice(prev.partition, prev.file_id, prev.base_instant, prev.base_file,
                                   sorted(prev.log_files + s.log_files, key=lambda f: f.order))
        else:
            folded.append(s)
    return folded
