"""Copy-on-write write benchmark: Hudi ``bulk_insert`` and ``upsert`` against plain Spark parquet.

    .venv/bin/python -m benchmarks.run                  # 1M and 5M rows (``make bench``)
    .venv/bin/python -m benchmarks.run --rows 1000000   # one size
    .venv/bin/python -m benchmarks.run --quick          # 200k rows, a smoke run

For every row count N, in one SparkSession (``hudi_engine.spark.local_spark``, all cores):

1. Spark generates N deterministic trip rows (``spark.range`` + expressions: a string uuid key, a
   partition column with 10 values, a long ordering field ``ts`` and 8 more columns) and the
   upsert's rows, caches and counts them, so generation is never timed.
2. ``--repeat`` rounds (default 3; an untimed warm-up round on a small input runs first) of:

   - ``parquet``: ``df.write.parquet`` of those rows, the baseline every ratio is against;
   - ``parquet partitioned``: the same with ``partitionBy(region)``, the file layout Hudi writes;
   - ``mapInArrow round trip`` (a reference, not a write): the rows through
     ``mapInArrow(identity)`` into Spark's noop sink, the floor for any stage that hands rows to
     Python;
   - ``bulk_insert``: the rows into a new COPY_ON_WRITE table;
   - ``upsert 10%``: 10% of the keys (ts + 1, ``status`` changed), all of them in 5 of the 10
     partitions, into that table; the commit should rewrite exactly the file groups holding those
     keys and nothing else.

Both Spark and Hudi write snappy (``spark.sql.parquet.compression.codec`` and
``hoodie.parquet.compression.codec``). Every phase is checked after its clock stops (row counts,
a checksum of ``ts``, the updated values, the commit's write stats), so a broken write fails the run
instead of producing a fast number. The fastest round of each phase is reported, with all rounds'
times. While a phase runs, a thread samples VmRSS and CPU time of this process's whole tree (driver JVM, this Python, Spark's Python workers) every 0.2 s.

Results go to stdout and to the ``cow`` section of ``benchmarks/RESULTS.md`` (rewritten; the
merge-on-read benchmark, ``benchmarks/mor.py``, keeps its own section there); temp tables are deleted.
The machinery here (process-tree sampler, timing, row generation, the report's shared parts) is
imported by ``benchmarks/mor.py``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
DEFAULT_ROWS = (1_000_000, 5_000_000)
QUICK_ROWS = 200_000
WARMUP_ROWS = 100_000
DEFAULT_REPEAT = 3
CODEC = "snappy"
DRIVER_MEMORY = "6g"
SAMPLE_SECONDS = 0.2
TS0 = 1_700_000_000_000          # ts is epoch millis from here on
REGIONS = ["amsterdam", "berlin", "chennai", "dublin", "lisbon",
           "nairobi", "osaka", "san_francisco", "sao_paulo", "toronto"]
UPDATED_REGIONS = REGIONS[:5]    # the upsert touches these partitions only ...
UPDATE_SHARE = 5                 # ... and one key in 5 there: 10% of all keys
NEW_STATUS = "amended"           # the changed column's new value (never generated otherwise)

HUDI_OPTIONS = {
    "hoodie.table.name": "bench_trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "region",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.parquet.compression.codec": CODEC,
}
SCHEMA_DOC = ("uuid string (record key), ts long (ordering field), region string (partition path, "
              "10 values), rider string, fare double, tip double, distance_km double, "
              "passengers int, rating int, status string, event_time timestamp")


def cumulative_by_entry(profile, entries) -> dict[str, float]:
    """Cumulative seconds of a cProfile run per named entry point: ``entries`` are
    ((file name ending, function), name) pairs, their times summed per name."""
    import pstats
    from collections import defaultdict

    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    out: dict[str, float] = defaultdict(float)
    for (filename, _, function), (_, _, _, cumulative, _) in stats.items():
        for (ending, name), label in entries:
            if filename.endswith(ending) and function == name:
                out[label] += cumulative
    return dict(out)


class BenchError(AssertionError):
    """A write produced something other than what it was given."""


def check(ok: bool, what: str) -> None:
    if not ok:
        raise BenchError(what)


# --- process-tree sampling (stdlib only) -----------------------------------------------------------
_TICK = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:          # the process ended between listing and reading
        return None


def _proc_stats() -> dict[int, tuple[int, str, int]]:
    """pid -> (ppid, comm, utime + stime in ticks) for every process on the machine."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        text = _read(f"/proc/{name}/stat")
        if not text:
            continue
        close = text.rfind(")")
        comm = text[text.find("(") + 1:close]
        rest = text[close + 2:].split()
        out[int(name)] = (int(rest[1]), comm, int(rest[11]) + int(rest[12]))
    return out


