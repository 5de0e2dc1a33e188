"""``write_operation(df, base_path, options)``: one Hudi write, driven from the Spark driver (or,
for an Arrow table, from this process alone).

The driver owns the timeline and plans (counts per partition and file group, never table rows);
the data steps (tag, merge, write files) run on a plane (``plane``): Spark's executors, or this
process for a small input, which is then collected once (at most
``hoodie.write.in.process.max.records`` records). The write is one ``Transaction``: a failed write
is rolled back there, and a killed one by the next writer, so readers only ever see completed
instants. The operations themselves are in ``operations``; index tagging in ``index.tagging`` and
``index.lookup``, bucket and insert routing in ``routing``, insert sizing in ``planner``.
"""
from __future__ import annotations

import logging
import re
from contextlib import ExitStack

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema

from .. import config as C
from ..concurrency.conflicts import our_file_groups
from ..concurrency.settings import concurrency
from ..config import HoodieConfig
from ..errors import HoodieClusteringUpdateError, HoodieConfigError, HoodieError, HoodieValidationError
from ..file_group.base_file import WriteContext
from ..file_group.fs_view import FileSlice
from ..file_group.markers import marked_data_files
from ..index.tagging import BUCKET, check_engine, index_type, is_consistent_hashing
from ..keygen import key_generator_from_config
from ..merge.custom import custom_merger_name
from ..merge.keep_values import updated_columns
from ..merge.partial import partial_update
from ..merge.record_merger import OP_COLUMN, MergeSpec, merge_mode, ordering_fields
from ..metadata_table.reader import table_view
from ..schema.avro import (add_meta_fields, arrow_schema_compatible, arrow_to_avro, avro_to_arrow,
                           reconcile_nullability, to_json)
from ..schema.meta_fields import META_FIELDS, without_meta_fields
from ..spark_jobs import step, write_settings
from ..table.meta_client import WRITE_TABLE_VERSIONS, HoodieTable
from ..table.pending import pending_clustering_groups, pending_compaction_groups
from ..timeline.avro_models import encode_instant_avro
from ..timeline.commit_metadata import commit_metadata
from ..timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from ..transaction.metadata.index_ddl import define_from_options, drop_from_options
from ..transaction.metadata.writer import ensure_metadata
from ..transaction.transaction import Transaction
from . import operations
from .log_append import AppendFileGroup, AppendTarget, append_target
from .partial_writes import carried_columns, check_partial_write
from .arrow_plane import ArrowPlane
from .plane import Plane
from .planner import GroupKey, SizingPolicy, Target, shuffle_parallelism, sizing_policy, timeline_record_size
from .spark_plane import SparkPlane
from .tasks import Prepare, WriteFileGroup

log = logging.getLogger(__name__)

REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")
COMMIT_META_PREFIX = "_"          # Hudi's hoodie.datasource.write.commitmeta.key.prefix default


def write_operation(df: DataFrame | pa.Table, base_path: str, options: dict | None = None,
                    extra_metadata: dict[str, str] | None = None) -> str:
    """Write ``df`` (a Spark DataFrame, or an Arrow table written with no Spark) to the Hudi table
    at ``base_path`` as one transaction; returns the committed instant time. Table services and
    catalog sync after the commit are the caller's (the API's)."""
    cfg = HoodieConfig(options)
    operation = cfg.get_str(C.OPERATION).lower()
    table = _open_or_create(df, base_path, cfg)
    # The table's persisted settings win over the write's aliases (check_write_options refused
    # any disagreement on record identity).
    cfg = HoodieConfig({**cfg.raw(), **table.props})
    return WriteJob(df, table, cfg, operation, extra_metadata or {}).run()


def _open_or_create(df: DataFrame | pa.Table, base_path: str, cfg: HoodieConfig) -> HoodieTable:
    if HoodieTable.exists(base_path):
        table = HoodieTable.load(base_path)
        table.check_write_options(cfg)
        check_engine(cfg, table.table_type)
        check_write_version(table, cfg)
        return table
    return create_table(base_path, cfg, _data_schema(df))


