"""``hudictl clean``, ``hudictl archive`` and ``hudictl savepoint``: Hudi's standalone cleaner
(HoodieCleaner), archival, and the savepoint commands of Hudi's CLI (create, list, delete, restore)."""
from __future__ import annotations

import argparse
import datetime as _dt

from .compact import parse_conf

CLEAN_EXAMPLE = """examples:
  hudictl clean --base-path ./lake/trips                     # clean now with Hudi's defaults
  hudictl clean --base-path s3://lake/trips \\
      --hoodie-conf hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS \\
      --hoodie-conf hoodie.cleaner.fileversions.retained=2
"""
ARCHIVE_EXAMPLE = """examples:
  hudictl archive --base-path ./lake/trips                   # keep 20-30 commits active (Hudi's defaults)
  hudictl archive --base-path ./lake/trips --hoodie-conf hoodie.keep.min.commits=40 \\
      --hoodie-conf hoodie.keep.max.commits=50
"""
SAVEPOINT_EXAMPLE = """examples:
  hudictl savepoint create --base-path ./lake/trips                       # the latest commit
  hudictl savepoint create --base-path ./lake/trips --instant-time 20250101100000123 --comments "Q4 close"
  hudictl savepoint list --base-path ./lake/trips
  hudictl savepoint restore --base-path ./lake/trips --instant-time 20250101100000123
  hudictl savepoint delete --base-path ./lake/trips --instant-time 20250101100000123
"""


def _formatted(sub, name: str, help_: str, example: str):
    return sub.add_parser(name, help=help_, description=help_, epilog=example,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_parser(sub) -> None:
    for name, help_, example, options, command in (
            ("clean", "delete file versions the cleaner policy no longer retains", CLEAN_EXAMPLE,
             "hoodie.clean*/hoodie.cleaner.*", run_clean_command),
            ("archive", "move old completed instants to the archived timeline (.hoodie/archived; version 8+: "
             "the LSM history, .hoodie/timeline/history)", ARCHIVE_EXAMPLE,
             "hoodie.keep.* / hoodie.cleaner.*", run_archive_command)):
        p = _formatted(sub, name, help_, example)
        p.add_argument("--base-path", required=True, help="table base path (the folder holding .hoodie/)")
        p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                       help=f"a {options} option (repeatable)")
        p.set_defaults(run=command)

    sp = _formatted(sub, "savepoint", "create, list, delete savepoints; restore a table to one",
                    SAVEPOINT_EXAMPLE)
    actions = sp.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_, needs_instant in (
            ("create", "savepoint a completed commit (default: the latest)", False),
            ("list", "list the table's savepoints", None),
            ("delete", "delete a savepoint (the cleaner may then remove its files)", True),
            ("restore", "roll the table back to a savepoint (later commits are rolled back)", True)):
        a = _formatted(actions, name, help_, SAVEPOINT_EXAMPLE)
        a.add_argument("--base-path", required=True, help="table base path")
        if needs_instant is not None:
            a.add_argument("--instant-time", required=needs_instant, help="the commit / savepoint instant")
        if name == "create":
            a.add_argument("--user", help="recorded as savepointedBy (default: the OS user)")
            a.add_argument("--comments", default="", help="why this savepoint exists")
        a.set_defaults(run=run_savepoint_command)


def run_clean_command(args: argparse.Namespace) -> int:
    from hudi_engine.api import HoodieTable, run_clean

    done = run_clean(HoodieTable.load(args.base_path), parse_conf(args.hoodie_conf), force=True)
    print(f"completed clean {', '.join(done)}" if done else
          "nothing to clean: every file version is within retention, savepointed or in use")
    return 0


def run_archive_command(args: argparse.Namespace) -> int:
    from hudi_engine.api import HoodieTable, archive

    done = archive(HoodieTable.load(args.base_path), parse_conf(args.hoodie_conf))
    print(f"archived {len(done)} instants ({done[0].timestamp}..{done[-1].timestamp})" if done else
          "nothing to archive: the active timeline is within hoodie.keep.max.commits, or savepoints, "
          "pending instants or the cleaner's retention hold it")
    return 0


def run_savepoint_command(args: argparse.Namespace) -> int:
    from hudi_engine import api as sp
    from hudi_engine.api import HoodieTable

    table = HoodieTable.load(args.base_path)
    if args.action == "create":
        done = sp.create_savepoint(table, args.instant_time, args.user, args.comments)
        print(f"savepointed {done.timestamp}")
    elif args.action == "list":
        found = sp.list_savepoints(table)
        print("INSTANT            BY        AT                   FILES  COMMENTS")
        for s in found:
            at = _dt.datetime.fromtimestamp(s.savepointed_at).strftime("%Y-%m-%d %H:%M:%S")
            print(f"{s.instant:<18} {s.savepointed_by:<9} {at:<20} {s.files:>5}  {s.comments}")
        if not found:
            print("(no savepoints)")
    elif args.action == "delete":
        sp.delete_savepoint(table, args.instant_time)
        print(f"deleted savepoint {args.instant_time}")
    else:
        done = sp.restore_to_savepoint(table, args.instant_time)
        print(f"restored to {args.instant_time} (restore instant {done.timestamp})")
    return 0
