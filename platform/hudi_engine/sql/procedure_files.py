"""Procedures that list files: the file-system view (``show_fsview_all`` / ``show_fsview_latest``)
and the metadata table (its data partitions, a partition's files, its own size). They read the
engine's view of committed file slices (``table_view``: the metadata table's listing when there is
one) and the metadata table's reader; no data file is opened."""
from __future__ import annotations

import fnmatch
import posixpath

from ..errors import HoodieConfigError
from ..file_group.fs_view import FileSlice, FileSystemView, LogFile
from ..metadata_table.layout import FILES
from ..metadata_table.reader import MetadataReader, table_view
from ..timeline.instant import COMPACTION
from .procedure_context import Invocation, java_list

ALL_PARTITIONS = "ALL_PARTITIONS"


def _matches(pattern: str, partition: str) -> bool:
    """Hadoop's glob of ``<base>/<pattern>``: ``*`` stays inside one path level."""
    want, have = pattern.strip("/").split("/"), partition.split("/")
    return len(want) == len(have) and all(fnmatch.fnmatchcase(h, w) for w, h in zip(want, have))


def _scope(inv: Invocation, pattern: str) -> tuple[FileSystemView, str | None, set[str] | None] | None:
    """The view, the instant it is read as of (None: latest) and the partitions asked for; None
    when no commit is old enough for ``max_instant``."""
    args = inv.args
    if args["include_in_flight"]:
        raise HoodieConfigError(f"CALL {inv.procedure.name}: include_in_flight => true is not supported: this "
                                "engine's file-system view holds committed file slices only")
    as_of = None
    if args["max_instant"]:
        writes = [w.timestamp for w in inv.table.timeline.completed_writes(until=args["max_instant"])
                  if args["include_max"] or w.timestamp < args["max_instant"]]
        if not writes:
            return None
        as_of = writes[-1]
    view = table_view(inv.table)
    partitions = None if pattern == ALL_PARTITIONS else {p for p in view.partitions() if _matches(pattern, p)}
    return view, as_of, partitions


def _uri(inv: Invocation, path: str) -> str:
    return inv.table.storage.uri(path)


def _logs_text(inv: Invocation, logs: list[LogFile], sep: str = ", ") -> str:
    return java_list((f"HoodieLogFile{{pathStr='{_uri(inv, f.path)}', fileLen={f.size}}}" for f in logs), sep)


def _base(inv: Invocation, s: FileSlice) -> tuple[str, int]:
    return (_uri(inv, s.base_file.path), s.base_file.size) if s.base_file else ("", 0)


def show_fsview_all(inv: Invocation) -> list[tuple]:
    scope = _scope(inv, inv.args["path_regex"])
    if scope is None:
        return []
    view, as_of, partitions = scope
    rows = []
    for group in view.file_groups(as_of, partitions):
        for s in reversed(group.slices):    # newest slice first, as Hudi lists a file group's slices
            rows.append((group.partition, group.file_id, s.base_instant, *_base(inv, s), len(s.log_files),
                         sum(f.size for f in s.log_files), _logs_text(inv, s.log_files)))
    return rows[:inv.args["limit"]]


def show_fsview_latest(inv: Invocation) -> list[tuple]:
    args = inv.args
    if {"path_regex", "partition_path"} <= args.given:
        raise HoodieConfigError("CALL show_fsview_latest: path_regex and partition_path cannot be used together")
    timeline = inv.table.timeline
    if not args["merge"] and timeline.pending([COMPACTION]):
        raise HoodieConfigError(
            "CALL show_fsview_latest: merge => false is not supported while a compaction is pending: this "
            "engine's view always merges the logs written since into the slice the compaction reads")
    scope = _scope(inv, args["path_regex"] if "path_regex" in args.given else args["partition_path"])
    if scope is None:
        return []
    view, as_of, partitions = scope
    start = timeline.start

    def completed(instant: str) -> bool:   # instants before the active timeline were archived complete
        return timeline.is_completed(instant) or (start is not None and instant < start)

    rows = []
    for s in view.latest_file_slices(as_of, partitions):
        base_path, base_size = _base(inv, s)
        done = sum(f.size for f in s.log_files if completed(f.instant))
        pending = sum(f.size for f in s.log_files if not completed(f.instant))

        def ratio(size: int) -> float:
            return size / base_size if base_size > 0 else -1.0
        rows.append((s.partition, s.file_id, s.base_instant, base_path, base_size, len(s.log_files),
                     done + pending, done, pending, ratio(done), ratio(pending),
                     _logs_text(inv, [f for f in s.log_files if f.instant == s.base_instant], ","),
                     _logs_text(inv, [f for f in s.log_files if f.instant != s.base_instant], ",")))
    return rows[:args["limit"]]


def _metadata(inv: Invocation) -> MetadataReader:
    reader = MetadataReader(inv.table)
    if not reader.has(FILES):
        raise HoodieConfigError(f"the metadata table of {inv.table.name} is not enabled or not built yet; "
                                "a write with hoodie.metadata.enable=true builds it")
    return reader


def show_metadata_table_partitions(inv: Invocation) -> list[tuple]:
    return [(p,) for p in sorted(_metadata(inv).data_partitions())]


def show_metadata_table_files(inv: Invocation) -> list[tuple]:
    partition = inv.args["partition"].strip("/")
    names = (posixpath.basename(f.path) for f in _metadata(inv).file_listing()
             if posixpath.dirname(f.path) == partition)
    return [(name,) for name in sorted(names)]


def show_metadata_table_stats(inv: Invocation) -> list[tuple]:
    """Hudi's HoodieMetadataMetrics stats: per metadata partition, the size and count of the base
    and log files of its latest slices, and the number of data partitions."""
    reader = _metadata(inv)
    stats = {"partitionCount": len(reader.data_partitions())}
    for partition in reader.available:
        slices = reader.file_slices(partition)
        logs = [f for s in slices for f in s.log_files]
        stats.update({f"{partition}.totalBaseFileSizeInBytes": sum(s.base_file.size for s in slices if s.base_file),
                      f"{partition}.totalLogFileSizeInBytes": sum(f.size for f in logs),
                      f"{partition}.baseFileCount": sum(1 for s in slices if s.base_file),
                      f"{partition}.logFileCount": len(logs)})
    return [(key, str(value)) for key, value in sorted(stats.items())]
