"""``hudictl compact``: the standalone compaction job of a merge-on-read table, with the modes of
Hudi's HoodieCompactor utility (schedule, execute, scheduleAndExecute)."""
from __future__ import annotations

import argparse

EXAMPLE = """examples:
  hudictl compact --base-path s3://lake/trips --mode schedule      # plan one if it is due
  hudictl compact --base-path ./lake/trips --mode execute          # run every pending plan
  hudictl compact --base-path ./lake/trips --force \\
      --hoodie-conf hoodie.compaction.strategy=LogFileNumBasedCompactionStrategy
"""
MODES = ("schedule", "execute", "scheduleAndExecute")


def add_parser(sub) -> None:
    p = sub.add_parser("compact", help="schedule and/or run compaction of a merge-on-read table",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-path", required=True, help="table base path (the folder holding .hoodie/)")
    p.add_argument("--mode", choices=MODES, default="scheduleAndExecute",
                   help="schedule a plan, execute pending plans, or both (default)")
    p.add_argument("--instant-time", help="execute only this pending compaction")
    p.add_argument("--force", action="store_true",
                   help="plan whenever there are log files, even if the trigger strategy "
                        "(hoodie.compact.inline.trigger.strategy) says it is not due")
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a hoodie.* option, e.g. hoodie.compaction.target.io=2048 (repeatable)")
    p.set_defaults(run=run)


def parse_conf(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--hoodie-conf expects KEY=VALUE, got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def run(args: argparse.Namespace) -> int:
    from hudi_engine.services.compaction import run_compactions, schedule_compaction
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable

    options = parse_conf(args.hoodie_conf)
    table = HoodieTable.load(args.base_path)
    if args.mode in ("schedule", "scheduleAndExecute"):
        planned = schedule_compaction(table, options, force=args.force)
        print(f"scheduled compaction {planned.timestamp}" if planned else
              "no compaction scheduled: not due, or no file group has log files")
        table = table.reload()
    if args.mode in ("execute", "scheduleAndExecute"):
        if not table.timeline.pending(["compaction"]):
            print("no pending compaction to execute")
            return 0
        spark = local_spark("hudictl-compact")
        try:
            for instant in run_compactions(spark, table, args.instant_time, options):
                print(f"completed compaction {instant}")
        finally:
            spark.stop()
    return 0
