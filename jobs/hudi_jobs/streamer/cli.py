"""The ``hudi-streamer`` command line: Hudi Streamer's flags, plus ``--job-config`` (the file the
operator generates) and ``--print-config``. Everything is checked before Spark starts; a bad
option exits with code 2 and a message naming it."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from hudi_engine.errors import HoodieConfigError

from .config import FIELDS, StreamerConfig, load_job_config, resolve, to_job_config
from .props import parse_assignments

PROG = "hudi-streamer"
DESCRIPTION = """\
Hudi Streamer for PySpark: fetch the next batch from a source (files, Kafka, Debezium, an upstream
Hudi table), transform it and write it into a Hudi table, storing the source checkpoint in the same
commit, so a failed or killed run resumes without losing or repeating records. Flags and options are
Apache Hudi's HoodieStreamer's. Options merge, lowest first: --props file, the job config's
hoodieConf, --hoodie-conf; flags override the job config's fields."""
EPILOG = """\
examples:
  # JSON files landing under s3://landing/orders into a merge-on-read table, through SQL
  hudi-streamer --table-type MERGE_ON_READ \\
    --target-base-path s3://lake/orders --target-table orders \\
    --source-class JsonDFSSource --source-ordering-field updated_at \\
    --props orders.properties \\
    --hoodie-conf hoodie.streamer.source.dfs.root=s3://landing/orders \\
    --transformer-class SqlQueryBasedTransformer \\
    --hoodie-conf "hoodie.streamer.transformer.sql=SELECT *, to_date(updated_at) AS day FROM <SRC>"

  # the same job from a job-config file (what the Kubernetes operator generates)
  hudi-streamer --job-config orders.yaml
  hudi-streamer --job-config orders.yaml --print-config     # resolved config, secrets masked
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise HoodieConfigError(f"{message} (see {PROG} --help)")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, allow_abbrev=False,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--job-config", metavar="FILE",
                   help="Job-config file (YAML or JSON) with these settings in camelCase; flags override it.")
    for f in FIELDS:
        names = (f.flag, *f.aliases)
        if f.kind is bool:
            p.add_argument(*names, dest=f.name, action="store_const", const=True, default=None, help=f.help)
        elif f.kind is list:
            p.add_argument(*names, dest=f.name, action="append", metavar="CLASS", help=f.help)
        else:
            metavar = "N" if f.kind is int else "FILE" if f.name == "props" else f.name.split("_")[-1].upper()
            p.add_argument(*names, dest=f.name, metavar=metavar, help=f.help)
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="An option (as in --props); repeat for more. Overrides --props and hoodieConf.")
    p.add_argument("--print-config", action="store_true",
                   help="Print the resolved config as a job-config JSON document (secrets masked) and exit.")
    return p


def build_config(argv: Sequence[str] | None = None) -> StreamerConfig:
    """The validated config of a command line."""
    return _config(parser().parse_args(argv))


def main(argv: Sequence[str] | None = None) -> int:
    from hudi_engine.logs import show_progress

    show_progress("hudi_jobs")
    try:
        args = parser().parse_args(argv)
        cfg = _config(args)
    except HoodieConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:            # --help
        return exc.code or 0
    if args.print_config:
        print(json.dumps(to_job_config(cfg), indent=2))
        return 0
    from .run import run_streamer
    return run_streamer(cfg)


def _config(args: argparse.Namespace) -> StreamerConfig:
    file_fields = load_job_config(args.job_config) if args.job_config else {}
    flag_fields = {f.name: getattr(args, f.name) for f in FIELDS if getattr(args, f.name) is not None}
    if args.hoodie_conf:
        flag_fields["hoodie_conf"] = parse_assignments(args.hoodie_conf, "--hoodie-conf")
    return resolve(file_fields, flag_fields)
