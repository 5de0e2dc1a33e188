"""``hudictl table``: look inside a Hudi table without Spark, as Hudi's CLI does (``desc``,
``commits show``, ``fsview latest``, ``compactions show all``): its properties, its timeline, its
file groups, the table services waiting on it and its metadata table (``metadata list-partitions``,
record-index lookups). Reads only ``.hoodie/`` and file listings, so it
works on any table, ours or written by Apache Hudi, local or on object storage.

``change-type --to COW|MOR`` changes the table's type, as Hudi's CLI ``table change-table-type``
does: to merge-on-read at once; to copy-on-write after compacting every log file (with Spark).
``upgrade --to-version 9`` upgrades a table of version 6 or 8 to Hudi 1.1's version 9 (through 8, as
Hudi steps) and ``downgrade --to-version 6`` brings it back, compacting a merge-on-read table's logs
first (Hudi CLI's ``upgrade table`` / ``downgrade table``); run again, either finishes one that was
killed.

``index create --name idx_city --column city`` creates a secondary index (Hudi 1.x's ``CREATE INDEX``:
table version 8 or 9 with the record index; built with a local Spark session); with ``--type
column_stats`` or ``--type bloom_filters`` and ``--option expr=<function>`` (more ``--option``s for
the function's ``format``, ``pos``, ``len``...) an expression index. ``index drop --name idx_city``
drops one and ``index list`` lists the table's indexes (``SHOW INDEXES``).

``index build --index-types RECORD_INDEX,COLUMN_STATS`` is Hudi's asynchronous indexer
(``HoodieIndexer``): it schedules an ``indexing`` instant and builds those metadata partitions while
writers keep writing (with the table lock they share, given by ``--hoodie-conf``); ``--mode
schedule``, ``execute`` (a pending one, or ``--instant``), ``scheduleAndExecute`` (default),
``rollback`` (a pending one) or ``dropindex`` (drop the named indexes, built or being built, as
``DROP INDEX`` does). Index types: RECORD_INDEX, COLUMN_STATS, BLOOM_FILTERS, PARTITION_STATS,
SECONDARY_INDEX / EXPRESSION_INDEX (every defined one), or a defined index's partition
(secondary_index_idx_city). Run ``execute`` again to resume one that was killed (the second
example). ``index create`` with ``--hoodie-conf hoodie.metadata.index.async=true`` builds through
the indexer too, holding the lock only to schedule and to finish."""
from __future__ import annotations

import argparse
import json
from collections import Counter
from contextlib import contextmanager
from typing import Iterator

from .compact import parse_conf

EXAMPLE = """examples:
  hudictl table describe --base-path ./lake/orders
  hudictl table timeline --base-path s3://lake/orders --limit 20
  hudictl table files --base-path ./lake/orders --partition region=eu
  hudictl table pending --base-path ./lake/orders --json
  hudictl table metadata --base-path ./lake/orders
  hudictl table metadata --base-path ./lake/orders --key order-42 --key order-43
  hudictl table change-type --base-path ./lake/orders --to MOR
  hudictl table change-type --base-path ./lake/orders --to COW --hoodie-conf hoodie.parquet.compression.codec=zstd
  hudictl table upgrade --base-path ./lake/orders --to-version 9
  hudictl table downgrade --base-path ./lake/orders --to-version 6
  hudictl table index create --base-path ./lake/trips --name idx_city --column city
  hudictl table index create --base-path ./lake/trips --name idx_day --column ts --type column_stats --option expr=from_unixtime --option format=yyyy-MM-dd
  hudictl table index list --base-path ./lake/trips
  hudictl table index drop --base-path ./lake/trips --name idx_city
  hudictl table index build --base-path ./lake/trips --index-types RECORD_INDEX,COLUMN_STATS --hoodie-conf hoodie.write.concurrency.mode=optimistic_concurrency_control --hoodie-conf hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider
  hudictl table index build --base-path ./lake/trips --mode execute --hoodie-conf hoodie.write.concurrency.mode=optimistic_concurrency_control --hoodie-conf hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider
  hudictl table index build --base-path ./lake/trips --index-types PARTITION_STATS,secondary_index_idx_city --mode dropindex --hoodie-conf hoodie.write.concurrency.mode=optimistic_concurrency_control --hoodie-conf hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider
"""
VIEWS = ("describe", "timeline", "files", "pending", "metadata")
CHANGES = ("change-type", "upgrade", "downgrade")
INDEX_ACTIONS = ("create", "drop", "list", "build")


