"""Cleaning benchmark: the time to clean old file versions against deleting the same files plainly.

    .venv/bin/python -m benchmarks.clean              # 1,000 cleanable file versions (``make bench-clean``)
    .venv/bin/python -m benchmarks.clean --quick      # 100: a smoke test

A copy-on-write table with G partitions (one file group each) gets C commits that rewrite every
file group, so it holds G x C file versions; with ``hoodie.cleaner.commits.retained=1`` a clean
keeps two per group and deletes the rest (G x (C - 2) = 1,000 by default). The table is built once
with automatic cleaning off, then copied twice outside the clock:

* ``clean``: ``run_clean`` on copy A (listing, planning, ``.clean.requested``, deletes on Spark
  executors only when the plan holds very many files, else on threads, ``.clean``);
* ``baseline``: ``pyarrow.fs`` deletes of exactly the files that clean deleted, on copy B, in this
  process: the floor any cleaner pays.

Both are checked after the clock stops (the same files are gone, the table reads the latest rows).
Results go to stdout and the ``clean`` section of ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import tempfile
import time

import pyarrow.fs as pafs

from .run import _log, publish, timed

OPTIONS = {"hoodie.table.name": "bench_clean", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "part",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false"}


def build(spark, path: str, groups: int, commits: int, rows_per_group: int) -> None:
    from hudi_engine import write
    from pyspark.sql import functions as F

    for c in range(commits):
        df = (spark.range(groups * rows_per_group)
              .select(F.col("id"), (F.col("id") % groups).cast("string").alias("part"),
                      F.lit(c).cast("long").alias("ts")))
        write(df, path, {**OPTIONS, "hoodie.datasource.write.operation": "insert" if c == 0 else "upsert"})
        _log(f"commit {c + 1}/{commits}")


def files(path: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), path) for d, _, names in os.walk(path)
            if ".hoodie" not in d for f in names if f.endswith(".parquet")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 cleanable versions")
    args = parser.parse_args()
    groups, commits = (25, 6) if args.quick else (100, 12)
    from hudi_engine import read
    from hudi_engine.services.clean import run_clean
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable

    spark = local_spark("bench-clean")
    began = dt.datetime.now(dt.timezone.utc)
    work = tempfile.mkdtemp(prefix="bench-clean-")
    try:
        source = f"{work}/table"
        started = time.perf_counter()
        build(spark, source, groups, commits, 20)
        _log(f"built {groups * commits} file versions in {time.perf_counter() - started:.1f}s")
        copy_a, copy_b = f"{work}/a", f"{work}/b"
        shutil.copytree(source, copy_a)
        shutil.copytree(source, copy_b)
        before = files(copy_a)
        clean = timed("clean", 0, lambda: run_clean(
            HoodieTable.load(copy_a), {"hoodie.cleaner.commits.retained": "1"}, spark, force=True))
        gone = sorted(before - files(copy_a))
        fs = pafs.LocalFileSystem()
        baseline = timed("baseline", 0, lambda: [fs.delete_file(f"{copy_b}/{p}") for p in gone])
        expected = groups * (commits - 2)
        assert len(gone) == expected, (len(gone), expected)
        assert files(copy_b) == files(copy_a)
        assert read(spark, copy_a).count() == groups * 20
        lines = [
            f"Cleaning {len(gone):,} file versions ({groups} file groups x {commits} commits, "
            f"KEEP_LATEST_COMMITS retained=1){' — SMALL SCALE (--quick)' if args.quick else ''}.",
            "",
            "| phase | seconds | files/s | peak RSS MiB |",
            "|---|---|---|---|",
            f"| clean (plan + .clean.requested + deletes + .clean) | {clean.seconds:.3f} | "
            f"{len(gone) / clean.seconds:,.0f} | {clean.peak_mib:.0f} |",
            f"| baseline: pyarrow.fs deletes of the same files | {baseline.seconds:.3f} | "
            f"{len(gone) / baseline.seconds:,.0f} | {baseline.peak_mib:.0f} |",
            "",
            f"Ratio clean / baseline: **{clean.seconds / baseline.seconds:.1f}x**. Peak RSS is the whole "
            "process tree (Spark's JVM included). Plans of 20,000 files or more delete on Spark "
            "executors, smaller ones on 16 threads of the driver process; the baseline deletes one by "
            "one in-process.",
        ]
        command = ".venv/bin/python -m benchmarks.clean" + (" --quick" if args.quick else "")
        publish("clean", "Cleaning (`make bench-clean`)", lines, command, began)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
