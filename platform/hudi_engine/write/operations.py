"""The write operations, each a plan over one ``WriteJob``: count what goes where on the driver
(partitions and file groups, never rows), record the plan as the instant's inflight profile, check
early for conflicts, then let the executors merge and write each file group."""
from __future__ import annotations

import logging
import re
from collections import defaultdict
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .. import config as C
from ..errors import HoodieValidationError
from ..file_group.fs_view import FileSlice
from ..file_group.tasks import STAT_SCHEMA
from ..index.tagging import BUCKET_COLUMN, tag
from ..schema.meta_fields import PARTITION_PATH, RECORD_KEY
from ..timeline.commit_metadata import workload_profile
from .planner import Target, plan_inserts, small_files
from .routing import assign_inserts, bucket_hash_fields, consistent_buckets, simple_buckets
from .tasks import TARGET, BulkInsert, Prepare

if TYPE_CHECKING:
    from .writer import WriteJob

log = logging.getLogger(__name__)

Replaced = dict[str, list[str]]


def bulk_insert(job: "WriteJob", prepare: Prepare) -> list[dict]:
    """New file groups only, nothing looked up (``hoodie.bulkinsert.sort.mode``)."""
    mode = job.cfg.get_str(C.BULKINSERT_SORT_MODE).upper()
    parallelism = job.cfg.get(C.BULKINSERT_SHUFFLE_PARALLELISM)
    job.inflight(workload_profile({}, {}, job.operation))
    log.info(f"bulk_insert {job.instant.timestamp}: writing new file groups (sort mode {mode})")
    if not job.combine() and mode == "NONE":
        # Keys are made in the writing task itself: one pass of the rows through Python.
        source = job.df.repartition(parallelism) if parallelism > 0 else job.df
        with job.step("write new file groups"):
            return job.collect(source.mapInArrow(BulkInsert(job.ctx, prepare), STAT_SCHEMA))
    prepared = job.prepared(prepare)
    if job.combine():
        prepared = job.dedup(prepared)
    if mode == "GLOBAL_SORT":
        prepared = prepared.orderBy(PARTITION_PATH, RECORD_KEY)
    elif mode == "PARTITION_SORT":
        prepared = prepared.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
    elif parallelism > 0:
        prepared = prepared.repartition(parallelism)
    with job.step("write new file groups"):
        return job.collect(prepared.mapInArrow(BulkInsert(job.ctx), STAT_SCHEMA))


def insert_overwrite(job: "WriteJob", prepared: DataFrame) -> tuple[list[dict], Replaced]:
    """New file groups for the input; the file groups of the partitions it touches (or of the whole
    table) are replaced."""
    prepared = job.dedup(prepared) if job.combine() else prepared
    inserts = {row[0]: row[1] for row in job.count_by(prepared, [PARTITION_PATH])}
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
    targets = {b.file_id: Target(b.partition, b.file_id, None, None) for b in buckets}
    assigned = assign_inserts(job.spark, prepared, buckets)
    return job.merge_groups(assigned, targets), dict(replaced)


def delete_partitions(job: "WriteJob") -> Replaced:
    """Every file group of the partitions ``hoodie.datasource.write.partitions.to.delete`` names
    (globs allowed), or of the input's partitions, is replaced by nothing."""
    wanted = job.cfg.get_list(C.PARTITIONS_TO_DELETE)
    if not wanted:
        prepared = job.prepared(Prepare(job.keygen, None, True))
        wanted = [r[0] for r in prepared.select(PARTITION_PATH).distinct().collect()]
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


