"""Where a copy-on-write write's time goes: the profile behind issue 20's changes.

    .venv/bin/python -m benchmarks.profile_write                # 5M rows through Spark (``make bench-profile``)
    .venv/bin/python -m benchmarks.profile_write --rows 1000000
    .venv/bin/python -m benchmarks.profile_write --quick        # 200k rows, RESULTS.md untouched
    .venv/bin/python -m benchmarks.profile_write --cpu --rows 1000000 --table-version 6 9

Two views of the issue's shape (``id`` long, ``key`` unique string, ``value`` double, ``ts`` long,
``part`` string of 10 values; see ``benchmarks.shapes``):

1. **Inside a task** (no Spark): the engine's executor functions on 500k rows under cProfile, a
   ``bulk_insert`` task (``BulkInsert``) and the merge of one file group (``WriteFileGroup``, 10%
   of its keys changed), with their time bucketed by what it is: key generation, splitting rows by
   partition, meta columns, bloom filter, parquet encoding, parquet decoding, merging, footer.
2. **Across Spark**, in a stock ``local[2]`` SparkSession (its UI and status API on, as by default):
   Spark's partitioned parquet write of the rows (the baseline), their one-way trip into Python
   (``mapInArrow`` into a counter: the floor of any Python writer), then ``bulk_insert`` and a 10%
   ``upsert``, each split by the engine's step labels (``spark_jobs.step``) from the status API's
   job times; what no Spark job covers is the driver's (planning, commit, metadata table).

The report goes to stdout and to the ``profile`` section of ``benchmarks/RESULTS.md``.

``--table-version`` names the ``hoodie.write.table.version`` of every table written (the default's
otherwise; the profiles above take the first one named). ``--cpu`` instead compares table versions
(issues 20/23: version 9 writes cost more CPU than 6) on the rows of view 2: at each version and on
each plane (``spark``: ``hoodie.write.in.process.max.records=0``; ``in-process``: as many as the
rows, so even the ``bulk_insert`` is collected), ``--repeat`` rounds of a ``bulk_insert`` into a new
table, an upsert of 1% of its keys and one of 1,000 (sampled at random: every partition), the
versions interleaved in each round. Each write's CPU seconds by process (this Python driver, Spark's
Python workers, the JVM; ``run.TreeSampler``) and wall time, the run of least CPU of each; checked
after the clock (rows read back, the ordering field's sum). ``--driver-profile N`` adds, for each
version and plane, the top N functions of the driver's cumulative time in one more round under
cProfile; ``--option KEY=VALUE`` adds write options (e.g. the column_stats index, which brings
partition stats at version 8+). Output goes to stdout only.
"""
from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict

import numpy as np
import pyarrow as pa

from benchmarks.run import TreeSampler, _log, check, cumulative_by_entry, machine, publish

TASK_ROWS = 500_000
DEFAULT_ROWS = 5_000_000
QUICK_ROWS = 200_000
UI_PORT = 4077
OPTIONS = {"hoodie.table.name": "profile", "hoodie.datasource.write.recordkey.field": "key",
           "hoodie.datasource.write.partitionpath.field": "part",
           "hoodie.datasource.write.precombine.field": "ts"}
VERSION_KEY = "hoodie.write.table.version"
IN_PROCESS_KEY = "hoodie.write.in.process.max.records"
CPU_REPEAT = 3
SMALL_UPSERT = 1_000
# Entry points of the stages (file fragment, function) -> stage; their cumulative times do not nest.
STAGES = [
    (("write/tasks.py", "_split_by_partition"), "split rows by partition"),
    (("bloom.py", "add_keys"), "bloom filter"),
    (("parquet/core.py", "write_table"), "parquet encoding"),
    (("parquet/core.py", "read"), "parquet decoding"),
    (("record_merger.py", "merge"), "merge old and new records"),
    (("base_file.py", "close"), "footer and close"),
    (("base_file.py", "__init__"), "open file, marker, partition metadata"),
]



def issue_table(n: int, seed: int = 7) -> pa.Table:
    ids = np.arange(n)
    return pa.table({"id": ids, "key": pa.array(np.char.add("key-", ids.astype(str))),
                     "value": np.random.default_rng(seed).random(n) * 1000, "ts": ids,
                     "part": pa.array(np.char.add("p", (ids % 10).astype(str)))})


def _by_stage(profile: cProfile.Profile, wall: float) -> dict[str, float]:
    """Cumulative seconds of each stage's entry point; the rest (meta columns, Arrow concatenation,
    stats) is "other"."""
    from hudi_engine.write.tasks import Prepare

    code = Prepare.__call__.__code__
    keygen = (code.co_filename, code.co_firstlineno, code.co_name)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    out = cumulative_by_entry(profile, STAGES)
    if keygen in stats:
        out["key generation, validation"] = stats[keygen][3]
    out["other: meta columns, Arrow concatenation, stats"] = max(0.0, wall - sum(out.values()))
    return out