def add_parser(sub) -> None:
    p = sub.add_parser("table", help="show a table's properties, timeline, file groups or pending services; "
                                     "change its type",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("view", choices=VIEWS + CHANGES + ("index",), help="what to show, or change-type")
    p.add_argument("action", nargs="?", choices=INDEX_ACTIONS, help="index: create, drop, list, or build (the asynchronous indexer)")
    p.add_argument("--base-path", required=True, help="table base path (the folder holding .hoodie/)")
    p.add_argument("--limit", type=int, default=0, help="timeline: only the newest N instants")
    p.add_argument("--partition", help="files: only this partition path")
    p.add_argument("--key", action="append", help="metadata: where the record index says this record key "
                                                  "lives (repeatable)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--name", help="index create, drop: the index name (e.g. idx_city)")
    p.add_argument("--column", help="index create: the column the index covers")
    p.add_argument("--type", default="secondary_index", choices=("secondary_index", "column_stats", "bloom_filters"),
                   help="index create: secondary_index (default), or an expression index's column_stats or "
                        "bloom_filters")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="index create: an expression index's option, as SQL's OPTIONS(...): expr=<function>, "
                        "format=..., pos=..., len=..., trimString=..., fpp=... (repeatable)")
    p.add_argument("--index-types", metavar="TYPES",
                   help="index build: comma-separated RECORD_INDEX, COLUMN_STATS, BLOOM_FILTERS, PARTITION_STATS, "
                        "SECONDARY_INDEX, EXPRESSION_INDEX, or defined indexes' partitions (secondary_index_<name>, "
                        "expr_index_<name>)")
    p.add_argument("--mode", default="scheduleAndExecute",
                   choices=("schedule", "execute", "scheduleAndExecute", "rollback", "dropindex"),
                   help="index build: schedule, execute (resumes a pending one), scheduleAndExecute (default), "
                        "rollback (a pending one), dropindex (the --index-types given)")
    p.add_argument("--instant", help="index build --mode execute|rollback: the pending indexing instant (default: oldest)")
    p.add_argument("--to", metavar="TYPE", help="change-type: COW or MOR (COPY_ON_WRITE, MERGE_ON_READ)")
    p.add_argument("--to-version", type=int, metavar="N",
                   help="upgrade, downgrade: the table version (6, 8 or 9; default 9 to upgrade, 6 to downgrade)")
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="change-type, upgrade, downgrade: a hoodie.* option, e.g. the lock's, or the "
                        "compaction's before a change to COW or a downgrade (repeatable)")
    p.set_defaults(run=run)


def describe(table) -> dict:
    from hudi_engine.api import table_view

    timeline = table.timeline
    last = timeline.last_completed_write()
    slices = table_view(table).latest_file_slices()
    return {"name": table.name, "basePath": table.base_path, "tableType": table.table_type,
            "tableVersion": table.version, "timelineLayoutVersion": table.layout_version,
            "lastCommit": last.timestamp if last else None,
            "completedInstants": sum(1 for i in timeline.instants if i.is_completed),
            "pendingInstants": [f"{i.timestamp} {i.action} {i.state.name}" for i in timeline.pending()],
            "partitions": len({s.partition for s in slices}), "fileGroups": len(slices),
            "properties": dict(sorted(table.props.items()))}


def timeline_rows(table, limit: int = 0) -> list[dict]:
    timeline = table.timeline
    rows = []
    for instant in timeline.instants[-limit:] if limit > 0 else timeline.instants:
        row = {"instant": instant.timestamp, "action": instant.action, "state": instant.state.name,
               "completed": instant.completion_time}
        if instant.is_completed and instant.action in ("commit", "deltacommit", "replacecommit"):
            meta = timeline.commit_metadata(instant)
            stats = [s for group in meta.get("partitionToWriteStats", {}).values() for s in group]
            row.update(operation=meta.get("operationType"), files=len(stats),
                       inserts=sum(s.get("numInserts", 0) for s in stats),
                       updates=sum(s.get("numUpdateWrites", 0) for s in stats),
                       deletes=sum(s.get("numDeletes", 0) for s in stats),
                       bytes=sum(s.get("fileSizeInBytes", 0) for s in stats))
        rows.append(row)
    return rows


