"""Sync a Hudi table to the Hive Metastore the way Hudi's HiveSyncTool does (hms mode): the
database, one table per view (COW: one; MOR: ``_ro``/``_rt``), columns from the latest schema,
Spark data source properties, and the partitions written or dropped since the last synced commit
(recorded in the table's ``last_commit_time_sync`` / ``last_commit_completion_time_sync``).

Order makes it restartable: definition first, partitions next, the sync marker last, so a sync
that dies half way is redone by the next one; every step is a no-op when already done.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from .. import config as C
from ..config import HoodieConfig
from ..read.plan import table_schema
from ..table.meta_client import HoodieTable
from .errors import HiveSyncError
from .hms_client import HmsClient
from .partitions import CompletedWrite, partition_values, writes_to_sync
from .plan import (LAST_COMMIT_COMPLETION_TIME_SYNC, LAST_COMMIT_TIME_SYNC, HiveTable, check_ownership,
                   desired_table, partition_changes, sync_marker_update, table_update)
from .settings import SyncSettings, resolve_settings
from .table_state import completed_writes, live_partitions, touched_partitions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TableSyncResult:
    name: str
    created: bool = False
    altered: bool = False                               # columns, formats or properties rewritten
    full: bool = False                                  # partitions compared by listing the whole table
    added: tuple[tuple[str, ...], ...] = ()             # partition values
    updated: tuple[tuple[str, ...], ...] = ()
    dropped: tuple[tuple[str, ...], ...] = ()

    @property
    def changed(self) -> bool:
        return self.created or self.altered or bool(self.added or self.updated or self.dropped)


@dataclass(frozen=True)
class SyncResult:
    database: str
    tables: tuple[TableSyncResult, ...]
    synced_instant: str | None          # newest completed commit now in the metastore; None: table has none

    @property
    def changed(self) -> bool:
        return any(t.changed for t in self.tables)


def sync_hive(base_path: str, options: dict | None = None, *, take_over: bool = False,
              retries: int = 3, backoff_seconds: float = 1.0) -> SyncResult:
    """Bring the metastore in line with the table's completed commits; safe to rerun and to run
    while writers commit. ``take_over`` lets it change a metastore table at the target name that
    is not this table's (another location, or not a Hudi table)."""
    table = HoodieTable.load(base_path)
    settings = resolve_settings(options, table.props)
    writes = completed_writes(table)
    if not writes:
        log.info("%s has no completed commit yet: nothing to sync", base_path)
        return SyncResult(settings.database, (), None)
    schema = table_schema(table)
    location = table.storage.uri("")
    with HmsClient(settings.metastore_uris, retries=retries, backoff_seconds=backoff_seconds) as hms:
        _ensure_database(hms, settings)
        sync = _TableSync(hms, table, settings, writes, take_over)
        results = tuple(sync.run(desired_table(settings, target, schema, location))
                        for target in settings.targets)
    return SyncResult(settings.database, results, writes[-1].timestamp)


def sync_after_commit(base_path: str, options: dict | None) -> SyncResult | None:
    """The writer's hook, called after a commit completed: syncs when
    ``hoodie.datasource.meta.sync.enable`` or ``hoodie.datasource.hive_sync.enable`` is true,
    else returns None without contacting anything."""
    cfg = HoodieConfig(options)
    if not (cfg.get(C.META_SYNC_ENABLED) or cfg.get(C.HIVE_SYNC_ENABLED)):
        return None
    try:
        return sync_hive(base_path, options)
    except Exception as exc:
        if cfg.get(C.HIVE_SYNC_IGNORE_EXCEPTIONS):
            log.warning("hive sync of %s failed after the commit; continuing because %s=true: %s",
                        base_path, C.HIVE_SYNC_IGNORE_EXCEPTIONS.key, exc)
            return None
        raise HiveSyncError(
            f"the commit to {base_path} succeeded but syncing it to the Hive Metastore failed: {exc}. "
            f"The data is committed; fix the cause and run `hudictl hive-sync --base-path {base_path}` "
            "(any later sync catches up)") from exc


def _ensure_database(hms: HmsClient, settings: SyncSettings) -> None:
    if hms.database_exists(settings.database):
        return
    if not settings.auto_create_database:
        raise HiveSyncError(f"database {settings.database!r} does not exist in the metastore; create it "
                            f"or set {C.HIVE_SYNC_AUTO_CREATE_DATABASE.key}=true")
    hms.create_database(settings.database)


class _TableSync:
    """Syncs each metastore table of one Hudi table; partition listings are shared between them."""

    def __init__(self, hms: HmsClient, table: HoodieTable, settings: SyncSettings,
                 writes: list[CompletedWrite], take_over: bool):
        self.hms, self.table, self.settings = hms, table, settings
        self.writes, self.take_over = writes, take_over
        self._all_live: set[str] | None = None

    def run(self, desired: HiveTable) -> TableSyncResult:
        existing = self.hms.get_table(desired.database, desired.name)
        created = altered = taken_over = False
        if existing is None:
            created = self.hms.create_table(desired)
            existing = desired if created else self.hms.get_table(desired.database, desired.name)
            if existing is None:
                raise HiveSyncError(f"{desired.qualified_name} was created and dropped by someone else "
                                    "during the sync; run it again")
        if not created:
            taken_over = check_ownership(existing, desired, self.take_over)
            update = table_update(existing, desired)
            if update is not None:
                self.hms.alter_table(update)
                altered = True
        params = {} if created or taken_over else existing.params      # a taken-over marker is not ours
        window = None if not self.settings.incremental else writes_to_sync(
            self.writes, params.get(LAST_COMMIT_TIME_SYNC), params.get(LAST_COMMIT_COMPLETION_TIME_SYNC))
        result = TableSyncResult(desired.name, created, altered, full=window is None)
        if self.settings.partition_fields:
            result = self._sync_partitions(desired, window, result)
        completions = [w.completion_time for w in self.writes if w.completion_time]
        marker = sync_marker_update(params, self.writes[-1].timestamp, max(completions, default=None),
                                    force=window is None)
        if marker:
            self.hms.set_table_params(desired.database, desired.name, marker)
        log.info("synced %s: %s", desired.qualified_name, result)
        return result

    def _sync_partitions(self, desired: HiveTable, window: list[CompletedWrite] | None,
                         result: TableSyncResult) -> TableSyncResult:
        if window is None:
            paths = live = self._live_everywhere()
        else:
            paths = touched_partitions(self.table, window)
            live = live_partitions(self.table, paths)
        changes = partition_changes(paths, live, self.hms.get_partitions(desired.database, desired.name),
                                    self._values_of, self.table.storage.uri, full=window is None)
        self.hms.add_partitions(desired, changes.add, self.settings.batch_num)
        self.hms.alter_partitions(desired, changes.update)
        self.hms.drop_partitions(desired.database, desired.name, changes.drop)
        return replace(result, added=tuple(p.values for p in changes.add),
                       updated=tuple(p.values for p in changes.update), dropped=changes.drop)

    def _live_everywhere(self) -> set[str]:
        if self._all_live is None:
            self._all_live = live_partitions(self.table)
        return self._all_live

    def _values_of(self, path: str) -> tuple[str, ...]:
        s = self.settings
        return partition_values(s.extractor, path, s.partition_fields, s.decode_partition)
