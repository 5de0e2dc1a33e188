"""The write operations, each a plan over one ``WriteJob``: count what goes where on the driver
(partitions and file groups, never rows), record the plan as the instant's inflight profile, check
early for conflicts, then let the executors merge and write each file group. The data steps run
on the job's plane (``plane``): Spark's executors, or this process for a small change."""
from __future__ import annotations

import logging
import re
from collections import defaultdict
from typing import TYPE_CHECKING

from .. import config as C
from ..errors import HoodieValidationError
from ..file_group.fs_view import FileSlice
from ..index.tagging import BUCKET_COLUMN
from ..schema.meta_fields import PARTITION_PATH
from ..timeline.commit_metadata import workload_profile
from .log_append import new_log_target
from .planner import Target, plan_inserts, small_files
from .routing import bucket_hash_fields, consistent_buckets, simple_buckets
from .tasks import TARGET, Prepare

if TYPE_CHECKING:
    from .plane import Rows
    from .writer import WriteJob

log = logging.getLogger(__name__)

Replaced = dict[str, list[str]]


def bulk_insert(job: "WriteJob", prepare: Prepare) -> list[dict]:
    """New file groups only, nothing looked up (``hoodie.bulkinsert.sort.mode``)."""
    mode = job.cfg.get_str(C.BULKINSERT_SORT_MODE).upper()
    job.inflight(workload_profile({}, {}, job.operation))
    log.info(f"bulk_insert {job.instant.timestamp}: writing new file groups (sort mode {mode})")
    return job.plane.bulk_insert(prepare, mode, job.cfg.get(C.BULKINSERT_SHUFFLE_PARALLELISM))


def insert_overwrite(job: "WriteJob", prepared: "Rows") -> tuple[list[dict], Replaced]:
    """New file groups for the input; the file groups of the partitions it touches (or of the whole
    table) are replaced."""
    plane = job.plane
    prepared = plane.dedup(prepared) if job.combine() else prepared
    inserts = {row[0]: row[1] for row in plane.count_by(prepared, [PARTITION_PATH])}
    if job.operation == "insert_overwrite_table":
        replaced_slices = job.latest
    else:
        replaced_slices = [s for s in job.latest if s.partition in inserts]
    replaced: Replaced = defaultdict(list)
    for s in replaced_slices:
        replaced[s.partition].append(s.file_id)
    buckets = plan_inserts(inserts, {}, job.avg_record_size(), job.sizing)
    job.inflight(workload_profile(inserts, {}, job.operation))
    log.info(f"{job.operation} {job.instant.timestamp}: {sum(inserts.values())} records into "
             f"{len(buckets)} new file groups, replacing {len(replaced_slices)}")
    job.txn.check_early_conflicts({(p, fid) for p, ids in replaced.items() for fid in ids})
    targets = {(b.partition, b.file_id): Target(b.partition, b.file_id, None, None) for b in buckets}
    return job.merge_groups(plane.assign_inserts(prepared, buckets), targets), dict(replaced)


def delete_partitions(job: "WriteJob") -> Replaced:
    """Every file group of the partitions ``hoodie.datasource.write.partitions.to.delete`` names
    (globs allowed), or of the input's partitions, is replaced by nothing."""
    wanted = job.cfg.get_list(C.PARTITIONS_TO_DELETE)
    if not wanted:
        wanted = job.plane.distinct(job.plane.prepared(Prepare(job.keygen, None, True)), PARTITION_PATH)
    known = {s.partition for s in job.latest}
    pattern = [re.compile("^" + re.escape(w).replace(r"\*", "[^/]*") + "$") for w in wanted]
    chosen = sorted(p for p in known if any(rx.match(p) for rx in pattern))
    if not chosen:
        raise HoodieValidationError(
            f"delete_partition matched no partition of {job.table.name} for {wanted}; "
            f"partitions are e.g. {sorted(known)[:5]}")
    job.inflight(workload_profile({}, {}, job.operation))
    replaced: Replaced = defaultdict(list)
    for s in job.latest:
        if s.partition in chosen:
            replaced[s.partition].append(s.file_id)
    job.txn.check_early_conflicts({(p, fid) for p, ids in replaced.items() for fid in ids})
    return dict(replaced)


