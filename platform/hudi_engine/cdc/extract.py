"""Planning a CDC query (HoodieCDCExtractor): for every commit in the window and every file group
it changed, a split saying how to get the changes (the inference case) and which files that takes.

No I/O: commit metadata comes in as dicts (table version 6 JSON shape, which ``Timeline``
gives for every layout), and the file slices the splits refer to come from a ``SliceLookup``
(``FileGroupIndex`` over ``FileSystemView.file_groups(include_replaced=True)``).
"""
from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Iterable, Mapping, Protocol

from ..errors import HoodieError
from ..file_group.fs_view import BaseFile, FileGroup, FileSlice, LogFile
from ..file_group.naming import parse_base_file_name, parse_log_file_name
from ..timeline.instant import CLUSTERING, COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from .schema import LoggingMode

# WriteOperationType.yieldChanges: the operations whose commits can hold changes. Clustering,
# compaction, log compaction, indexing and schema changes rewrite data without changing it.
CHANGING_OPERATIONS = frozenset({"INSERT", "UPSERT", "UPSERT_PREPPED", "DELETE", "DELETE_PREPPED",
                                 "BULK_INSERT", "DELETE_PARTITION", "INSERT_OVERWRITE",
                                 "INSERT_OVERWRITE_TABLE", "BOOTSTRAP"})
_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING})
_DELETES = frozenset({"DELETE", "DELETE_PREPPED"})


class InferenceCase(Enum):
    """HoodieCDCInferenceCase: where a split's changes come from.

    AS_IS: the CDC log files a writer wrote (with the logging mode saying what else is needed).
    BASE_FILE_INSERT: a base file a write created; all its rows are inserts.
    BASE_FILE_DELETE: a delete emptied the group; all rows of the previous base file are deletes.
    LOG_FILE: a merge-on-read log file; the previous slice diffed against it merged in.
    REPLACE_COMMIT: a replaced file group (insert overwrite, delete partition); all its rows are deletes.
    """
    AS_IS = "AS_IS"
    BASE_FILE_INSERT = "BASE_FILE_INSERT"
    BASE_FILE_DELETE = "BASE_FILE_DELETE"
    LOG_FILE = "LOG_FILE"
    REPLACE_COMMIT = "REPLACE_COMMIT"


@dataclass(frozen=True)
class CDCSplit:
    """The changes one commit made to one file group, and what reading them takes.

    ``cdc_files``: the CDC log files (AS_IS), the new base file (BASE_FILE_INSERT) or the log file
    (LOG_FILE), relative to the table. ``before``/``after``: the slices whose rows the reader
    needs, read merged (``rows.change_rows`` names them the same): the previous slice's rows
    (OP_KEY_ONLY AS_IS, BASE_FILE_DELETE, LOG_FILE, REPLACE_COMMIT) and the current ones
    (OP_KEY_ONLY and DATA_BEFORE AS_IS, BASE_FILE_INSERT, and for LOG_FILE the previous slice
    with the log file added). A DATA_BEFORE_AFTER AS_IS split needs no slice.
    """
    instant: str
    partition: str
    file_id: str
    case: InferenceCase
    cdc_files: tuple[str, ...] = ()
    before: FileSlice | None = None
    after: FileSlice | None = None


@dataclass(frozen=True)
class Commit:
    """A completed commit of the query window: instant time, action and commit metadata."""
    instant: str
    action: str
    metadata: Mapping


class SliceLookup(Protocol):
    def base_file(self, partition: str, file_id: str, instant: str) -> BaseFile | None:
        """The group's base file written at ``instant`` (HoodieTableFileSystemView.getBaseFileOn)."""

    def latest_slice(self, partition: str, file_id: str, before: str) -> FileSlice | None:
        """The group's latest slice committed before ``before`` (a replace commit's instant)."""

    def slice_with_log(self, partition: str, file_id: str, name: str) -> FileSlice | None:
        """The group's slice that holds the log file ``name`` (placed by completion time on Hudi 1.x)."""


