"""``hudictl compact``: the standalone compaction job of a merge-on-read table, with the modes of
Hudi's HoodieCompactor utility (schedule, execute, scheduleAndExecute)."""
from __future__ import annotations

import argparse
from typing import Callable

EXAMPLE = """examples:
  hudictl compact --base-path s3://lake/trips --mode schedule      # plan one if it is due
  hudictl compact --base-path ./lake/trips --mode execute          # run every pending plan
  hudictl compact --base-path ./lake/trips --force \\
      --hoodie-conf hoodie.compaction.strategy=LogFileNumBasedCompactionStrategy
"""
MODES = ("schedule", "execute", "scheduleAndExecute")


def add_parser(sub) -> None:
    add_service_parser(sub, "compact", "schedule and/or run compaction of a merge-on-read table", __doc__,
                       EXAMPLE, run, "plan whenever there are log files, even if the trigger strategy "
                                     "(hoodie.compact.inline.trigger.strategy) says it is not due")


def add_service_parser(sub, command: str, help: str, description: str, example: str, run_fn,
                       force_help: str) -> None:
    """The arguments every standalone plan-then-execute service takes (compaction, clustering)."""
    p = sub.add_parser(command, help=help, description=description, epilog=example,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-path", required=True, help="table base path (the folder holding .hoodie/)")
    p.add_argument("--mode", choices=MODES, default="scheduleAndExecute",
                   help="schedule a plan, execute pending plans, or both (default)")
    p.add_argument("--instant-time", help="execute only this pending plan")
    p.add_argument("--force", action="store_true", help=force_help)
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a hoodie.* option, e.g. hoodie.compaction.target.io=2048 (repeatable)")
    p.set_defaults(run=run_fn)


def parse_conf(pairs: list[str], flag: str = "--hoodie-conf") -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"{flag} expects KEY=VALUE, got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def schedule_and_execute(args: argparse.Namespace, noun: str, schedule: Callable, pending: Callable,
                         execute: Callable, nothing_due: str) -> int:
    """Run the chosen modes: ``schedule(table, options, force=)`` then ``execute(spark, table,
    instant_time, options)`` when ``pending(table)`` has plans."""
    from hudi_engine.api import HoodieTable
    from hudi_engine.spark import local_spark

    options = parse_conf(args.hoodie_conf)
    table = HoodieTable.load(args.base_path)
    if args.mode in ("schedule", "scheduleAndExecute"):
        planned = schedule(table, options, force=args.force)
        print(f"scheduled {noun} {planned.timestamp}" if planned else f"no {noun} scheduled: {nothing_due}")
        table = table.reload()
    if args.mode in ("execute", "scheduleAndExecute"):
        if not pending(table):
            print(f"no pending {noun} to execute")
            return 0
        spark = local_spark(f"hudictl-{noun}")
        try:
            for instant in execute(spark, table, args.instant_time, options):
                print(f"completed {noun} {instant}")
        finally:
            spark.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    from hudi_engine.api import run_compactions, schedule_compaction

    return schedule_and_execute(args, "compaction", schedule_compaction,
                                lambda table: table.timeline.pending(["compaction"]), run_compactions,
                                "not due, or no file group has log files")
