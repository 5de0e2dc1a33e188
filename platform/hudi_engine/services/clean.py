"""Cleaning: plan (``<ts>.clean.requested``, a ``HoodieCleanerPlan``), delete, record (``<ts>.clean``).

The plan is written before any file goes, so a clean killed half way is finished from its plan by
the next run (deleting a file twice is harmless). Deletes run on Spark executors when a plan holds
very many files and a session is at hand, otherwise on threads of this process; either way
through ``Storage``.
"""
from __future__ import annotations

import datetime as _dt
import logging
import posixpath
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from .. import config as C
from ..concurrency.locks import table_lock
from ..config import HoodieConfig
from ..file_group.fs_view import FileSystemView, LogFile
from ..file_group.naming import parse_log_file_name
from ..metadata_table.reader import table_view
from ..storage import Storage
from ..table.meta_client import HoodieTable
from ..table.pending import pending_clustering_groups, requested_plan
from ..table.retention import KEEP_LATEST_FILE_VERSIONS
from ..timeline.avro_models import CLEANER_PLAN, decode_instant_avro, encode_instant_avro
from ..timeline.instant import CLEAN, COMPACTION, REPLACE_COMMIT, SAVEPOINT, Instant, State, new_instant_time
from ..transaction.commit import complete
from ..transaction.metadata.listener import MetadataSync
from .clean_plan import (
    COMMIT_ACTIONS,
    Retention,
    TableState,
    clean_due,
    cleaner_plan,
    earliest_commit_to_retain,
    files_to_clean,
)

log = logging.getLogger(__name__)

# Below this many files a plan is deleted in-process by a few threads (deletes wait on storage, not
# on the CPU): Spark tasks made 1,000 deletes 44x slower than plain ones (benchmarks/clean.py).
DISTRIBUTE_AT = 20_000
DELETE_THREADS = 16


def retention(cfg: HoodieConfig) -> Retention:
    return Retention(cfg.get_str(C.CLEANER_POLICY).upper(), cfg.get(C.CLEANER_COMMITS_RETAINED),
                     cfg.get(C.CLEANER_FILE_VERSIONS_RETAINED), cfg.get(C.CLEANER_HOURS_RETAINED))


def savepointed_files(table: HoodieTable) -> frozenset[str]:
    names: set[str] = set()
    for sp in table.timeline.filter([SAVEPOINT], completed=True):
        meta = decode_instant_avro(table.timeline.read_details(sp))
        for partition in meta["partitionMetadata"].values():
            names.update(partition["savepointDataFile"])
    return frozenset(names)


def table_state(table: HoodieTable, view: FileSystemView) -> TableState:
    """Savepoints, pending compactions/clusterings and replaced file groups, from the timeline."""
    bases: dict[tuple[str, str], str] = {}
    for instant in table.timeline.pending([COMPACTION]):
        for op in requested_plan(table.timeline, instant).get("operations") or []:
            bases[(op["partitionPath"], op["fileId"])] = op["baseInstantTime"]
    clustering = frozenset(pending_clustering_groups(table))
    replaced = {}
    for instant in table.timeline.filter([REPLACE_COMMIT], completed=True):
        for partition, ids in (table.timeline.commit_metadata(instant).get("partitionToReplaceFileIds") or {}).items():
            replaced.update({(partition, fid): instant.timestamp for fid in ids})
    return TableState(savepointed_files(table), bases, clustering, replaced)


def _cdc_logs(view: FileSystemView, groups) -> dict:
    """CDC log files by file group and the slice (base instant) they were written with."""
    slices = {(g.partition, g.file_id): sorted(s.base_instant for s in g.slices) for g in groups}
    out: dict = defaultdict(lambda: defaultdict(list))
    for f in view.data_files():
        log = parse_log_file_name(posixpath.basename(f.path))
        if log is None or not log.is_cdc:
            continue
        gid = (posixpath.dirname(f.path), log.file_id)
        owners = [b for b in slices.get(gid, []) if b <= log.instant]
        if owners:
            out[gid][owners[-1]].append(LogFile(f.path, log.file_id, log.instant, log.version, f.size))
    return out


def schedule_clean(table: HoodieTable, options: dict | None = None, force: bool = False,
                   now: _dt.datetime | None = None) -> Instant | None:
    """Write a clean plan when a clean is due and finds files to delete; None otherwise."""
    cfg = HoodieConfig({**(options or {}), **table.props})
    timeline = table.timeline
    if not force and not clean_due(timeline.instants, cfg.get(C.CLEAN_MAX_COMMITS)):
        return None
    keep = retention(cfg)
    if now is None:  # instant times are local unless the table keeps its timeline in UTC
        utc = cfg.get_str(C.TIMELINE_TIMEZONE).upper() == "UTC"
        now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None) if utc else _dt.datetime.now()
    earliest = earliest_commit_to_retain(timeline.instants, keep, now)
    if earliest is None and keep.policy != KEEP_LATEST_FILE_VERSIONS:
        return None  # the window still holds every commit: skip the listing
    view = table_view(table)
    groups = view.file_groups(include_replaced=True)
    files = files_to_clean(groups, keep, earliest and earliest.timestamp, table_state(table, view),
                           _cdc_logs(view, groups))
    if not files:
        return None
    plan = cleaner_plan(files, keep, earliest, table.storage.uri(""))
    requested = Instant(new_instant_time(timeline.last_instant_time), CLEAN, State.REQUESTED)
    timeline.create_requested(requested, encode_instant_avro(CLEANER_PLAN, plan))
    log.info(f"clean {requested.timestamp} planned: {sum(map(len, files.values()))} files in "
              f"{len(files)} partitions ({keep.policy})")
    return requested


