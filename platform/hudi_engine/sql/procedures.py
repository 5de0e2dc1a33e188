"""Hudi's ``CALL`` procedures over the engine's API, with Hudi 1.x's names, parameters and output
columns (https://hudi.apache.org/docs/procedures), so ``CALL show_commits(table => 't')`` works as
in Hudi's Spark SQL extensions:

    call_procedure(spark, statements.parse("CALL show_commits(table => 'db.t', limit => 5)"), locate)

``PROCEDURES`` is the one definition of each procedure (parameters, output, what runs); binding
errors, ``CALL help(cmd => ...)`` and unknown-name errors are all read from it. The procedures
themselves live in ``procedure_timeline`` (commits, rollbacks, properties), ``procedure_files``
(file-system view, metadata table), ``procedure_services`` (compaction, clustering, clean,
archival, Hive sync) and ``procedure_restore`` (savepoints, rollback). Their rows are timeline and
file-listing facts, built here and handed to Spark; no table data passes through the driver.
"""
from __future__ import annotations

import logging
from typing import Callable

from pyspark.sql import DataFrame, SparkSession

from ..errors import HoodieConfigError
from ..spark_jobs import storage_scope
from . import procedure_files as files
from . import procedure_restore as restore
from . import procedure_services as services
from . import procedure_timeline as timeline
from .procedure_args import Procedure, bind, columns, optional, required
from .procedure_context import Invocation
from .statements import Call

log = logging.getLogger(__name__)

TABLE, TABLE_OR_PATH = (required("table", "string"),), (optional("table", "string"), optional("path", "string"))
COMMIT_TOTALS = columns("commit_time string, state_transition_time string, action string, total_bytes_written long, "
                        "total_files_added long, total_files_updated long, total_partitions_written long, "
                        "total_records_written long, total_update_records_written long, total_errors long")
LIMIT_10, LIMIT_20 = optional("limit", "integer", 10), optional("limit", "integer", 20)
FSVIEW = (*TABLE, optional("max_instant", "string", ""), optional("include_max", "boolean", False),
          optional("include_in_flight", "boolean", False), optional("exclude_compaction", "boolean", False),
          LIMIT_10, optional("path_regex", "string", files.ALL_PARTITIONS))
FSVIEW_COLUMNS = ("partition string, file_id string, base_instant string, data_file string, data_file_size long, "
                  "num_delta_files long, total_delta_file_size long")
COMPACTION_COLUMNS = "timestamp string, operation_size integer, state string"
CLUSTERING_COLUMNS = "timestamp string, input_group_size integer, state string, involved_partitions string"


def _help(inv: Invocation) -> list[tuple]:
    """Hudi's ``help``: every procedure, or one procedure's parameters and output columns."""
    cmd = inv.args["cmd"]
    if cmd is None:
        lines = ["synopsis", "\tcall [command]([key1]=>[value1],[key2]=>[value2])", "commands and description"]
        lines += [f"\t{p.name}\t{p.doc}" for p in sorted(PROCEDURES.values(), key=lambda p: p.name)]
        lines.append("You can use 'call help(cmd=>[command])' to get more details of a command")
        return [("\n".join(lines),)]
    proc = procedure(cmd.lower())
    lines = [f"{proc.name}: {proc.doc}", "parameters:", "\tparam\ttype_name\tdefault_value\trequired"]
    lines += [f"\t{p.name}\t{p.type}\t{p.default_text}\t{str(p.required).lower()}" for p in proc.params]
    lines += ["outputType:", "\tname\ttype_name\tnullable"]
    lines += [f"\t{f.name}\t{f.dataType.typeName()}\ttrue" for f in proc.output.fields]
    return [("\n".join(lines),)]


