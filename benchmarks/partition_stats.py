"""Partition stats and expression index benchmark: a selective filter on a non-partition column, on
two copies of one version 9 copy-on-write table, one keeping column_stats only and one keeping
column_stats and partition_stats, measured in the same run (the data skipping pair of
``benchmarks.lookup``, a partition level up); then a filter on an expression of that column
(``from_unixtime(ts, 'yyyy-MM-dd HH')``) with and without an expression index on it.

    .venv/bin/python -m benchmarks.partition_stats                 # 2M rows
    .venv/bin/python -m benchmarks.partition_stats --rows 200000   # a smoke test

Setup: N rows (``benchmarks.index``'s rows) partitioned by ``day`` (20 days of consecutive ids, so
``ts`` ranges follow partitions) go in by ``bulk_insert`` twice. Timed (best of 3): planning alone
(``plan_read``: what partitions and files the metadata table rules out) and the whole query
through ``read(..., filters=...)`` up to the collected rows, for ``ts`` in a 0.1% range: with
partition stats, with column stats only, and with data skipping off.

Then ``CREATE INDEX`` of an expression index (column_stats of ``from_unixtime(ts, 'yyyy-MM-dd HH')``)
on the partition-stats copy (timed), and the same two timings for one hour's rows on both copies
(the other copy has no such index, so nothing prunes the expression).

Results go to stdout and the ``partition_stats`` section of ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile

from .index import BASE, rows
from .run import _log, best_of, check, publish, timed

DEFAULT_ROWS = 2_000_000
REPEAT = 3
DAYS = 20
COLUMN_STATS = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
                "hoodie.metadata.index.column.stats.column.list": "k,amount,ts"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="table size (default 2M)")
    args = parser.parse_args()
    n = args.rows
    from hudi_engine import read, write
    from hudi_engine.read.plan import plan_read
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable

    spark = local_spark("bench-partition-stats", memory="4g")
    began = dt.datetime.now(dt.timezone.utc)
    work = tempfile.mkdtemp(prefix="bench-pstats-")
    try:
        source = rows(spark, n).selectExpr("*", f"cast(floor(ts * {DAYS} / {n}) as string) as day")
        opts = {**BASE, **COLUMN_STATS, "hoodie.datasource.write.partitionpath.field": "day",
                "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.write.table.version": "9",
                "hoodie.datasource.write.operation": "bulk_insert"}
        write(source.limit(1000), f"{work}/warm-up", opts)     # neither timed write pays Spark's warm-up
        tables = {"column_stats": f"{work}/colstats", "partition_stats": f"{work}/pstats"}
        writes = {name: timed(f"{n:,} rows, bulk_insert keeping {name}", n, lambda path=path, name=name: write(
            source, path, {**opts, "hoodie.metadata.index.partition.stats.enable": str(name == "partition_stats")}))
            for name, path in tables.items()}
        lo, hi = n // 2, n // 2 + n // 1000
        filters = [("ts", ">=", lo), ("ts", "<", hi)]
        cases = {"with partition stats": (tables["partition_stats"], {}),
                 "column stats only": (tables["column_stats"], {}),
                 "data skipping off": (tables["partition_stats"], {"hoodie.enable.data.skipping": "false"})}
        results = {}
        for label, (path, options) in cases.items():
            table = HoodieTable.load(path)
            planned = [timed(f"plan {label}", n, lambda t=table, o=options: plan_read(t, o, filters))
                       for _ in range(REPEAT)]
            plan = plan_read(table, options, filters)
            found = {}

            def query(path=path, options=options, found=found):
                found["rows"] = len(read(spark, path, options, filters=filters).collect())
            queried = [timed(f"query {label}", n, query) for _ in range(REPEAT)]
            results[label] = (best_of(planned), best_of(queried), found["rows"],
                              len({s.partition for s in plan.slices}), len(plan.slices))
        for label, (_, _, returned, _, _) in results.items():
            check(returned == hi - lo, f"{label} returns {returned:,} rows, not {hi - lo:,}")
        every = len(plan_read(HoodieTable.load(tables["partition_stats"])).slices)
        base = results["column stats only"]
        lines = [f"{n:,} rows in {DAYS} partitions, {every} base files (COPY_ON_WRITE, table version 9, "
                 f"bulk_insert), filter `ts >= {lo} AND ts < {hi}` (ts is not the partition column). "
                 f"Best of {REPEAT}.", "",
                 "| read | partitions read | file slices read | plan seconds | vs column stats only | "
                 "query seconds | vs column stats only |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        for label, (plan, query, _, partitions, slices) in results.items():
            lines.append(f"| {label} | {partitions} of {DAYS} | {slices} of {every} | {plan.seconds:.3f} | "
                         f"{plan.seconds / base[0].seconds:.2f}x | {query.seconds:.2f} | "
                         f"{query.seconds / base[1].seconds:.2f}x |")
        lines += expression_index_rows(spark, n, tables, every)
        lines += ["", "Keeping partition stats costs the write:", "",
                  "| write | seconds | vs column stats only |", "|---|---:|---:|"]
        lines += [f"| bulk_insert keeping {name} | {p.seconds:.2f} | "
                  f"{p.seconds / writes['column_stats'].seconds:.2f}x |" for name, p in writes.items()]
        publish("partition_stats", "Partition stats", lines,
                f".venv/bin/python -m benchmarks.partition_stats --rows {n}", began)
    finally:
        _log("cleaning up")
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


def expression_index_rows(spark, n: int, tables: dict[str, str], every: int) -> list[str]:
    """Build an expression index on one copy, then time one hour's rows by the expression on both."""
    from hudi_engine import read
    from hudi_engine.api import create_index
    from hudi_engine.read.plan import plan_read
    from hudi_engine.table.meta_client import HoodieTable

    indexed, plain = tables["partition_stats"], tables["column_stats"]
    built = timed("create the expression index", n, lambda: create_index(
        spark, indexed, "idx_hour", "ts", "column_stats",
        index_options={"expr": "from_unixtime", "format": "yyyy-MM-dd HH"}))
    hour = spark.sql(f"SELECT from_unixtime({n // 2}, 'yyyy-MM-dd HH')").first()[0]
    filters = [("from_unixtime(ts, 'yyyy-MM-dd HH')", "=", hour)]
    expected = spark.range(n).where(f"from_unixtime(id, 'yyyy-MM-dd HH') = '{hour}'").count()
    results = {}
    for label, path in (("with the expression index", indexed), ("without it", plain)):
        table = HoodieTable.load(path)
        planned = [timed(f"plan {label}", n, lambda t=table: plan_read(t, None, filters)) for _ in range(REPEAT)]
        found = {}

        def query(path=path, found=found):
            found["rows"] = len(read(spark, path, filters=filters).collect())
        queried = [timed(f"query {label}", n, query) for _ in range(REPEAT)]
        check(found["rows"] == expected, f"{label} returns {found['rows']:,} rows, not {expected:,}")
        results[label] = (best_of(planned), best_of(queried), len(plan_read(table, None, filters).slices))
    base = results["without it"]
    lines = ["", f"Filter `from_unixtime(ts, 'yyyy-MM-dd HH') = '{hour}'` ({expected:,} rows); "
             f"building the expression index took {built.seconds:.2f} s:", "",
             "| read | file slices read | plan seconds | query seconds | vs without it |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {label} | {slices} of {every} | {plan.seconds:.3f} | {query.seconds:.2f} | "
              f"{query.seconds / base[1].seconds:.2f}x |" for label, (plan, query, slices) in results.items()]
    return lines


if __name__ == "__main__":
    main()