def _delete_batch(storage: Storage, paths: list[str]) -> list[tuple[str, bool]]:
    """(path, deleted or already gone) for each path; False only when the delete failed."""
    results = []
    for path in paths:
        try:
            storage.delete(path)
            results.append((path, True))
        except OSError:
            results.append((path, False))
    return results


def delete_files(storage: Storage, paths: list[str], spark=None, parallelism: int = 200,
                 distribute_at: int = DISTRIBUTE_AT) -> dict[str, bool]:
    if spark is None or len(paths) < distribute_at:
        shares = [paths[i::DELETE_THREADS] for i in range(DELETE_THREADS)]
        with ThreadPoolExecutor(DELETE_THREADS) as pool:
            return dict(pair for done in pool.map(lambda share: _delete_batch(storage, share), shares)
                        for pair in done)
    slices = max(1, min(parallelism, len(paths) // 100))
    rdd = spark.sparkContext.parallelize(paths, slices)
    return dict(rdd.mapPartitions(lambda part: _delete_batch(storage, list(part))).collect())


def execute_clean(table: HoodieTable, pending: Instant, spark=None, options: dict | None = None) -> Instant:
    """Delete what a clean plan lists and complete the clean (also a clean found interrupted).
    The deletes need no lock; completing does, with several writers, as it writes the metadata
    table beside their commits."""
    timeline, storage = table.timeline, table.storage
    started = time.monotonic()
    plan_bytes = timeline.read_details(Instant(pending.timestamp, CLEAN, State.REQUESTED))
    plan = decode_instant_avro(plan_bytes)
    if pending.state == State.REQUESTED:
        pending = timeline.transition_to_inflight(pending, plan_bytes)
    root = storage.uri("").rstrip("/") + "/"
    by_partition = {p: [i["filePath"][len(root):] if i["filePath"].startswith(root) else i["filePath"]
                        for i in infos]
                    for p, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items()}
    paths = [p for files in by_partition.values() for p in files]
    log.info(f"clean {pending.timestamp}: deleting {len(paths)} files")
    results = delete_files(storage, paths, spark, HoodieConfig(table.props).get(C.CLEANER_PARALLELISM))
    policy = plan["policy"]
    partitions = {
        p: {"partitionPath": p, "policy": policy,
            "deletePathPatterns": [posixpath.basename(f) for f in files],
            "successDeleteFiles": [posixpath.basename(f) for f in files if results.get(f)],
            "failedDeleteFiles": [posixpath.basename(f) for f in files if not results.get(f)],
            "isPartitionDeleted": False}
        for p, files in by_partition.items()}
    commits = timeline.filter(COMMIT_ACTIONS, completed=True, until=pending.timestamp)
    earliest = plan.get("earliestInstantToRetain") or {}
    metadata = {
        "policy": policy,
        "startCleanTime": pending.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in partitions.values()),
        "earliestCommitToRetain": earliest.get("timestamp") or "",
        "lastCompletedCommitTimestamp": commits[-1].timestamp if commits else "",
        "partitionMetadata": partitions,
        "version": 2,
    }
    cfg = HoodieConfig({**(options or {}), **table.props})
    with table_lock(storage.base_uri, cfg, f"completing clean {pending.timestamp}", table.name) as lock:
        done = complete(table, pending, metadata, MetadataSync(spark, options),
                        guard=lock.check_held if lock is not None else None)
    log.info(f"clean {pending.timestamp} completed: {metadata['totalFilesDeleted']} files deleted")
    return done


def run_clean(table: HoodieTable, options: dict | None = None, spark=None, force: bool = False,
              now: _dt.datetime | None = None) -> list[str]:
    """Finish cleans a killed run left pending, then schedule and execute a new one when due."""
    done = []
    for pending in table.timeline.pending([CLEAN]):
        log.info(f"clean {pending.timestamp} was interrupted; completing it from its plan")
        done.append(execute_clean(table.reload(), pending, spark, options).timestamp)
    # Several writers: the plan is made under the table lock (its instant time and the pending
    # writes it must respect are then current); deleting needs no lock, as no writer reads or
    # writes the older file slices it removes.
    with table_lock(table.storage.base_uri, HoodieConfig({**(options or {}), **table.props}),
                    "planning a clean", table.name):
        table = table.reload()
        requested = schedule_clean(table, options, force=force, now=now)
    if requested is not None:
        done.append(execute_clean(table.reload(), requested, spark, options).timestamp)
    return done


def clean_inline(spark, table: HoodieTable, options: dict) -> list[str]:
    """After a commit, as Hudi's ``hoodie.clean.automatic`` does (unless cleaning runs async)."""
    cfg = HoodieConfig({**options, **table.props})
    if not cfg.get(C.CLEAN_AUTOMATIC) or cfg.get(C.CLEAN_ASYNC):
        return []
    return run_clean(table, options, spark)


