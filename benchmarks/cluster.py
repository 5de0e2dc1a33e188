"""Clustering benchmark: rows/s of clustering against Spark sorting and writing the same rows, and a
selective filter before and after z-order (and linear) clustering.

    .venv/bin/python -m benchmarks.cluster              # 2M rows (``make bench-cluster``)
    .venv/bin/python -m benchmarks.cluster --quick      # 200k rows: a smoke test

A copy-on-write table of N rows (4 partitions; columns x and y uniform in 0..999,999 and
independent, plus 6 payload columns) is written in 8 insert commits with small-file handling off,
so every partition holds 8 small files in random order of x and y. It is copied three times outside
the clock, then:

* ``linear``: clustering sorted by x (``hoodie.layout.optimize.strategy=linear``);
* ``z-order``: clustering by the z-order curve of (x, y);
* ``baseline``: Spark reads the same files, range-partitions and sorts them by x and writes plain
  parquet (``repartitionByRange`` + ``sortWithinPartitions`` + ``df.write.parquet``): the work a
  clustering does, without Hudi's bookkeeping.

Every clustering plans 8 files per partition (the target file size is an eighth of a partition).
Then the queries ``x < 50,000 AND y < 50,000`` (0.25% of the rows) and ``y < 50,000`` (5%) run
on each table through ``hudi_engine.read`` (Spark's parquet reader, which skips row groups and
files by their min/max statistics): how many base files' statistics admit them, and the best of 3
query times. Linear order on x helps filters on x only; z-order helps either column. Checked
after the clock stops: every table reads back N rows and the same query answer.
Results go to stdout and the ``cluster`` section of ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from .run import _log, publish, timed

PARTITIONS, BATCHES, OUTPUTS = 4, 8, 8
BOX = 50_000
OPTIONS = {"hoodie.table.name": "bench_cluster", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.datasource.write.operation": "insert", "hoodie.parquet.small.file.limit": "0",
           "hoodie.clean.automatic": "false", "hoodie.parquet.compression.codec": "snappy"}


def build(spark, path: str, rows: int) -> None:
    from hudi_engine import write

    per_batch = rows // BATCHES
    for b in range(BATCHES):
        df = spark.range(b * per_batch, (b + 1) * per_batch).selectExpr(
            "cast(id as string) as id", f"cast(id % {PARTITIONS} as string) as part", "id as ts",
            "cast(pmod(xxhash64(id, 1), 1000000) as int) as x", "cast(pmod(xxhash64(id, 2), 1000000) as int) as y",
            "sha2(cast(id as string), 256) as payload", "id * 0.5 as amount", "cast(id % 97 as int) as kind",
            "concat('city-', cast(id % 500 as string)) as city", "current_date() as day", "id % 3 = 0 as flag")
        write(df, path, OPTIONS)
        _log(f"insert {b + 1}/{BATCHES}")


def base_files(path: str) -> list[str]:
    from hudi_engine.table.meta_client import HoodieTable

    table = HoodieTable.load(path)
    return [table.storage.full(s.base_file.path) for s in table.fs_view().latest_file_slices()]


QUERIES = {"x, y": ("x", "y"), "y only": ("y",)}


def files_admitting(files: list[str], columns: tuple[str, ...]) -> int:
    """Base files whose min/max statistics admit ``column < BOX`` for every column (what data
    skipping would read)."""
    count = 0
    for f in files:
        meta = pq.ParquetFile(f).metadata
        names = meta.schema.to_arrow_schema().names
        for g in range(meta.num_row_groups):
            if all(meta.row_group(g).column(names.index(c)).statistics.min < BOX for c in columns):
                count += 1
                break
    return count


def query(spark, path: str, columns: tuple[str, ...]) -> tuple[float, int]:
    from hudi_engine import read

    best, answer = float("inf"), -1
    for _ in range(3):
        t0 = time.perf_counter()
        answer = read(spark, path).filter(" AND ".join(f"{c} < {BOX}" for c in columns)).count()
        best = min(best, time.perf_counter() - t0)
    return best, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="200k rows")
    parser.add_argument("--rows", type=int, default=None, help="rows in the table (default 2,000,000)")
    args = parser.parse_args()
    rows = args.rows or (200_000 if args.quick else 2_000_000)
    from hudi_engine import read
    from hudi_engine.services.clustering import run_clusterings, schedule_clustering
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable

    spark = local_spark("bench-cluster")
    began = dt.datetime.now(dt.timezone.utc)
    work = tempfile.mkdtemp(prefix="bench-cluster-")
    try:
        source = f"{work}/table"
        started = time.perf_counter()
        build(spark, source, rows)
        _log(f"built {rows:,} rows in {time.perf_counter() - started:.1f}s")
        files = base_files(source)
        by_partition: dict[str, int] = {}
        for f in files:
            by_partition[Path(f).parent.name] = by_partition.get(Path(f).parent.name, 0) + Path(f).stat().st_size
        target = max(by_partition.values()) // OUTPUTS + 1
        for name in ("linear", "z-order"):
            shutil.copytree(source, f"{work}/{name}")

        def cluster(name: str, columns: str):
            opts = {"hoodie.clustering.plan.strategy.sort.columns": columns, "hoodie.layout.optimize.strategy": name,
                    "hoodie.clustering.plan.strategy.target.file.max.bytes": str(target)}
            schedule_clustering(HoodieTable.load(f"{work}/{name}"), opts)
            run_clusterings(spark, HoodieTable.load(f"{work}/{name}"), options=opts)

        phases = {"linear": timed("linear (sort by x)", rows, lambda: cluster("linear", "x")),
                  "z-order": timed("z-order (x, y)", rows, lambda: cluster("z-order", "x,y"))}

        def baseline():
            df = spark.read.parquet(*files)
            (df.repartitionByRange(PARTITIONS * OUTPUTS, "part", "x").sortWithinPartitions("part", "x")
             .write.mode("overwrite").parquet(f"{work}/baseline"))
        phases["baseline"] = timed("baseline (Spark sort + parquet write)", rows, baseline)

        queries = {}
        for name, path in (("as written (8 inserts)", source), ("linear by x", f"{work}/linear"),
                           ("z-order (x, y)", f"{work}/z-order")):
            table_files = base_files(path)
            for q, columns in QUERIES.items():
                seconds, answer = query(spark, path, columns)
                queries[(q, name)] = (seconds, answer, files_admitting(table_files, columns), len(table_files))
            assert read(spark, path).count() == rows, name
        for q in QUERIES:
            assert len({v[1] for k, v in queries.items() if k[0] == q}) == 1, queries
        for name in ("linear", "z-order"):
            assert len(base_files(f"{work}/{name}")) == PARTITIONS * OUTPUTS, name

        base = phases["baseline"]
        lines = [
            f"Clustering {rows:,} rows: {PARTITIONS} partitions x {BATCHES} small files each, rewritten into "
            f"{OUTPUTS} files per partition{' — SMALL SCALE (--quick)' if args.quick else ''}.",
            "",
            "| phase | seconds | rows/s | vs baseline | peak RSS MiB |",
            "|---|---:|---:|---:|---:|",
        ]
        for p in phases.values():
            lines.append(f"| {p.name} | {p.seconds:.2f} | {p.rows_per_s:,.0f} | {p.seconds / base.seconds:.2f}x | "
                         f"{p.peak_mib:,.0f} |")
        lines += [
            "",
            f"Selective filters through `hudi_engine.read`, best of 3: `x < {BOX:,} AND y < {BOX:,}` and "
            f"`y < {BOX:,}` alone:",
            "",
            "| filter | layout | rows | files whose min/max admit it | query seconds | vs as written |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for (q, name), (seconds, answer, admitted, total) in queries.items():
            first = queries[(q, "as written (8 inserts)")][0]
            lines.append(f"| {q} | {name} | {answer:,} | {admitted} of {total} | {seconds:.2f} | "
                         f"{seconds / first:.2f}x |")
        lines += [
            "",
            "Peak RSS is the whole process tree (Spark's JVM included). The baseline is Spark's own "
            "range partitioning, sort and parquet write of the same rows (no curve, no Hudi metadata, "
            "no commit). Query time falls with the files and row groups Spark's parquet reader can skip "
            "by their statistics; Hudi's column-stats index (the metadata table) would skip whole files "
            "before opening them.",
        ]
        command = ".venv/bin/python -m benchmarks.cluster" + (" --quick" if args.quick else "")
        publish("cluster", "Clustering (`make bench-cluster`)", lines, command, began)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
