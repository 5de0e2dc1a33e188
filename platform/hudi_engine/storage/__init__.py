"""One storage layer for driver and executors: ``pyarrow.fs`` (local, S3, GCS, Azure, HDFS) with no
Hadoop JARs.

A :class:`Storage` is picklable: it keeps its URI and settings, so Spark tasks rebuild the client
themselves instead of shipping a live one, and use the settings the driver resolved.

On object stores there are no directories: nothing writes directory-marker objects, a whole file
is one PUT, and a partition "exists" once a file is in it.
"""
from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

import pyarrow.fs as pafs

from ..errors import HoodieStorageError
from .deletes import delete_objects, store_for
from .filesystems import SCHEMES, bucket_settings, open_filesystem, scheme_of
from .options import configure, defaults, redacted, scoped, split_query, storage_settings

__all__ = ["FileInfo", "Storage", "configure", "scoped", "storage_settings"]


@dataclass(frozen=True)
class FileInfo:
    path: str          # relative to the table's base path, '/'-separated
    size: int
    mtime_ns: int | None = None


class Storage:
    """Files of one table, addressed by paths relative to its base path.

    ``options``: storage settings (``fs.s3a.*``) over the process defaults; other keys are ignored,
    so a table's read or write options can be passed whole."""

    def __init__(self, base_uri: str, options: Mapping[str, object] | None = None):
        bare, query = split_query(base_uri)
        if "://" in bare and SCHEMES.get(scheme_of(bare)) == "file":
            bare = bare.split("://", 1)[1]
        self.base_uri = bare.rstrip("/") if bare not in ("/", "") else bare
        self.settings = {**defaults(), **storage_settings(options)}
        self.query = query

    def __getstate__(self):
        return {"base_uri": self.base_uri, "settings": self.settings, "query": self.query}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"Storage({self.base_uri!r})"

    def child(self, rel: str) -> "Storage":
        """The storage of a folder under this one, with the same settings."""
        sub = Storage.__new__(Storage)
        sub.__setstate__({**self.__getstate__(), "base_uri": self.uri(rel) if not self.is_local else self.full(rel)})
        return sub

    @cached_property
    def _fs_and_root(self) -> tuple[pafs.FileSystem, str]:
        return open_filesystem(self.base_uri, self.settings, self.query)

    @property
    def fs(self) -> pafs.FileSystem:
        return self._fs_and_root[0]

    @property
    def root(self) -> str:
        return self._fs_and_root[1]

    @property
    def is_local(self) -> bool:
        return "://" not in self.base_uri

    @property
    def is_object_store(self) -> bool:
        """No real directories and no rename: S3, GCS, Azure blobs."""
        return SCHEMES.get(scheme_of(self.base_uri)) in ("s3", "gs", "abfs")

    def full(self, rel: str) -> str:
        """``rel`` as a path of :attr:`fs`."""
        return posixpath.join(self.root, rel) if rel else self.root

    def uri(self, rel: str) -> str:
        """``rel`` as a URI in the spelling the table was opened with (``file://`` when local):
        what the catalog, Spark and commit metadata are given."""
        if self.is_local:
            return "file://" + self.full(rel)
        return f"{self.base_uri}/{rel}" if rel else self.base_uri

    # --- errors ---------------------------------------------------------------------------------
    def failed(self, rel: str, error: OSError) -> OSError:
        """``error`` with what a user checks next; a missing file stays a FileNotFoundError."""
        if isinstance(error, (FileNotFoundError, HoodieStorageError)) or self.is_local:
            return error
        hint = "the credentials and that the bucket exists"
        if SCHEMES.get(scheme_of(self.base_uri)) == "s3":
            endpoint = self.settings.get("fs.s3a.endpoint") or (self.query or {}).get("endpoint_override")
            hint = (f"the endpoint (fs.s3a.endpoint={endpoint or 'unset: AWS'}), that the bucket "
                    f"exists, and the credentials (fs.s3a.access.key / fs.s3a.secret.key, or the AWS "
                    f"credential chain: AWS_ACCESS_KEY_ID, a profile, web identity). Settings: "
                    f"{redacted(self.settings) or 'none'}")
        return HoodieStorageError(f"{self.uri(rel)}: {error}. Check {hint}")

    # --- reading --------------------------------------------------------------------------------
    def info(self, rel: str) -> pafs.FileInfo:
        try:
            return self.fs.get_file_info(self.full(rel))
        except OSError as e:
            raise self.failed(rel, e) from e

    def exists(self, rel: str) -> bool:
        return self.info(rel).type != pafs.FileType.NotFound

    def is_dir(self, rel: str) -> bool:
        return self.info(rel).type == pafs.FileType.Directory

    def size(self, rel: str) -> int:
        return self.info(rel).size

    def open_input_file(self, rel: str):
        """A random-access file (on object stores: one HEAD, then ranged GETs)."""
        try:
            return self.fs.open_input_file(self.full(rel))
        except OSError as e:
            raise self.failed(rel, e) from e

    def read_bytes(self, rel: str) -> bytes:
        try:
            with self.fs.open_input_stream(self.full(rel)) as f:
                return f.read()
        except OSError as e:
            raise self.failed(rel, e) from e

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8")

    def list(self, rel: str = "", recursive: bool = False) -> list[FileInfo]:
        """Files (not directories) under ``rel``; empty when it does not exist."""
        prefix = len(self.root) + 1
        return [FileInfo(info.path[prefix:], info.size, info.mtime_ns)
                for info in self._entries(rel, recursive) if info.type == pafs.FileType.File]

    def list_dirs(self, rel: str = "") -> list[str]:
        prefix = len(self.root) + 1
        return [info.path[prefix:] for info in self._entries(rel, False)
                if info.type == pafs.FileType.Directory]

    def _entries(self, rel: str, recursive: bool) -> list[pafs.FileInfo]:
        selector = pafs.FileSelector(self.full(rel), recursive=recursive, allow_not_found=True)
        try:
            return self.fs.get_file_info(selector)
        except OSError as e:
            raise self.failed(rel, e) from e

    # --- writing --------------------------------------------------------------------------------
    def open_output(self, rel: str):
        """A stream that creates ``rel`` (its folder too, where folders exist)."""
        full = self.full(rel)
        try:
            if not self.is_object_store:
                self.fs.create_dir(posixpath.dirname(full), recursive=True)
            return self.fs.open_output_stream(full)
        except OSError as e:
            raise self.failed(rel, e) from e

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Whole-file write that readers never see half done: temp file then rename where the
        filesystem can rename (local, HDFS); an object store publishes a PUT atomically anyway."""
        if self.is_object_store:
            try:
                with self.open_output(rel) as f:    # the PUT goes out on close
                    f.write(data)
            except OSError as e:
                raise self.failed(rel, e) from e
            return
        full = self.full(rel)
        tmp = f"{posixpath.dirname(full)}/.{posixpath.basename(full)}.{uuid.uuid4().hex}.tmp"
        try:
            self.fs.create_dir(posixpath.dirname(full), recursive=True)
            with self.fs.open_output_stream(tmp) as f:
                f.write(data)
            self.fs.move(tmp, full)
        except OSError as e:
            raise self.failed(rel, e) from e

    def write_text(self, rel: str, text: str) -> None:
        self.write_bytes(rel, text.encode("utf-8"))

    def mkdirs(self, rel: str) -> None:
        """A folder, where folders exist; object stores have none to make."""
        if not self.is_object_store:
            self.fs.create_dir(self.full(rel), recursive=True)

    def delete(self, rel: str) -> None:
        """Delete a file; one already gone is fine (deletes are retried after crashes)."""
        self.delete_many([rel])

    def delete_many(self, rels: list[str]) -> None:
        """Delete files, as few requests as the store allows (S3: 1,000 per request)."""
        if not self.is_object_store:
            for rel in rels:
                try:
                    self.fs.delete_file(self.full(rel))
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise self.failed(rel, e) from e
            return
        try:
            delete_objects(self._object_store, [self.full(r).split("/", 1)[1] for r in rels])
        except OSError as e:
            raise self.failed(rels[0] if len(rels) == 1 else "", e) from e

    def delete_dir(self, rel: str) -> None:
        """Delete a folder and everything under it (on object stores: every object with its prefix)."""
        if self.is_object_store:
            self.delete_many([f.path for f in self.list(rel, recursive=True)])
            return
        if self.exists(rel):
            try:
                self.fs.delete_dir(self.full(rel))
            except OSError as e:
                raise self.failed(rel, e) from e

    @cached_property
    def _object_store(self) -> object:
        scheme = scheme_of(self.base_uri)
        authority = self.base_uri.split("://", 1)[1].split("/", 1)[0]
        kind = SCHEMES[scheme]
        return store_for(kind, authority, bucket_settings(authority, self.settings, self.query) if kind == "s3" else None)
