"""``hudictl cluster``: the standalone clustering job, with the modes of Hudi's HoodieClusteringJob
(schedule, execute, scheduleAndExecute): small files rewritten into larger ones, ordered by the
sort columns (linear, z-order or hilbert)."""
from __future__ import annotations

import argparse

from .compact import add_service_parser, schedule_and_execute

EXAMPLE = """examples:
  hudictl cluster --base-path ./lake/trips                          # plan and run now
  hudictl cluster --base-path s3://lake/trips --mode schedule \\
      --hoodie-conf hoodie.clustering.plan.strategy.sort.columns=city,ts \\
      --hoodie-conf hoodie.layout.optimize.strategy=z-order
  hudictl cluster --base-path ./lake/trips --mode execute --instant-time 20250101093000123
"""


def add_parser(sub) -> None:
    add_service_parser(sub, "cluster", "schedule and/or run clustering of a table's small files", __doc__,
                       EXAMPLE, run, "plan even if hoodie.clustering.inline/async.max.commits commits "
                                     "have not passed since the last clustering")


def run(args: argparse.Namespace) -> int:
    from hudi_engine.api import pending_clusterings, run_clusterings, schedule_clustering

    return schedule_and_execute(args, "clustering", schedule_clustering, pending_clusterings, run_clusterings,
                                "not due, or no small files to rewrite")
