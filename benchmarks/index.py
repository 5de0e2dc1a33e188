"""Index benchmark: an upsert of 1% of the keys into merge-on-read tables of 5M and 20M rows, with
each index type against the SIMPLE index in the same run.

    .venv/bin/python -m benchmarks.index                    # 5M and 20M rows (``make bench-index``)
    .venv/bin/python -m benchmarks.index --rows 5000000     # one size
    .venv/bin/python -m benchmarks.index --quick            # 500k rows: a smoke test

For each size N, in one SparkSession:

1. N rows (key ``k`` + 12-digit id, so keys grow with time as Hudi recommends; 10 partitions by
   a hash of the id; 6 payload columns) go into a MERGE_ON_READ table by ``bulk_insert`` (each
   file then holds a narrow key range); the BUCKET and CONSISTENT_HASHING tables (64 buckets per
   partition) are written by ``insert``, the RECORD_INDEX table by ``bulk_insert`` keeping its
   record index. Building is not timed.
2. The SIMPLE/BLOOM table is copied once per index type outside the clock; on each copy (and on
   the tables built with their index), one upsert of 1% of the keys (every fifth key of the
   newest 5%: recent data being corrected, the common case), ``ts + 1``. Timed: the whole
   ``write`` (tagging, log blocks, metadata table, commit).
3. Checked after the clock: N rows read back, exactly the updated keys carry the new value.

With merge-on-read an update appends log blocks, so an upsert's cost is its index lookup plus
writing the change: SIMPLE reads every key of the partitions the upsert touches, BLOOM reads
footers and the keys of files whose key range and bloom filter admit an update, BUCKET reads
nothing. Results go to stdout and the ``index`` section of ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile

from .run import _log, publish, timed

DEFAULT_ROWS = (5_000_000, 20_000_000)
PARTITIONS = 10
BUCKETS = 64
INDEXES = ("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET", "CONSISTENT_HASHING", "RECORD_INDEX")
# Indexes whose table is built with them (the others upsert into copies of one bulk_insert table).
OWN_TABLE = {
    "BUCKET": {"hoodie.datasource.write.operation": "insert", "hoodie.index.type": "BUCKET",
               "hoodie.bucket.index.num.buckets": str(BUCKETS)},
    "CONSISTENT_HASHING": {"hoodie.datasource.write.operation": "insert", "hoodie.index.type": "BUCKET",
                           "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
                           "hoodie.bucket.index.num.buckets": str(BUCKETS)},
    "RECORD_INDEX": {"hoodie.datasource.write.operation": "bulk_insert", "hoodie.index.type": "RECORD_INDEX"},
}
BASE = {"hoodie.table.name": "bench_index", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.parquet.compression.codec": "snappy",
        "hoodie.clean.automatic": "false", "hoodie.compact.inline": "false"}


def rows(spark, n: int, start: int = 0):
    return spark.range(start, n).selectExpr(
        "concat('k', lpad(cast(id as string), 12, '0')) as k", f"cast(pmod(xxhash64(id), {PARTITIONS}) as string) as part",
        "id as ts", "md5(cast(id as string)) as payload", "id * 0.25 as amount", "cast(id % 97 as int) as kind",
        "concat('city-', cast(id % 500 as string)) as city", "'new' as status")


def updates(spark, n: int):
    """1% of the keys: every fifth key of the newest 5%, with ts + 1 and status 'amended'."""
    recent = rows(spark, n, int(n * 0.95)).filter("pmod(ts, 5) = 0")
    return recent.selectExpr("k", "part", "ts + 1 as ts", "payload", "amount", "kind", "city", "'amended' as status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, action="append", help="table size (repeatable); default 5M and 20M")
    parser.add_argument("--quick", action="store_true", help="500k rows")
    args = parser.parse_args()
    sizes = [500_000] if args.quick else (args.rows or list(DEFAULT_ROWS))
    from hudi_engine import read, write
    from hudi_engine.spark import local_spark

    spark = local_spark("bench-index", memory="6g")
    began = dt.datetime.now(dt.timezone.utc)
    work = tempfile.mkdtemp(prefix="bench-index-")
    results: dict[int, dict] = {}
    try:
        for n in sizes:
            base = f"{work}/{n}-base"
            _log(f"== {n:,} rows: building")
            write(rows(spark, n), base, {**BASE, "hoodie.datasource.write.operation": "bulk_insert"})
            change = updates(spark, n).cache()
            n_updates = change.count()
            phases = {}
            for index in INDEXES:
                path = f"{work}/{n}-{index}"
                own = OWN_TABLE.get(index)
                if own:
                    write(rows(spark, n), path, {**BASE, **own})
                else:
                    shutil.copytree(base, path)
                opts = {**BASE, **(own or {"hoodie.index.type": index}), "hoodie.datasource.write.operation": "upsert"}
                phases[index] = timed(f"{n:,} rows, upsert {n_updates:,} with {index}", n_updates,
                                      lambda: write(change, path, opts))
                table = read(spark, path)
                assert table.count() == n, index
                assert table.filter("status = 'amended'").count() == n_updates, index
                shutil.rmtree(path)
            change.unpersist()
            results[n] = {"updates": n_updates, "phases": phases}
            shutil.rmtree(base)
        lines = [
            f"Upsert of 1% of the keys (the newest 5%'s every fifth key) into MERGE_ON_READ tables, each index "
            f"type against SIMPLE in the same run{' — SMALL SCALE (--quick)' if args.quick else ''}.",
            "",
            "| rows | index | upsert seconds | updated rows/s | vs SIMPLE | peak RSS MiB |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for n, result in results.items():
            simple = result["phases"]["SIMPLE"].seconds
            for index, p in result["phases"].items():
                lines.append(f"| {n:,} | {index} | {p.seconds:.2f} | {p.rows_per_s:,.0f} | {p.seconds / simple:.2f}x "
                             f"| {p.peak_mib:,.0f} |")
        if len(results) > 1:
            small, large = min(results), max(results)
            lines += ["", f"Growth from {small:,} to {large:,} rows ({large / small:.0f}x the table, "
                      f"{results[large]['updates'] / results[small]['updates']:.0f}x the change):", ""]
            for index in INDEXES:
                ratio = results[large]["phases"][index].seconds / results[small]["phases"][index].seconds
                lines.append(f"- {index}: {ratio:.2f}x the time")
        lines += [
            "",
            f"The BUCKET and CONSISTENT_HASHING tables ({BUCKETS} buckets per partition) were written by `insert`, "
            "the others by `bulk_insert` (sort mode NONE: each file holds a contiguous run of keys); the "
            "RECORD_INDEX table keeps its record index from that first write, so its upsert also updates the "
            "record index, while the other tables keep only the metadata table's files partition. Peak RSS is "
            "the whole "
            "process tree (Spark's JVM included). Record-index lookups and data skipping are measured by "
            "`make bench-lookup`.",
        ]
        command = ".venv/bin/python -m benchmarks.index" + (" --quick" if args.quick else "") + "".join(
            f" --rows {n}" for n in (args.rows or []))
        publish("index", "Indexes (`make bench-index`)", lines, command, began)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
