"""One storage layer for driver and executors: ``pyarrow.fs`` (local, S3, GCS, HDFS) with no Hadoop JARs.

A :class:`Storage` is picklable (it keeps only the URI) so Spark tasks rebuild the filesystem
themselves instead of shipping a live client.
"""
from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass, field
from functools import cached_property

import pyarrow.fs as pafs


@dataclass(frozen=True)
class FileInfo:
    path: str          # relative to the table's base path, '/'-separated
    size: int
    mtime_ns: int | None = None


@dataclass
class Storage:
    """Files of one table, addressed by paths relative to its base path."""

    base_uri: str
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __getstate__(self):
        return {"base_uri": self.base_uri}

    def __setstate__(self, state):
        self.base_uri = state["base_uri"]
        self._cache = {}

    @cached_property
    def _fs_and_root(self) -> tuple[pafs.FileSystem, str]:
        uri = self.base_uri
        if "://" not in uri:
            uri = posixpath.abspath(uri) if not uri.startswith("/") else uri
            return pafs.LocalFileSystem(), uri.rstrip("/") or "/"
        fs, root = pafs.FileSystem.from_uri(uri)
        return fs, root.rstrip("/")

    @property
    def fs(self) -> pafs.FileSystem:
        return self._fs_and_root[0]

    @property
    def root(self) -> str:
        return self._fs_and_root[1]

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def full(self, rel: str) -> str:
        return posixpath.join(self.root, rel) if rel else self.root

    def uri(self, rel: str) -> str:
        """A path Spark can open (file:// for local tables)."""
        full = self.full(rel)
        if self.is_local:
            return "file://" + full
        scheme = self.base_uri.split("://", 1)[0]
        return f"{scheme}://{full}"

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full(rel)).type != pafs.FileType.NotFound

    def is_dir(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full(rel)).type == pafs.FileType.Directory

    def size(self, rel: str) -> int:
        return self.fs.get_file_info(self.full(rel)).size

    def read_bytes(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self.full(rel)) as f:
            return f.read()

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8")

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Whole-file write that readers never see half done: temp file then rename where the
        filesystem can rename (local, HDFS); object stores publish a PUT atomically anyway."""
        full = self.full(rel)
        self.fs.create_dir(posixpath.dirname(full), recursive=True)
        if self.is_local or self.fs.type_name == "hdfs":
            tmp = f"{posixpath.dirname(full)}/.{posixpath.basename(full)}.{uuid.uuid4().hex}.tmp"
            with self.fs.open_output_stream(tmp) as f:
                f.write(data)
            self.fs.move(tmp, full)
        else:
            with self.fs.open_output_stream(full) as f:
                f.write(data)

    def write_text(self, rel: str, text: str) -> None:
        self.write_bytes(rel, text.encode("utf-8"))

    def mkdirs(self, rel: str) -> None:
        self.fs.create_dir(self.full(rel), recursive=True)

    def delete(self, rel: str) -> bool:
        """Delete a file; False when it was already gone (deletes are retried after crashes)."""
        try:
            self.fs.delete_file(self.full(rel))
            return True
        except FileNotFoundError:
            return False

    def delete_dir(self, rel: str) -> None:
        if self.exists(rel):
            self.fs.delete_dir(self.full(rel))

    def list(self, rel: str = "", recursive: bool = False) -> list[FileInfo]:
        """Files (not directories) under ``rel``; empty when it does not exist."""
        selector = pafs.FileSelector(self.full(rel), recursive=recursive, allow_not_found=True)
        prefix = len(self.root) + 1
        return [FileInfo(info.path[prefix:], info.size, info.mtime_ns)
                for info in self.fs.get_file_info(selector) if info.type == pafs.FileType.File]

    def list_dirs(self, rel: str = "") -> list[str]:
        selector = pafs.FileSelector(self.full(rel), recursive=False, allow_not_found=True)
        prefix = len(self.root) + 1
        return [info.path[prefix:] for info in self.fs.get_file_info(selector)
                if info.type == pafs.FileType.Directory]