def file_rows(table, partition: str | None = None) -> list[dict]:
    from hudi_engine.api import table_view

    slices = table_view(table).latest_file_slices(partitions={partition} if partition is not None else None)
    return [{"partition": s.partition, "fileId": s.file_id, "baseInstant": s.base_instant,
             "baseFile": s.base_file.path.rsplit("/", 1)[-1] if s.base_file else None,
             "baseBytes": s.base_file.size if s.base_file else 0, "logFiles": len(s.log_files),
             "logBytes": sum(f.size for f in s.log_files)}
            for s in sorted(slices, key=lambda s: (s.partition, s.file_id))]


def pending_rows(table) -> list[dict]:
    """Pending table services and writes; the file groups of compaction and clustering plans are counted."""
    from hudi_engine.api import pending_clustering_groups, pending_compaction_groups
    groups = Counter(pending_compaction_groups(table).values()) + Counter(pending_clustering_groups(table).values())
    return [{"instant": i.timestamp, "action": i.action, "state": i.state.name,
             "fileGroups": groups.get(i.timestamp)} for i in table.timeline.pending()]


def metadata_rows(table, keys: list[str] | None = None) -> list[dict]:
    """The metadata table's partitions (complete ones are used by readers and writers) with their
    file groups, or, for record keys, their locations in the record index."""
    from hudi_engine.api import MetadataReader, open_mdt, table_partitions

    reader = MetadataReader(table)
    if keys:
        found = reader.record_locations(keys) if reader.has("record_index") else {}
        return [{"key": k, "partition": found[k][0] if k in found else None,
                 "fileId": found[k][1] if k in found else None} for k in keys]
    mdt = open_mdt(table)
    if mdt is None:
        return []
    complete = set(table_partitions(table))
    slices = mdt.fs_view().latest_file_slices()
    return [{"partition": p, "complete": p in complete,
             "fileGroups": sum(1 for s in slices if s.partition == p),
             "baseBytes": sum(s.base_file.size for s in slices if s.partition == p and s.base_file),
             "logFiles": sum(len(s.log_files) for s in slices if s.partition == p)}
            for p in sorted({s.partition for s in slices})]


def run(args: argparse.Namespace) -> int:
    from hudi_engine.api import HoodieTable
    if not HoodieTable.exists(args.base_path):
        print(f"hudictl table: {args.base_path} is not a Hudi table (no .hoodie/hoodie.properties)")
        return 2
    table = HoodieTable.load(args.base_path)
    if args.view == "change-type":
        return change_type(table, args.to, args.hoodie_conf)
    if args.view in ("upgrade", "downgrade"):
        return change_version(table, args.view, args.to_version, args.hoodie_conf)
    if args.view == "index" and args.action == "build":
        return build_indexes(table, args.index_types, args.mode, args.instant, args.hoodie_conf)
    if args.view == "index" and args.action in ("create", "drop"):
        return change_index(table, args.action, args.name, args.column, args.hoodie_conf, args.type, args.option)
    result = {"describe": lambda: describe(table), "timeline": lambda: timeline_rows(table, args.limit),
              "files": lambda: file_rows(table, args.partition), "pending": lambda: pending_rows(table),
              "metadata": lambda: metadata_rows(table, args.key), "index": lambda: index_rows(table)}[args.view]()
    if args.json:
        print(json.dumps(result, indent=2))
    elif isinstance(result, dict):
        width = max(len(k) for k in result)
        for key, value in result.items():
            if key != "properties":
                print(f"{key:<{width}}  {value}")
        for key, value in result["properties"].items():
            print(f"  {key} = {value}")
    else:
        _print_rows(result)
    return 0