def check_nbcc(table: HoodieTable, index: str, consistent: bool) -> None:
    """Non-blocking concurrency control as Hudi 1.x defines it: merge-on-read, the simple bucket
    index (one fixed file group per bucket) and a table of version 8 or later (logs named by their
    own delta commit, sliced by completion time)."""
    unmet = [need for need, met in (
        ("hoodie.table.type=MERGE_ON_READ", table.table_type == "MERGE_ON_READ"),
        (f"{C.INDEX_TYPE.key}=BUCKET with {C.BUCKET_INDEX_ENGINE.key}=SIMPLE", index == BUCKET and not consistent),
        (f"table version 8 or later ({C.WRITE_TABLE_VERSION.key} when the table is created)", table.version >= 8),
    ) if not met]
    if unmet:
        raise HoodieConfigError(
            f"{C.WRITE_CONCURRENCY_MODE.key}={C.NON_BLOCKING_CONCURRENCY_CONTROL} on {table.name} needs "
            + "; ".join(unmet) + f". Use {C.OPTIMISTIC_CONCURRENCY_CONTROL} otherwise")


def check_write_version(table: HoodieTable, cfg: HoodieConfig) -> None:
    """A write keeps the table's version: one this engine writes, and the one the write names (an
    upgrade to the version it wants ran before, in ``api.write``; any other mismatch is refused)."""
    if table.version not in WRITE_TABLE_VERSIONS:
        raise HoodieConfigError(
            f"{table.base_path} is a table of version {table.version}; this engine writes versions "
            f"{', '.join(map(str, WRITE_TABLE_VERSIONS))}")
    if cfg.contains(C.WRITE_TABLE_VERSION) and cfg.get(C.WRITE_TABLE_VERSION) != table.version:
        raise HoodieConfigError(
            f"{C.WRITE_TABLE_VERSION.key}={cfg.get(C.WRITE_TABLE_VERSION)} but {table.base_path} is a table of "
            f"version {table.version}. Upgrade it first (hudictl table upgrade --to-version N, or "
            f"{C.AUTO_UPGRADE.key}=true), or downgrade it (hudictl table downgrade --to-version N), or drop the "
            f"option and set {C.AUTO_UPGRADE.key}=false to write the table at its version")


def create_table(base_path: str, cfg: HoodieConfig, data_schema: pa.Schema) -> HoodieTable:
    """A new table with no commits (``hoodie.properties`` and the timeline folder), as a first write
    or SQL's CREATE TABLE makes it."""
    check_engine(cfg, cfg.get_str(C.TABLE_TYPE).upper())
    keygen = key_generator_from_config(cfg)
    name = cfg.require(C.TABLE_NAME, "a new table needs a name")
    missing = [f for f in (*keygen.record_key_fields, *keygen.partition_fields) if f not in data_schema.names]
    if missing:
        raise HoodieConfigError(f"field(s) {', '.join(missing)} named by the table's record key or partition "
                                f"path are not among its columns ({', '.join(data_schema.names)})")
    create_schema = to_json(arrow_to_avro(data_schema, name, style="create"))
    return HoodieTable.create(base_path, cfg, keygen.class_name, create_schema)


def _data_schema(df: DataFrame | pa.Table) -> pa.Schema:
    schema = df.schema if isinstance(df, pa.Table) else to_arrow_schema(df.schema)
    return pa.schema([f for f in schema if f.name not in _NOT_DATA])


# Columns an input may carry that are not the table's: meta columns (rewritten) and deletes marked per row.
_NOT_DATA = frozenset((*META_FIELDS, OP_COLUMN))


# Inputs whose plan Spark estimates above this many bytes a record allowed in-process are not probed.
PROBE_BYTES_PER_RECORD = 1024


def small_input(df: DataFrame, max_records: int) -> pa.Table | None:
    """The input's rows when there are at most ``max_records``, else None. Spark's estimate decides
    when it can: a row count, or a size too big to be small. A plan Spark sizes but cannot count (a
    projection of a cached frame, a file scan) is counted up to ``max_records + 1`` rows first, so a
    big input is never collected only to be dropped; one it cannot size at all (rows from Python)
    is collected up to that many in one job."""
    if max_records <= 0:
        return None
    rows, size = _estimate(df)
    if rows is None and size is None:
        collected = _collect(df.limit(max_records + 1))
        return collected if collected.num_rows <= max_records else None
    if rows is None:
        if size is not None and size > max_records * PROBE_BYTES_PER_RECORD:
            return None
        rows = df.limit(max_records + 1).count()
    return _collect(df) if rows <= max_records else None


