"""Upgrading a table from version 6 to 8, and downgrading it back, as Hudi 1.0's upgrade and
downgrade handlers do.

Upgrade (SixToEightUpgradeHandler): every
active instant moves to ``.hoodie/timeline/``, a completed one named with its completion time (its
file's modification time, the only record of it a version 6 timeline has) and commit metadata
rewritten as Avro; ``hoodie.properties`` gains the 1.x keys (merge mode and strategy, timeline
paths). Log files keep their names: a version 6 log is named after its slice's base instant, which
completion-time slicing places in that same slice.

Crash-safe and resumable: the new timeline is written first (a version 6 reader does not look in
``timeline/``), then ``hoodie.properties`` switches the version in one write, then the old instant
files go. Run again after a crash, it starts over before the switch and finishes the clean-up after
it. The metadata table is dropped first (its partitions unlisted) and rebuilt at version 8 by the
next write that wants it. The archived timeline moves into the LSM history before the switch
(``timeline/history/``, rewritten from scratch by a rerun), as Hudi's upgradeToLSMTimeline does: one
layer-0 file per ``hoodie.commits.archival.batch`` actions, full layers merged; its old log files go
with the old instant files after the switch (Hudi leaves them, unread, behind).

Downgrade (EightToSixDowngradeHandler): failed writes are rolled back and a merge-on-read table is
compacted until no latest slice has log files (a version 8 log is named by its own delta commit,
which version 6 readers would take for a base instant); the timeline moves back to ``.hoodie/``
with commit metadata as JSON and the LSM history back into ``archived/`` log files (rewritten from
scratch by a rerun, as Hudi's downgradeFromLSMTimeline archives them again), ``hoodie.properties``
loses the 1.x keys in one write, and ``timeline/`` goes last. The metadata table is rebuilt at
version 6 by the next write.
"""
from __future__ import annotations

import datetime as _dt
import logging

from .. import config as C
from ..concurrency.locks import locked_table
from ..concurrency.settings import concurrency
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..metadata_table.layout import delete_mdt
from ..table.archive_conversion import entries_from_records, records_from_entries
from ..table.archived import archive_folder, lsm_history
from ..table.archived_timeline import archive_log, next_archive_file, read_archived_entries
from ..table.meta_client import (PROPERTIES_FILE, HoodieTable, make_timeline_folders, merge_properties,
                                 timeline_properties)
from ..table.properties import write_properties_text
from ..timeline.avro_models import parse_commit_metadata
from ..timeline.commit_metadata import commit_metadata_json, encode_commit_metadata
from ..timeline.instant import (CLUSTERING, COMMIT, DELTA_COMMIT, REPLACE_COMMIT,
                                Instant, State, format_instant_time, parse_instant_file_name)
from ..timeline.timeline import META_DIR
from ..transaction.recovery import rollback_failed_writes
from ..transaction.restore import finish_pending_restore
from .table_changes import compact_every_log, refuse_logs, refuse_pending

log = logging.getLogger(__name__)

UPGRADABLE = {6: 8}
DOWNGRADABLE = {8: 6}
# Keys Hudi 1.x adds to hoodie.properties, gone again at version 6.
_V8_ONLY = (C.INITIAL_TABLE_VERSION, C.TIMELINE_PATH, C.TIMELINE_HISTORY_PATH, C.RECORD_MERGE_MODE,
            C.RECORD_MERGE_STRATEGY_ID)
_COMMIT_METADATA_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
_PAYLOAD_MODES = {"org.apache.hudi.common.model.DefaultHoodieRecordPayload": "EVENT_TIME_ORDERING",
                  "org.apache.hudi.common.model.EventTimeAvroPayload": "EVENT_TIME_ORDERING"}


def upgraded_properties(props: dict[str, str]) -> dict[str, str]:
    """A version 6 table's properties at version 8: what Hudi 1.0 adds (the initial version stays
    unset, as Hudi leaves it for upgraded tables)."""
    mode = _PAYLOAD_MODES.get(props.get(C.PAYLOAD_CLASS.key, ""), "COMMIT_TIME_ORDERING")
    return {**props, **timeline_properties(8), **merge_properties(mode, 8)}


