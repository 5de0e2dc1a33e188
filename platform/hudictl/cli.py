"""``hudictl``: run the lakehouse locally and look at tables."""
from __future__ import annotations

import argparse
import sys

from . import (clean, cluster, compact, demo, hive_sync, platform_chart, quickstart, render, run, spark_connect, status,
               table)

EPILOG = """examples:
  hudictl demo                         # the retail lakehouse: PostgreSQL CDC to bronze, silver, gold
  hudictl quickstart                   # three commits into one table, every query printed
  hudictl compact --base-path ./lake/trips --mode scheduleAndExecute
  hudictl cluster --base-path ./lake/trips --hoodie-conf hoodie.clustering.plan.strategy.sort.columns=city
  hudictl clean --base-path ./lake/trips --hoodie-conf hoodie.cleaner.commits.retained=5
  hudictl archive --base-path ./lake/trips
  hudictl savepoint create --base-path ./lake/trips     # then: savepoint list|restore|delete
  hudictl hive-sync --base-path ./lake/trips --metastore-uris thrift://localhost:9083
  hudictl render -f orders-table.yaml -f orders-pipeline.yaml | kubectl apply -f -
  hudictl run -f orders-table.yaml -f orders-pipeline.yaml --once --secrets-dir ./secrets
  hudictl status -f orders-table.yaml -f orders-pipeline.yaml
  hudictl table timeline --base-path ./lake/orders --limit 10
  hudictl spark-connect --port 15002                    # Hudi's SQL for Spark Connect clients
  hudictl platform install --set global.storage.bucket=my-lakehouse     # the Helm chart, via pyhelm3
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hudictl", description=__doc__.strip("` \n"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo.add_parser(sub)
    clean.add_parser(sub)
    compact.add_parser(sub)
    cluster.add_parser(sub)
    hive_sync.add_parser(sub)
    platform_chart.add_parser(sub)
    quickstart.add_parser(sub)
    render.add_parser(sub)
    run.add_parser(sub)
    spark_connect.add_parser(sub)
    status.add_parser(sub)
    table.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from hudi_engine.logs import show_progress

    show_progress()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
