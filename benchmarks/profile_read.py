"""Where a merge-on-read snapshot read's time goes: the profile behind issue 20's read changes.

    .venv/bin/python -m benchmarks.profile_read                   # 1M rows, 1, 5 and 20 log files
    .venv/bin/python -m benchmarks.profile_read --rows 200000 --keep /tmp/mor-prof

The table is ``benchmarks.mor``'s (its rows, ``bulk_insert`` into a MERGE_ON_READ table, 1% upserts
on disjoint key sets, one log file per file group each). At each log level the timed query is
``benchmarks.mor``'s (``count(*)`` and ``sum(ts)`` over ``hudi_engine.read``), split three ways:

1. **Driver**: ``read()`` itself (timeline, file-system view, plan, DataFrame) under cProfile.
2. **Spark**: the query's stages from the status REST API: executor run and CPU time per stage,
   and the time Python workers spent (``mapInArrow``: log decoding and merging), per stage name.
3. **Inside a task, without Spark**: the executor functions of every merged slice run in this
   process under cProfile, their time bucketed (reading log files, Avro decoding, combining log
   records, reading base files, merging, Arrow to Spark).

Against it, the same query over ``spark.read.parquet`` of the table's base files (what a parquet
read of those columns costs). Output goes to stdout only: it is a profile, not a result.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
import urllib.request

from benchmarks.mor import MOR_OPTIONS, all_columns, totals, upsert_frame
from benchmarks.run import TreeSampler, _log, cumulative_by_entry, source_frame

UI_PORT = 4093
LEVELS = (1, 5, 20)
# Entry points (file fragment, function) -> bucket, by cumulative time: "replaced rows, all of it"
# holds the others that it calls; the rest do not nest.
BUCKETS = [
    (("avro_decode.py", "decode_records"), "Avro decoding"),
    (("log_file/reader.py", "read_log_file"), "reading log files (I/O, block framing)"),
    (("log_merge.py", "combine_log_records"), "combining log records"),
    (("record_merger.py", "merge"), "merging with base keys"),
    (("file_slice.py", "_base_columns"), "reading base file columns"),
    (("file_slice.py", "replaced_positions"), "replaced rows, all of it"),
    (("base_file.py", "read_base_file"), "reading base files"),
]


def _ui_stages(spark) -> list[dict]:
    url = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}/stages"
    with urllib.request.urlopen(url) as response:
        return json.loads(response.read())


def _stage_times(spark, before: set[int]) -> list[tuple[str, int, float, float]]:
    """(name, tasks, executor run s, executor CPU s) of the stages since ``before``."""
    out = []
    for s in sorted(_ui_stages(spark), key=lambda s: s["stageId"]):
        if s["stageId"] in before or s["status"] != "COMPLETE":
            continue
        out.append((s["name"].split(" at ")[0] + " " + s.get("description", "")[:40], s["numTasks"],
                    s["executorRunTime"] / 1000, s["executorCpuTime"] / 1e9))
    return out


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def profile_level(spark, path: str, level: int, top: int) -> None:
    from hudi_engine import read
    from hudi_engine.read import merged_scan
    from hudi_engine.read.plan import plan_read
    from hudi_engine.table.meta_client import HoodieTable

    _log(f"== {level} log file(s) per file group")
    for _ in range(2):     # warm: JIT, Python workers, file caches
        totals(read(spark, path))
    # 1. driver
    prof = cProfile.Profile()
    w0, c0 = time.perf_counter(), _cpu()
    prof.enable()
    df = read(spark, path)
    prof.disable()
    _log(f"  driver read() (plan + DataFrame): {time.perf_counter() - w0:.3f} s wall, {_cpu() - c0:.3f} s CPU")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)
    # CPU of the whole process tree (JVM, Python driver, Python workers) per query, least of 4 runs
    paths = [HoodieTable.load(path).storage.uri(s.base_file.path) for s in plan_read(HoodieTable.load(path)).slices
             if s.base_file]
    for what, query in (("snapshot", lambda: totals(read(spark, path))),
                        ("snapshot, all columns", lambda: all_columns(read(spark, path))),
                        ("parquet read of the base files", lambda: totals(spark.read.parquet(*paths))),
                        ("parquet read of the base files, all columns", lambda: all_columns(spark.read.parquet(*paths)))):
        runs = []
        for _ in range(4):
            sampler = TreeSampler()
            sampler.start()
            w0 = time.perf_counter()
            query()
            wall = time.perf_counter() - w0
            sampler.finish()
            runs.append((sum(sampler.cpu_seconds().values()), wall, sampler.cpu_seconds()))
        cpu, wall, kinds = min(runs, key=lambda r: r[0])
        _log(f"  CPU of {what}: {cpu:.2f} s ({', '.join(f'{k} {v:.2f}' for k, v in sorted(kinds.items()))}), "
             f"wall {wall:.2f} s (least-CPU run of 4)")
    # 2. Spark stages of the query
    before = {s["stageId"] for s in _ui_stages(spark)}
    w0 = time.perf_counter()
    got = totals(df)
    wall = time.perf_counter() - w0
    _log(f"  query: {wall:.3f} s wall, {got[0]:,} rows")
    for name, tasks, run, cpu in _stage_times(spark, before):
        _log(f"    stage {name!r}: {tasks} tasks, executor run {run:.3f} s, CPU {cpu:.3f} s")
    # 3. the Python executor work, in this process: what the query's mapInArrow tasks run
    import pyarrow as pa

    from hudi_engine.read import reader
    table = HoodieTable.load(path)
    plan = plan_read(table)
    slices = plan.merged_slices
    with_base = tuple(s for s in slices if s.base_file is not None)
    if merged_scan.merges_in_spark(spark, table, plan):
        if hasattr(merged_scan, "_ReplacedRows"):
            first = ("replaced rows", merged_scan._ReplacedRows(table.storage, plan, with_base), len(with_base))
        else:
            first = ("logged keys", merged_scan._LoggedKeys(table.storage, plan, with_base,
                                                            merged_scan._keys_schema(plan)), len(with_base))
        work = [first, ("logged rows", merged_scan._LoggedRows(table.storage, plan), len(slices))]
    else:
        work = [("slices merged in Arrow", reader._ReadSlices(table.storage, plan), len(slices))]
    for name, fn, count in work:
        batch = [pa.record_batch([pa.array(range(count), pa.int64())], names=["id"])]
        prof = cProfile.Profile()
        w0, c0 = time.perf_counter(), _cpu()
        prof.enable()
        out = sum(b.num_rows for b in fn(iter(batch)))
        prof.disable()
        _log(f"  {name} in-process over {count} slices: {time.perf_counter() - w0:.3f} s wall, "
             f"{_cpu() - c0:.3f} s CPU, {out:,} rows")
        for bucket, seconds in sorted(cumulative_by_entry(prof, BUCKETS).items(), key=lambda kv: -kv[1]):
            _log(f"    {bucket}: {seconds:.3f} s")
        pstats.Stats(prof).sort_stats("tottime").print_stats(top)
    # the parquet read of the same base files
    paths = [table.storage.uri(s.base_file.path) for s in plan.slices if s.base_file]
    before = {s["stageId"] for s in _ui_stages(spark)}
    for _ in range(2):
        totals(spark.read.parquet(*paths))
    before = {s["stageId"] for s in _ui_stages(spark)}
    w0 = time.perf_counter()
    totals(spark.read.parquet(*paths))
    _log(f"  parquet read of the base files: {time.perf_counter() - w0:.3f} s wall")
    for name, tasks, run, cpu in _stage_times(spark, before):
        _log(f"    stage {name!r}: {tasks} tasks, executor run {run:.3f} s, CPU {cpu:.3f} s")


def build(spark, path: str, n: int, levels: tuple[int, ...]) -> None:
    from hudi_engine import write

    source = source_frame(spark, n, 4).cache()
    source.count()
    write(source, path, {**MOR_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"})
    for k in range(1, max(levels) + 1):
        write(upsert_frame(source, k), path, {**MOR_OPTIONS, "hoodie.datasource.write.operation": "upsert"})
        if k in levels:
            shutil.copytree(path, f"{path}_{k}")
    source.unpersist()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_read", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", help="build the tables here and keep them (reused when present)")
    parser.add_argument("--top", type=int, default=25, help="cProfile lines per profile")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from hudi_engine.spark import local_spark

    workdir = args.keep or tempfile.mkdtemp(prefix="hudi-profile-read-")
    spark = local_spark("hudi-profile-read", memory="6g",
                        extra_conf={"spark.ui.enabled": "true", "spark.ui.port": str(UI_PORT),
                                    "spark.sql.parquet.compression.codec": "snappy"})
    try:
        path = os.path.join(workdir, f"mor_{args.rows}")
        if not os.path.exists(f"{path}_{max(LEVELS)}"):
            shutil.rmtree(path, ignore_errors=True)
            build(spark, path, args.rows, LEVELS)
        for level in LEVELS:
            profile_level(spark, f"{path}_{level}", level, args.top)
    finally:
        spark.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