def _vm_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmSize) in KiB; zeros for a process that is gone (or a kernel thread)."""
    rss = size = 0
    for line in (_read(f"/proc/{pid}/status") or "").splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmSize:"):
            size = int(line.split()[1])
    return rss, size


def _system_busy_ticks() -> int:
    fields = [int(x) for x in (_read("/proc/stat") or "cpu 0").splitlines()[0].split()[1:]]
    # user nice system idle iowait irq softirq steal: everything but idle and iowait is busy
    return sum(fields) - sum(fields[3:5])


def _kind(pid: int, comm: str, root: int) -> str:
    if pid == root:
        return "driver_py"
    if comm == "java":
        return "jvm"
    if comm.startswith("python"):
        return "py_workers"
    return "other"


class TreeSampler(threading.Thread):
    """Samples VmRSS (summed over the tree) and per-process CPU time of this process's descendants.

    RSS of forked Python workers counts pages they share with their daemon once per process, as
    VmRSS does; the sum is what the machine must have, give or take those shared pages."""

    def __init__(self, interval: float = SAMPLE_SECONDS):
        super().__init__(daemon=True)
        self.root, self.interval = os.getpid(), interval
        self._halt = threading.Event()
        self.peak_total = 0
        self.peak_split: dict[str, int] = {}
        self.samples = 0
        self._cpu_start: dict[int, int] = {}
        self._cpu_last: dict[int, tuple[str, int]] = {}
        self._sys_start = self._sys_end = 0
        self._sample(first=True)

    def _tree(self, procs: dict[int, tuple[int, str, int]]) -> list[int]:
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        tree, stack = [], [self.root]
        while stack:
            pid = stack.pop()
            tree.append(pid)
            stack.extend(children.get(pid, ()))
        return tree

    def _sample(self, first: bool = False) -> None:
        procs = _proc_stats()
        tree = self._tree(procs)
        vm = {pid: _vm_kib(pid) for pid in tree}
        split: dict[str, int] = {}
        for pid in tree:
            ppid, comm, cpu = procs[pid]
            kind = _kind(pid, comm, self.root)
            # A child the JVM is spawning (vfork/posix_spawn, before its exec) shares the JVM's
            # address space and shows the same VmRSS and VmSize: that memory is already counted.
            if pid == self.root or vm[pid] != vm.get(ppid):
                split[kind] = split.get(kind, 0) + vm[pid][0]
            if first:
                self._cpu_start[pid] = cpu
            self._cpu_last[pid] = (kind, cpu)   # kept after the process ends
        total = sum(split.values())
        if total > self.peak_total:
            self.peak_total, self.peak_split = total, split
        self.samples += 1
        if first:
            self._sys_start = _system_busy_ticks()

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            self._sample()

    def finish(self) -> None:
        self._halt.set()
        self.join()
        self._sample()
        self._sys_end = _system_busy_ticks()

    def cpu_seconds(self) -> dict[str, float]:
        by_kind: dict[str, float] = {}
        for pid, (kind, cpu) in self._cpu_last.items():
            by_kind[kind] = by_kind.get(kind, 0.0) + (cpu - self._cpu_start.get(pid, 0)) / _TICK
        return by_kind

    def other_cpu_seconds(self) -> float:
        """CPU seconds the rest of the machine used meanwhile (other sessions, tests...)."""
        ours = sum(self.cpu_seconds().values())
        return max(0.0, (self._sys_end - self._sys_start) / _TICK - ours)


@dataclass
class Phase:
    name: str
    rows: int
    seconds: float = 0.0                 # the best run's
    runs: list = field(default_factory=list)   # every run's seconds
    load_before: str = ""                # 1/5/15 min load average before the best run
    peak_mib: float = 0.0                # the largest over all runs
    peak_split_mib: dict = field(default_factory=dict)
    cpu: dict = field(default_factory=dict)
    other_cores: float = 0.0             # during the best run
    other_max: float = 0.0               # the most over all runs
    written_bytes: int = 0

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


def timed(name: str, rows: int, action) -> Phase:
    """Run ``action()`` once under the sampler and the clock; nothing else is timed."""
    phase = Phase(name, rows, load_before=_loadavg())
    sampler = TreeSampler()
    sampler.start()
    t0 = time.perf_counter()
    try:
        action()
    finally:
        phase.seconds = time.perf_counter() - t0
        sampler.finish()
    phase.runs = [phase.seconds]
    phase.peak_mib = sampler.peak_total / 1024
    phase.peak_split_mib = {k: v / 1024 for k, v in sampler.peak_split.items()}
    phase.cpu = sampler.cpu_seconds()
    phase.other_cores = phase.other_max = (sampler.other_cpu_seconds() / phase.seconds
                                           if phase.seconds else 0.0)
    _log(f"  {name}: {phase.seconds:.2f} s, {phase.rows_per_s:,.0f} rows/s, peak RSS "
         f"{phase.peak_mib:,.0f} MiB, load before {phase.load_before}, "
         f"other procs {phase.other_cores:.2f} cores")
    return phase


def best_of(runs: list[Phase]) -> Phase:
    """The fastest run, with every run's time and the worst memory and load seen."""
    best, peak = min(runs, key=lambda p: p.seconds), max(runs, key=lambda p: p.peak_mib)
    return replace(best, runs=[p.seconds for p in runs], peak_mib=peak.peak_mib,
                   peak_split_mib=peak.peak_split_mib, other_max=max(p.other_max for p in runs))


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files
               if not f.startswith((".", "_")))