def completion_time(instant_time: str, mtime_ns: int | None, utc: bool) -> str:
    """A completed version 6 instant's completion time: its file's modification time, never before
    the instant itself (clocks of several writers, copies that reset the time)."""
    if mtime_ns is None:
        return instant_time
    moment = _dt.datetime.fromtimestamp(mtime_ns / 1e9, _dt.timezone.utc if utc else None)
    if utc:
        moment = moment.replace(tzinfo=None)
    return max(format_instant_time(moment), instant_time)


def _holds_commit_metadata(instant: Instant, content: bytes) -> bool:
    """A completed write's file, or a write's inflight one (its workload profile), with content;
    requested files hold plans, and the other actions their own Avro records."""
    return instant.action in _COMMIT_METADATA_ACTIONS and instant.state != State.REQUESTED and bool(content.strip())


def converted(instant: Instant, content: bytes) -> bytes:
    """An instant file's content at version 8: commit metadata as Avro, the rest unchanged."""
    if not _holds_commit_metadata(instant, content):
        return content
    return encode_commit_metadata(parse_commit_metadata(content), 2,
                                  replace=instant.action == REPLACE_COMMIT and instant.is_completed)


def upgrade_table(table: HoodieTable, to_version: int = 8, options: dict | None = None, spark=None) -> HoodieTable:
    """The table at ``to_version`` (only 6 → 8 for now); a table already there is finished (an
    upgrade killed after its switch leaves old instant files behind) and returned."""
    if table.version == to_version:
        _drop_layout_1_files(table)
        return table
    _refuse_unsupported(table, to_version, "upgrade", UPGRADABLE)
    cfg = HoodieConfig({**(options or {}), **table.props})
    with locked_table(table, cfg, f"upgrading to version {to_version}") as table:
        table = _without_failed_writes(table, cfg, spark)
        refuse_pending(table, f"upgrade to version {to_version}")
        table = delete_mdt(table)
        utc = cfg.get_str(C.TIMELINE_TIMEZONE).upper() == "UTC"
        props = upgraded_properties(table.props)
        make_timeline_folders(table.storage, props)
        target = f"{META_DIR}/{C.TIMELINE_PATH.default}"
        moved = 0
        for info in table.storage.list(META_DIR):
            instant = parse_instant_file_name(info.path.rsplit("/", 1)[-1])
            if instant is None:
                continue
            if instant.is_completed:
                instant = Instant(instant.timestamp, instant.action, instant.state,
                                  completion_time(instant.timestamp, info.mtime_ns, utc))
            table.storage.write_bytes(f"{target}/{instant.file_name(2)}",
                                      converted(instant, table.storage.read_bytes(info.path)))
            moved += 1
        upgraded = HoodieTable(table.storage, props)
        archived = _history_from_archive(table, upgraded, cfg)
        table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
        _drop_layout_1_files(upgraded)
    log.info(f"upgraded {upgraded.name} to version {to_version}: {moved} instant files moved to {target}, "
             f"{archived} archived actions to its LSM history")
    return upgraded


def downgrade_table(table: HoodieTable, to_version: int = 6, options: dict | None = None,
                    spark=None) -> HoodieTable:
    """The table at ``to_version`` (only 8 → 6 for now; merge-on-read tables need ``spark`` to
    compact); a table already there is finished (a downgrade killed after its switch) and returned."""
    if table.version == to_version:
        _drop_layout_2_files(table)
        return table
    _refuse_unsupported(table, to_version, "downgrade", DOWNGRADABLE)
    change = f"downgrade to version {to_version}"
    cfg = HoodieConfig({**(options or {}), **table.props})
    with locked_table(table, cfg, f"rolling back failed writes to {change}") as table:
        table = _without_failed_writes(table, cfg, spark)
    refuse_pending(table, change)
    if table.table_type == "MERGE_ON_READ":
        table = compact_every_log(spark, table, options or {}, change)
    with locked_table(table, cfg, change) as table:
        refuse_pending(table, change)
        refuse_logs(table, change)
        table = delete_mdt(table)
        moved = 0
        for instant in table.timeline.instants:
            for state in table.timeline.files_of(instant):
                source = table.timeline.path_of(state)
                action = REPLACE_COMMIT if state.action == CLUSTERING else state.action   # no clustering action at 6
                target = f"{META_DIR}/{Instant(state.timestamp, action, state.state).file_name(1)}"
                table.storage.write_bytes(target, _to_layout_1(state, table.storage.read_bytes(source)))
                moved += 1
        props = {k: v for k, v in table.props.items() if k not in {p.key for p in _V8_ONLY}}
        props.update(timeline_properties(to_version))
        make_timeline_folders(table.storage, props)
        downgraded = HoodieTable(table.storage, props)
        archived = _archive_from_history(table, downgraded, cfg)
        table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
        _drop_layout_2_files(downgraded)
    log.info(f"downgraded {downgraded.name} to version {to_version}: {moved} instant files moved to {META_DIR}, "
             f"{archived} archived actions to {archive_folder(downgraded)}")
    return downgraded