def change_type(table, to: str | None, conf: list[str]) -> int:
    from hudi_engine.api import change_table_type, table_type_named

    if not to:
        raise SystemExit("hudictl table change-type needs --to COW or --to MOR")
    target = table_type_named(to)
    if table.table_type == target:
        print(f"{table.name} is already {target}")
        return 0
    with _local_spark_if(target == "COPY_ON_WRITE", "hudictl-change-type") as spark:     # compacts first
        changed = change_table_type(spark, table, target, parse_conf(conf))
    print(f"{changed.name} is now {changed.table_type}")
    return 0


def change_version(table, direction: str, to_version: int | None, conf: list[str]) -> int:
    from hudi_engine.api import downgrade_compacts, downgrade_table, upgrade_table

    before = table.version
    target = to_version or (9 if direction == "upgrade" else 6)
    compacts = direction == "downgrade" and downgrade_compacts(table, target)
    with _local_spark_if(compacts, "hudictl-downgrade") as spark:
        if direction == "upgrade":
            changed = upgrade_table(table, target, parse_conf(conf))
        else:
            changed = downgrade_table(table, target, parse_conf(conf), spark)
    print(f"{changed.name} is at version {changed.version}"
          + (f" (was {before})" if before != changed.version else " already"))
    return 0


def index_rows(table) -> list[dict]:
    from hudi_engine.api import show_indexes

    return show_indexes(table)


def change_index(table, action: str, name: str | None, column: str | None, conf: list[str],
                 index_type: str = "secondary_index", index_options: list[str] | None = None) -> int:
    from hudi_engine.api import create_index, drop_index

    if not name or (action == "create" and not column):
        raise SystemExit("hudictl table index create needs --name and --column; index drop needs --name")
    if action == "drop":
        drop_index(table, name, options=parse_conf(conf))
        print(f"dropped index {name} of {table.name}")
        return 0
    with _local_spark_if(True, "hudictl-create-index") as spark:
        create_index(spark, table, name, column, index_type, options=parse_conf(conf),
                     index_options=parse_conf(index_options or [], "--option"))
    kind = "secondary" if index_type == "secondary_index" else f"expression ({index_type})"
    print(f"created {kind} index {name} on {table.name} ({column})")
    return 0


def build_indexes(table, index_types: str | None, mode: str, instant: str | None, conf: list[str]) -> int:
    from hudi_engine.api import build_index

    types = [t for t in (index_types or "").split(",") if t.strip()]
    if mode in ("schedule", "scheduleAndExecute", "dropindex") and not types:
        raise SystemExit(f"hudictl table index build --mode {mode} needs --index-types (e.g. RECORD_INDEX,COLUMN_STATS)")
    # Spark builds, and counts the keys or entries to schedule the record and secondary indexes; a
    # rollback or a drop needs none.
    counted = [t for t in types if t.strip().upper() in ("RECORD_INDEX", "SECONDARY_INDEX")
               or t.strip().startswith("secondary_index_")]
    needs_spark = mode in ("execute", "scheduleAndExecute") or (mode == "schedule" and bool(counted))
    with _local_spark_if(needs_spark, "hudictl-index-build") as spark:
        done = build_index(spark, table, types, mode, parse_conf(conf), instant)
    if mode == "dropindex":
        print(f"dropped {', '.join(types)} of {table.name}")
    elif done is None:
        print(f"nothing to {'roll back' if mode == 'rollback' else 'index'} on {table.name}")
    else:
        verb = {"schedule": "scheduled", "rollback": "rolled back"}.get(mode, "completed")
        print(f"{verb} indexing {done.timestamp} of {table.name}")
    return 0


@contextmanager
def _local_spark_if(needed: bool, name: str) -> Iterator:
    """A local session for a change that compacts log files (stopped after it), else None."""
    if not needed:
        yield None
        return
    from hudi_engine.spark import local_spark

    spark = local_spark(name)
    try:
        yield spark
    finally:
        spark.stop()


def _print_rows(rows: list[dict]) -> None:
    if not rows:
        print("(none)")
        return
    columns = list(dict.fromkeys(k for row in rows for k in row))
    cells = [[("" if row.get(c) is None else str(row.get(c))) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for r in cells:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