def _loadavg() -> str:
    return " ".join((_read("/proc/loadavg") or "? ? ?").split()[:3])


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- data ------------------------------------------------------------------------------------------
def source_frame(spark, n: int, partitions: int):
    """N trips, deterministic: every value is a function of the row's id."""
    from pyspark.sql import functions as F

    i = F.col("id")

    def h(salt: str, mod: int):
        return F.pmod(F.xxhash64(i, F.lit(salt)), F.lit(mod))

    md5 = F.md5(i.cast("string"))
    uuid = F.concat_ws("-", *[F.substring(md5, start, length)
                              for start, length in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))])
    ts = F.lit(TS0) + i * 1000 + h("ts", 1000)
    fare = F.round(F.lit(2.5) + h("fare", 20000) / 100.0, 2)
    return (spark.range(0, n, 1, partitions)
            .select(uuid.alias("uuid"),
                    ts.alias("ts"),
                    F.element_at(F.array(*[F.lit(r) for r in REGIONS]),
                                 (h("region", len(REGIONS)) + 1).cast("int")).alias("region"),
                    F.concat(F.lit("rider-"), F.lpad(h("rider", 100000).cast("string"), 6, "0"))
                    .alias("rider"),
                    fare.alias("fare"),
                    F.round(fare * h("tip", 30) / 100.0, 2).alias("tip"),
                    F.round(F.lit(0.5) + h("km", 40000) / 1000.0, 3).alias("distance_km"),
                    (h("pax", 4) + 1).cast("int").alias("passengers"),
                    (h("rating", 50) + 1).cast("int").alias("rating"),
                    F.element_at(F.array(*[F.lit(s) for s in
                                           ("completed", "completed", "completed", "cancelled", "no_show")]),
                                 (h("status", 5) + 1).cast("int")).alias("status"),
                    F.timestamp_millis(ts).alias("event_time")))


def update_condition():
    from pyspark.sql import functions as F

    return (F.col("region").isin(UPDATED_REGIONS)
            & (F.pmod(F.xxhash64(F.col("uuid"), F.lit("upd")), F.lit(UPDATE_SHARE)) == 0))


def updates_frame(source):
    from pyspark.sql import functions as F

    return (source.filter(update_condition())
            .withColumn("ts", F.col("ts") + 1)
            .withColumn("status", F.lit(NEW_STATUS)))


def checksum(df) -> tuple[int, int, int]:
    """(rows, sum of ts - TS0, rows with the new status) in one pass."""
    from pyspark.sql import functions as F

    row = df.agg(F.count(F.lit(1)), F.sum(F.col("ts") - F.lit(TS0)),
                 F.sum((F.col("status") == NEW_STATUS).cast("long"))).first()
    return int(row[0]), int(row[1] or 0), int(row[2] or 0)


# --- Hudi commit metadata --------------------------------------------------------------------------
def commit_stats(table_path: str, instant: str) -> list[dict]:
    """The write stats of a completed commit, read through the timeline of the table's version."""
    from hudi_engine.api import HoodieTable

    timeline = HoodieTable.load(table_path).timeline
    done = timeline.get(instant)
    check(done is not None and done.is_completed, f"no completed commit {instant} in {table_path}")
    meta = timeline.commit_metadata(done)
    return [s for stats in meta["partitionToWriteStats"].values() for s in stats]


