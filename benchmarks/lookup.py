"""Lookup benchmark: a point lookup by record key with and without the record index, and a
selective filter with and without data skipping (column_stats), on one copy-on-write table, each
pair measured in the same run.

    .venv/bin/python -m benchmarks.lookup                  # 5M rows (``make bench-lookup``)
    .venv/bin/python -m benchmarks.lookup --rows 20000000
    .venv/bin/python -m benchmarks.lookup --quick          # 500k rows: a smoke test

Setup (not timed): N rows (the index benchmark's rows: key ``k`` + 12-digit id, 10 partitions by a
hash of the id) go in by ``bulk_insert`` with the metadata table's column_stats and record index
on, so each file holds a contiguous run of ids; then the metadata table is compacted, as it is
every ``hoodie.metadata.compact.max.delta.commits`` commits.

Timed (best of 3, each a whole query through ``read(..., filters=...)`` up to the collected rows):

- ``k = <one key>``: with the record index the query reads the one file group the index names;
  without it (``hoodie.metadata.enable=false`` on the read) every file is scanned with the filter
  pushed into Spark's Parquet reader.
- ``amount`` in a 0.1% range: with data skipping only files whose column_stats range admits the
  range are read; without (``hoodie.enable.data.skipping=false``) every file is scanned.

Results go to stdout and the ``lookup`` section of ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile

from .index import BASE, rows
from .run import _log, best_of, publish, timed

DEFAULT_ROWS = 5_000_000
REPEAT = 3
INDEXES = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.metadata.record.index.enable": "true",
           "hoodie.metadata.index.column.stats.column.list": "k,amount,ts"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="table size (default 5M)")
    parser.add_argument("--quick", action="store_true", help="500k rows")
    args = parser.parse_args()
    n = 500_000 if args.quick else args.rows
    from hudi_engine import read, write
    from hudi_engine.metadata_table.compaction import compact
    from hudi_engine.metadata_table.layout import COMPACTION_SUFFIX, open_mdt
    from hudi_engine.read.plan import plan_read
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable

    spark = local_spark("bench-lookup", memory="6g")
    began = dt.datetime.now(dt.timezone.utc)
    work = tempfile.mkdtemp(prefix="bench-lookup-")
    path = f"{work}/table"
    try:
        _log(f"== {n:,} rows: building (bulk_insert with column_stats and the record index)")
        opts = {**BASE, **INDEXES, "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
                "hoodie.datasource.write.operation": "bulk_insert"}
        write(rows(spark, n), path, opts)
        table = HoodieTable.load(path)
        mdt = open_mdt(table)
        newest = mdt.timeline.completed_writes()[-1].timestamp
        compact(mdt, table, newest + COMPACTION_SUFFIX, spark)
        table = HoodieTable.load(path)
        files = len(plan_read(table).slices)
        key = f"k{int(n * 0.61):012d}"
        lo, hi = n * 0.5 * 0.25, (n * 0.5 + n // 1000) * 0.25
        queries = {
            "point": ([("k", "=", key)], {"hoodie.metadata.enable": "false"}, "record index"),
            "range": ([("amount", ">=", lo), ("amount", "<", hi)], {"hoodie.enable.data.skipping": "false"},
                      "data skipping"),
        }
        phases, answers = {}, {}
        for name, (filters, off, what) in queries.items():
            for label, options in ((f"with {what}", {}), (f"without {what}", off)):
                collected = {}

                def query(options=options, filters=filters, collected=collected):
                    collected["rows"] = len(read(spark, path, options, filters=filters).collect())
                runs = [timed(f"{n:,} rows, {name} lookup {label}", 1, query) for _ in range(REPEAT)]
                slices = len(plan_read(table, options, filters).slices)
                phases[(name, label)] = (best_of(runs), slices)
                answers[(name, label)] = collected["rows"]
        assert answers[("point", "with record index")] == answers[("point", "without record index")] == 1
        expected = n // 1000
        assert answers[("range", "with data skipping")] == answers[("range", "without data skipping")] == expected
        lines = [
            f"{n:,} rows in {files} base files (COPY_ON_WRITE, bulk_insert), metadata table with column_stats "
            f"and the record index, compacted{' — SMALL SCALE (--quick)' if args.quick else ''}. "
            f"Best of {REPEAT}; each query runs to the collected rows.",
            "",
            "| query | rows returned | file slices read | seconds | vs without | peak RSS MiB |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, (filters, off, what) in queries.items():
            base = phases[(name, f"without {what}")][0].seconds
            for label in (f"with {what}", f"without {what}"):
                p, slices = phases[(name, label)]
                shown = " AND ".join(f"{c} {op} {v}" for c, op, v in filters)
                lines.append(f"| `{shown}` {label} | {answers[(name, label)]:,} | {slices} of {files} | "
                             f"{p.seconds:.2f} | {p.seconds / base:.2f}x | {p.peak_mib:,.0f} |")
        lines += [
            "",
            "Without the metadata table's help every file is opened and Spark's Parquet reader applies "
            "the filter with its row-group statistics. With it, the driver reads the record-index file "
            "group the key hashes to (one HFile block) or the column_stats ranges of the filtered "
            "columns, and Spark reads only the file slices that can match. Peak RSS is the whole "
            "process tree (Spark's JVM included).",
        ]
        command = ".venv/bin/python -m benchmarks.lookup" + (" --quick" if args.quick else f" --rows {n}")
        publish("lookup", "Record-index lookups and data skipping (`make bench-lookup`)", lines, command, began)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
