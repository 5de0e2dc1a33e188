"""Upgrading a table from version 6 to 8 to 9, and downgrading it back, one step at a time as
Hudi 1.x's upgrade and downgrade handlers do; each step is crash-safe, and running the command again
after a crash goes on from the version the table is at.

6 → 8 (SixToEightUpgradeHandler): every active instant moves to ``.hoodie/timeline/``, a completed
one named with its completion time (its file's modification time, the only record of it a version 6
timeline has) and commit metadata rewritten as Avro; ``hoodie.properties`` gains the 1.x keys (merge
mode and strategy, timeline paths). Log files keep their names: a version 6 log is named after its
slice's base instant, which completion-time slicing places in that same slice. The new timeline is
written first (a version 6 reader does not look in ``timeline/``), then ``hoodie.properties``
switches the version in one write, then the old instant files go. The archived timeline moves into
the LSM history before the switch (``timeline/history/``, rewritten from scratch by a rerun), as
Hudi's upgradeToLSMTimeline does: one layer-0 file per ``hoodie.commits.archival.batch`` actions,
full layers merged; its old log files go with the old instant files after the switch (Hudi leaves
them, unread, behind).

8 → 9 (EightToNineUpgradeHandler): ``hoodie.properties`` only, in one write: the ordering field
becomes ``hoodie.table.ordering.fields``, the payload class ``hoodie.table.legacy.payload.class``
(the merge mode says how records merge), and the merge strategy id goes.

9 → 8 (NineToEightDowngradeHandler) undoes that; 8 → 6 (EightToSixDowngradeHandler) rolls back
failed writes, compacts a merge-on-read table until no latest slice has log files (a version 8 log is
named by its own delta commit, which version 6 readers would take for a base instant), moves the
timeline back to ``.hoodie/`` with commit metadata as JSON and the LSM history back into
``archived/`` log files (rewritten from scratch by a rerun, as Hudi's downgradeFromLSMTimeline
archives them again), drops the 1.x keys in one write, and deletes ``timeline/`` last.

Every step drops the metadata table first (its partitions unlisted); the next write that wants it
rebuilds it at the table's new version.
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
from ..merge.record_merger import PAYLOAD_MERGE_MODES, mode_payload_class
from ..table.archive_conversion import entries_from_records, records_from_entries
from ..table.archived import archive_folder, lsm_history
from ..table.archived_timeline import archive_log, next_archive_file, read_archived_entries
from ..table.meta_client import (MERGE_STRATEGY_IDS, PROPERTIES_FILE, HoodieTable, ordering_key_of_version,
                                 make_timeline_folders, merge_properties, timeline_properties)
from ..table.properties import write_properties_text
from ..timeline.avro_models import parse_commit_metadata
from ..timeline.commit_metadata import commit_metadata_json, encode_commit_metadata
from ..timeline.instant import (CLUSTERING, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Instant, State,
                                format_instant_time, parse_instant_file_name)
from ..timeline.timeline import META_DIR
from ..transaction.recovery import rollback_failed_writes
from ..transaction.restore import finish_pending_restore
from .table_changes import compact_every_log, refuse_logs, refuse_pending

log = logging.getLogger(__name__)

# The next version up or down from each version, as Hudi's handlers go.
UPGRADES = {6: 8, 8: 9}
DOWNGRADES = {9: 8, 8: 6}
# The step down whose readers would take a log named by its own delta commit for a base instant:
# a merge-on-read table's logs are compacted before it.
_COMPACTING_STEP = 6
# Keys Hudi 1.x adds to hoodie.properties, gone again at version 6.
_V8_ONLY = (C.INITIAL_TABLE_VERSION, C.TIMELINE_PATH, C.TIMELINE_HISTORY_PATH, C.RECORD_MERGE_MODE,
            C.RECORD_MERGE_STRATEGY_ID, C.TABLE_FORMAT, C.LEGACY_PAYLOAD_CLASS, C.PARTIAL_UPDATE_MODE)
_COMMIT_METADATA_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)


def upgraded_properties(props: dict[str, str]) -> dict[str, str]:
    """A version 6 table's properties at version 8: what Hudi 1.0 adds (the initial version stays
    unset, as Hudi leaves it for upgraded tables)."""
    payload = props.get(C.PAYLOAD_CLASS.key, C.PAYLOAD_CLASS.default)
    if payload not in PAYLOAD_MERGE_MODES:
        raise HoodieConfigError(
            f"cannot upgrade {props.get(C.TABLE_NAME.key)}: its {C.PAYLOAD_CLASS.key}={payload} merges by logic of "
            "its own, which Hudi 1.x keeps as a CUSTOM merge mode and this engine does not run. Upgrade it with "
            "Hudi's own tools, or keep it at version 6")
    mode = PAYLOAD_MERGE_MODES[payload]
    return {**props, **timeline_properties(8), **merge_properties(mode, 8)}


def nine_properties(props: dict[str, str]) -> dict[str, str]:
    """A version 8 table's properties at version 9: the payload class kept as the legacy one, the
    ordering field under its 1.1 name, no strategy id (the merge mode alone says it)."""
    if props.get(C.RECORD_MERGE_MODE.key, "").upper() not in MERGE_STRATEGY_IDS:
        raise HoodieConfigError(
            f"cannot upgrade {props.get(C.TABLE_NAME.key)} to version 9: its "
            f"{C.RECORD_MERGE_MODE.key}={props.get(C.RECORD_MERGE_MODE.key)} is one this engine does not run")
    out = {k: v for k, v in ordering_key_of_version(props, 9).items()
           if k not in (C.RECORD_MERGE_STRATEGY_ID.key, C.PAYLOAD_CLASS.key)}
    if C.PAYLOAD_CLASS.key in props:
        out[C.LEGACY_PAYLOAD_CLASS.key] = props[C.PAYLOAD_CLASS.key]
    out.update(timeline_properties(9))
    return out


def eight_properties(props: dict[str, str]) -> dict[str, str]:
    """A version 9 table's properties at version 8: the payload class back (the legacy one, else the
    merge mode's), the strategy id, the ordering field under the precombine key."""
    mode = props.get(C.RECORD_MERGE_MODE.key, C.RECORD_MERGE_MODE.default).upper()
    out = {k: v for k, v in ordering_key_of_version(props, 8).items()
           if k not in (C.LEGACY_PAYLOAD_CLASS.key, C.PARTIAL_UPDATE_MODE.key)}
    out[C.PAYLOAD_CLASS.key] = props.get(C.LEGACY_PAYLOAD_CLASS.key) or mode_payload_class(mode)
    custom = props.get(C.RECORD_MERGE_CUSTOM_CLASSES.key) if mode == "CUSTOM" else None
    out.update({**timeline_properties(8), **merge_properties(mode, 8, custom)})
    return out


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