def file_id_of(file_name_col):
    from pyspark.sql import functions as F

    return F.substring_index(file_name_col, "_", 1)


# --- one row count ---------------------------------------------------------------------------------
def bench_rows(spark, n: int, partitions: int, workdir: str, repeat: int = 1,
               log: bool = True) -> tuple[list[Phase], dict]:
    say = _log if log else (lambda _m: None)
    say(f"== {n:,} rows: generating (untimed)")
    source = source_frame(spark, n, partitions).cache()
    check(source.count() == n, "the generated frame lost rows")
    rows, ts_sum, amended = checksum(source)
    check((rows, amended) == (n, 0), f"generated checksum {rows, amended}")
    updates = updates_frame(source).cache()
    n_updates = updates.count()
    check(0 < n_updates < n, "no rows to upsert")
    try:
        runs: dict[str, list[Phase]] = {}
        facts: dict = {}
        for rep in range(repeat):
            say(f"-- {n:,} rows, run {rep + 1} of {repeat}")
            for phase in one_round(spark, source, updates, n, ts_sum, n_updates, workdir, facts, log):
                runs.setdefault(phase.name, []).append(phase)
        return [best_of(r) for r in runs.values()], facts
    finally:
        source.unpersist()
        updates.unpersist()


def one_round(spark, source, updates, n: int, ts_sum: int, n_updates: int, workdir: str,
              facts: dict, log: bool) -> list[Phase]:
    """Every phase once, each checked after its clock stops; ``facts`` gets the upsert's file counts."""
    from hudi_engine import read, write
    from pyspark.sql import functions as F

    phases: list[Phase] = []

    def run(name: str, rows: int, action) -> Phase | None:
        if not log:
            action()
            return None
        phases.append(timed(name, rows, action))
        return phases[-1]

    plain = os.path.join(workdir, f"parquet_{n}")
    p = run("parquet", n, lambda: source.write.mode("overwrite").parquet(plain))
    check(spark.read.parquet(plain).count() == n, "parquet baseline: wrong row count")
    if p:
        p.written_bytes = dir_bytes(plain)
    shutil.rmtree(plain)

    parted = os.path.join(workdir, f"parquet_part_{n}")
    p = run("parquet partitioned", n,
            lambda: source.write.mode("overwrite").partitionBy("region").parquet(parted))
    check(spark.read.parquet(parted).count() == n, "partitioned parquet baseline: wrong row count")
    if p:
        p.written_bytes = dir_bytes(parted)
    shutil.rmtree(parted)

    # Reference: the rows to Python and back through mapInArrow, nothing written. Every
    # mapInArrow stage of the engine pays at least this for its input.
    run("mapInArrow round trip", n, lambda: source.mapInArrow(lambda batches: batches, source.schema)
        .write.format("noop").mode("overwrite").save())

    table = os.path.join(workdir, f"hudi_{n}")
    opts = dict(HUDI_OPTIONS)
    box: dict = {}
    p = run("bulk_insert", n, lambda: box.__setitem__(
        "bulk", write(source, table, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})))
    bulk_stats = commit_stats(table, box["bulk"])
    check(sum(s["numWrites"] for s in bulk_stats) == n, "bulk_insert commit: numWrites != rows")
    if p:
        p.written_bytes = sum(s["fileSizeInBytes"] for s in bulk_stats)
    snapshot = read(spark, table)
    got = checksum(snapshot)
    check(got == (n, ts_sum, 0), f"bulk_insert read back {got}, expected {(n, ts_sum, 0)}")
    bad_keys = snapshot.filter(F.col("_hoodie_record_key") != F.col("uuid")).count()
    check(bad_keys == 0, f"bulk_insert: {bad_keys} rows whose _hoodie_record_key is not uuid")
    all_groups = {(s["partitionPath"], s["fileId"]) for s in bulk_stats}
    touched = {(r[0], r[1]) for r in snapshot.filter(update_condition())
               .select("_hoodie_partition_path", file_id_of(F.col("_hoodie_file_name")))
               .distinct().collect()}

    p = run("upsert 10%", n_updates, lambda: box.__setitem__(
        "upsert", write(updates, table, {**opts, "hoodie.datasource.write.operation": "upsert"})))
    up_stats = commit_stats(table, box["upsert"])
    rewritten = {(s["partitionPath"], s["fileId"]) for s in up_stats}
    if p:
        p.written_bytes = sum(s["fileSizeInBytes"] for s in up_stats)
    updated = sum(s["numUpdateWrites"] for s in up_stats)
    check(updated == n_updates, f"upsert commit: numUpdateWrites {updated} != {n_updates}")
    check(sum(s["numInserts"] for s in up_stats) == 0, "upsert commit: inserted rows")
    check(rewritten == touched, f"upsert rewrote {len(rewritten)} file groups, "
          f"{len(rewritten - touched)} of them holding no updated key; {len(touched)} do")
    after = checksum(read(spark, table))
    want = (n, ts_sum + n_updates, n_updates)
    check(after == want, f"after upsert read back {after}, expected {want}")
    facts.update(updates=n_updates, file_groups=len(all_groups), touched=len(touched),
                 rewritten=len(rewritten), rewritten_rows=sum(s["numWrites"] for s in up_stats),
                 rewritten_bytes=sum(s["fileSizeInBytes"] for s in up_stats),
                 partitions_rewritten=len({part for part, _ in rewritten}))
    shutil.rmtree(table)
    return phases