def _history_from_archive(old: HoodieTable, new: HoodieTable, cfg: HoodieConfig) -> int:
    """The version 6 archive as the new table's LSM history (any earlier attempt's files dropped)."""
    history = lsm_history(new, cfg)
    new.storage.delete_many([f.path for f in new.storage.list(history.folder)])
    records = records_from_entries(read_archived_entries(old.storage, archive_folder(old)))
    batch = cfg.get(C.COMMITS_ARCHIVAL_BATCH)
    for start in range(0, len(records), batch):
        history.add(records[start:start + batch])
        history.compact_and_clean(cfg.get(C.TIMELINE_COMPACTION_BATCH), cfg.get(C.TIMELINE_MANIFEST_RETAINED))
    return len(records)


def _archive_from_history(old: HoodieTable, new: HoodieTable, cfg: HoodieConfig) -> int:
    """The LSM history as the version 6 table's archive log (any earlier attempt's, or stale, files
    dropped)."""
    folder = archive_folder(new)
    new.storage.delete_many([f.path for f in new.storage.list(folder)])
    records = lsm_history(old, cfg).records()
    if records:
        new.storage.write_bytes(next_archive_file(new.storage, folder),
                                archive_log(entries_from_records(records), cfg.get(C.COMMITS_ARCHIVAL_BATCH)))
    return len(records)


def _refuse_unsupported(table: HoodieTable, to_version: int, direction: str, supported: dict[int, int]) -> None:
    if supported.get(table.version) != to_version:
        raise HoodieConfigError(
            f"cannot {direction} {table.name} from version {table.version} to {to_version}: this engine can "
            f"{direction} " + ", ".join(f"{a} to {b}" for a, b in supported.items()))


def _without_failed_writes(table: HoodieTable, cfg: HoodieConfig, spark) -> HoodieTable:
    """Under the lock: pending restores finished, failed writes rolled back, as a writer starts."""
    conc = concurrency(cfg)
    return rollback_failed_writes(finish_pending_restore(table), conc.failed_writes, conc.heartbeat_expiry_ms, spark)


def _to_layout_1(instant: Instant, content: bytes) -> bytes:
    """An instant file's content at version 6: commit metadata as JSON, the rest unchanged."""
    if not _holds_commit_metadata(instant, content):
        return content
    return commit_metadata_json(parse_commit_metadata(content))


def upgrade_for_write(base_path: str, options: dict | None, spark=None) -> None:
    """Hudi's ``hoodie.write.auto.upgrade``: a write asking for a newer ``hoodie.write.table.version``
    than its table's upgrades the table first (the writer refuses any other mismatch)."""
    cfg = HoodieConfig(options)
    if not cfg.contains(C.WRITE_TABLE_VERSION) or not cfg.get(C.AUTO_UPGRADE) or not HoodieTable.exists(base_path):
        return
    table = HoodieTable.load(base_path)
    wanted = cfg.get(C.WRITE_TABLE_VERSION)
    if UPGRADABLE.get(table.version) == wanted:
        log.info(f"{C.WRITE_TABLE_VERSION.key}={wanted}: upgrading {table.name} from version {table.version}")
        upgrade_table(table, wanted, options, spark)


def _drop_layout_2_files(table: HoodieTable) -> None:
    if table.layout_version < 2 and table.storage.exists(f"{META_DIR}/{C.TIMELINE_PATH.default}"):
        table.storage.delete_dir(f"{META_DIR}/{C.TIMELINE_PATH.default}")


def _drop_layout_1_files(table: HoodieTable) -> None:
    if table.layout_version < 2:
        return
    old = [f.path for f in table.storage.list(META_DIR) if parse_instant_file_name(f.path.rsplit("/", 1)[-1])]
    old += [f.path for f in table.storage.list(archive_folder(table))]
    table.storage.delete_many(old)
