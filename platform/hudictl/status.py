"""``hudictl status -f FILE``: what the operator would report for the tables and pipelines in the
files, read from the tables' own timelines: last commit, pending and due table services, and where
each pipeline would resume. The same observation the operator writes into ``status``."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from .render import add_resource_arguments, load_resources, report

EXAMPLE = """examples:
  hudictl status -f operator/examples/orders-table.yaml -f operator/examples/orders-kafka-pipeline.yaml
  hudictl status -f lakehouse/ --json       # every *.yaml file in a folder
"""


def add_parser(sub) -> None:
    p = sub.add_parser("status", help="show the tables' and pipelines' state, read from the tables' timelines",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_resource_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of lines")
    p.set_defaults(run=run)


def concurrency_report(resources, table, settings) -> str:
    """How the table's writers share it, as planned (or why the plan refuses them)."""
    from hudi_operator.planner.resource_set import ResourceError
    try:
        return resources.plan_table(table, settings).concurrency.summary()
    except ResourceError as exc:
        return f"refused: {exc.path}: {exc.message}"


def table_report(table, now: dt.datetime, concurrency: str | None = None) -> dict:
    from hudi_engine.api import HoodieTable
    from hudi_operator.reconcile.table_status import compaction_trigger, observe
    base = table.spec.base_path
    row = {"kind": "HudiTable", "name": table.metadata.name, "basePath": base, "concurrency": concurrency}
    if not HoodieTable.exists(base):
        return {**row, "state": "no table yet (the first commit of a pipeline creates it)"}
    observation = observe(HoodieTable.load(base), compaction_trigger(table.spec), now)
    age = observation.commit_age_seconds(now)
    return {**row, "state": "ready", **observation.status(), "compactionDue": observation.compaction_due,
            "lastCommitAgeSeconds": round(age) if age is not None else None, "checkpoint": observation.checkpoint}


def pipeline_report(pipeline, tables: dict) -> dict:
    target = tables.get(pipeline.spec.table_ref.name)
    return {"kind": "HudiPipeline", "name": pipeline.metadata.name, "table": pipeline.spec.table_ref.name,
            "state": pipeline.spec.state, "source": pipeline.spec.source.type,
            "resumesFrom": (target or {}).get("checkpoint")}


def run(args: argparse.Namespace) -> int:
    from hudi_operator.planner.resource_set import ResourceError
    try:
        resources = load_resources(args)
    except ResourceError as exc:
        return report(exc)
    now = dt.datetime.now(dt.timezone.utc)
    from hudi_operator.planner import OperatorSettings
    settings = OperatorSettings(namespace=args.namespace)    # as the operator plans (the chart's default lock)
    tables = {t.metadata.name: table_report(t, now, concurrency_report(resources, t, settings))
              for t in resources.tables.values()}
    rows = [*tables.values(), *(pipeline_report(p, tables) for p in resources.pipelines_in_order())]
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    for row in rows:
        head = f"{row['kind']}/{row['name']}"
        details = ", ".join(f"{k}={v}" for k, v in row.items() if k not in ("kind", "name") and v is not None)
        print(f"{head}: {details}", file=sys.stdout)
    return 0