# --- report ----------------------------------------------------------------------------------------
def machine() -> dict:
    cpuinfo = _read("/proc/cpuinfo") or ""
    model = next((l.split(":", 1)[1].strip() for l in cpuinfo.splitlines()
                  if l.startswith("model name")), platform.processor() or "?")
    mem_kib = next((int(l.split()[1]) for l in (_read("/proc/meminfo") or "").splitlines()
                    if l.startswith("MemTotal:")), 0)
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    except (OSError, IndexError):
        java = "?"
    import pyarrow
    import pyspark

    return {"nproc": os.cpu_count(), "memory": f"{mem_kib / 1024 / 1024:.1f} GiB", "cpu": model,
            "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "pyspark": pyspark.__version__,
            "pyarrow": pyarrow.__version__, "java": java}


def _git() -> str:
    """HEAD, and whether files outside benchmarks/ differ from it (the engine that was measured)."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True).stdout.splitlines()
    except OSError:
        return "?"
    engine = [line[3:] for line in changed if not line[3:].startswith("benchmarks/")]
    return head + (f" with uncommitted changes to {', '.join(engine[:5])}" if engine else "")


def _mib_split(p: Phase) -> str:
    s = p.peak_split_mib
    return (f"{s.get('jvm', 0):,.0f} / {s.get('driver_py', 0):,.0f} / {s.get('py_workers', 0):,.0f}")


def _cpu_split(p: Phase) -> str:
    return f"{p.cpu.get('jvm', 0):.1f} / {p.cpu.get('py_workers', 0) + p.cpu.get('driver_py', 0):.1f}"


def _ratio(p: Phase, base: Phase | None) -> str:
    return f"{p.seconds / base.seconds:.2f}x parquet" if base and p is not base else "baseline"


def _busy(p: Phase) -> bool:
    """Other processes used a quarter core or more during one of the phase's runs."""
    return p.other_max >= 0.25


def phase_line(p: Phase, ratio: str, width: int) -> str:
    """One phase on stdout: time, rate, ratio, every run, memory and CPU, outside load."""
    return (f"  {p.name:<{width}} {p.seconds:7.2f} s {p.rows_per_s:>10,.0f} rows/s  {ratio}  "
            f"[runs {', '.join(f'{r:.2f}' for r in p.runs)}]  peak RSS {p.peak_mib:,.0f} MiB "
            f"(jvm/driver/workers {_mib_split(p)})  cpu s jvm/py {_cpu_split(p)}  "
            f"load before {p.load_before}, other procs {p.other_cores:.2f} cores")


def busy_phases(results: list[tuple[int, list[Phase], dict]]) -> list[str]:
    """Phases that ran while other processes used the machine, for the report's warning."""
    return [f"{p.name} ({n:,})" for n, phases, _ in results for p in phases if _busy(p)]


def summary_lines(n: int, phases: list[Phase], facts: dict) -> list[str]:
    base = next((p for p in phases if p.name == "parquet"), None)
    lines = [f"N = {n:,} rows ({facts.get('updates', 0):,} upserted); best of {len(phases[0].runs)} "
             f"runs; codec {CODEC} for Spark and Hudi"]
    for p in phases:
        lines.append(phase_line(p, f"{p.name} {_ratio(p, base)}", 22))
    if "rewritten" in facts:
        lines.append(f"  upsert rewrote {facts['rewritten']} of {facts['file_groups']} base files "
                     f"(file groups holding updated keys: {facts['touched']}; "
                     f"{facts['rewritten_rows']:,} rows rewritten to update {facts['updates']:,})")
    return lines