def _estimate(df: DataFrame) -> tuple[int | None, int | None]:
    """Spark's row count and byte size of the input's optimized plan, each None when unknown (a
    plan Spark cannot size reports ``spark.sql.defaultSizeInBytes``; Spark Connect has no plan)."""
    try:
        stats = df._jdf.queryExecution().optimizedPlan().stats()
        unknown = int(df.sparkSession._jsparkSession.sessionState().conf().defaultSizeInBytes())
    except AttributeError:
        return None, None
    count = stats.rowCount()
    rows = int(str(count.get())) if count.isDefined() else None
    size = int(str(stats.sizeInBytes()))
    return rows, None if size >= unknown else size


def _collect(df: DataFrame) -> pa.Table:
    """The rows as Spark's Arrow batches carry them. ``toArrow`` casts them to the declared schema,
    which fails on a null struct whose fields Spark declares non-nullable (the write settles those);
    Spark Connect has only ``toArrow``."""
    try:
        batches = df._collect_as_arrow(empty_list_if_zero_records=False)
    except AttributeError:
        return df.toArrow()
    return pa.Table.from_batches(batches)


class WriteJob:
    """One write's state on the driver: its input, options, transaction and the table as it began."""

    def __init__(self, df: DataFrame | pa.Table, table: HoodieTable, cfg: HoodieConfig, operation: str,
                 extra: dict[str, str]):
        # Meta columns of incoming rows (a DataFrame read from another Hudi table) are rewritten.
        names = df.column_names if isinstance(df, pa.Table) else df.columns
        meta = [c for c in names if c in META_FIELDS]
        self.table, self.cfg, self.operation = table, cfg, operation
        self.columns = [c for c in names if c not in _NOT_DATA]
        self.data_schema = _data_schema(df)
        self.spark = getattr(df, "sparkSession", None)
        if isinstance(df, pa.Table):
            self.plane: Plane = ArrowPlane(self, df.drop_columns(meta))
        else:
            self.df = df.drop(*meta)
            self.plane = SparkPlane(self, self.df)
        self.keygen = key_generator_from_config(cfg)
        self.ordering = ordering_fields(cfg)
        self.partial = partial_update(cfg)
        self.custom = custom_merger_name(cfg)
        self.carried: frozenset[str] | None = None     # set with the write schema (partial_writes)
        self.index = index_type(cfg)
        self.consistent = is_consistent_hashing(cfg)
        # Conflicts under the simple bucket engine are by bucket number; consistent buckets' file
        # ids are fixed by the hashing metadata, so they compare as file groups.
        self.by_bucket = self.index == BUCKET and not self.consistent
        self.extra = {**{k: v for k, v in cfg.raw().items() if k.startswith(COMMIT_META_PREFIX)}, **extra}
        self.is_replace = operation in REPLACE_OPERATIONS
        self.is_mor = table.table_type == "MERGE_ON_READ"
        self.action = REPLACE_COMMIT if self.is_replace else DELTA_COMMIT if self.is_mor else COMMIT
        self.sizing: SizingPolicy = sizing_policy(cfg)
        self.nbcc = concurrency(cfg).nbcc
        if self.nbcc:
            check_nbcc(table, self.index, self.consistent)

    def _prepare(self, table: HoodieTable) -> HoodieTable:
        """Under the table lock, as the instant is taken: the metadata table as the options want
        it, and the file slices and pending plans this write starts from."""
        table = ensure_metadata(self.spark, drop_from_options(table, self.cfg), self.cfg)
        defined = define_from_options(table, self.cfg)
        if defined is not None:             # an index the options name, defined now: built like any other
            table = ensure_metadata(self.spark, defined, self.cfg)
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
        self.carried = carried_columns(self.cfg, self.keygen, self.ordering, data_schema.names)
        if self.carried is not None:
            check_partial_write(self.cfg, self.table.version, self.operation, self.index, self.custom, self.partial)
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
        try:
            with self.txn:
                self._choose_plane()
                self.ctx = WriteContext(self.table.storage, self.instant.timestamp, data_schema,
                                        to_json(add_meta_fields(avro)), self.cfg.raw())
                with self._spark_settings():
                    stats, replaced = self._execute()
                self._finalize(stats)
                meta = commit_metadata(stats, self.operation, self.schema_json, self.extra, replaced)
                self.txn.commit(meta, changed=our_file_groups(stats, replaced))
        except BaseException as exc:
            raise _user_error(exc) from exc
        log.info(f"committed {self.action} {self.instant.timestamp}: "
                 f"{sum(s['numWrites'] for s in stats)} records in {len(stats)} files")
        return self.instant.timestamp

    def _choose_plane(self) -> None:
        """In the transaction, as the Spark path reads its input there too: a small DataFrame is
        collected and written in this process (``small_input``)."""
        if isinstance(self.plane, SparkPlane):
            rows = small_input(self.df, self.cfg.get(C.IN_PROCESS_MAX_RECORDS))
            if rows is not None:
                log.info(f"{self.operation} of {rows.num_rows} records: written in this process, no Spark stage")
                self.plane = ArrowPlane(self, rows, self.spark)
        if isinstance(self.plane, ArrowPlane):
            self.txn.in_process()

    def _spark_settings(self):
        """This write's Spark jobs, named and sized (none when it runs in this process)."""
        stack = ExitStack()
        if self.spark is not None:
            stack.enter_context(self.txn.spark_jobs(f"hudi {self.operation} {self.instant.timestamp}"))
            if isinstance(self.plane, SparkPlane):
                stack.enter_context(write_settings(self.spark, self.parallelism()))
        return stack

    def _execute(self) -> tuple[list[dict], dict[str, list[str]] | None]:
        if self.operation == "delete_partition":
            return [], operations.delete_partitions(self)
        prepare = Prepare(self.keygen, self.ordering, self.operation == "delete", self.carried is not None)
        if self.operation == "bulk_insert" and self.index != BUCKET:
            return operations.bulk_insert(self, prepare), None
        prepared = self.plane.prepared(prepare)
        if self.is_replace:
            return operations.insert_overwrite(self, prepared)
        if self.index == BUCKET:
            return operations.bucketed(self, prepared), None
        return operations.upsert(self, prepared), None

    def _check_input(self) -> None:
        columns = set(self.columns)
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
        missing = [f for f in self.ordering if f.split(".")[0] not in columns]
        if missing and self.operation != "delete":
            raise HoodieValidationError(
                f"ordering field '{missing[0]}' ({C.PRECOMBINE_FIELD.key}={','.join(self.ordering)}) is not "
                f"in the input; its columns are {sorted(columns)}. Add the column or unset the option")

    def _write_schema(self) -> pa.Schema:
        """The table's schema evolved by this batch: new columns are added, types may widen; columns
        the batch lacks are refused unless the options ask for nulls (Hudi 1.x's
        ``deduceWriterSchema``)."""
        incoming = self.data_schema
        latest = self.table.timeline.latest_schema()
        if latest is None or self.operation in ("delete", "delete_partition"):
            return incoming if latest is None else avro_to_arrow(latest)
        current = without_meta_fields(avro_to_arrow(latest))
        incoming = reconcile_nullability(incoming, current)
        problem = arrow_schema_compatible(current, incoming)
        if problem:
            raise HoodieValidationError(
                f"the input's schema cannot be merged into table {self.table.name}: {problem}")
        missing = [f.name for f in current if f.name not in incoming.names]
        updated = updated_columns(self.cfg)
        if updated is not None:
            # A partial update carries its columns; the others keep their stored values.
            missing = [name for name in missing if name in updated]
            if missing:
                raise HoodieValidationError(
                    f"the input lacks column(s) {', '.join(missing)} that {C.WRITE_PARTIAL_UPDATE_SCHEMA.key} "
                    "says this upsert updates: add them to the input or leave them out of the schema")
        if missing and not (self.cfg.get(C.SCHEMA_RECONCILE) or self.cfg.get(C.SET_NULL_FOR_MISSING_COLUMNS)):
            raise HoodieValidationError(
                f"the input lacks column(s) {', '.join(missing)} of table {self.table.name}, and Hudi does not "
                f"drop columns from a table: add them to the input, or set {C.SET_NULL_FOR_MISSING_COLUMNS.key}=true "
                f"(or {C.SCHEMA_RECONCILE.key}=true) to write them as null")
        fields = {f.name: f for f in current}
        for f in incoming:
            fields[f.name] = f if f.name not in fields or f.type != fields[f.name].type else fields[f.name]
        return pa.schema([fields[f.name] for f in current] +
                         [f for f in incoming if f.name not in {c.name for c in current}])

    # --- what the operations share ---------------------------------------------------------------
    def check_not_clustering(self, updates: dict[tuple[str, str], int]) -> None:
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
                f"--base-path {self.table.base_path}), then retry this write",
                self.table.base_path, tuple(instants))

    def append_targets(self, updates: dict[GroupKey, int], insert_groups: set[GroupKey],
                       slices: dict[GroupKey, FileSlice]) -> dict[GroupKey, AppendTarget]:
        """Merge-on-read: updated file groups log their changes, except small file groups taking
        inserts, which are rewritten (Hudi's small-file correction when the index cannot see logs)."""
        if not self.is_mor:
            return {}
        own = self.instant.timestamp if self.table.version >= 8 else None
        cdc = bool(self.cfg.get(C.CDC_ENABLED))
        return {g: append_target(slices[g], self.compacting.get(g), own, cdc)
                for g in updates if g not in insert_groups}

    def merge_groups(self, rows, targets: dict[GroupKey, Target], appends: dict | None = None) -> list[dict]:
        if not targets and not appends:
            return []
        return self.plane.merge_groups(rows, targets, appends or {})

    def file_group_writer(self, targets: dict[GroupKey, Target], appends: dict) -> WriteFileGroup:
        """The per-file-group merge and write (or log append) either plane runs."""
        spec = MergeSpec(self.ordering, self.combine(),
                         merge_mode(self.cfg) == "EVENT_TIME_ORDERING", self.partial, self.custom)
        return WriteFileGroup(self.ctx, targets, spec,
                              AppendFileGroup(self.ctx, appends, spec, self.carried) if appends else None,
                              self.carried)

    def combine(self) -> bool:
        prop = {"upsert": C.COMBINE_BEFORE_UPSERT, "delete": C.COMBINE_BEFORE_DELETE}.get(
            self.operation, C.COMBINE_BEFORE_INSERT)
        return self.cfg.get(prop)

    def parallelism(self) -> int:
        """Partitions of this write's index join and routing shuffles (``shuffle_parallelism``)."""
        prop = {"bulk_insert": C.BULKINSERT_SHUFFLE_PARALLELISM, "insert": C.INSERT_SHUFFLE_PARALLELISM,
                "insert_overwrite": C.INSERT_SHUFFLE_PARALLELISM,
                "insert_overwrite_table": C.INSERT_SHUFFLE_PARALLELISM,
                "delete": C.DELETE_SHUFFLE_PARALLELISM}.get(self.operation, C.UPSERT_SHUFFLE_PARALLELISM)
        return shuffle_parallelism(self.cfg.get(prop), self.df.rdd.getNumPartitions(),
                                   self.spark.sparkContext.defaultParallelism)

    def step(self, what: str):
        """Label this write's Spark jobs while ``what`` runs (``spark_jobs.step``)."""
        return step(self.spark, what)

    def avg_record_size(self) -> int:
        return timeline_record_size(self.table.timeline, self.sizing)

    def inflight(self, profile: dict) -> None:
        self.txn.inflight(profile)

    def _finalize(self, stats: list[dict]) -> None:
        """Delete files that retried or speculative tasks left behind (markers not in the stats)."""
        committed = {s["path"] for s in stats} | {p for s in stats for p in (s.get("cdcStats") or {})}
        for data_path in marked_data_files(self.table.storage, self.instant.timestamp) - committed:
            self.table.storage.delete(data_path)


# Raised in a Python worker, or by Spark's raise_error in a JVM expression (``keygen.spark_columns``),
# which appends the error's SQL state.
_WORKER_ERROR = re.compile(r"(?:hudi_engine\.errors\.)?(HoodieValidationError|HoodieConfigError): (.*?)"
                           r"(?: SQLSTATE: \w+)?$", re.M)


def _user_error(exc: BaseException) -> BaseException:
    """Errors raised in Spark's Python workers reach the driver as text: raise them as ours again."""
    if isinstance(exc, HoodieError):
        return exc
    match = _WORKER_ERROR.search(str(exc))
    if match:
        kind = HoodieValidationError if match.group(1) == "HoodieValidationError" else HoodieConfigError
        return kind(match.group(2).strip())
    return exc