def upsert(job: "WriteJob", prepared: DataFrame) -> list[dict]:
    """insert, upsert and delete: keys the index finds stored update their file groups (merged, or
    logged on merge-on-read); new keys fill small files, then new file groups."""
    lookup = job.operation in ("upsert", "delete") or job.cfg.get(C.INSERT_DROP_DUPS)
    if lookup and job.latest:
        prepared = prepared.persist()
        with job.step("keys and partitions of the input"):
            tagged = tag(job.spark, job.table.storage, job.latest, prepared, job.cfg, TARGET)
    else:
        tagged = prepared.withColumn(TARGET, F.lit(None).cast("string"))
    if job.operation == "insert" and job.cfg.get(C.INSERT_DROP_DUPS):
        tagged = tagged.filter(F.col(TARGET).isNull())
    if job.operation == "delete":
        tagged = tagged.filter(F.col(TARGET).isNotNull())
    tagged = tagged.persist()
    try:
        with job.step("index lookup"):
            counts = job.count_by(tagged, [PARTITION_PATH, TARGET])
        prepared.unpersist()  # tagged holds what the next stages need
        inserts: dict[str, int] = defaultdict(int)
        updates: dict[tuple[str, str], int] = {}
        for partition, target, count in counts:
            if target is None:
                inserts[partition] += count
            else:
                updates[(partition, target)] = count
        job.check_not_clustering(updates)
        slices = {s.file_id: s for s in job.latest}
        small = small_files(job.latest, job.cfg, job.clustering, job.compacting, job.is_mor)
        buckets = plan_inserts(dict(inserts), small, job.avg_record_size(), job.sizing)
        appends = job.append_targets(updates, {b.file_id for b in buckets}, slices)
        job.inflight(workload_profile(dict(inserts), updates, job.operation))
        new_groups = sum(1 for b in buckets if b.file_id not in slices)
        log.info(f"{job.operation} {job.instant.timestamp}: {sum(inserts.values())} inserts into "
                 f"{len(buckets)} file groups ({new_groups} new), {sum(updates.values())} "
                 f"updates/deletes in {len(updates)} file groups; merging and writing")
        targets = {fid: existing_target(slices[fid]) for _, fid in updates if fid not in appends}
        for b in buckets:
            targets.setdefault(b.file_id, existing_target(slices[b.file_id]) if b.file_id in slices
                               else Target(b.partition, b.file_id, None, None))
        job.txn.check_early_conflicts({(t.partition, fid) for fid, t in targets.items() if fid in slices}
                                      | {(p, fid) for p, fid in updates})
        updates_df = tagged.filter(F.col(TARGET).isNotNull())
        inserts_df = assign_inserts(job.spark, tagged.filter(F.col(TARGET).isNull()).drop(TARGET), buckets)
        return job.merge_groups(updates_df.unionByName(inserts_df), targets, appends)
    finally:
        tagged.unpersist()
        prepared.unpersist()


def bucketed(job: "WriteJob", prepared: DataFrame) -> list[dict]:
    """The bucket index: every record goes to its bucket's file group in its partition (made when
    new, except for deletes); nothing is looked up. Merge-on-read logs all of a bucket's records
    once it has a base file, as Hudi's bucket index can index log files."""
    hash_fields = bucket_hash_fields(job.cfg, job.keygen)
    num_buckets = job.cfg.get(C.BUCKET_INDEX_NUM_BUCKETS)
    if job.consistent:
        partitions = sorted(r[0] for r in prepared.select(PARTITION_PATH).distinct().collect())
        routing = consistent_buckets(job.table, job.latest, partitions, hash_fields, num_buckets)
    else:
        routing = simple_buckets(job.latest, hash_fields, num_buckets)
    bucketed_df = prepared.mapInArrow(routing.adder, job.internal_schema().add(BUCKET_COLUMN, "integer")).persist()
    try:
        counts = job.count_by(bucketed_df, [PARTITION_PATH, BUCKET_COLUMN])
        routes, targets, inserts, updates = [], {}, defaultdict(int), {}
        for partition, bucket, count in counts:
            stored = routing.existing.get((partition, bucket))
            if stored is None and job.operation == "delete":
                continue
            file_id = stored.file_id if stored else routing.new_file_id(partition, bucket)
            routes.append((partition, bucket, file_id))
            if stored is None:
                targets[file_id] = Target(partition, file_id, None, None)
                inserts[partition] += count
            else:
                targets[file_id] = existing_target(stored)
                updates[(partition, file_id)] = count
        job.check_not_clustering(updates)
        job.txn.check_early_conflicts({(p, fid) for p, _, fid in routes})
        appends = job.append_targets(updates, set(), {s.file_id: s for s in routing.existing.values()})
        for file_id in appends:
            targets.pop(file_id)
        job.inflight(workload_profile(dict(inserts), updates, job.operation))
        log.info(f"{job.operation} {job.instant.timestamp}: {sum(c for *_, c in counts)} records into "
                 f"{len(routes)} buckets ({len(routes) - len(updates)} new file groups); merging and writing")
        if not routes:
            return []
        route_df = job.spark.createDataFrame(routes, f"{PARTITION_PATH} string, {BUCKET_COLUMN} int, {TARGET} string")
        tagged = bucketed_df.join(F.broadcast(route_df), [PARTITION_PATH, BUCKET_COLUMN], "inner").drop(BUCKET_COLUMN)
        return job.merge_groups(tagged, targets, appends)
    finally:
        bucketed_df.unpersist()


def existing_target(s: FileSlice) -> Target:
    return Target(s.partition, s.file_id, s.base_file.path if s.base_file else None, s.base_instant)
