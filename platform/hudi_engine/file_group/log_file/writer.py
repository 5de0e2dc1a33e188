"""Appending blocks to the log files of one file group, rolling over to the next version past a
size threshold, as HoodieLogFormatWriter does.

Object stores cannot append, so each log file is written once, whole: the writer keeps the encoded
blocks of its current file in memory and writes the file (``Storage.write_bytes``: temp file and
rename where the file system has rename) when it rolls over or closes. A log file that already
exists is never appended to or overwritten: like Hudi on storage without append, the writer moves
on to the next free version, keeping its write token.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ...config import LOGFILE_MAX_SIZE
from ...storage import Storage
from ..naming import parse_log_file_name
from .block import LogBlock, encode_block
from .format import UNKNOWN_WRITE_TOKEN, log_file_name


@dataclass(frozen=True)
class WrittenLogFile:
    """One finished log file, for the write stats of the commit."""
    path: str         # relative to the table's base path
    version: int
    size: int
    num_blocks: int


class LogWriter:
    """Log files ``.<file_id>_<instant>.log.<version>_<write_token>`` in ``partition``."""

    def __init__(self, storage: Storage, partition: str, file_id: str, instant: str, *,
                 version: int = 1, write_token: str = UNKNOWN_WRITE_TOKEN,
                 max_size: int = LOGFILE_MAX_SIZE.default):
        self.storage, self.partition, self.file_id, self.instant = storage, partition, file_id, instant
        self.write_token, self.max_size = write_token, max_size
        self.written: list[WrittenLogFile] = []
        self._blocks: list[bytes] = []
        self.current_size = 0   # bytes of the blocks the current file holds so far
        self.version = self._free_version(version)

    @property
    def path(self) -> str:
        """The file the next block goes to."""
        return self._path(self.version)

    def append(self, block: LogBlock) -> None:
        self._blocks.append(encode_block(block))
        self.current_size += len(self._blocks[-1])
        if self.current_size > self.max_size:
            self._flush()
            self.version = self._free_version(self.version + 1)

    def close(self) -> list[WrittenLogFile]:
        """Write the current file (if it has blocks); every file this writer wrote, in order."""
        self._flush()
        return self.written

    def _flush(self) -> None:
        if not self._blocks:
            return
        self.storage.write_bytes(self.path, b"".join(self._blocks))
        self.written.append(WrittenLogFile(self.path, self.version, self.current_size, len(self._blocks)))
        self._blocks, self.current_size = [], 0

    def _path(self, version: int) -> str:
        name = log_file_name(self.file_id, self.instant, version, self.write_token)
        return f"{self.partition}/{name}" if self.partition else name

    def _free_version(self, version: int) -> int:
        while self.storage.exists(self._path(version)):
            version += 1
        return version


def next_log_version(storage: Storage, partition: str, file_id: str, base_instant: str) -> int:
    """One past the newest log version in the slice, whatever its write token. Readers order a
    slice's logs by version, then by token as a string, so a new log file must not reuse an older
    one's version: tokens hold stage ids, and "0-116-158" sorts before "0-83-95"."""
    versions = [log.version for log in (parse_log_file_name(posixpath.basename(f.path)) for f in storage.list(partition))
                if log is not None and log.file_id == file_id and log.instant == base_instant]
    return max(versions, default=0) + 1
