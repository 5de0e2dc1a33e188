"""The metadata table as a listener of the data table's commit path (Hudi's metadata writer hook)."""
from __future__ import annotations

from ...table.meta_client import HoodieTable
from ...table.pending import CLUSTER_OPERATION
from ...timeline.instant import CLEAN, RESTORE, ROLLBACK, SAVEPOINT, Instant
from .writer import sync_clean, sync_commit, sync_rollback


class MetadataSync:
    """Keeps the metadata table in step with each data instant just before it completes: a
    commit's files, ranges, bloom filters and (with Spark) key locations; a clean's deletes; a
    rollback's undoing. Savepoints and restores change no file it indexes (a restore drops it)."""

    def __init__(self, spark=None, options: dict | None = None):
        self.spark = spark
        self.options = options or {}      # the writer's (hoodie.metadata.compact.max.delta.commits, ...)
        self.keys_in_process = False      # key locations read here (the write's data steps ran here)

    def before_complete(self, table: HoodieTable, instant: Instant, metadata: dict) -> None:
        if instant.action == CLEAN:
            sync_clean(table, instant.timestamp, metadata, self.options)
        elif instant.action == ROLLBACK:
            sync_rollback(table, instant.timestamp, metadata, self.options)
        elif instant.action not in (SAVEPOINT, RESTORE):
            # A clustering moves every key it rewrites to a new file group.
            sync_commit(table, instant.timestamp, metadata, self.spark, self.options,
                        all_keys_moved=metadata.get("operationType") == CLUSTER_OPERATION,
                        keys_in_process=self.keys_in_process)