def task_profile(options: dict) -> list[tuple[str, dict[str, float], float]]:
    """(what, seconds per stage, wall seconds) of one bulk_insert task and one file group's merge."""
    from hudi_engine.config import HoodieConfig
    from hudi_engine.file_group.base_file import WriteContext
    from hudi_engine.file_group.naming import write_token
    from hudi_engine.keygen import key_generator_from_config
    from hudi_engine.merge.record_merger import MergeSpec
    from hudi_engine.schema.avro import add_meta_fields, arrow_to_avro, to_json
    from hudi_engine.storage import Storage
    from hudi_engine.write.planner import Target
    from hudi_engine.write.tasks import BulkInsert, Prepare, WriteFileGroup

    rows = issue_table(TASK_ROWS)
    cfg = HoodieConfig(options)
    prepare = Prepare(key_generator_from_config(cfg), ("ts",), False)
    schema = to_json(add_meta_fields(arrow_to_avro(rows.schema, "profile")))
    workdir = tempfile.mkdtemp(prefix="profile-task-")
    results = []
    try:
        storage = Storage(workdir)
        first = WriteContext(storage, "20260101000000000", rows.schema, schema, cfg.raw())
        bulk = BulkInsert(first, prepare)
        batches = rows.to_batches(max_chunksize=10_000)      # a stock session's Arrow batch size
        stats = _profiled("bulk_insert task, 500k rows into 10 partitions", results,
                          lambda: [json.loads(s) for b in bulk(iter(batches)) for s in b.column(0).to_pylist()])
        stat = max(stats, key=lambda s: s["numWrites"])
        group = rows.filter(pa.compute.equal(rows["part"], stat["partitionPath"]))
        changed = group.take(np.random.default_rng(1).choice(group.num_rows, group.num_rows // 10, replace=False))
        incoming = pa.Table.from_batches(list(prepare(iter(changed.to_batches()))))
        second = WriteContext(storage, "20260101000000001", rows.schema, schema, cfg.raw())
        target = Target(stat["partitionPath"], stat["fileId"], stat["path"], "20260101000000000")
        merge = WriteFileGroup(second, {target.group: target}, MergeSpec(("ts",), False, False))
        _profiled(f"merge of one file group, {group.num_rows:,} rows, 10% changed", results,
                  lambda: merge(target.group, incoming, task=(0, write_token(0, 0, 0))))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def _profiled(what: str, results: list, action):
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    out = action()
    profile.disable()
    wall = time.perf_counter() - started
    results.append((what, _by_stage(profile, wall), wall))
    return out


def _stock_session():
    """A stock ``local[2]`` session, its UI (and status API) on."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "6g")
             .config("spark.ui.port", str(UI_PORT)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_profile(n: int, options: dict) -> dict:
    """Seconds of the baseline, the one-way trip into Python, and each write's steps."""
    from benchmarks.shapes import issue_frame
    from hudi_engine.api import read, write

    spark = _stock_session()
    workdir = tempfile.mkdtemp(prefix="profile-spark-")
    out: dict = {"rows": n}
    try:
        df = issue_frame(spark, n, 2).cache()
        df.count()
        updates = df.sample(fraction=0.1, seed=20).withColumn("ts", df.ts + 1).cache()
        out["updates"] = updates.count()
        warm = df.limit(100_000)
        write(warm, f"{workdir}/warm", {**options, "hoodie.datasource.write.operation": "bulk_insert"})
        warm.write.partitionBy("part").parquet(f"{workdir}/warm-parquet")
        out["spark parquet"] = _seconds(lambda: df.write.partitionBy("part").parquet(f"{workdir}/parquet"))
        out["one-way trip into Python"] = _seconds(lambda: df.mapInArrow(_count, "n long").collect())
        path = f"{workdir}/hudi"
        for operation, frame in (("bulk_insert", df), ("upsert", updates)):
            started = time.perf_counter()
            instant = write(frame, path, {**options, "hoodie.datasource.write.operation": operation})
            wall = time.perf_counter() - started
            out[operation] = {"wall": wall, "steps": _steps(spark, f"hudi {operation} {instant}")}
            _log(f"{operation}: {wall:.1f} s")
        if read(spark, path).count() != n:
            raise AssertionError("the table lost rows")
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return out


PLANES = {"spark": 0, "in-process": None}     # hoodie.write.in.process.max.records (None: the rows)
KINDS = ("driver_py", "py_workers", "jvm")


def cpu_compare(n: int, versions: list[int], repeat: int, driver_top: int, extra: dict | None = None) -> list[str]:
    """Report lines: CPU by process and wall of each write at each version and plane (the least-CPU
    run of ``repeat``), then the driver's cProfile per version and plane when ``driver_top``."""
    from benchmarks.shapes import issue_frame
    from hudi_engine.api import read

    spark = _stock_session()
    workdir = tempfile.mkdtemp(prefix="profile-cpu-")
    runs: dict[tuple[int, str, str], list[tuple[dict[str, float], float]]] = defaultdict(list)
    options = {version: {plane: {**_cpu_options(version, plane, n), **(extra or {})} for plane in PLANES}
               for version in versions}
    try:
        df = issue_frame(spark, n, 2).cache()
        inputs = [("bulk_insert", "bulk_insert", df, n)]
        # Disjoint keys (id mod 3), in every partition (part is id mod 10): each updated ts gains 1.
        for residue, (what, share) in enumerate((("upsert 1%", 0.01), (f"upsert {SMALL_UPSERT:,}", SMALL_UPSERT / n))):
            frame = (df.where(df.id % 3 == residue).sample(fraction=3 * share, seed=23)
                     .withColumn("ts", df.ts + 1).cache())
            inputs.append((what, "upsert", frame, frame.count()))
        ts_sum = df.agg({"ts": "sum"}).first()[0] + inputs[1][3] + inputs[2][3]
        for plane in PLANES:                 # warm: JVM, Python workers, each plane's code
            for version in versions:
                _round(f"{workdir}/warm-{plane}-{version}", options[version][plane],
                       [(w, op, f.limit(20_000) if op == "bulk_insert" else f.limit(200), k)
                        for w, op, f, k in inputs])
        for r in range(repeat):
            for plane in PLANES:
                for version in versions[::-1] if r % 2 else versions:    # neither always goes first
                    path = f"{workdir}/v{version}-{plane}-{r}"
                    for what, cpu, wall in _round(path, options[version][plane], inputs):
                        runs[(version, plane, what)].append((cpu, wall))
                    table = read(spark, path)
                    check(table.count() == n, f"version {version}, {plane}: {n} rows read back")
                    check(table.agg({"ts": "sum"}).first()[0] == ts_sum, f"version {version}, {plane}: ts sum")
                    shutil.rmtree(path)
        lines = _cpu_lines(n, inputs, versions, repeat, runs)
        if driver_top:
            for plane in PLANES:
                for version in versions:
                    lines += _driver_profile(f"{workdir}/prof-v{version}-{plane}", version, plane,
                                             options[version][plane], inputs, driver_top)
        return lines
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _cpu_options(version: int, plane: str, n: int) -> dict:
    records = PLANES[plane]
    return {**OPTIONS, VERSION_KEY: str(version), IN_PROCESS_KEY: str(n if records is None else records)}


def _round(path: str, options: dict, inputs) -> list[tuple[str, dict[str, float], float]]:
    """Each input written in turn into one new table at ``path``: (what, CPU by kind, wall)."""
    from hudi_engine.api import write

    out = []
    for what, operation, frame, _ in inputs:
        sampler = TreeSampler()
        sampler.start()
        started = time.perf_counter()
        write(frame, path, {**options, "hoodie.datasource.write.operation": operation})
        wall = time.perf_counter() - started
        sampler.finish()
        out.append((what, sampler.cpu_seconds(), wall))
    return out


def _cpu_lines(n: int, inputs, versions: list[int], repeat: int, runs) -> list[str]:
    lines = [f"## CPU of a write by table version: `local[2]`, {n:,} rows, least-CPU run of {repeat}", "",
             "| write | plane | version | driver Python s | Python workers s | JVM s | CPU s | wall s | "
             f"CPU vs version {versions[0]} |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for what, _, _, rows in inputs:
        for plane in PLANES:
            first = None
            for version in versions:
                cpu, wall = min(runs[(version, plane, what)], key=lambda r: sum(r[0].values()))
                total = sum(cpu.values())
                first = total if first is None else first
                lines.append(f"| {what} ({rows:,} rows) | {plane} | {version} | "
                             + " | ".join(f"{cpu.get(k, 0.0):.2f}" for k in KINDS)
                             + f" | {total:.2f} | {wall:.2f} | {total / first:.2f}x |")
                _log(lines[-1])
    return lines + [""]


def _driver_profile(path: str, version: int, plane: str, options: dict, inputs, top: int) -> list[str]:
    """The driver's top functions by cumulative time over one more round (cProfile: this thread)."""
    import io

    lines = []
    for what, operation, frame, _ in inputs:
        from hudi_engine.api import write

        profile = cProfile.Profile()
        profile.enable()
        write(frame, path, {**options, "hoodie.datasource.write.operation": operation})
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(top)
        lines += [f"### driver of {what}, version {version}, {plane}", "", "```", text.getvalue().strip(), "```", ""]
    return lines


def _count(batches):
    total = sum(b.num_rows for b in batches)
    yield pa.RecordBatch.from_pydict({"n": [total]})


def _seconds(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _steps(spark, prefix: str) -> dict[str, float]:
    """Job seconds per step label of one write, from the status API (labels are "<prefix>: <step>")."""
    url = f"http://127.0.0.1:{UI_PORT}/api/v1/applications/{spark.sparkContext.applicationId}/jobs"
    with urllib.request.urlopen(url) as reply:
        jobs = json.load(reply)
    steps: dict[str, float] = defaultdict(float)
    for job in jobs:
        label = job.get("description") or ""
        if label.startswith(prefix) and job.get("completionTime"):
            step = label[len(prefix):].lstrip(": ") or "other Spark jobs"
            steps[step] += (_time(job["completionTime"]) - _time(job["submissionTime"])).total_seconds()
    return dict(steps)


def _time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")


def report(tasks, spark_run: dict) -> list[str]:
    lines = ["Issue 20's profile: where a copy-on-write write's time goes, inside a task and across "
             "Spark, before the next optimisation is chosen.", "", "## Inside a task (no Spark, one core)", ""]
    for what, stages, wall in tasks:
        lines += [f"**{what}: {wall:.2f} s**", "", "| stage | seconds | share |", "|---|---:|---:|"]
        for stage, seconds in sorted(stages.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {stage} | {seconds:.3f} | {seconds / wall:.0%} |")
        lines.append("")
    n, base = spark_run["rows"], spark_run["spark parquet"]
    lines += [f"## Across Spark: stock `local[2]` session, {n:,} rows, upsert of {spark_run['updates']:,}", "",
              "| what | seconds | vs Spark's write |", "|---|---:|---:|",
              f"| Spark `partitionBy(\"part\").parquet` (baseline) | {base:.2f} | 1.00x |",
              f"| the rows' one-way trip into Python (`mapInArrow`) | {spark_run['one-way trip into Python']:.2f} "
              f"| {spark_run['one-way trip into Python'] / base:.2f}x |"]
    for operation in ("bulk_insert", "upsert"):
        run = spark_run[operation]
        lines.append(f"| **{operation}** | **{run['wall']:.2f}** | **{run['wall'] / base:.2f}x** |")
        for step, seconds in sorted(run["steps"].items(), key=lambda kv: -kv[1]):
            lines.append(f"| &nbsp;&nbsp;{step} | {seconds:.2f} | |")
        driver = run["wall"] - sum(run["steps"].values())
        lines.append(f"| &nbsp;&nbsp;driver: plan, commit, metadata table | {driver:.2f} | |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.profile_write", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows through Spark (default 5,000,000)")
    parser.add_argument("--quick", action="store_true", help="200k rows; RESULTS.md is left as it is")
    parser.add_argument("--table-version", type=int, nargs="+", choices=(6, 8, 9),
                        help=f"{VERSION_KEY} of the tables written (several with --cpu)")
    parser.add_argument("--cpu", action="store_true",
                        help="compare CPU by process at each --table-version (default 6 9); stdout only")
    parser.add_argument("--repeat", type=int, default=CPU_REPEAT, help=f"--cpu rounds (default {CPU_REPEAT})")
    parser.add_argument("--driver-profile", type=int, default=0, metavar="N",
                        help="with --cpu: the driver's top N functions per write, one more round")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="with --cpu: one more write option, e.g. hoodie.metadata.index.column.stats.enable=true")
    args = parser.parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc)
    _log(f"profiling on {machine()['cpu']}")
    rows = QUICK_ROWS if args.quick else args.rows
    if args.cpu:
        extra = dict(o.split("=", 1) for o in args.option)
        print("\n".join(cpu_compare(rows, args.table_version or [6, 9], args.repeat, args.driver_profile, extra)))
        return 0
    options = {**OPTIONS, **({VERSION_KEY: str(args.table_version[0])} if args.table_version else {})}
    tasks = task_profile(options)
    spark_run = spark_profile(rows, options)
    lines = report(tasks, spark_run)
    command = "python -m benchmarks.profile_write" + (" " + " ".join(argv or sys.argv[1:])).rstrip()
    if args.quick or args.table_version:
        print("\n".join(lines))
    else:
        publish("profile", "Where a write's time goes (`make bench-profile`)", lines, command, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
