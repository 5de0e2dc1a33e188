"""Procedures that run table services or show their plans: compaction, clustering, clean,
archival and Hive sync. Each one calls the engine's service (``services``, ``sync``) with the
options the procedure's arguments stand for, then reports the plans it scheduled or ran."""
from __future__ import annotations

import json
import logging

from pyspark.errors import AnalysisException
from pyspark.sql.types import StringType, StructField, StructType

from .. import config as C
from ..errors import HoodieConfigError, HoodieTimelineError
from ..keygen import partition_values_from_path
from ..metadata_table.reader import table_view
from ..schema.meta_fields import PARTITION_PATH
from ..services.archive import archive
from ..services.clean import execute_clean, run_clean as run_cleans
from ..services.clustering import run_clusterings, schedule_clustering
from ..services.compaction import run_compactions, schedule_compaction
from ..services.table_version import downgrade_table as downgrade_to
from ..services.table_version import upgrade_table as upgrade_to
from ..sync import sync_hive
from ..table.meta_client import HoodieTable
from ..table.pending import completed_clusterings, pending_clusterings, requested_plan
from ..timeline.instant import CLEAN, COMMIT, COMPACTION, REPLACE_COMMIT, Instant, State
from .procedure_context import Invocation, instant_metadata

log = logging.getLogger(__name__)

OPS = ("schedule", "execute", "scheduleandexecute")


def instants_and_op(procedure: str, pending: list[str], instants: str | None, op: str | None,
                    limit: int | None = None) -> tuple[list[str], str]:
    """The plans a run_* procedure executes and its op, by Hudi's rules: named ``instants`` are
    executed (they must be pending); otherwise every pending plan (the oldest ``limit``), and the
    op defaults to scheduleandexecute (a newly scheduled plan then replaces that list)."""
    op = op.lower() if op else None
    if instants is not None:
        if op not in (None, "execute"):
            raise HoodieConfigError(f"CALL {procedure}: instants => can only be given with op => 'execute' "
                                    f"(or no op), not {op!r}")
        wanted = sorted({i.strip() for i in instants.split(",") if i.strip()})
        missing = [i for i in wanted if i not in pending]
        if missing:
            raise HoodieTimelineError(f"CALL {procedure}: {missing} are not pending; pending plans: {pending}")
        return wanted, "execute"
    op = op or "scheduleandexecute"
    if op not in OPS:
        raise HoodieConfigError(f"CALL {procedure}: op => {op!r} is not one of {', '.join(OPS)}")
    return (pending[:limit] if limit is not None else pending), op


# --- compaction --------------------------------------------------------------------------------

def _compaction_plan(table: HoodieTable, ts: str) -> dict | None:
    """A compaction's plan (its ``.compaction.requested``), pending or completed; None for a commit
    that was no compaction."""
    try:
        return requested_plan(table.timeline, Instant(ts, COMPACTION, State.REQUESTED))
    except HoodieTimelineError:
        return None


def _compaction_rows(table: HoodieTable, timestamps: list[str]) -> list[tuple]:
    rows = []
    for ts in sorted(timestamps, reverse=True):
        instant, plan = table.timeline.get(ts), _compaction_plan(table, ts)
        if instant is not None and plan is not None:
            rows.append((ts, len(plan.get("operations") or []), instant.state.name))
    return rows


def run_compaction(inv: Invocation) -> list[tuple]:
    args, table = inv.args, inv.table
    op, instants = args["op"].lower(), args["instants"]
    if op == "run":                       # Hudi's older spelling
        op = "scheduleandexecute"
    if args["timestamp"] is not None and instants is None:
        op, instants = "execute", str(args["timestamp"])
    pending = sorted(i.timestamp for i in table.timeline.pending([COMPACTION]))
    chosen, op = instants_and_op(inv.procedure.name, pending, instants, op, args["limit"])
    options = inv.options()
    if op != "execute":
        planned = schedule_compaction(table, options)
        chosen = [planned.timestamp] if planned is not None else chosen
    if op != "schedule":
        for ts in chosen:
            run_compactions(inv.spark, table.reload(), ts, options)
    return _compaction_rows(table.reload(), chosen)


def show_compaction(inv: Invocation) -> list[tuple]:
    table = inv.table
    if table.table_type != "MERGE_ON_READ":
        raise HoodieConfigError(f"{table.name} is {table.table_type}: only merge-on-read tables have compactions")
    # A completed compaction is a commit: the newest compactions are among the newest of those.
    candidates = sorted((i.timestamp for i in table.timeline.filter([COMPACTION, COMMIT])), reverse=True)
    compactions = [ts for ts in candidates if _compaction_plan(table, ts) is not None]
    return _compaction_rows(table, compactions[:inv.args["limit"]])


