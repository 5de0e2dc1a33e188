"""Catalog sync: register a Hudi table in the Hive Metastore as Hudi's HiveSyncTool does.

    from hudi_engine.sync import sync_hive
    result = sync_hive("/data/trips", {"hoodie.datasource.hive_sync.metastore.uris": "thrift://hms:9083"})

Pure decisions live in ``settings``, ``hive_schema``, ``partitions`` and ``plan``; ``table_state``
reads the Hudi table, ``hms_client`` talks to the metastore, ``hive_sync`` puts them together.
"""
from .errors import HiveSyncError, MetastoreUnavailableError, TableOwnershipError
from .hive_sync import SyncResult, TableSyncResult, sync_after_commit, sync_hive

__all__ = ["sync_hive", "sync_after_commit", "SyncResult", "TableSyncResult", "HiveSyncError",
           "MetastoreUnavailableError", "TableOwnershipError"]
