"""The rows of a ``df.write.format("hudi")`` on their way to the table. Spark runs a Python data
source's ``write`` in its tasks but its ``commit`` in a worker with no SparkSession, so each task
stages its rows as one parquet file in the table's temp folder and the driver then writes them all
in one commit. The staging folder goes once the write ends, however it ends."""
from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.datasource import WriterCommitMessage

from ..storage import Storage
from ..table.meta_client import PROPERTIES_FILE
from ..timeline.timeline import META_DIR

log = logging.getLogger(__name__)

TEMP_DIR = f"{META_DIR}/.temp"      # Hudi's own temp folder (markers live there too, by instant)
STAGING_PREFIX = "dataframe-write-"
# A staging folder whose newest file is older than this belongs to a write whose driver died between
# its tasks and its commit (no write waits a day for its commit): the next write to the table drops it.
ABANDONED_AFTER_S = 24 * 3600


def new_staging_dir() -> str:
    return f"{TEMP_DIR}/{STAGING_PREFIX}{uuid.uuid4().hex}"


def sweep_abandoned(storage: Storage, now: float | None = None) -> list[str]:
    """Drop the staging folders of writes that never committed; returns them."""
    cutoff = ((now if now is not None else time.time()) - ABANDONED_AFTER_S) * 1e9
    dropped = []
    for folder in storage.list_dirs(TEMP_DIR):
        if not folder.rsplit("/", 1)[-1].startswith(STAGING_PREFIX):
            continue
        stamps = [f.mtime_ns for f in storage.list(folder, recursive=True) if f.mtime_ns is not None]
        if max(stamps, default=0) < cutoff:
            log.info("dropping %s: staged by a df.write that never committed", folder)
            storage.delete_dir(folder)
            dropped.append(folder)
    return dropped


@dataclass(frozen=True)
class StagedFile(WriterCommitMessage):
    """What one task staged: a parquet file (relative to the base path), or None for no rows."""
    path: str | None
    rows: int


@dataclass(frozen=True)
class StagedWrite:
    """One ``df.write`` or one micro-batch of a ``writeStream``, as the commit hands it to the driver."""
    base_path: str
    options: dict[str, str]       # Hudi's keys, spelled as config defines them; no "path"
    overwrite: bool
    folder: str                   # the staging folder, relative to the base path
    schema: str                   # the DataFrame's schema, as Spark's JSON
    files: tuple[str, ...] = ()
    rows: int = 0
    batch_id: int | None = None   # a writeStream's micro-batch (sink_checkpoint); None for df.write

    @classmethod
    def from_dict(cls, fields: dict) -> "StagedWrite":
        return cls(**{**fields, "files": tuple(fields.get("files", ()))})


def stage_batches(storage: Storage, folder: str, batches: Iterable[pa.RecordBatch]) -> StagedFile:
    """A task's rows as one parquet file in ``folder``, written an Arrow batch at a time."""
    rel = f"{folder}/{uuid.uuid4().hex}.parquet"
    rows = 0
    sink, writer = None, None
    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            if writer is None:
                sink = storage.open_output(rel)
                writer = pq.ParquetWriter(sink, batch.schema)
            writer.write_batch(batch)
            rows += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
        if sink is not None:
            sink.close()
    return StagedFile(rel if rows else None, rows)


def drop_staging(storage: Storage, folder: str) -> None:
    """Delete the staged files. On local disk, a first write that failed also leaves no ``.hoodie``
    folder behind (Hudi's Spark writer takes that folder for a table)."""
    storage.delete_dir(folder)
    if not storage.is_local or storage.exists(PROPERTIES_FILE):
        return
    for rel in (TEMP_DIR, META_DIR):
        try:
            os.rmdir(storage.full(rel))     # only when empty: another writer's files stay
        except OSError:
            return