def upgrade_table(table: HoodieTable, to_version: int = 9, options: dict | None = None, spark=None) -> HoodieTable:
    """The table at ``to_version``, one version step at a time; a table already there is finished (a
    step killed after its switch leaves old files behind) and returned."""
    steps = _steps(table, to_version, "upgrade", UPGRADES)
    cfg = HoodieConfig({**(options or {}), **table.props})
    for step in steps:
        with locked_table(table, cfg, f"upgrading to version {step}") as table:
            table = _without_failed_writes(_finish_switch(table), cfg, spark)
            refuse_pending(table, f"upgrade to version {step}")
            table = (_six_to_eight if step == 8 else _eight_to_nine)(delete_mdt(table), cfg)
    return table if steps else _finish_switch(table)


def _six_to_eight(table: HoodieTable, cfg: HoodieConfig) -> HoodieTable:
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
    upgraded, archived = _switch_layout(table, props, cfg, _history_from_archive, _drop_layout_1_files)
    log.info(f"upgraded {upgraded.name} to version 8: {moved} instant files moved to {target}, "
             f"{archived} archived actions to its LSM history")
    return upgraded


def _eight_to_nine(table: HoodieTable, cfg: HoodieConfig) -> HoodieTable:
    upgraded = _switch(table, nine_properties(table.props))
    log.info(f"upgraded {upgraded.name} to version 9")
    return upgraded


def downgrade_table(table: HoodieTable, to_version: int = 6, options: dict | None = None,
                    spark=None) -> HoodieTable:
    """The table at ``to_version``, one version step at a time (to 6, merge-on-read tables need
    ``spark`` to compact); a table already there is finished (a step killed after its switch) and
    returned."""
    steps = _steps(table, to_version, "downgrade", DOWNGRADES)
    for step in steps:
        change = f"downgrade to version {step}"
        cfg = HoodieConfig({**(options or {}), **table.props})
        with locked_table(table, cfg, f"rolling back failed writes to {change}") as table:
            table = _without_failed_writes(_finish_switch(table), cfg, spark)
        refuse_pending(table, change)
        if step == _COMPACTING_STEP and table.table_type == "MERGE_ON_READ":
            table = compact_every_log(spark, table, options or {}, change)
        with locked_table(table, cfg, change) as table:
            refuse_pending(table, change)
            table = (_eight_to_six if step == 6 else _nine_to_eight)(delete_mdt(table), change, cfg)
    return table if steps else _finish_switch(table)