P = Procedure
PROCEDURES: dict[str, Procedure] = {p.name: p for p in (
    P("help", (optional("cmd", "string"),), columns("result string"), _help,
      "Show the procedures, or one procedure's parameters and output"),
    # --- the timeline
    P("show_commits", (*TABLE, LIMIT_10),
      COMMIT_TOTALS,
      timeline.show_commits, "Completed commits, newest first, with their write totals"),
    P("show_archived_commits", (*TABLE, LIMIT_10, optional("start_ts", "string", ""), optional("end_ts", "string", "")),
      COMMIT_TOTALS,
      timeline.show_archived_commits,
      "Archived commits (.hoodie/archived or the LSM history), newest first, with their write totals"),
    P("show_commits_metadata", (*TABLE, LIMIT_10),
      columns("commit_time string, state_transition_time string, action string, partition string, file_id string, "
              "previous_commit string, num_writes long, num_inserts long, num_deletes long, num_update_writes long, "
              "total_errors long, total_log_blocks long, total_corrupt_log_blocks long, total_rollback_blocks long, "
              "total_log_records long, total_updated_records_compacted long, total_bytes_written long"),
      timeline.show_commits_metadata, "The write stats of completed commits, newest first"),
    P("show_commit_files", (*TABLE, LIMIT_10, required("instant_time", "string")),
      columns("action string, partition_path string, file_id string, previous_commit string, "
              "total_records_updated long, total_records_written long, total_bytes_written long, total_errors long, "
              "file_size long"),
      timeline.show_commit_files, "The files one completed commit wrote"),
    P("show_rollbacks", (*TABLE, LIMIT_10),
      columns("instant string, rollback_instant string, total_files_deleted integer, time_taken_in_millis long, "
              "total_partitions integer"),
      timeline.show_rollbacks, "Completed rollbacks and the instants they rolled back"),
    P("show_rollback_detail", (*TABLE, LIMIT_10, required("instant_time", "string")),
      columns("instant string, rollback_instant string, partition string, deleted_file string, succeeded boolean"),
      timeline.show_rollback_detail, "The files one rollback deleted"),
    P("show_table_properties", (*TABLE_OR_PATH, LIMIT_10), columns("key string, value string"),
      timeline.show_table_properties, "The table's hoodie.properties"),
    # --- files
    P("show_fsview_all", FSVIEW, columns(f"{FSVIEW_COLUMNS}, delta_files string"), files.show_fsview_all,
      "Every committed file slice (path_regex: a glob of partitions; exclude_compaction changes nothing "
      "for committed slices)"),
    P("show_fsview_latest", (*FSVIEW, optional("partition_path", "string", files.ALL_PARTITIONS),
                             optional("merge", "boolean", True)),
      columns(f"{FSVIEW_COLUMNS}, delta_size_compaction_scheduled long, delta_size_compaction_unscheduled long, "
              "delta_to_base_radio_compaction_scheduled double, delta_to_base_radio_compaction_unscheduled double, "
              "delta_files_compaction_scheduled string, delta_files_compaction_unscheduled string"),
      files.show_fsview_latest, "The latest file slice of each file group"),
    P("show_metadata_table_partitions", TABLE, columns("partition string"), files.show_metadata_table_partitions,
      "The data partitions the metadata table lists"),
    P("show_metadata_table_files", (*TABLE, optional("partition", "string", "")), columns("file_path string"),
      files.show_metadata_table_files, "The files the metadata table lists in a partition"),
    P("show_metadata_table_stats", TABLE, columns("stat_key string, stat_value string"),
      files.show_metadata_table_stats, "Sizes and file counts of the metadata table's partitions"),
    # --- table services
    P("run_compaction", (required("op", "string"), *TABLE_OR_PATH, optional("timestamp", "long"),
                         optional("options", "string"), optional("instants", "string"), optional("limit", "integer")),
      columns(COMPACTION_COLUMNS), services.run_compaction,
      "Schedule and/or execute compactions (op: schedule, execute, scheduleandexecute or run)"),
    P("show_compaction", (*TABLE_OR_PATH, LIMIT_20), columns(COMPACTION_COLUMNS), services.show_compaction,
      "Compactions on the active timeline, pending and completed, newest first"),
    P("run_clustering", (*TABLE_OR_PATH, optional("predicate", "string"), optional("order", "string"),
                         optional("show_involved_partition", "boolean", False), optional("op", "string"),
                         optional("order_strategy", "string"), optional("options", "string"),
                         optional("instants", "string"), optional("selected_partitions", "string")),
      columns(CLUSTERING_COLUMNS), services.run_clustering,
      "Schedule and/or execute clusterings (predicate: on partition columns; order: sort columns)"),
    P("show_clustering", (*TABLE_OR_PATH, LIMIT_20, optional("show_involved_partition", "boolean", False)),
      columns(CLUSTERING_COLUMNS), services.show_clustering, "Clusterings on the active timeline, newest first"),
    P("run_clean", (*TABLE, optional("skip_locking", "boolean", False), optional("schedule_in_line", "boolean", True),
                    optional("clean_policy", "string"), optional("retain_commits", "integer"),
                    optional("hours_retained", "integer"), optional("file_versions_retained", "integer"),
                    optional("trigger_strategy", "string"), optional("trigger_max_commits", "integer"),
                    optional("options", "string")),
      columns("start_clean_time string, time_taken_in_millis long, total_files_deleted integer, "
              "earliest_commit_to_retain string, bootstrap_part_metadata string, version integer"),
      services.run_clean, "Clean old file versions (skip_locking: the engine locks only with several writers)"),
    P("archive_commits", (*TABLE_OR_PATH, optional("min_commits", "integer", 20),
                          optional("max_commits", "integer", 30), optional("retain_commits", "integer", 10),
                          optional("enable_metadata", "boolean", True)),
      columns("result integer"), services.archive_commits,
      "Archive old instants (enable_metadata: the engine's archival does not depend on it)"),
    P("hive_sync", (*TABLE, *(optional(name, "string", "") for name in (
        "metastore_uri", "username", "password", "use_jdbc", "mode", "partition_fields", "partition_extractor_class",
        "strategy"))),
      columns("result string"), services.hive_sync, "Sync the table to the Hive Metastore (hms mode)"),
    P("upgrade_table", (*TABLE, required("to_version", "string")), columns("result boolean"),
      services.upgrade_table, "Upgrade the table to a version (to_version: EIGHT or NINE, or 8, 9)"),
    P("downgrade_table", (*TABLE, required("to_version", "string")), columns("result boolean"),
      services.downgrade_table, "Downgrade the table to a version (to_version: EIGHT or SIX, or 8, 6)"),
    # --- savepoints and rollback
    P("show_savepoints", TABLE_OR_PATH, columns("savepoint_time string"), restore.show_savepoints,
      "Completed savepoints, newest first"),
    P("create_savepoint", (TABLE_OR_PATH[0], optional("commit_time", "string", ""), optional("user", "string", ""),
                           optional("comments", "string", ""), TABLE_OR_PATH[1]),
      columns("create_savepoint_result boolean"), restore.create_savepoint,
      "Savepoint a completed commit (the latest when commit_time is empty)"),
    P("delete_savepoint", (TABLE_OR_PATH[0], optional("instant_time", "string", ""), TABLE_OR_PATH[1]),
      columns("delete_savepoint_result boolean"), restore.delete_savepoint,
      "Delete savepoints (comma separated; the latest when empty)"),
    P("rollback_to_savepoint", (TABLE_OR_PATH[0], optional("instant_time", "string", ""), TABLE_OR_PATH[1]),
      columns("rollback_savepoint_result boolean"), restore.rollback_to_savepoint,
      "Restore the table to a savepoint (the latest when empty)"),
    P("rollback_to_instant", (*TABLE, required("instant_time", "string")), columns("rollback_result boolean"),
      restore.rollback_to_instant, "Roll back the table's latest commit"),
)}


def procedure(name: str) -> Procedure:
    found = PROCEDURES.get(name)
    if found is None:
        raise HoodieConfigError(f"there is no procedure {name!r}; the procedures are: {', '.join(sorted(PROCEDURES))}")
    return found


def call_procedure(spark: SparkSession, call: Call, locate: Callable[[str], str]) -> DataFrame:
    """Run ``CALL <procedure>(...)``: ``locate`` turns a ``table`` argument into the table's base
    path (raising when it is not a Hudi table). Returns the procedure's rows with Hudi's columns."""
    proc = procedure(call.procedure)
    args = bind(proc, call.args, call.positional)
    shown = (f"{k} => {'***' if k == 'password' else repr(v)}" for k, v in args.values.items() if k in args.given)
    log.info("CALL %s(%s)", proc.name, ", ".join(shown))
    with storage_scope(spark):
        rows = proc.run(Invocation(spark, proc, args, locate))
    return spark.createDataFrame(rows, proc.output)
