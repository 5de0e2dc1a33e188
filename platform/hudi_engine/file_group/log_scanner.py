"""Which log blocks of a file slice count, as Hudi's log record reader decides.

A block counts when its instant completed (or predates the active timeline) and is not after the
query's instant; corrupt blocks (a writer killed mid-block) are skipped; a rollback command block
cancels the blocks its target instant wrote before it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ..storage import Storage
from .fs_view import LogFile
from .log_file import BlockType, CommandType, LogBlock, read_log_file


@dataclass(frozen=True)
class Visibility:
    """The instants a query may see: completed writes up to ``as_of``."""
    completed: frozenset[str]
    timeline_start: str | None = None
    as_of: str | None = None

    def __call__(self, instant: str) -> bool:
        if self.as_of is not None and instant > self.as_of:
            return False
        return instant in self.completed or (
            self.timeline_start is not None and instant < self.timeline_start)


def valid_blocks(blocks: Iterable[LogBlock], visible: Callable[[str], bool]) -> list[LogBlock]:
    kept: list[LogBlock] = []
    for block in blocks:
        if block.is_corrupt:
            continue
        if block.block_type == BlockType.COMMAND_BLOCK:
            if block.command_type == CommandType.ROLLBACK_BLOCK:
                target = block.target_instant_time
                kept = [b for b in kept if b.instant_time != target]
            continue
        if visible(block.instant_time):
            kept.append(block)
    return kept


def read_valid_blocks(storage: Storage, log_files: list[LogFile],
                      visible: Callable[[str], bool]) -> list[LogBlock]:
    blocks: list[LogBlock] = []
    for log in sorted(log_files, key=lambda f: f.order):
        blocks.extend(read_log_file(storage, log.path))
    return valid_blocks(blocks, visible)