# --- clustering --------------------------------------------------------------------------------

def _clustering_row(instant: Instant, plan: dict, show_partitions: bool) -> tuple:
    groups = (plan.get("clusteringPlan") or {}).get("inputGroups") or []
    partitions = ",".join(sorted({s["partitionPath"] for g in groups for s in g.get("slices") or []}))
    return instant.timestamp, len(groups), instant.state.name, partitions if show_partitions else "*"


def _clusterings(table: HoodieTable) -> list[tuple[Instant, dict]]:
    """Every clustering on the active timeline, pending or completed, newest first."""
    done = completed_clusterings(table)
    found = pending_clusterings(table) + [(i, requested_plan(table.timeline, i))
                                          for i in table.timeline.filter([REPLACE_COMMIT], completed=True)
                                          if i.timestamp in done]
    return sorted(found, key=lambda pair: pair[0].timestamp, reverse=True)


def _partitions_matching(inv: Invocation, predicate: str) -> list[str]:
    """The table's partitions whose values satisfy ``predicate``, a Spark SQL condition on the
    partition columns (Spark evaluates it over one row per partition)."""
    table = inv.table
    fields = table.config.get_list(C.PARTITION_FIELDS)
    if not fields:
        raise HoodieConfigError(f"CALL run_clustering: predicate => needs a partitioned table; {table.name} is not")
    hive_style, encoded = table.config.get(C.HIVE_STYLE_PARTITIONING), table.config.get(C.URL_ENCODE_PARTITIONING)
    rows = []
    for path in table_view(table).partitions():
        values = partition_values_from_path(path, fields, hive_style, url_encoded=encoded)
        rows.append((*(values[f] for f in fields), path))
    schema = StructType([StructField(f, StringType()) for f in fields] + [StructField(PARTITION_PATH, StringType())])
    try:
        matched = inv.spark.createDataFrame(rows, schema).where(predicate).select(PARTITION_PATH).collect()
    except AnalysisException as e:
        raise HoodieConfigError(f"CALL run_clustering: predicate => {predicate!r} may use only the partition "
                                f"columns {fields}: {e}") from None
    return sorted(r[0] for r in matched)


def run_clustering(inv: Invocation) -> list[tuple]:
    args, table = inv.args, inv.table
    options: dict[str, str] = {}
    if args["predicate"] is not None:
        selected = _partitions_matching(inv, args["predicate"])
        if not selected:
            log.info("run_clustering: no partition of %s matches %s", table.name, args["predicate"])
            return []
        options[C.CLUSTERING_PARTITION_SELECTED.key] = ",".join(selected)
    elif args["selected_partitions"] is not None:
        options[C.CLUSTERING_PARTITION_SELECTED.key] = args["selected_partitions"]
    if args["order"] is not None:
        options[C.CLUSTERING_SORT_COLUMNS.key] = args["order"]
    if args["order_strategy"] is not None:
        options[C.LAYOUT_OPTIMIZE_STRATEGY.key] = args["order_strategy"]
    options.update(inv.options())
    pending = sorted(i.timestamp for i, _ in pending_clusterings(table))
    chosen, op = instants_and_op(inv.procedure.name, pending, args["instants"], args["op"])
    if op != "execute":
        # Hudi's write client plans a clustering whenever one is worth it (no commit-count trigger).
        planned = schedule_clustering(table, options, force=True)
        chosen = [planned.timestamp] if planned is not None else chosen
    if op != "schedule":
        for ts in chosen:
            run_clusterings(inv.spark, table.reload(), ts, options)
    return [_clustering_row(i, plan, args["show_involved_partition"])
            for i, plan in _clusterings(table.reload()) if i.timestamp in chosen]


def show_clustering(inv: Invocation) -> list[tuple]:
    return [_clustering_row(i, plan, inv.args["show_involved_partition"])
            for i, plan in _clusterings(inv.table)[:inv.args["limit"]]]


# --- clean, archival, catalog sync --------------------------------------------------------------

_CLEAN_ARGS = (("clean_policy", C.CLEANER_POLICY), ("retain_commits", C.CLEANER_COMMITS_RETAINED),
               ("hours_retained", C.CLEANER_HOURS_RETAINED),
               ("file_versions_retained", C.CLEANER_FILE_VERSIONS_RETAINED),
               ("trigger_strategy", C.CLEAN_TRIGGER_STRATEGY), ("trigger_max_commits", C.CLEAN_MAX_COMMITS))