def setup_lines(command: str, started: dt.datetime, info: dict, partitions: int) -> list[str]:
    """The report's bullets on how it ran: command, date, code, machine, software, Spark, rows."""
    nproc = info["nproc"] or 1
    return [
        f"- **Command:** `{command}`",
        f"- **Date:** {started.strftime('%Y-%m-%d %H:%M %Z').strip()} (the run took "
        f"{(dt.datetime.now(dt.timezone.utc) - started).total_seconds() / 60:.1f} min)",
        f"- **Code:** git {_git()}",
        f"- **Machine:** {nproc} CPUs ({info['cpu']}), {info['memory']} RAM, {info['os']}",
        f"- **Software:** Python {info['python']}, pyspark {info['pyspark']}, pyarrow {info['pyarrow']}, "
        f"{info['java']}",
        f"- **Spark:** `local_spark(memory=\"{DRIVER_MEMORY}\")`: local[*] on {nproc} cores, "
        f"`spark.sql.shuffle.partitions={max(4, 2 * nproc)}`, "
        "`spark.sql.execution.arrow.maxRecordsPerBatch=50000`; "
        f"input cached in {partitions} partitions",
        f"- **Codec:** {CODEC} for both (`spark.sql.parquet.compression.codec={CODEC}`, "
        f"`hoodie.parquet.compression.codec={CODEC}`)",
        f"- **Rows:** {SCHEMA_DOC}; generated by Spark from `spark.range` (deterministic), cached "
        "and counted before any clock starts",
    ]


