"""Spark's Python workers call ``importlib.invalidate_caches()`` before every task, so that files a
job adds with ``addPyFile`` can be imported. On Python 3.10 and 3.11 each zip importer then re-reads
its archive's whole directory at once (CPython issue gh-103200; Python 3.12 made this lazy), and a
worker holds one zip importer per package it imported from ``pyspark.zip`` or spark-core's jar,
which Spark puts on the workers' path: measured here, about 0.1 s of every task, more than most of
the engine's tasks take. In a Spark worker, a zip importer re-reads its archive only when the
archive changed (its size or modification time), which keeps what the invalidation is for.
"""
from __future__ import annotations

import os
import sys
import zipimport

_STAMP = "_hudi_archive_stamp"


def lazy_zip_invalidation() -> None:
    """Install the re-read-on-change invalidation in this process if it is a Spark Python worker
    on a Python that needs it; anywhere else it does nothing."""
    original = zipimport.zipimporter.invalidate_caches
    if sys.version_info >= (3, 12) or "pyspark.worker" not in sys.modules or hasattr(original, _STAMP):
        return

    def invalidate_caches(self) -> None:
        try:
            st = os.stat(self.archive)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp is None or getattr(self, _STAMP, None) != stamp:
            original(self)
            setattr(self, _STAMP, stamp)

    setattr(invalidate_caches, _STAMP, True)
    zipimport.zipimporter.invalidate_caches = invalidate_caches
