"""Which files make the next batch of a file source, and the checkpoint after it (Hudi's
DFSPathSelector), from a listing alone.

The checkpoint is the largest modification time (epoch milliseconds, a decimal string) among the
files consumed; the next batch takes files modified after it, oldest first, up to ``limit`` bytes.
Files sharing one modification time always go in the same batch: splitting them would leave some
behind at a time the checkpoint has already passed. So a batch stops before a group that would take
it past the limit, and the first group always goes, however big.

As in Hudi, a file that appears later with a modification time at or before the checkpoint (copied
with its old time preserved, or written slowly and renamed into place) is never picked up. Writers
should publish each file atomically with a fresh time: write it under a name starting with '.' or
'_' (ignored here, like ``_SUCCESS``, ``.crc`` and ``_temporary/``) and rename it when complete.
Empty files are skipped until they have content, also as in Hudi.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import groupby
from typing import Iterable, Protocol

from hudi_engine.errors import HoodieConfigError

from ..keys.files import ROOT

IGNORED_PREFIXES = (".", "_")


class Listed(Protocol):
    """One entry of a storage listing (``hudi_engine.storage.FileInfo``)."""
    path: str
    size: int
    mtime_ns: int | None


@dataclass(frozen=True)
class SourceFile:
    path: str        # relative to the source root, '/'-separated
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class Selection:
    files: tuple[SourceFile, ...]
    checkpoint: str | None
    oldest_waiting_ms: int | None    # modification time of the oldest file left for later batches

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def lag_seconds(self, now_ms: int) -> float:
        if self.oldest_waiting_ms is None:
            return 0.0
        return max(0.0, (now_ms - self.oldest_waiting_ms) / 1000)

    def describe(self) -> str:
        if not self.files:
            return "no new files"
        count = f"{len(self.files)} file{'s' if len(self.files) > 1 else ''}"
        return f"{count}, {human_size(self.size)}, mtime ≤ {iso_millis(self.files[-1].mtime_ms)}"


def eligible(path: str, size: int) -> bool:
    """Not hidden or in progress (no path part starts with '.' or '_') and not empty."""
    return size > 0 and not any(part.startswith(IGNORED_PREFIXES) for part in path.split("/"))


def source_files(listing: Iterable[Listed]) -> list[SourceFile]:
    """The eligible files of a listing, with millisecond modification times (the checkpoint's unit)."""
    found = []
    for info in listing:
        if not eligible(info.path, info.size):
            continue
        if info.mtime_ns is None:
            raise HoodieConfigError(
                f"the storage of {ROOT.key} gives no modification time for {info.path}; the file "
                "sources order files by it, so they cannot read from there")
        found.append(SourceFile(info.path, info.size, info.mtime_ns // 1_000_000))
    return found


def parse_checkpoint(checkpoint: str | None) -> int | None:
    if checkpoint is None:
        return None
    try:
        return int(checkpoint)
    except ValueError:
        raise HoodieConfigError(
            f"checkpoint {checkpoint!r} is not a file modification time (epoch milliseconds, what the "
            "file sources store); was the table fed by another kind of source? Start from a given "
            "time with --checkpoint <epoch millis>") from None


def select(files: Iterable[SourceFile], checkpoint: str | None, limit: int) -> Selection:
    """The files of the next batch after ``checkpoint``; ``limit`` <= 0 means no byte limit."""
    after = parse_checkpoint(checkpoint)
    pending = sorted((f for f in files if after is None or f.mtime_ms > after),
                     key=lambda f: (f.mtime_ms, f.path))
    taken: list[SourceFile] = []
    total, left = 0, None
    for mtime_ms, group in groupby(pending, key=lambda f: f.mtime_ms):
        group = list(group)
        group_size = sum(f.size for f in group)
        if taken and limit > 0 and total + group_size > limit:
            left = mtime_ms
            break
        taken.extend(group)
        total += group_size
    new_checkpoint = str(taken[-1].mtime_ms) if taken else checkpoint
    return Selection(tuple(taken), new_checkpoint, left)


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024:
            break
    return f"{value:.1f} {unit}"


def iso_millis(epoch_ms: int) -> str:
    """UTC time of an epoch-millis value, with milliseconds only when there are some."""
    moment = datetime.fromtimestamp(epoch_ms // 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{moment}.{epoch_ms % 1000:03d}Z" if epoch_ms % 1000 else f"{moment}Z"