def write_results(path: Path, command: str, started: dt.datetime, info: dict, partitions: int,
                  repeat: int, results: list[tuple[int, list[Phase], dict]], errors: list[str]) -> None:
    nproc = info["nproc"] or 1
    phases_all = [p for _, phases, _ in results for p in phases]
    busy = busy_phases(results)
    out = [
        "# COW write benchmark",
        "",
        "Hudi copy-on-write `bulk_insert` and `upsert` through `hudi_engine.write`, against Spark's own",
        "`df.write.parquet` of the same cached rows in the same SparkSession. Produced by",
        "`benchmarks/run.py` (`make bench`); every run rewrites this section of the file.",
        "",
        *setup_lines(command, started, info, partitions),
        "- **Hudi:** record key `uuid`, partition path `region`, precombine `ts`, COPY_ON_WRITE; "
        "every other option at its default (bulk insert sort mode NONE, so each input partition "
        "writes one file per region; SIMPLE index; bloom filter DYNAMIC_V0, 60000 entries, fpp 1e-9)",
        f"- **Upsert:** {100 * len(UPDATED_REGIONS) / len(REGIONS) / UPDATE_SHARE:g}% of the keys "
        f"(one key in {UPDATE_SHARE} in each of the {len(UPDATED_REGIONS)} partitions "
        f"{', '.join(UPDATED_REGIONS)}) with `ts + 1` and `status = '{NEW_STATUS}'`, into the table "
        "the bulk_insert just wrote",
        "",
        f"Every phase ran {repeat} time(s), interleaved (parquet, parquet partitioned, mapInArrow "
        "round trip, bulk_insert, upsert, then again), after an untimed warm-up of all of them on "
        f"{WARMUP_ROWS:,} rows; the table shows the fastest run and lists all. Checked after every "
        "run, outside the clock: row count and sum of `ts` read back (`hudi_engine.read` for Hudi), "
        "`_hoodie_record_key = uuid`, the upserted rows' new `ts` and `status`, and the upsert "
        "commit's write stats (updates = upserted rows, no inserts, rewritten file groups = the "
        "file groups holding an updated key).",
        "",
        "*mapInArrow round trip* is a reference, not a write: the cached rows through "
        "`df.mapInArrow(identity)` into Spark's `noop` sink, i.e. what moving the rows from the JVM to "
        "Python workers and back costs before anything is written.",
        "",
        "## Results",
        "",
        "| rows | phase | seconds (best) | all runs | rows/s | vs parquet | MiB written | peak RSS MiB "
        "| JVM / driver py / py workers | CPU s JVM / py | load avg before | other procs (cores) |",
        "|---:|---|---:|---|---:|---:|---:|---:|---|---|---|---:|",
    ]
    for n, phases, facts in results:
        base = next((p for p in phases if p.name == "parquet"), None)
        for p in phases:
            ratio = f"{p.seconds / base.seconds:.2f}x" if base else "-"
            written = f"{p.written_bytes / 2**20:,.0f}" if p.written_bytes else "-"
            out.append(f"| {n:,} | {p.name} | {p.seconds:.2f} | {', '.join(f'{r:.1f}' for r in p.runs)} | "
                       f"{p.rows_per_s:,.0f} | {ratio} | {written} | {p.peak_mib:,.0f} | {_mib_split(p)} | "
                       f"{_cpu_split(p)} | {p.load_before} | {p.other_cores:.2f} |")
    out += ["", "The upsert's rows/s counts the upserted rows (10% of N); its *vs parquet* is its wall "
            "time over the parquet write of all N rows. *MiB written*: data files only (Hudi: the "
            "commit's `fileSizeInBytes`).", "",
            "## Upsert: file groups rewritten", "",
            "| rows | base files after bulk_insert | file groups holding updated keys | rewritten by "
            "upsert | partitions rewritten | rows rewritten | to update |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for n, _, facts in results:
        if "rewritten" in facts:
            out.append(f"| {n:,} | {facts['file_groups']} | {facts['touched']} | {facts['rewritten']} | "
                       f"{facts['partitions_rewritten']} of {len(REGIONS)} | {facts['rewritten_rows']:,} | "
                       f"{facts['updates']:,} |")
    out += ["", "## How to read this", ""] + reading_notes(nproc, phases_all, busy)
    if errors:
        out += ["", "## Failures", ""] + [f"- {e}" for e in errors]
    replace_section(path, "cow", "\n".join(out))


def reading_notes(nproc: int, phases_all: list[Phase], busy: list[str]) -> list[str]:
    """The report's notes on peak RSS, CPU and outside load; ``busy`` names the phases that ran
    while other processes used the machine."""
    out = ["- Peak RSS is the largest sum of VmRSS over this process's tree (driver JVM, the Python "
           f"driver, Spark's Python daemons and workers), sampled every {SAMPLE_SECONDS} s during the "
           "phase, the largest over its runs. The JVM does not give heap back and reused Python "
           "workers keep theirs, so a phase's peak includes what earlier phases grew to; the cached "
           "input sits in the JVM throughout. Forked workers' shared pages count once per process; a "
           "child the JVM is spawning, which still shares the JVM's address space (same VmRSS and "
           "VmSize as its parent), is not counted again.",
           "- CPU s: CPU time the JVM and the Python processes (workers and driver) used during the "
           "best run. *other procs*: average cores that processes outside the benchmark used during "
           f"that run (`/proc/stat` busy time minus ours); with {nproc} CPUs anything well above 0 "
           "slowed it. The load average (1, 5, 15 min) read just before the best run counts this "
           "benchmark's own JVM threads and Python workers too, so on "
           f"{nproc} CPUs it reads above {nproc} even when nothing else runs; *other procs* is the "
           "measure of outside load.",
           ]
    if busy:
        out.append(f"- **The machine was busy** (other sessions were running tests) during "
                   f"{len(busy)} of {len(phases_all)} phases (other processes used 0.25 cores or "
                   f"more during at least one of their runs, up to {max(p.other_max for p in phases_all):.2f}): "
                   + ", ".join(busy) + ". The best-of-runs figure is the one least "
                   "disturbed; the spread of *all runs* shows by how much.")
    else:
        out.append("- No outside load was seen in this machine during the run (other processes "
                   f"used at most {max((p.other_max for p in phases_all), default=0):.2f} cores in "
                   "any run). The spread between runs of one phase is still wide; it comes from "
                   "JIT and garbage-collector state or from the host, which is why the best run is "
                   "reported.")
    return out


def publish(section: str, title: str, lines: list[str], command: str, started: dt.datetime) -> None:
    """Print a one-section benchmark's report with how it ran (command, date, code, machine,
    software) and put it in its section of RESULTS.md."""
    text = "\n".join(lines + [""] + setup_lines(command, started, machine(), 1)[:5])
    print(text)
    replace_section(RESULTS, section, f"# {title}\n\n" + text)


def replace_section(path: Path, name: str, text: str) -> None:
    """Put ``text`` between ``<!-- name:begin -->`` and ``<!-- name:end -->`` in ``path`` and leave
    the rest of the file as it is; a section the file does not have yet is appended."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    section = f"{begin}\n{text.strip()}\n{end}"
    old = path.read_text() if path.exists() else ""
    start, stop = old.find(begin), old.find(end)
    if 0 <= start < stop:
        new = old[:start] + section + old[stop + len(end):]
    else:
        new = (old.rstrip() + "\n\n" if old.strip() else "") + section + "\n"
    path.write_text(new)


# --- main ------------------------------------------------------------------------------------------
def parse_args(module: str, doc: str, default_rows: tuple[int, ...],
               argv: list[str] | None) -> tuple[argparse.Namespace, list[int], int, str]:
    """The options both benchmarks take: (args, row counts, runs per phase, the command line)."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n")[0])
    parser.add_argument("--rows", type=int, action="append",
                        help=f"rows to write (repeatable); default {' and '.join(f'{n:,}' for n in default_rows)}")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS:,} rows, one run: a smoke test")
    parser.add_argument("--repeat", type=int, default=0,
                        help=f"runs of every phase, the best is reported (default {DEFAULT_REPEAT}, 1 with --quick)")
    parser.add_argument("--partitions", type=int, default=0,
                        help="Spark partitions of the cached input (default: 2 x cores)")
    parser.add_argument("--workdir", help="where temp tables go (default: a new temp dir, deleted after)")
    parser.add_argument("--results",
                        help=f"results file whose section of this benchmark is rewritten (default {RESULTS.name}; "
                             "with --quick: none)")
    parser.add_argument("--no-results", action="store_true", help="do not write the results file")
    args = parser.parse_args(argv)
    # A smoke run's figures are not results: it writes none unless a file is named.
    args.no_results = args.no_results or (args.quick and args.results is None)
    args.results = args.results or str(RESULTS)
    sizes = [QUICK_ROWS] if args.quick else (args.rows or list(default_rows))
    repeat = args.repeat or (1 if args.quick else DEFAULT_REPEAT)
    command = " ".join([f".venv/bin/python -m {module}", *(argv if argv is not None else sys.argv[1:])])
    return args, sizes, repeat, command


