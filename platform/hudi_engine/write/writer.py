"""``write(df, base_path, options)``: one Hudi write, driven from the Spark driver.

The driver owns the timeline and plans (counts per partition and file group, never rows);
executors tag, merge and write files. A failed write is rolled back here, and a killed one by the
next writer, so readers only ever see completed instants.
"""
from __future__ import annotations

import logging

import json
import re
from collections import defaultdict

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from .. import config as C
from ..concurrency.conflicts import (our_file_groups)
from ..config import HoodieConfig
from ..errors import HoodieClusteringUpdateError, HoodieConfigError, HoodieError, HoodieValidationError
from ..file_group.fs_view import FileSlice
from ..keygen import key_generator_from_config
from ..metadata_table.reader import table_view
from ..transaction.metadata.writer import ensure_metadata
from ..transaction.transaction import Transaction
from ..table.pending import pending_clustering_groups, pending_compaction_groups
from ..schema.avro import add_meta_fields, arrow_schema_compatible, arrow_to_avro, avro_to_arrow, to_json
from ..table.meta_client import HoodieTable
from ..merge.record_merger import merge_mode
from ..timeline.avro_models import encode_instant_avro
from ..timeline.instant import (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
from ..schema.meta_fields import META_FIELDS
from ..file_group.base_file import WriteContext
from ..schema.meta_fields import PARTITION_PATH, RECORD_KEY
from ..file_group.markers import marked_data_files
from ..timeline.commit_metadata import commit_metadata, totals, workload_profile
from ..index.bucket import bucket_of, new_bucket_file_id
from ..index.consistent_meta import load_or_create_metadata
from ..index.consistent_hashing import Ring
from ..index.tagging import (BUCKET, BUCKET_COLUMN, GLOBAL_INDEXES, AddBucket, AddConsistentBucket, check_engine,
                             index_type, is_consistent_hashing, stored_locations, updates_partition_path)
from .log_append import AppendFileGroup, append_target
from ..merge.record_merger import OP_COLUMN, MergeSpec
from .planner import SizingPolicy, SmallFile, Target, average_record_size, plan_inserts
from .tasks import KEY_HASH, TARGET, BulkInsert, Prepare, WriteFileGroup
from ..file_group.tasks import STAT_SCHEMA

log = logging.getLogger(__name__)

REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")
COMMIT_META_PREFIX = "_"          # Hudi's hoodie.datasource.write.commitmeta.key.prefix default
_HASH_BUCKETS = 1 << 30


def write_operation(df: DataFrame, base_path: str, options: dict | None = None,
                    extra_metadata: dict[str, str] | None = None) -> str:
    """Write ``df`` to the Hudi table at ``base_path`` as one transaction; returns the committed
    instant time. Table services and catalog sync after the commit are the caller's (the API's)."""
    cfg = HoodieConfig(options)
    operation = cfg.get_str(C.OPERATION).lower()
    table = _open_or_create(df, base_path, cfg)
    # The table's persisted settings win over the write's aliases (check_write_options refused
    # any disagreement on record identity).
    cfg = HoodieConfig({**cfg.raw(), **table.props})
    job = _Write(df, table, cfg, operation, extra_metadata or {})
    return job.run()


def _open_or_create(df: DataFrame, base_path: str, cfg: HoodieConfig) -> HoodieTable:
    if HoodieTable.exists(base_path):
        table = HoodieTable.load(base_path)
        table.check_write_options(cfg)
        check_engine(cfg, table.table_type)
        if table.version != 6:
            raise HoodieConfigError(
                f"{base_path} is a table of version {table.version}; this engine writes version 6 only")
        return table
    check_engine(cfg, cfg.get_str(C.TABLE_TYPE).upper())
    keygen = key_generator_from_config(cfg)
    name = cfg.require(C.TABLE_NAME, "a new table needs a name")
    data_schema = _data_schema(df)
    create_schema = to_json(arrow_to_avro(data_schema, name, style="create"))
    return HoodieTable.create(base_path, cfg, keygen.class_name, create_schema)


def _data_schema(df: DataFrame) -> pa.Schema:
    schema = to_arrow_schema(df.schema)
    return pa.schema([f for f in schema if f.name not in META_FIELDS])


class _Write:
    def __init__(self, df: DataFrame, table: HoodieTable, cfg: HoodieConfig, operation: str,
                 extra: dict[str, str]):
        # Meta columns of incoming rows (a DataFrame read from another Hudi table) are rewritten.
        self.df = df.drop(*[c for c in df.columns if c in META_FIELDS])
        self.table, self.cfg, self.operation = table, cfg, operation
        self.spark = df.sparkSession
        self.keygen = key_generator_from_config(cfg)
        self.ordering = cfg.get_str(C.PRECOMBINE_FIELD)
        self.index = index_type(cfg)
        self.consistent = is_consistent_hashing(cfg)
        # Conflicts under the simple bucket engine are by bucket number; consistent buckets' file
        # ids are fixed by the hashing metadata, so they compare as file groups.
        self.by_bucket = self.index == BUCKET and not self.consistent
        self.extra = {**{k: v for k, v in cfg.raw().items() if k.startswith(COMMIT_META_PREFIX)}, **extra}
        self.is_replace = operation in REPLACE_OPERATIONS
        self.is_mor = table.table_type == "MERGE_ON_READ"
        self.action = REPLACE_COMMIT if self.is_replace else DELTA_COMMIT if self.is_mor else COMMIT

    def _prepare(self, table: HoodieTable) -> HoodieTable:
        """Under the table lock, as the instant is taken: the metadata table as the options want
        it, and the file slices and pending plans this write starts from."""
        table = ensure_metadata(self.spark, table, self.cfg)
        self.table = table
        self.latest = table_view(table).latest_file_slices()
        # File groups a pending compaction is rewriting: their new log files start its slice.
        self.compacting = pending_compaction_groups(table) if self.is_mor else {}
        # File groups a pending clustering is rewriting: no inserts go there, updates are refused.
        self.clustering = pending_clustering_groups(table)
        return table

    # --- driver flow -----------------------------------------------------------------------------
    def run(self) -> str:
        self._check_input()
        data_schema = self._write_schema()
        avro = arrow_to_avro(data_schema, self.table.name)
        self.schema_json = to_json(avro)
        requested = b""
        if self.is_replace:
            requested = encode_instant_avro("HoodieRequestedReplaceMetadata", {
                "operationType": self.operation.upper(), "clusteringPlan": None,
                "extraMetadata": {}, "version": 1})
        self.txn = Transaction.begin(self.table, self.action, self.cfg, self.spark, requested,
                                     prepare=self._prepare, by_bucket=self.by_bucket)
        self.instant = self.txn.instant
        self.ctx = WriteContext(self.table.storage, self.instant.timestamp, data_schema,
                                to_json(add_meta_fields(avro)), self.cfg.raw())
        try:
            with self.txn:
                with self.txn.spark_jobs(f"hudi {self.operation} {self.instant.timestamp}"):
                    stats, replaced = self._execute()
                self._finalize(stats)
                meta = commit_metadata(stats, self.operation, self.schema_json, self.extra, replaced)
                self.txn.commit(meta, changed=our_file_groups(stats, replaced))
        except BaseException as exc:
            raise _user_error(exc) from exc
        log.info(f"committed {self.action} {self.instant.timestamp}: "
                 f"{sum(s['numWrites'] for s in stats)} records in {len(stats)} files")
        return self.instant.timestamp

    def _check_input(self) -> None:
        columns = set(self.df.columns)
        if self.consistent and self.operation == "delete_partition":
            raise HoodieConfigError("delete_partition is not supported with the consistent-hashing bucket index here "
                                    "(its buckets' file groups are named by the hashing metadata and would be "
                                    "reused); delete the partition's records with operation delete instead")
        if self.index == BUCKET and self.operation in ("insert_overwrite", "insert_overwrite_table"):
            raise HoodieConfigError(f"{self.operation} is not supported with the BUCKET index here; use "
                                    "upsert/insert, or delete_partition and then insert")
        if self.operation == "delete_partition":
            return
        for field in self.keygen.record_key_fields + self.keygen.partition_fields:
            if field.split(".")[0] not in columns:
                raise HoodieValidationError(
                    f"field '{field}' (a record key or partition field) is not in the input; "
                    f"its columns are {sorted(columns)}")
        if self.ordering and self.operation != "delete" and self.ordering.split(".")[0] not in columns:
            raise HoodieValidationError(
                f"ordering field '{self.ordering}' (hoodie.datasource.write.precombine.field) is not "
                f"in the input; its columns are {sorted(columns)}. Add the column or unset the option")

    def _write_schema(self) -> pa.Schema:
        """The table's schema evolved by this batch: new columns are added, types may widen."""
        incoming = _data_schema(self.df)
        latest = self.table.timeline.latest_schema()
        if latest is None or self.operation in ("delete", "delete_partition"):
            return incoming if latest is None else avro_to_arrow(latest)
        current = pa.schema([f for f in avro_to_arrow(latest) if f.name not in META_FIELDS])
        problem = arrow_schema_compatible(current, incoming)
        if problem:
            raise HoodieValidationError(
                f"the input's schema cannot be merged into table {self.table.name}: {problem}")
        fields = {f.name: f for f in current}
        for f in incoming:
            fields[f.name] = f if f.name not in fields or f.type != fields[f.name].type else fields[f.name]
        return pa.schema([fields[f.name] for f in current] +
                         [f for f in incoming if f.name not in {c.name for c in current}])

    def _execute(self) -> tuple[list[dict], dict[str, list[str]] | None]:
        if self.operation == "delete_partition":
            return [], self._delete_partitions()
        prepare = Prepare(self.keygen, self.ordering, self.operation == "delete")
        if self.operation == "bulk_insert" and self.index != BUCKET:
            return self._bulk_insert(prepare), None
        prepared = self.df.mapInArrow(prepare, _with_internal_columns(self.df))
        if self.is_replace:
            return self._insert_overwrite(prepared)
        return self._upsert(prepared), None

    # --- operations ------------------------------------------------------------------------------
    def _bulk_insert(self, prepare: Prepare) -> list[dict]:
        mode = self.cfg.get_str(C.BULKINSERT_SORT_MODE).upper()
        parallelism = self.cfg.get(C.BULKINSERT_SHUFFLE_PARALLELISM)
        self._inflight(workload_profile({}, {}, self.operation))
        log.info(f"bulk_insert {self.instant.timestamp}: writing new file groups (sort mode {mode})")
        if not self._combine() and mode == "NONE":
            # Keys are made in the writing task itself: one pass of the rows through Python.
            source = self.df.repartition(parallelism) if parallelism > 0 else self.df
            return self._collect(source.mapInArrow(BulkInsert(self.ctx, prepare), STAT_SCHEMA))
        prepared = self.df.mapInArrow(prepare, _with_internal_columns(self.df))
        if self._combine():
            prepared = self._dedup(prepared)
        if mode == "GLOBAL_SORT":
            prepared = prepared.orderBy(PARTITION_PATH, RECORD_KEY)
        elif mode == "PARTITION_SORT":
            prepared = prepared.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
        elif parallelism > 0:
            prepared = prepared.repartition(parallelism)
        return self._collect(prepared.mapInArrow(BulkInsert(self.ctx), STAT_SCHEMA))

    def _insert_overwrite(self, prepared: DataFrame) -> tuple[list[dict], dict[str, list[str]]]:
        prepared = self._dedup(prepared) if self._combine() else prepared
        counts = self._count_by(prepared, [PARTITION_PATH])
        inserts = {row[0]: row[1] for row in counts}
        if self.operation == "insert_overwrite_table":
            replaced_slices = self.latest
        else:
            replaced_slices = [s for s in self.latest if s.partition in inserts]
        replaced: dict[str, list[str]] = defaultdict(list)
        for s in replaced_slices:
            replaced[s.partition].append(s.file_id)
        buckets = plan_inserts(inserts, {}, self._avg_record_size(), self._sizing())
        self._inflight(workload_profile(inserts, {}, self.operation))
        log.info(f"{self.operation} {self.instant.timestamp}: {sum(inserts.values())} records into "
                  f"{len(buckets)} new file groups, replacing {len(replaced_slices)}")
        self.txn.check_early_conflicts({(p, fid) for p, ids in replaced.items() for fid in ids})
        targets = {b.file_id: Target(b.partition, b.file_id, None, None) for b in buckets}
        assigned = self._assign_inserts(prepared, buckets)
        return self._merge_groups(assigned, targets), dict(replaced)

    def _delete_partitions(self) -> dict[str, list[str]]:
        wanted = self.cfg.get_list(C.PARTITIONS_TO_DELETE)
        if not wanted:
            prepared = self.df.mapInArrow(Prepare(self.keygen, None, True), _with_internal_columns(self.df))
            wanted = [r[0] for r in prepared.select(PARTITION_PATH).distinct().collect()]
        known = {s.partition for s in self.latest}
        pattern = [re.compile("^" + re.escape(w).replace(r"\*", "[^/]*") + "$") for w in wanted]
        chosen = sorted(p for p in known if any(rx.match(p) for rx in pattern))
        if not chosen:
            raise HoodieValidationError(
                f"delete_partition matched no partition of {self.table.name} for {wanted}; "
                f"partitions are e.g. {sorted(known)[:5]}")
        self._inflight(workload_profile({}, {}, self.operation))
        replaced: dict[str, list[str]] = defaultdict(list)
        for s in self.latest:
            if s.partition in chosen:
                replaced[s.partition].append(s.file_id)
        self.txn.check_early_conflicts({(p, fid) for p, ids in replaced.items() for fid in ids})
        return dict(replaced)

    def _upsert(self, prepared: DataFrame) -> list[dict]:
        if self.index == BUCKET:
            return self._bucketed(prepared)
        is_global = self.index in GLOBAL_INDEXES
        lookup = self.operation in ("upsert", "delete") or self.cfg.get(C.INSERT_DROP_DUPS)
        if lookup and self.latest:
            prepared = prepared.persist()
            tagged = self._tag(prepared, is_global)
        else:
            tagged = prepared.withColumn(TARGET, F.lit(None).cast("string"))
        if self.operation == "insert" and self.cfg.get(C.INSERT_DROP_DUPS):
            tagged = tagged.filter(F.col(TARGET).isNull())
        if self.operation == "delete":
            tagged = tagged.filter(F.col(TARGET).isNotNull())
        tagged = tagged.persist()
        try:
            counts = self._count_by(tagged, [PARTITION_PATH, TARGET])
            prepared.unpersist()  # tagged holds what the next stages need
            inserts: dict[str, int] = defaultdict(int)
            updates: dict[tuple[str, str], int] = {}
            for partition, target, count in counts:
                if target is None:
                    inserts[partition] += count
                else:
                    updates[(partition, target)] = count
            self._check_not_clustering(updates)
            slices = {s.file_id: s for s in self.latest}
            buckets = plan_inserts(dict(inserts), self._small_files(), self._avg_record_size(), self._sizing())
            appends = self._append_targets(updates, {b.file_id for b in buckets}, slices)
            self._inflight(workload_profile(dict(inserts), updates, self.operation))
            new_groups = sum(1 for b in buckets if b.file_id not in slices)
            log.info(f"{self.operation} {self.instant.timestamp}: {sum(inserts.values())} inserts into "
                      f"{len(buckets)} file groups ({new_groups} new), {sum(updates.values())} "
                      f"updates/deletes in {len(updates)} file groups; merging and writing")
            targets = {fid: _existing_target(slices[fid]) for _, fid in updates if fid not in appends}
            for b in buckets:
                targets.setdefault(b.file_id, _existing_target(slices[b.file_id]) if b.file_id in slices
                                   else Target(b.partition, b.file_id, None, None))
            self.txn.check_early_conflicts({(t.partition, fid) for fid, t in targets.items() if fid in slices}
                                  | {(p, fid) for p, fid in updates})
            updates_df = tagged.filter(F.col(TARGET).isNotNull())
            inserts_df = self._assign_inserts(tagged.filter(F.col(TARGET).isNull()).drop(TARGET), buckets)
            return self._merge_groups(updates_df.unionByName(inserts_df), targets, appends)
        finally:
            tagged.unpersist()
            prepared.unpersist()

    # --- pieces ----------------------------------------------------------------------------------
    def _check_not_clustering(self, updates: dict[tuple[str, str], int]) -> None:
        """Hudi's SparkRejectUpdateStrategy: a pending clustering owns its file groups until it
        completes, so updates to them fail this write (and it is rolled back, nothing lost)."""
        blocked = sorted(g for g in updates if g in self.clustering)
        if blocked:
            instants = sorted({self.clustering[g] for g in blocked})
            raise HoodieClusteringUpdateError(
                f"{sum(updates[g] for g in blocked)} updates/deletes of this {self.operation} go to "
                f"file groups that pending clustering {', '.join(instants)} is rewriting "
                f"(e.g. {blocked[0][1]} in partition '{blocked[0][0]}'); Hudi's reject-update "
                "strategy refuses them. Run the clustering first (hudictl cluster --mode execute "
                f"--base-path {self.table.base_path}), then retry this write")

    def _tag(self, prepared: DataFrame, is_global: bool) -> DataFrame:
        """Join incoming keys with where the index finds them stored in the latest base files (of
        the input's partitions only, unless the index is global)."""
        slices = self.latest
        if not is_global:
            wanted = {r[0] for r in prepared.select(PARTITION_PATH).distinct().collect()}
            slices = [s for s in slices if s.partition in wanted]
        existing = stored_locations(self.spark, self.table.storage, slices, prepared, self.cfg, TARGET)
        if existing is None:
            return prepared.withColumn(TARGET, F.lit(None).cast("string"))
        if not is_global:
            cond = (prepared[RECORD_KEY] == existing["_k"]) & (prepared[PARTITION_PATH] == existing["_p"])
            return prepared.join(existing, cond, "left").drop("_k", "_p")
        joined = prepared.join(existing, prepared[RECORD_KEY] == existing["_k"], "left").drop("_k")
        moved = F.col("_p").isNotNull() & (F.col("_p") != F.col(PARTITION_PATH))
        if not updates_partition_path(self.cfg):
            # The record stays where it is stored.
            return joined.withColumn(PARTITION_PATH, F.coalesce("_p", PARTITION_PATH)).drop("_p")
        stay = joined.filter(~moved).drop("_p")
        # A key that moves partition: delete it from its old file group, insert it in the new one.
        old_copy = (joined.filter(moved).withColumn(PARTITION_PATH, F.col("_p"))
                    .withColumn(OP_COLUMN, F.lit("D")).drop("_p"))
        new_copy = joined.filter(moved).withColumn(TARGET, F.lit(None).cast("string")).drop("_p")
        return stay.unionByName(old_copy).unionByName(new_copy)

    def _bucketed(self, prepared: DataFrame) -> list[dict]:
        """The bucket index: every record goes to its bucket's file group in its partition (made
        when new, except for deletes); nothing is looked up. Merge-on-read logs all of a bucket's
        records once it has a base file, as Hudi's bucket index can index log files."""
        hash_fields = self.cfg.get_list(C.BUCKET_INDEX_HASH_FIELD) or self.keygen.record_key_fields
        bad = [f for f in hash_fields if f not in self.keygen.record_key_fields]
        if bad:
            raise HoodieConfigError(f"{C.BUCKET_INDEX_HASH_FIELD.key} names {bad}, which are not record key "
                                    f"fields ({', '.join(self.keygen.record_key_fields)})")
        num_buckets = self.cfg.get(C.BUCKET_INDEX_NUM_BUCKETS)
        if self.consistent:
            existing, adder, file_of = self._consistent_buckets(prepared, hash_fields, num_buckets)
        else:
            existing, adder, file_of = self._simple_buckets(hash_fields, num_buckets)
        schema = _with_internal_columns(self.df).add(BUCKET_COLUMN, "integer")
        bucketed = prepared.mapInArrow(adder, schema).persist()
        try:
            counts = self._count_by(bucketed, [PARTITION_PATH, BUCKET_COLUMN])
            routes, targets, inserts, updates = [], {}, defaultdict(int), {}
            for partition, bucket, count in counts:
                stored = existing.get((partition, bucket))
                if stored is None and self.operation == "delete":
                    continue
                file_id = stored.file_id if stored else file_of(partition, bucket)
                routes.append((partition, bucket, file_id))
                if stored is None:
                    targets[file_id] = Target(partition, file_id, None, None)
                    inserts[partition] += count
                else:
                    targets[file_id] = _existing_target(stored)
                    updates[(partition, file_id)] = count
            self._check_not_clustering(updates)
            self.txn.check_early_conflicts({(p, fid) for p, _, fid in routes})
            appends = self._append_targets(updates, set(), {s.file_id: s for s in existing.values()})
            for file_id in appends:
                targets.pop(file_id)
            self._inflight(workload_profile(dict(inserts), updates, self.operation))
            log.info(f"{self.operation} {self.instant.timestamp}: {sum(c for *_, c in counts)} records into "
                      f"{len(routes)} buckets ({len(routes) - len(updates)} new file groups); merging and writing")
            if not routes:
                return []
            route_df = self.spark.createDataFrame(routes, f"{PARTITION_PATH} string, {BUCKET_COLUMN} int, {TARGET} string")
            tagged = bucketed.join(F.broadcast(route_df), [PARTITION_PATH, BUCKET_COLUMN], "inner").drop(BUCKET_COLUMN)
            return self._merge_groups(tagged, targets, appends)
        finally:
            bucketed.unpersist()

    def _simple_buckets(self, hash_fields: list[str], num_buckets: int):
        """The simple engine: bucket = hash mod num.buckets; a new bucket's file id starts with it."""
        existing: dict[tuple[str, int], FileSlice] = {}
        for s in self.latest:
            bucket = bucket_of(s.file_id)
            if bucket is None or bucket >= num_buckets:
                raise HoodieConfigError(
                    f"file group {s.file_id} in partition '{s.partition}' is not one of "
                    f"{num_buckets} buckets ({C.BUCKET_INDEX_NUM_BUCKETS.key}); a table's bucket count "
                    "cannot change, and a table written with another index cannot take the bucket index")
            existing[(s.partition, bucket)] = s
        return existing, AddBucket(tuple(hash_fields), num_buckets), lambda _p, bucket: new_bucket_file_id(bucket)

    def _consistent_buckets(self, prepared: DataFrame, hash_fields: list[str], num_buckets: int):
        """The consistent-hashing engine: bucket = index of the key's node on its partition's
        ring (the metadata is created on a partition's first write); a bucket's file id is its
        node's prefix + "-0"."""
        partitions = sorted(r[0] for r in prepared.select(PARTITION_PATH).distinct().collect())
        # Beside a pending resize the committed ring still routes keys: records of buckets it
        # rewrites are refused as updates to file groups under clustering (Hudi's reject-update
        # strategy); a bucket with no file group yet is in no resize group, so it takes inserts.
        rings = {p: Ring(load_or_create_metadata(self.table, p, num_buckets)) for p in partitions}
        existing: dict[tuple[str, int], FileSlice] = {}
        for s in self.latest:
            ring = rings.get(s.partition)
            if ring is None:
                continue
            node = ring.node_of_file(s.file_id)
            if node is None:
                raise HoodieConfigError(
                    f"file group {s.file_id} in partition '{s.partition}' is not a bucket of its consistent "
                    f"hashing metadata ({ring.metadata.filename}); a table written with another index or "
                    "bucket engine cannot take the consistent-hashing bucket index")
            existing[(s.partition, node)] = s
        adder = AddConsistentBucket(tuple(hash_fields), {p: tuple(int(v) for v in r.values) for p, r in rings.items()})
        return existing, adder, lambda partition, bucket: rings[partition].nodes[bucket].file_id

    def _assign_inserts(self, inserts: DataFrame, buckets) -> DataFrame:
        """Route each insert to a bucket by a hash of its key, so duplicates meet in one group."""
        if not buckets:
            return inserts.withColumn(TARGET, F.lit(None).cast("string")).limit(0)
        plan = self.spark.createDataFrame(
            [(b.partition, int(b.lo * _HASH_BUCKETS), int(b.hi * _HASH_BUCKETS) if b.hi < 1 else _HASH_BUCKETS,
              b.file_id) for b in buckets],
            "_bp string, _lo long, _hi long, " + TARGET + " string")
        hashed = inserts.withColumn(KEY_HASH, F.pmod(F.xxhash64(RECORD_KEY), F.lit(_HASH_BUCKETS)))
        cond = ((hashed[PARTITION_PATH] == plan["_bp"]) & (hashed[KEY_HASH] >= plan["_lo"])
                & (hashed[KEY_HASH] < plan["_hi"]))
        return hashed.join(F.broadcast(plan), cond, "inner").drop("_bp", "_lo", "_hi", KEY_HASH)

    def _append_targets(self, updates: dict[tuple[str, str], int], insert_groups: set[str],
                        slices: dict[str, FileSlice]) -> dict:
        """Merge-on-read: updated file groups log their changes, except small file groups taking
        inserts, which are rewritten (Hudi's small-file correction when the index cannot see logs)."""
        if not self.is_mor:
            return {}
        return {fid: append_target(slices[fid], self.compacting.get((partition, fid)))
                for partition, fid in updates if fid not in insert_groups}

    def _merge_groups(self, assigned: DataFrame, targets: dict[str, Target],
                      appends: dict | None = None) -> list[dict]:
        if not targets and not appends:
            return []
        spec = MergeSpec(self.ordering, self._combine(),
                         merge_mode(self.cfg) == "EVENT_TIME_ORDERING")
        fn = WriteFileGroup(self.ctx, targets, spec,
                            AppendFileGroup(self.ctx, appends, spec) if appends else None)
        # PySpark counts a callable object's `self` as an argument: hand it a plain (key, data) function.
        return self._collect(assigned.groupBy(TARGET).applyInArrow(lambda key, data: fn(key, data),
                                                                   STAT_SCHEMA))

    def _dedup(self, prepared: DataFrame) -> DataFrame:
        """Input de-duplication for paths that do not merge per file group (bulk insert)."""
        from pyspark.sql.window import Window

        order = [F.col(self.ordering).desc()] if self.ordering else []
        w = Window.partitionBy(RECORD_KEY, PARTITION_PATH).orderBy(*order, F.monotonically_increasing_id().desc())
        return prepared.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").drop("_rn")

    def _combine(self) -> bool:
        prop = {"upsert": C.COMBINE_BEFORE_UPSERT, "delete": C.COMBINE_BEFORE_DELETE}.get(
            self.operation, C.COMBINE_BEFORE_INSERT)
        return self.cfg.get(prop)

    def _count_by(self, df: DataFrame, columns: list[str]) -> list[tuple]:
        return [tuple(r) for r in df.groupBy(*columns).count().collect()]

    def _small_files(self) -> dict[str, list[SmallFile]]:
        """Base files that take inserts. Merge-on-read: only groups with no log files and no
        pending compaction, the smallest few per partition (Hudi's delta commit partitioner)."""
        limit = self.cfg.get(C.PARQUET_SMALL_FILE_LIMIT)
        small: dict[str, list[SmallFile]] = defaultdict(list)
        for s in self.latest:
            if (s.base_file and s.base_file.size < limit and (s.partition, s.file_id) not in self.clustering
                    and not (self.is_mor and (s.log_files or (s.partition, s.file_id) in self.compacting))):
                small[s.partition].append(SmallFile(s.file_id, s.base_file.path, s.base_file.size, s.base_instant))
        if self.is_mor:
            keep = self.cfg.get(C.SMALL_FILE_GROUP_CANDIDATES_LIMIT)
            small = defaultdict(list, {p: sorted(files, key=lambda f: f.size)[:keep] for p, files in small.items()})
        return small

    def _sizing(self) -> SizingPolicy:
        cfg = self.cfg
        return SizingPolicy(cfg.get(C.PARQUET_MAX_FILE_SIZE), cfg.get(C.PARQUET_SMALL_FILE_LIMIT),
                            cfg.get(C.COPY_ON_WRITE_RECORD_SIZE_ESTIMATE),
                            cfg.get(C.COPY_ON_WRITE_INSERT_SPLIT_SIZE),
                            cfg.get(C.COPY_ON_WRITE_AUTO_SPLIT_INSERTS))

    def _avg_record_size(self) -> int:
        timeline = self.table.timeline
        commits = (totals(timeline.commit_metadata(i)) for i in reversed(timeline.completed_writes()))
        return average_record_size(commits, self._sizing())

    def _inflight(self, profile: dict) -> None:
        self.txn.inflight(profile)

    def _collect(self, stats_df: DataFrame) -> list[dict]:
        return [json.loads(r[0]) for r in stats_df.collect()]

    def _finalize(self, stats: list[dict]) -> None:
        """Delete files that retried or speculative tasks left behind (markers not in the stats)."""
        committed = {s["path"] for s in stats} | {p for s in stats for p in (s.get("cdcStats") or {})}
        for data_path in marked_data_files(self.table.storage, self.instant.timestamp) - committed:
            self.table.storage.delete(data_path)


def _existing_target(s: FileSlice) -> Target:
    return Target(s.partition, s.file_id, s.base_file.path if s.base_file else None, s.base_instant)


def _with_internal_columns(df: DataFrame):
    from pyspark.sql.types import StringType, StructField, StructType

    return StructType(df.schema.fields + [StructField(RECORD_KEY, StringType()), StructField(PARTITION_PATH, StringType()),
                                StructField(OP_COLUMN, StringType())])


_WORKER_ERROR = re.compile(r"(?:hudi_engine\.errors\.)?(HoodieValidationError|HoodieConfigError): (.*)")


def _user_error(exc: BaseException) -> BaseException:
    """Errors raised in Spark's Python workers reach the driver as text: raise them as ours again."""
    if isinstance(exc, HoodieError):
        return exc
    match = _WORKER_ERROR.search(str(exc))
    if match:
        kind = HoodieValidationError if match.group(1) == "HoodieValidationError" else HoodieConfigError
        return kind(match.group(2).strip())
    return exc