def upsert(job: "WriteJob", prepared: "Rows") -> list[dict]:
    """insert, upsert and delete: keys the index finds stored update their file groups (merged, or
    logged on merge-on-read); new keys fill small files, then new file groups."""
    plane = job.plane
    lookup = job.operation in ("upsert", "delete") or job.cfg.get(C.INSERT_DROP_DUPS)
    tagged = plane.tag(prepared) if lookup and job.latest else plane.untagged(prepared)
    if job.operation == "insert" and job.cfg.get(C.INSERT_DROP_DUPS):
        tagged = plane.found(tagged, stored=False)
    if job.operation == "delete":
        tagged = plane.found(tagged, stored=True)
    with plane.kept(tagged) as tagged:
        counts = plane.count_by(tagged, [PARTITION_PATH, TARGET])
        inserts: dict[str, int] = defaultdict(int)
        updates: dict[tuple[str, str], int] = {}
        for partition, target, count in counts:
            if target is None:
                inserts[partition] += count
            else:
                updates[(partition, target)] = count
        job.check_not_clustering(updates)
        slices = {(s.partition, s.file_id): s for s in job.latest}
        small = small_files(job.latest, job.cfg, job.clustering, job.compacting, job.is_mor)
        buckets = plan_inserts(dict(inserts), small, job.avg_record_size(), job.sizing)
        insert_groups = {(b.partition, b.file_id) for b in buckets}
        appends = job.append_targets(updates, insert_groups, slices)
        job.inflight(workload_profile(dict(inserts), updates, job.operation))
        new_groups = len(insert_groups - slices.keys())
        log.info(f"{job.operation} {job.instant.timestamp}: {sum(inserts.values())} inserts into "
                 f"{len(buckets)} file groups ({new_groups} new), {sum(updates.values())} "
                 f"updates/deletes in {len(updates)} file groups; merging and writing")
        targets = {g: existing_target(slices[g]) for g in updates if g not in appends}
        for g in sorted(insert_groups):
            targets.setdefault(g, existing_target(slices[g]) if g in slices else Target(*g, None, None))
        job.txn.check_early_conflicts((targets.keys() & slices.keys()) | updates.keys())
        routed = plane.union(plane.found(tagged, stored=True),
                             plane.assign_inserts(plane.found(tagged, stored=False), buckets))
        return job.merge_groups(routed, targets, appends)


def bucketed(job: "WriteJob", prepared: "Rows") -> list[dict]:
    """The bucket index: every record goes to its bucket's file group in its partition (made when
    new, except for deletes); nothing is looked up. Merge-on-read logs all of a bucket's records
    once it has a base file, as Hudi's bucket index can index log files. Under non-blocking
    concurrency control a new bucket's file group is its fixed one and starts with a log file too,
    so that writers adding the same bucket at once write one file group."""
    plane = job.plane
    hash_fields = bucket_hash_fields(job.cfg, job.keygen)
    num_buckets = job.cfg.get(C.BUCKET_INDEX_NUM_BUCKETS)
    if job.consistent:
        partitions = sorted(plane.distinct(prepared, PARTITION_PATH))
        routing = consistent_buckets(job.table, job.latest, partitions, hash_fields, num_buckets)
    else:
        routing = simple_buckets(job.latest, hash_fields, num_buckets, fixed_ids=job.nbcc)
    with plane.kept(plane.with_buckets(prepared, routing.adder)) as bucketed_rows:
        counts = plane.count_by(bucketed_rows, [PARTITION_PATH, BUCKET_COLUMN])
        routes, targets, inserts, updates = [], {}, defaultdict(int), {}
        for partition, bucket, count in counts:
            stored = routing.existing.get((partition, bucket))
            if stored is None and job.operation == "delete":
                continue
            file_id = stored.file_id if stored else routing.new_file_id(partition, bucket)
            routes.append((partition, bucket, file_id))
            if stored is None:
                targets[(partition, file_id)] = Target(partition, file_id, None, None)
                inserts[partition] += count
            else:
                targets[(partition, file_id)] = existing_target(stored)
                updates[(partition, file_id)] = count
        job.check_not_clustering(updates)
        job.txn.check_early_conflicts({(p, fid) for p, _, fid in routes})
        appends = job.append_targets(updates, set(), {(s.partition, s.file_id): s for s in routing.existing.values()})
        if job.nbcc:
            appends.update({g: new_log_target(*g, job.instant.timestamp) for g in targets if g not in appends})
        for group in appends:
            targets.pop(group)
        job.inflight(workload_profile(dict(inserts), updates, job.operation))
        log.info(f"{job.operation} {job.instant.timestamp}: {sum(c for *_, c in counts)} records into "
                 f"{len(routes)} buckets ({len(routes) - len(updates)} new file groups); merging and writing")
        if not routes:
            return []
        return job.merge_groups(plane.routed(bucketed_rows, routes), targets, appends)


def existing_target(s: FileSlice) -> Target:
    return Target(s.partition, s.file_id, s.base_file.path if s.base_file else None, s.base_instant)
