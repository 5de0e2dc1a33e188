"""Lookup benchmark: a point lookup by record key with and without the record index, a point lookup
on a non-key column with and without a secondary index, and a selective filter with and without
data skipping (column_stats), on one copy-on-write table (version 9), each pair measured in the
same run.

    .venv/bin/python -m benchmarks.lookup                  # 5M rows (``make bench-lookup``)
    .venv/bin/python -m benchmarks.lookup --rows 20000000
    .venv/bin/python -m benchmarks.lookup --quick          # 500k rows: a smoke test

Setup: N rows (the index benchmark's rows: key ``k`` + 12-digit id, 10 partitions by a hash of the
id) go in by ``bulk_insert`` from 20 runs of consecutive ids (a file per run and partition, as
time-ordered data lands) once with the
metadata table off (timed: the baseline write) and once with its column_stats and record index on
(timed: what keeping them costs); then the metadata table is compacted (not timed), as it is every
``hoodie.metadata.compact.max.delta.commits`` commits. Last, ``CREATE INDEX idx_payload`` builds a
secondary index on ``payload`` (an md5, unique per row; timed).

Timed (best of 3, each a whole query through ``read(..., filters=...)`` up to the collected rows):

- ``k = <one key>``: with the record index the query reads the one file group the index names;
  without it (``hoodie.metadata.enable=false`` on the read) every file is scanned with the filter
  pushed into Spark's Parquet reader.
- ``payload = <one md5>``: with the secondary index the driver reads the index file group the value
  hashes to, then the record index, and the query reads one file group; without it every file is
  scanned (row-group statistics cannot rule out a random md5).
- ``amount`` in a 0.1% range: with data skipping only files whose column_stats range admits the
  range are read; without (``hoodie.enable.data.skipping=false``) every file is scanned.

Last, an upsert of 1% of the keys into copies of the table, tagged by SIMPLE and by RECORD_INDEX.

Results go to stdout and the ``lookup`` section of ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import shutil
import tempfile

from .index import BASE, rows, updates
from .run import _log, best_of, publish, timed

DEFAULT_ROWS = 5_000_000
REPEAT = 3
RUNS = 20            # runs of consecutive ids: files per partition
INDEXES = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.metadata.record.index.enable": "true",
           "hoodie.metadata.index.column.stats.column.list": "k,amount,ts",
           "hoodie.write.table.version": "9"}       # secondary indexes need version 8+


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="table size (default 5M)")
    parser.add_argument("--quick", action="store_true", help="500k rows")
    args = parser.parse_args()
    n = 500_000 if args.quick else args.rows
    from hudi_engine import read, write
    from hudi_engine.api import create_index
    from hudi_engine.metadata_table.layout import COMPACTION_SUFFIX, open_mdt
    from hudi_engine.read.plan import plan_read
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable
    from hudi_engine.transaction.metadata.compaction import compact

    spark = local_spark("bench-lookup", memory="6g")
    began = dt.datetime.now(dt.timezone.utc)
    work = tempfile.mkdtemp(prefix="bench-lookup-")
    path = f"{work}/table"
    try:
        _log(f"== {n:,} rows: bulk_insert without the metadata table, then with column_stats and the record index")
        opts = {**BASE, "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
                "hoodie.datasource.write.operation": "bulk_insert"}
        source = rows(spark, n).repartitionByRange(RUNS, "ts")   # each task: one run of ids, a file per partition
        plain = timed(f"{n:,} rows, bulk_insert without the metadata table", n,
                      lambda: write(source, f"{work}/plain", {**opts, "hoodie.metadata.enable": "false"}))
        shutil.rmtree(f"{work}/plain")
        indexed = timed(f"{n:,} rows, bulk_insert keeping column_stats and the record index", n,
                        lambda: write(source, path, {**opts, **INDEXES}))
        table = HoodieTable.load(path)
        mdt = open_mdt(table)
        newest = mdt.timeline.completed_writes()[-1].timestamp
        compact(mdt, table, newest + COMPACTION_SUFFIX, spark)
        built = timed(f"{n:,} rows, CREATE INDEX on payload", n,
                      lambda: create_index(spark, path, "idx_payload", "payload"))
        table = HoodieTable.load(path)
        files = len(plan_read(table).slices)
        key = f"k{int(n * 0.61):012d}"
        digest = hashlib.md5(str(int(n * 0.37)).encode()).hexdigest()
        lo, hi = n * 0.5 * 0.25, (n * 0.5 + n // 1000) * 0.25
        queries = {
            "point": ([("k", "=", key)], {"hoodie.metadata.enable": "false"}, "record index"),
            "non-key point": ([("payload", "=", digest)], {"hoodie.metadata.enable": "false"}, "secondary index"),
            "range": ([("amount", ">=", lo), ("amount", "<", hi)], {"hoodie.enable.data.skipping": "false"},
                      "data skipping"),
        }
        phases, answers = {}, {}
        for name, (filters, off, what) in queries.items():
            for label, options in ((f"with {what}", {}), (f"without {what}", off)):
                collected = {}

                def query(options=options, filters=filters, collected=collected):
                    collected["rows"] = len(read(spark, path, options, filters=filters).collect())
                runs = [timed(f"{n:,} rows, {name} lookup {label}", n, query) for _ in range(REPEAT)]
                slices = len(plan_read(table, options, filters).slices)
                phases[(name, label)] = (best_of(runs), slices)
                answers[(name, label)] = collected["rows"]
        change = updates(spark, n).cache()
        n_updates = change.count()
        upserts = {}
        for index in ("SIMPLE", "RECORD_INDEX"):
            copy = f"{work}/upsert-{index}"
            shutil.copytree(path, copy)
            upserts[index] = timed(f"{n:,} rows, upsert {n_updates:,} with {index}", n_updates, lambda: write(
                change, copy, {**BASE, **INDEXES, "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
                               "hoodie.datasource.write.operation": "upsert", "hoodie.index.type": index}))
            done = read(spark, copy)
            assert done.count() == n and done.filter("status = 'amended'").count() == n_updates, index
            shutil.rmtree(copy)
        change.unpersist()
        assert answers[("point", "with record index")] == answers[("point", "without record index")] == 1
        assert answers[("non-key point", "with secondary index")] == answers[("non-key point", "without secondary index")] == 1
        expected = n // 1000
        assert answers[("range", "with data skipping")] == answers[("range", "without data skipping")] == expected
        lines = [
            f"{n:,} rows in {files} base files (COPY_ON_WRITE, bulk_insert of {RUNS} runs of consecutive ids), metadata table "
            f"with column_stats and the record index, compacted{' — SMALL SCALE (--quick)' if args.quick else ''}. "
            f"Queries: best of {REPEAT}, each to the collected rows; table rows/s = table rows / seconds.",
            "",
            "| query | rows returned | file slices read | seconds | table rows/s | vs without | peak RSS MiB |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, (filters, off, what) in queries.items():
            base = phases[(name, f"without {what}")][0].seconds
            for label in (f"with {what}", f"without {what}"):
                p, slices = phases[(name, label)]
                shown = " AND ".join(f"{c} {op} {v}" for c, op, v in filters)
                lines.append(f"| `{shown}` {label} | {answers[(name, label)]:,} | {slices} of {files} | "
                             f"{p.seconds:.2f} | {p.rows_per_s:,.0f} | {p.seconds / base:.2f}x | {p.peak_mib:,.0f} |")
        lines += [
            "",
            f"Upsert of 1% of the keys ({n_updates:,}: every fifth key of the newest 5%, as in the index benchmark) into "
            "copies of the same table, tagging with the record index against SIMPLE:",
            "",
            "| index | upsert seconds | updated rows/s | vs SIMPLE | peak RSS MiB |",
            "|---|---:|---:|---:|---:|",
        ] + [f"| {index} | {p.seconds:.2f} | {p.rows_per_s:,.0f} | {p.seconds / upserts['SIMPLE'].seconds:.2f}x | "
             f"{p.peak_mib:,.0f} |" for index, p in upserts.items()] + [
            "",
            "Keeping the indexes costs the write (the same bulk_insert, metadata table off as the baseline):",
            "",
            "| write | seconds | rows/s | vs without | peak RSS MiB |",
            "|---|---:|---:|---:|---:|",
            f"| bulk_insert, metadata table off | {plain.seconds:.2f} | {plain.rows_per_s:,.0f} | 1.00x | "
            f"{plain.peak_mib:,.0f} |",
            f"| bulk_insert keeping files, column_stats and record_index | {indexed.seconds:.2f} | "
            f"{indexed.rows_per_s:,.0f} | {indexed.seconds / plain.seconds:.2f}x | {indexed.peak_mib:,.0f} |",
            f"| CREATE INDEX idx_payload (secondary index on payload, built from the table) | {built.seconds:.2f} | "
            f"{built.rows_per_s:,.0f} | {built.seconds / plain.seconds:.2f}x | {built.peak_mib:,.0f} |",
            "",
            "Without the metadata table's help every file is opened and Spark's Parquet reader applies "
            "the filter with its row-group statistics. With it, the driver reads the record-index file "
            "group the key hashes to (one HFile block), the secondary-index file group the value hashes to "
            "then the record index, or the column_stats ranges of the filtered "
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