@dataclass(frozen=True)
class FileGroupIndex:
    """A ``SliceLookup`` over file groups already listed (replaced ones included)."""
    groups: Mapping[tuple[str, str], FileGroup] = field(default_factory=dict)

    @classmethod
    def of(cls, groups: Iterable[FileGroup]) -> "FileGroupIndex":
        return cls({(g.partition, g.file_id): g for g in groups})

    def base_file(self, partition: str, file_id: str, instant: str) -> BaseFile | None:
        group = self.groups.get((partition, file_id))
        return next((s.base_file for s in group.slices if s.base_file is not None
                     and s.base_file.instant == instant), None) if group else None

    def latest_slice(self, partition: str, file_id: str, before: str) -> FileSlice | None:
        group = self.groups.get((partition, file_id))
        slices = [s for s in group.slices if s.base_instant < before] if group else []
        return slices[-1] if slices else None

    def slice_with_log(self, partition: str, file_id: str, name: str) -> FileSlice | None:
        group = self.groups.get((partition, file_id))
        return next((s for s in group.slices if any(posixpath.basename(f.path) == name for f in s.log_files)),
                    None) if group else None


def extract_splits(commits: Iterable[Commit], mode: LoggingMode, lookup: SliceLookup,
                   pending_compactions: Iterable[tuple[str, Mapping]] = (),
                   from_compaction: bool = False,
                   infer_rewrites: bool = False) -> dict[tuple[str, str], list[CDCSplit]]:
    """The splits of every (partition, file id) the commits changed, each group's in instant order.

    ``commits``: the completed commit, deltacommit and replacecommit instants of the window.
    ``pending_compactions``: (instant, plan) of compactions not completed, whose input log files
    still make up earlier slices. ``from_compaction``: also read the CDC files compaction wrote
    (Flink's ``read.cdc.from.changelog``); Spark's CDC reader never does. ``infer_rewrites``: a
    table that keeps no CDC log (``hoodie.table.cdc.enabled`` off) still answers: a rewritten
    base file is diffed against the previous one, as a log file is (the LOG_FILE case).
    """
    pending = list(pending_compactions)
    by_group: dict[tuple[str, str], list[CDCSplit]] = defaultdict(list)
    for commit in commits:
        operation = str(commit.metadata.get("operationType") or "UNKNOWN").upper()
        if commit.action not in _ACTIONS or not (
                operation in CHANGING_OPERATIONS or (from_compaction and operation == "COMPACT")):
            continue
        for partition, stats in (commit.metadata.get("partitionToWriteStats") or {}).items():
            for stat in stats:
                split = _write_stat_split(commit, partition, stat, operation, mode, lookup, pending,
                                          infer_rewrites)
                by_group[(partition, split.file_id)].append(split)
        for partition, file_ids in (commit.metadata.get("partitionToReplaceFileIds") or {}).items():
            for file_id in file_ids:
                replaced = lookup.latest_slice(partition, file_id, commit.instant)
                if replaced is not None:
                    by_group[(partition, file_id)].append(CDCSplit(
                        commit.instant, partition, file_id, InferenceCase.REPLACE_COMMIT, before=replaced))
    return {key: sorted(by_group[key], key=lambda s: s.instant) for key in sorted(by_group)}


def _write_stat_split(commit: Commit, partition: str, stat: Mapping, operation: str, mode: LoggingMode,
                      lookup: SliceLookup, pending: list[tuple[str, Mapping]],
                      infer_rewrites: bool) -> CDCSplit:
    """HoodieCDCExtractor.parseWriteStat."""
    file_id, path = stat["fileId"], stat.get("path") or ""
    split = CDCSplit(commit.instant, partition, file_id, InferenceCase.AS_IS)
    cdc_files = stat.get("cdcStats") or {}
    if cdc_files:
        files = tuple(sorted(cdc_files, key=lambda p: parse_log_file_name(posixpath.basename(p)).version))
        split = replace(split, cdc_files=files)
        if mode is LoggingMode.DATA_BEFORE_AFTER:
            return split
        before = None
        if mode is LoggingMode.OP_KEY_ONLY:
            before = _slice(partition, file_id, _previous_base(lookup, partition, stat, commit))
        return replace(split, before=before, after=_slice(partition, file_id, _base(path, file_id, stat)))
    name = posixpath.basename(path)
    if parse_log_file_name(name) is not None:
        return _log_file_split(split, stat, commit, pending, lookup)
    if operation in _DELETES and stat.get("numWrites") == 0 and stat.get("numDeletes"):
        return replace(split, case=InferenceCase.BASE_FILE_DELETE,
                       before=_slice(partition, file_id, _previous_base(lookup, partition, stat, commit)))
    if not stat.get("numUpdateWrites") and stat.get("numWrites") == stat.get("numInserts"):
        return replace(split, case=InferenceCase.BASE_FILE_INSERT, cdc_files=(path,),
                       after=_slice(partition, file_id, _base(path, file_id, stat)))
    if infer_rewrites:
        return replace(split, case=InferenceCase.LOG_FILE, cdc_files=(path,),
                       before=_slice(partition, file_id, _previous_base(lookup, partition, stat, commit)),
                       after=_slice(partition, file_id, _base(path, file_id, stat)))
    raise HoodieError(
        f"commit {commit.instant} updated or deleted records of file group {file_id} in "
        f"'{partition}' but wrote no CDC log file for it, so its changes cannot be read: was "
        "hoodie.table.cdc.enabled off when it was written? Read an incremental window after it")


