"""``hudictl hive-sync``: register a Hudi table in the Hive Metastore (database, table(s),
columns, partitions) as Hudi's HiveSyncTool does in hms mode. Incremental and idempotent: run it
after commits or on a schedule; it only touches what changed since the last synced commit."""
from __future__ import annotations

import argparse
import logging

from .compact import parse_conf

EXAMPLE = """examples:
  hudictl hive-sync --base-path s3://lake/trips --metastore-uris thrift://hms:9083 \\
      --database lake --table trips --sync-mode hms
  hudictl hive-sync --base-path ./lake/trips --partitioned-by year,month,day \\
      --partition-value-extractor org.apache.hudi.hive.MultiPartKeysValueExtractor
  hudictl hive-sync --base-path ./lake/events --skip-ro-suffix      # MOR: events (RO) + events_rt
  hudictl hive-sync --base-path ./lake/trips --full-partition-sync  # re-list every partition
"""
# flag -> the hoodie.* option it sets (the same keys a write's options use for inline sync)
_FLAG_KEYS = {
    "database": "hoodie.datasource.hive_sync.database",
    "table": "hoodie.datasource.hive_sync.table",
    "metastore_uris": "hoodie.datasource.hive_sync.metastore.uris",
    "partitioned_by": "hoodie.datasource.hive_sync.partition_fields",
    "partition_value_extractor": "hoodie.datasource.hive_sync.partition_extractor_class",
    "sync_mode": "hoodie.datasource.hive_sync.mode",
    "table_properties": "hoodie.datasource.hive_sync.table_properties",
    "serde_properties": "hoodie.datasource.hive_sync.serde_properties",
}
_SWITCH_KEYS = {
    "skip_ro_suffix": ("hoodie.datasource.hive_sync.skip_ro_suffix", "true"),
    "support_timestamp": ("hoodie.datasource.hive_sync.support_timestamp", "true"),
    "managed_table": ("hoodie.datasource.hive_sync.create_managed_table", "true"),
    "sync_comment": ("hoodie.datasource.hive_sync.sync_comment", "true"),
    "full_partition_sync": ("hoodie.meta.sync.incremental", "false"),
}


def add_parser(sub) -> None:
    p = sub.add_parser("hive-sync", help="sync a Hudi table to the Hive Metastore",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-path", required=True, help="table base path (the folder holding .hoodie/)")
    p.add_argument("--database", help="target database (default: the table's hoodie.database.name)")
    p.add_argument("--table", help="target table (default: the Hudi table name; MOR adds _ro/_rt)")
    p.add_argument("--metastore-uris",
                   help="thrift://host:port[,thrift://host2:port] (default thrift://localhost:9083)")
    p.add_argument("--partitioned-by", help="Hive partition columns, comma separated (default: the table's)")
    p.add_argument("--partition-value-extractor", metavar="CLASS",
                   help="e.g. org.apache.hudi.hive.SlashEncodedDayPartitionValueExtractor (default: inferred)")
    p.add_argument("--sync-mode", choices=("hms",), help="how to reach Hive; only hms (the thrift API)")
    p.add_argument("--skip-ro-suffix", action="store_true",
                   help="MOR: register the read-optimized table without the _ro suffix")
    p.add_argument("--support-timestamp", action="store_true",
                   help="timestamps as Hive 'timestamp' instead of 'bigint'")
    p.add_argument("--managed-table", action="store_true", help="register a MANAGED table, not EXTERNAL")
    p.add_argument("--sync-comment", action="store_true", help="copy column comments")
    p.add_argument("--table-properties", help="extra table properties, 'k=v' lines")
    p.add_argument("--serde-properties", help="extra serde properties, 'k=v' lines")
    p.add_argument("--full-partition-sync", action="store_true",
                   help="list every partition on storage and fix the metastore's (adds, re-points, drops), "
                        "instead of looking only at commits since the last sync")
    p.add_argument("--take-over", action="store_true",
                   help="change an existing metastore table at the name even if it is not this Hudi "
                        "table (another location, or not a Hudi table); never drops it")
    p.add_argument("--retries", type=int, default=3, help="retries of a failed metastore call (default 3)")
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="any hoodie.* option, e.g. hoodie.datasource.hive_sync.batch_num=500 (repeatable)")
    p.set_defaults(run=run)


def sync_options(args: argparse.Namespace) -> dict[str, str]:
    """The flags as hoodie.* options; --hoodie-conf fills in what no flag set."""
    options = parse_conf(args.hoodie_conf)
    options.update({key: getattr(args, flag) for flag, key in _FLAG_KEYS.items() if getattr(args, flag)})
    options.update({key: value for flag, (key, value) in _SWITCH_KEYS.items() if getattr(args, flag)})
    return options


def run(args: argparse.Namespace) -> int:
    from hudi_engine.api import sync_hive
    from hudi_engine.errors import HoodieError

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")  # retries
    try:
        result = sync_hive(args.base_path, sync_options(args), take_over=args.take_over, retries=args.retries)
    except HoodieError as exc:
        print(f"hive-sync failed: {exc}")
        return 1
    if result.synced_instant is None:
        print(f"{args.base_path} has no completed commit yet; nothing to sync")
    for t in result.tables:
        what = "created" if t.created else "altered" if t.altered else "unchanged"
        print(f"{result.database}.{t.name}: table {what}; partitions +{len(t.added)} ~{len(t.updated)} "
              f"-{len(t.dropped)} ({'full listing' if t.full else 'incremental'}); "
              f"synced up to {result.synced_instant}")
    return 0