def run_clean(inv: Invocation) -> list[tuple]:
    """Finish pending cleans and, with ``schedule_in_line``, plan and run a new one when due; the
    row describes the last clean completed (none when nothing was cleaned)."""
    args, table = inv.args, inv.table
    options = {prop.key: str(args[name]) for name, prop in _CLEAN_ARGS if args[name] is not None}
    options.update(inv.options())
    if args["schedule_in_line"]:
        done = run_cleans(table, options, inv.spark)
    else:
        done = [execute_clean(table.reload(), p, inv.spark, options).timestamp for p in table.timeline.pending([CLEAN])]
    if not done:
        return []
    reloaded = table.reload()
    meta = instant_metadata(reloaded, reloaded.timeline.completed_instant(CLEAN, done[-1]))
    return [(meta["startCleanTime"], meta["timeTakenInMillis"], meta["totalFilesDeleted"],
             meta["earliestCommitToRetain"], json.dumps(meta.get("bootstrapPartitionMetadata") or {}),
             meta["version"])]


def archive_commits(inv: Invocation) -> list[tuple]:
    """Archive with the given window; 0 on success, as Hudi's ArchiveExecutorUtils returns."""
    args = inv.args
    archived = archive(inv.table, {C.KEEP_MIN_COMMITS.key: args["min_commits"],
                                   C.KEEP_MAX_COMMITS.key: args["max_commits"],
                                   C.CLEANER_COMMITS_RETAINED.key: args["retain_commits"]})
    log.info("archive_commits: %d instants of %s archived", len(archived), inv.table.name)
    return [(0,)]


# Hudi's HoodieTableVersion names, as its upgrade_table / downgrade_table procedures take them.
_VERSION_NAMES = {"SIX": 6, "EIGHT": 8, "NINE": 9}


def table_version_named(procedure: str, value: str) -> int:
    text = str(value).strip().upper()
    if text in _VERSION_NAMES:
        return _VERSION_NAMES[text]
    if text.isdigit():
        return int(text)
    raise HoodieConfigError(f"CALL {procedure}: to_version => {value!r} is not a table version: use a "
                            f"HoodieTableVersion name ({', '.join(_VERSION_NAMES)}) or its number")


def upgrade_table(inv: Invocation) -> list[tuple]:
    """Hudi's upgrade procedure: true once the table is at ``to_version``."""
    target = table_version_named(inv.procedure.name, inv.args["to_version"])
    upgraded = upgrade_to(inv.table, target, spark=inv.spark)
    inv.refresh_catalog()
    return [(upgraded.version == target,)]


def downgrade_table(inv: Invocation) -> list[tuple]:
    """Hudi's downgrade procedure: true once the table is at ``to_version`` (a merge-on-read
    table's logs are compacted first)."""
    target = table_version_named(inv.procedure.name, inv.args["to_version"])
    downgraded = downgrade_to(inv.table, target, spark=inv.spark)
    inv.refresh_catalog()
    return [(downgraded.version == target,)]


_SYNC_ARGS = (("mode", C.HIVE_SYNC_MODE), ("partition_fields", C.HIVE_SYNC_PARTITION_FIELDS),
              ("partition_extractor_class", C.HIVE_SYNC_PARTITION_EXTRACTOR), ("strategy", C.HIVE_SYNC_TABLE_STRATEGY))


def hive_sync(inv: Invocation) -> list[tuple]:
    """Sync the table to the metastore under its catalog name: the session's ``hoodie.*`` settings,
    then the arguments. The metastore is ``metastore_uri``, else the session's Hadoop
    ``hive.metastore.uris``. (``username``/``password`` serve Hudi's JDBC mode only, which this
    engine does not have: ``use_jdbc => 'true'`` is refused with the hms mode's error.)"""
    args, conf = inv.args, inv.spark.conf
    database, _, name = args["table"].rpartition(".")
    options = {k: v for k, v in conf.getAll.items() if k.startswith("hoodie.")}
    options.update({C.HIVE_SYNC_DATABASE.key: database or inv.spark.catalog.currentDatabase(),
                    C.HIVE_SYNC_TABLE.key: name})
    uris = args["metastore_uri"] or conf.get("spark.hadoop.hive.metastore.uris", None)
    if uris:
        options[C.HIVE_SYNC_METASTORE_URIS.key] = uris
    if args["use_jdbc"].lower() == "true":
        options[C.HIVE_SYNC_MODE.key] = "jdbc"
    options.update({prop.key: args[arg] for arg, prop in _SYNC_ARGS if args[arg]})
    result = sync_hive(inv.base_path, options)
    log.info("hive_sync of %s: %s", inv.base_path, result)
    return [("hive sync success.",)]