def downgrade_compacts(table: HoodieTable, to_version: int) -> bool:
    """Whether downgrading the table to ``to_version`` compacts its log files first (and so needs a
    SparkSession); an impossible downgrade is refused here."""
    return (table.table_type == "MERGE_ON_READ"
            and _COMPACTING_STEP in _steps(table, to_version, "downgrade", DOWNGRADES))


def _nine_to_eight(table: HoodieTable, change: str, cfg: HoodieConfig) -> HoodieTable:
    downgraded = _switch(table, eight_properties(table.props))
    log.info(f"downgraded {downgraded.name} to version 8")
    return downgraded


def _eight_to_six(table: HoodieTable, change: str, cfg: HoodieConfig) -> HoodieTable:
    refuse_logs(table, change)
    moved = 0
    for instant in table.timeline.instants:
        for state in table.timeline.files_of(instant):
            source = table.timeline.path_of(state)
            action = REPLACE_COMMIT if state.action == CLUSTERING else state.action   # no clustering action at 6
            target = f"{META_DIR}/{Instant(state.timestamp, action, state.state).file_name(1)}"
            table.storage.write_bytes(target, _to_layout_1(state, table.storage.read_bytes(source)))
            moved += 1
    props = {k: v for k, v in table.props.items() if k not in {p.key for p in _V8_ONLY}}
    props.update(timeline_properties(6))
    make_timeline_folders(table.storage, props)
    downgraded, archived = _switch_layout(table, props, cfg, _archive_from_history, _drop_layout_2_files)
    log.info(f"downgraded {downgraded.name} to version 6: {moved} instant files moved to {META_DIR}, "
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


def _switch_layout(table: HoodieTable, props: dict[str, str], cfg: HoodieConfig, move_archive,
                   drop_old) -> tuple[HoodieTable, int]:
    """A timeline layout change once the instants are in the new layout: the archived timeline
    moved, the switch, then the old layout's files dropped; the table, and the actions archived."""
    archived = move_archive(table, HoodieTable(table.storage, props), cfg)
    switched = _switch(table, props)
    drop_old(switched)
    return switched, archived


def _switch(table: HoodieTable, props: dict[str, str]) -> HoodieTable:
    """The step's one visible change: ``hoodie.properties`` written whole."""
    table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
    return HoodieTable(table.storage, props)


def _steps(table: HoodieTable, to_version: int, direction: str, moves: dict[int, int]) -> list[int]:
    """The versions the table passes through to ``to_version`` (none if it is there)."""
    steps, version = [], table.version
    while version != to_version and version in moves:
        version = moves[version]
        steps.append(version)
    if version != to_version:
        raise HoodieConfigError(
            f"cannot {direction} {table.name} from version {table.version} to {to_version}: this engine can "
            f"{direction} " + ", ".join(f"{a} to {b}" for a, b in moves.items()))
    return steps


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
    """Hudi 1.1's ``hoodie.write.auto.upgrade``: a write to a table older than the
    ``hoodie.write.table.version`` it wants (named, or the default) upgrades the table first; with
    auto-upgrade off it writes the table at its own version (the writer refuses a named newer one)."""
    cfg = HoodieConfig(options)
    if not cfg.get(C.AUTO_UPGRADE) or not HoodieTable.exists(base_path):
        return
    table = HoodieTable.load(base_path)
    wanted = cfg.get(C.WRITE_TABLE_VERSION)
    if wanted > table.version and table.version in UPGRADES:
        log.info(f"{C.WRITE_TABLE_VERSION.key}={wanted}: upgrading {table.name} from version {table.version}")
        upgrade_table(table, wanted, options, spark)


def _finish_switch(table: HoodieTable) -> HoodieTable:
    """The files a step killed after its switch left of the layout the table no longer has."""
    _drop_layout_1_files(table)
    _drop_layout_2_files(table)
    return table


def _drop_layout_2_files(table: HoodieTable) -> None:
    if table.layout_version < 2 and table.storage.exists(f"{META_DIR}/{C.TIMELINE_PATH.default}"):
        table.storage.delete_dir(f"{META_DIR}/{C.TIMELINE_PATH.default}")


def _drop_layout_1_files(table: HoodieTable) -> None:
    if table.layout_version < 2:
        return
    old = [f.path for f in table.storage.list(META_DIR) if parse_instant_file_name(f.path.rsplit("/", 1)[-1])]
    old += [f.path for f in table.storage.list(archive_folder(table))]
    table.storage.delete_many(old)