@contextmanager
def bench_session(app_name: str, args: argparse.Namespace):
    """(spark, machine facts, input partitions, workdir) for one benchmark run; stops Spark and
    deletes a workdir it made when done."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from hudi_engine.spark import local_spark

    info = machine()
    partitions = args.partitions or 2 * (os.cpu_count() or 2)
    workdir = args.workdir or tempfile.mkdtemp(prefix="hudi-bench-")
    os.makedirs(workdir, exist_ok=True)
    _log(f"machine: {info['nproc']} CPUs {info['cpu']}, {info['memory']}; load {_loadavg()}; "
         f"workdir {workdir}")
    _log(f"codec: {CODEC} for both spark.sql.parquet.compression.codec and "
         "hoodie.parquet.compression.codec")
    spark = local_spark(app_name, memory=DRIVER_MEMORY,
                        extra_conf={"spark.sql.parquet.compression.codec": CODEC})
    try:
        yield spark, info, partitions, workdir
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def run_sizes(app_name: str, args: argparse.Namespace, sizes, repeat: int, command: str,
              measure, summary, write) -> int:
    """The driver every benchmark shares: an untimed warm-up, then each row count (a failure is
    recorded and the other sizes still run), temp tables removed, results written.
    ``measure(spark, n, partitions, workdir, repeat, log)`` returns (phases, facts)."""
    started = dt.datetime.now(dt.timezone.utc).astimezone()
    results: list[tuple[int, list[Phase], dict]] = []
    errors: list[str] = []
    with bench_session(app_name, args) as (spark, info, partitions, workdir):
        _log(f"== warm-up on {WARMUP_ROWS:,} rows (untimed)")
        measure(spark, WARMUP_ROWS, partitions, os.path.join(workdir, "warmup"), 1, False)
        for n in sizes:
            try:
                phases, facts = measure(spark, n, partitions, workdir, repeat, True)
                results.append((n, phases, facts))
                print("\n".join(summary(n, phases, facts)), flush=True)
            except Exception as exc:   # record it, still report the other sizes
                traceback.print_exc()
                errors.append(f"{n:,} rows: {type(exc).__name__}: {str(exc).splitlines()[0][:500]}")
            finally:
                for name in os.listdir(workdir):
                    shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)
    if not args.no_results:
        write(Path(args.results), command, started, info, partitions, repeat, results, errors)
        _log(f"wrote {args.results}")
    for e in errors:
        print(f"FAILED {e}", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    args, sizes, repeat, command = parse_args("benchmarks.run", __doc__, DEFAULT_ROWS, argv)
    return run_sizes("hudi-cow-bench", args, sizes, repeat, command,
                     lambda spark, n, partitions, workdir, rep, log: bench_rows(
                         spark, n, partitions, workdir, rep, log=log),
                     summary_lines, write_results)


if __name__ == "__main__":
    sys.exit(main())
