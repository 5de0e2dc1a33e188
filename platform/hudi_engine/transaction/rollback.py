"""Rolling back writes that never completed (EAGER or LAZY failed-writes policy): plan, delete, record.

A rollback is itself an instant (requested → inflight → completed) so a rollback killed half way
is finished by the next writer from its plan. Base files the failed instant wrote are deleted;
log files it appended to get a rollback command block (as Hudi does for table version 6), which
tells readers to skip its blocks. From table version 8 on a write's log files are its own (named by
its instant), so they are deleted like base files. A rolled back compaction returns to requested,
to run again.
"""
from __future__ import annotations

import posixpath
import time
from collections import defaultdict

from ..file_group.log_file import UNKNOWN_WRITE_TOKEN, LogWriter, next_log_version, rollback_command_block
from ..file_group.markers import marked_files, marker_dir
from ..file_group.naming import parse_base_file_name, parse_log_file_name
from ..table.meta_client import HoodieTable
from ..timeline.avro_models import encode_instant_avro
from ..timeline.instant import COMPACTION, ROLLBACK, Instant, State, new_instant_time
from ..timeline.timeline import META_DIR
from .commit import CommitListener, complete


def rollback(table: HoodieTable, instant: Instant, keep_requested: bool = False,
             listener: CommitListener | None = None) -> Instant:
    """Roll back one pending write instant: its data files and markers go, then its instant files
    (with ``keep_requested``, as always for a compaction, the plan stays to be executed again)."""
    timeline = table.timeline
    rollback_ts = new_instant_time(timeline.last_instant_time)
    plan = {
        "instantToRollback": {"commitTime": instant.timestamp, "action": instant.action},
        "RollbackRequests": _rollback_requests(table, instant),
        "version": 1,
    }
    requested = timeline.create_requested(Instant(rollback_ts, ROLLBACK, State.REQUESTED),
                                          encode_instant_avro("HoodieRollbackPlan", plan))
    return execute_rollback(table, requested, plan, keep_requested, listener)


def _rollback_requests(table: HoodieTable, instant: Instant) -> list[dict]:
    """Every data file the instant may have written: its markers plus any file named after it.
    Log files it appended to (APPEND markers) keep their bytes and get a command block instead."""
    storage = table.storage
    marked = marked_files(storage, instant.timestamp)
    appended: set[str] = set()
    if table.version < 8:
        appended = {path for path, io_type in marked.items() if io_type == "APPEND" and storage.exists(path)}
        appended |= _appended_by_commit(table, instant)
    candidates = set(marked) - appended
    for info in storage.list("", recursive=True):
        if info.path.startswith(META_DIR + "/"):
            continue
        name = posixpath.basename(info.path)
        base = parse_base_file_name(name)
        log = parse_log_file_name(name) if base is None else None
        if (base and base.instant == instant.timestamp) or (log and log.instant == instant.timestamp):
            candidates.add(info.path)
    by_group: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(candidates):
        name = posixpath.basename(path)
        parsed = parse_base_file_name(name) or parse_log_file_name(name)
        file_id = parsed.file_id if parsed else ""
        by_group[(posixpath.dirname(path), file_id)].append(storage.uri(path))
    requests = [{"partitionPath": partition, "fileId": "", "latestBaseInstant": "",
                 "filesToBeDeleted": files, "logBlocksToBeDeleted": {}}
                for (partition, _), files in sorted(by_group.items())]
    logs: dict[tuple[str, str, str], dict[str, int]] = defaultdict(dict)
    for path in sorted(appended):
        log = parse_log_file_name(posixpath.basename(path))
        logs[(posixpath.dirname(path), log.file_id, log.instant)][storage.uri(path)] = storage.size(path)
    requests += [{"partitionPath": partition, "fileId": file_id, "latestBaseInstant": base_instant,
                  "filesToBeDeleted": [], "logBlocksToBeDeleted": blocks}
                 for (partition, file_id, base_instant), blocks in sorted(logs.items())]
    return requests


def _appended_by_commit(table: HoodieTable, instant: Instant) -> set[str]:
    """Log files a completed instant appended blocks to (a restore rolls back completed writes, whose
    markers are gone): named after an older base instant, so a name match would miss them."""
    if not instant.is_completed:
        return set()
    stats = table.timeline.commit_metadata(instant).get("partitionToWriteStats") or {}
    paths = {s["path"] for group in stats.values() for s in group if s.get("path")}
    return {p for p in paths if (log := parse_log_file_name(posixpath.basename(p))) is not None
            and log.instant != instant.timestamp and table.storage.exists(p)}


def execute_rollback(table: HoodieTable, rollback_instant: Instant, plan: dict, keep_requested: bool = False,
                     listener: CommitListener | None = None) -> Instant:
    """Carry out a rollback plan (also one a killed run left) and complete the rollback instant."""
    storage, timeline = table.storage, table.timeline
    started = time.monotonic()
    if rollback_instant.state == State.REQUESTED:
        rollback_instant = timeline.transition_to_inflight(rollback_instant)
    target = plan["instantToRollback"]
    partitions: dict[str, dict] = {}
    deleted_total = 0
    # Plans name files by URI (older ones of ours by path inside the filesystem).
    roots = (storage.uri("").rstrip("/") + "/", storage.root.rstrip("/") + "/")
    for request in plan["RollbackRequests"]:
        partition = request["partitionPath"]
        entry = partitions.setdefault(partition, {
            "partitionPath": partition, "successDeleteFiles": [], "failedDeleteFiles": [],
            "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}})
        for full in request["filesToBeDeleted"]:
            rel = next((full[len(r):] for r in roots if full.startswith(r)), full)
            storage.delete(rel)  # already gone after an earlier, interrupted attempt is fine
            entry["successDeleteFiles"].append(full)
            deleted_total += 1
        if request["logBlocksToBeDeleted"]:
            entry["logFilesFromFailedCommit"].update(request["logBlocksToBeDeleted"])
            entry["rollbackLogFiles"].update(_append_rollback_block(
                table, request, target["commitTime"], rollback_instant.timestamp))
    storage.delete_dir(marker_dir(target["commitTime"]))
    pending = Instant(target["commitTime"], target["action"], State.REQUESTED)
    if keep_requested or target["action"] == COMPACTION:
        storage.delete(timeline.path_of(pending.with_state(State.INFLIGHT)))
    else:
        done = timeline.get(target["commitTime"])            # a restore's target (a write sorts before
        if done is not None and done.is_completed:           # a savepoint of the same time)
            storage.delete(timeline.path_of(done))
        timeline.delete_pending_files(pending)
    metadata = {
        "startRollbackTime": rollback_instant.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": deleted_total,
        "commitsRollback": [target["commitTime"]],
        "partitionMetadata": partitions,
        "version": 1,
        "instantsRollback": [{"commitTime": target["commitTime"], "action": target["action"]}],
    }
    return complete(table, rollback_instant, metadata, listener)


def _append_rollback_block(table: HoodieTable, request: dict, target: str, rollback_time: str) -> dict[str, int]:
    """A command block in the file slice's next log file, naming the instant whose blocks are void."""
    storage, partition = table.storage, request["partitionPath"]
    file_id, base_instant = request["fileId"], request["latestBaseInstant"]
    writer = LogWriter(storage, partition, file_id, base_instant,
                       version=next_log_version(storage, partition, file_id, base_instant),
                       write_token=UNKNOWN_WRITE_TOKEN)
    writer.append(rollback_command_block(target, rollback_time))
    return {storage.uri(f.path): f.size for f in writer.close()}