def _log_file_split(split: CDCSplit, stat: Mapping, commit: Commit,
                    pending: list[tuple[str, Mapping]], lookup: SliceLookup) -> CDCSplit:
    """A log file's changes: its slice before it (the write stat's base file and the log files it
    lists besides this one, plus the inputs of compactions then pending) and with it. A version 8+
    log written with CDC off names no slice (Hudi 1.x's append handle): the slice that holds it
    does, up to it."""
    partition, file_id, path = split.partition, split.file_id, stat["path"]
    name = posixpath.basename(path)
    base, logs = None, []
    if commit.action == DELTA_COMMIT:   # HoodieCDCExtractor.getDependentFileSliceForLogFile
        base = stat.get("baseFile") or None
        logs = [n for n in stat.get("logFiles") or [] if n != name]
        for op in _compacting(pending, commit.instant, partition, file_id):
            logs += [n for n in op.get("deltaFilePaths") or [] if n != name and n not in logs]
            base = base or op.get("dataFilePath") or None
        held = lookup.slice_with_log(partition, file_id, name) if not base and not logs else None
        if held is not None:
            mine = next(f for f in held.log_files if posixpath.basename(f.path) == name)
            base = posixpath.basename(held.base_file.path) if held.base_file else None
            logs = [posixpath.basename(f.path) for f in held.log_files if f.order < mine.order]
    base_file = _base(_join(partition, base), file_id) if base else None
    log_files = [_log(partition, n) for n in logs]
    before = FileSlice(partition, file_id, base_file.instant if base_file else split.instant, base_file,
                       sorted(log_files, key=lambda f: f.order))
    after = replace(before, log_files=sorted(log_files + [_log(partition, name)], key=lambda f: f.order))
    return replace(split, case=InferenceCase.LOG_FILE, cdc_files=(path,), before=before, after=after)


def _compacting(pending: list[tuple[str, Mapping]], instant: str, partition: str,
                file_id: str) -> list[Mapping]:
    """Operations on the file group of compactions requested before ``instant`` and still pending."""
    return [op for requested, plan in pending if requested < instant for op in plan.get("operations") or []
            if op.get("partitionPath", "") == partition and op.get("fileId") == file_id]


def _previous_base(lookup: SliceLookup, partition: str, stat: Mapping, commit: Commit) -> BaseFile:
    previous = stat.get("prevCommit")
    found = lookup.base_file(partition, stat["fileId"], previous) if previous not in (None, "null") else None
    if found is None:
        raise HoodieError(
            f"the CDC of commit {commit.instant} needs the base file that file group {stat['fileId']} "
            f"in '{partition}' had at {previous}, which is gone (cleaned?). Keep more commits "
            "(hoodie.cleaner.commits.retained) or read a later window")
    return found


def _slice(partition: str, file_id: str, base: BaseFile) -> FileSlice:
    return FileSlice(partition, file_id, base.instant, base)


def _base(path: str, file_id: str, stat: Mapping | None = None) -> BaseFile:
    parsed = parse_base_file_name(posixpath.basename(path))
    size = int((stat or {}).get("fileSizeInBytes") or 0)
    return BaseFile(path, file_id, parsed.instant if parsed else "", size)


def _log(partition: str, name: str) -> LogFile:
    parsed = parse_log_file_name(name)
    return LogFile(_join(partition, name), parsed.file_id, parsed.instant, parsed.version, 0,
                   parsed.write_token or "")


def _join(partition: str, name: str) -> str:
    return posixpath.join(partition, name) if partition else name
