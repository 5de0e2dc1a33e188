"""Looking at a table's files the same way on local disk and on S3, for the tests that run on both."""
from __future__ import annotations

import fnmatch

from hudi_engine.storage import Storage


def connection_options(base_path: str) -> dict[str, str]:
    """The ``fs.s3a.*`` settings that reach ``base_path``'s store (none for a local path), for a
    process of its own to be given as write options."""
    storage = Storage(str(base_path))
    if storage.is_local:
        return {}
    return {k: v for k, v in storage.settings.items() if k.startswith("fs.s3a.")}


def files(base_path: str, pattern: str = "*", under: str = "") -> list[str]:
    """Paths (relative to the base path) of the files under ``under`` that match ``pattern``."""
    return sorted(f.path for f in Storage(str(base_path)).list(under, recursive=True)
                  if fnmatch.fnmatch(f.path, pattern))
