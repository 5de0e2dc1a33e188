"""``hudictl quickstart``: the three-commit example on a local table, every query printed, then the same
table read by hudi-rs (Apache Hudi's own Rust reader). On merge-on-read it also shows the
read-optimized view, unmerged incremental rows, and the table after compaction."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

EXAMPLE = """examples:
  hudictl quickstart --path ./demo-lakehouse/quickstart/fruit_basket
  hudictl quickstart --table-type MERGE_ON_READ     # log files, read-optimized queries, compaction
"""
SCHEMA = "name string, fruit string, region string, ts long"
OPTIONS = {
    "hoodie.table.name": "fruit_basket",
    "hoodie.datasource.write.recordkey.field": "name",
    "hoodie.datasource.write.partitionpath.field": "region",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
}


def add_parser(sub) -> None:
    p = sub.add_parser("quickstart", help="three commits to one local table, every query printed",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--path", default="demo-lakehouse/quickstart/fruit_basket", help="table base path")
    p.add_argument("--keep", action="store_true", help="keep an existing table instead of starting over")
    p.add_argument("--table-type", choices=("COPY_ON_WRITE", "MERGE_ON_READ"), default="COPY_ON_WRITE",
                   help="hoodie.datasource.write.table.type of the demo table")
    p.set_defaults(run=run)


def _show(title: str, rows: list[tuple]) -> None:
    print(f"\n== {title}")
    for row in sorted(rows):
        print("   " + "  ".join(str(v) for v in row))
    if not rows:
        print("   (no rows)")


def _merge_on_read(spark, path: str, q) -> None:
    from hudi_engine.api import HoodieTable, run_compactions, schedule_compaction

    _show("read optimized (base files only, as of the last compaction)",
          q(**{"hoodie.datasource.query.type": "read_optimized"}))
    _show("incremental from 0, hoodie.datasource.merge.type=skip_merge (log rows as written)",
          q(**{"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0",
               "hoodie.datasource.merge.type": "skip_merge"}))
    planned = schedule_compaction(HoodieTable.load(path), force=True)
    run_compactions(spark, HoodieTable.load(path))
    print(f"\ncompaction {planned.timestamp}: log files merged into new base files")
    _show("read optimized after compaction", q(**{"hoodie.datasource.query.type": "read_optimized"}))


def run(args: argparse.Namespace) -> int:
    from hudi_engine.api import COMMIT_TIME, read, write
    from hudi_engine.spark import local_spark

    path = str(Path(args.path).resolve())
    if not args.keep:
        shutil.rmtree(path, ignore_errors=True)
    spark = local_spark("hudictl-quickstart")
    steps = [
        ("insert jack/apple, sarah/orange, john/pineapple", "insert",
         [("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1), ("john", "pineapple", "eu", 1)]),
        ("update jack to banana", "upsert", [("jack", "banana", "eu", 2)]),
        ("delete john", "delete", [("john", "pineapple", "eu", 3)]),
    ]
    instants = []
    for label, op, data in steps:
        instant = write(spark.createDataFrame(data, SCHEMA), path,
                        {**OPTIONS, "hoodie.datasource.write.operation": op,
                         "hoodie.datasource.write.table.type": args.table_type})
        instants.append(instant)
        print(f"commit {instant}: {label}")
    c1, c2, c3 = instants

    def q(**opts):
        return [(r["name"], r["fruit"], r[COMMIT_TIME])
                for r in read(spark, path, opts).collect()]

    incr = {"hoodie.datasource.query.type": "incremental"}
    _show("snapshot", q())
    _show(f"time travel as.of.instant={c2}", q(**{"as.of.instant": c2}))
    _show("incremental from 0", q(**incr, **{"hoodie.datasource.read.begin.instanttime": "0"}))
    _show(f"incremental over the first commit (0, {c1}]",
          q(**incr, **{"hoodie.datasource.read.begin.instanttime": "0",
                       "hoodie.datasource.read.end.instanttime": c1}))
    _show(f"incremental over commits 2..3 ({c1}, {c3}]",
          q(**incr, **{"hoodie.datasource.read.begin.instanttime": c1,
                       "hoodie.datasource.read.end.instanttime": c3}))
    if args.table_type == "MERGE_ON_READ":
        _merge_on_read(spark, path, q)
    spark.stop()

    import pyarrow as pa
    from hudi import HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(path).build()
    snapshot = pa.Table.from_batches(table.read(HudiReadOptions()))
    _show("hudi-rs (Apache Hudi's Rust reader) snapshot of the same table",
          [(r["name"], r["fruit"], r[COMMIT_TIME]) for r in snapshot.to_pylist()])
    print(f"\nTable at {path}; its timeline is in {path}/.hoodie")
    return 0
