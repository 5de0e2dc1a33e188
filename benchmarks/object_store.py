"""Object-store benchmark: Hudi copy-on-write writes to S3 (through ``pyarrow.fs``) against the same
writes to local disk, with the S3 requests every commit makes.

    .venv/bin/python -m benchmarks.object_store                 # 1M rows (``make bench-s3``)
    .venv/bin/python -m benchmarks.object_store --rows 5000000  # another size (repeatable)
    .venv/bin/python -m benchmarks.object_store --quick         # 100k rows, one run: a smoke test

One run starts a real S3 server (``tests/support/s3_server.py``: Ceph radosgw on a one-OSD
in-memory cluster, over loopback HTTP) in a temp folder, then measures everything once per kind of
SparkSession, each in a subprocess of its own (a driver JVM's memory is fixed when it starts, and
a stopped session's JVM stays up), one after the other:

- ``stock``: ``SparkSession.builder.master("local[2]")`` with the driver memory run.py uses and the
  server's ``fs.s3a.*`` settings as ``spark.hadoop.fs.s3a.*`` in the builder, nothing else set;
  then ``hudi_engine.spark.register(spark)``.
- ``local_spark``: ``hudi_engine.spark.local_spark`` as ``benchmarks/run.py`` makes it, the
  ``spark.hadoop.fs.s3a.*`` settings given with ``spark.conf.set`` before ``register(spark)``.

In each, for every row count N (run.py's trip rows, cached and counted before any clock starts) and
after an untimed warm-up on a few rows:

1. ``--repeat`` interleaved rounds (default 3) of: Spark's ``partitionBy("region").parquet`` to
   local disk (the baseline of the local phases); ``bulk_insert`` of the N rows into a new
   COPY_ON_WRITE table on local disk, then ``upsert 10%`` (run.py's ``updates_frame``) into it; the
   N rows partitioned by region and written to the bucket by pyarrow inside ``mapInArrow`` (each
   task streams its rows into one parquet file per region through ``S3FileSystem``, as the engine's
   tasks do: the baseline of the S3 phases); the same ``bulk_insert`` and ``upsert`` into a new
   table in the bucket (``s3a://``).
2. For every S3 phase, the requests radosgw served (its access log, read before and after the
   phase once it stopped growing) by kind and bytes, against the data files the commit wrote (its
   write stats); and no directory-marker object in the bucket afterwards.
3. Requests per commit as the table grows: a table built by five ``bulk_insert`` commits of N/5
   rows each, and the same upsert of 1,000 existing keys of one partition (``ts + 1``) once after
   the first commit and once after the fifth.
4. (``local_spark`` only) One more 10% upsert into the local and into the S3 table of the last
   round, untimed, under ``py-spy`` (driver and Spark's Python workers), for where the time goes.

Before the sessions start, single requests through pyarrow's client (empty, small and large PUTs,
HEAD, GET, LIST) are timed against the idle server, for the cost of each kind.

Every phase is checked after its clock stops (row counts, the sum of ``ts``, the upserted values,
the commits' write stats), so a broken write fails the run. Results go to stdout and to the
``object_store`` section of ``benchmarks/RESULTS.md``; temp tables, buckets' objects and the
server are removed.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import parse_qs

from .mor import PhaseRecorder, commit_of, latest_slices
from .run import (_TICK, CODEC, DRIVER_MEMORY, HUDI_OPTIONS, NEW_STATUS, REGIONS, TS0, WARMUP_ROWS, Phase,
                  _cpu_split, _log, _proc_stats, _mib_split, bench_session, best_of, busy_phases, check, checksum,
                  dir_bytes, machine, parse_args, phase_line, reading_notes, replace_section,
                  setup_lines, source_frame, updates_frame)

DEFAULT_ROWS = (1_000_000,)
QUICK_ROWS = 100_000             # run.py's --quick size is 200,000; this one writes everything twice
WARMUP = WARMUP_ROWS // 5        # the untimed warm-up of every session
KINDS = ("stock", "local_spark")
STOCK_MASTER = "local[2]"
CHILD_ENV = "HUDI_BENCH_OBJECT_STORE"     # set for the per-session subprocesses
REQUEST_KINDS = ("GET", "PUT", "LIST", "DELETE", "HEAD", "POST")
SETTLE_S = 0.3                   # radosgw writes its access log shortly after it answers
FLUSH_ROWS = 50_000              # the S3 baseline writes a region's rows as a row group at this many
GROWTH_COMMITS = 5               # the growing table: this many bulk_inserts of N / GROWTH_COMMITS rows
SMALL_UPSERT = 1_000             # keys of one partition upserted at each table size
SMALL_REGION = REGIONS[0]
PROFILE_RATE = 50                # py-spy samples per second
LATENCY_SAMPLES = 20             # requests per kind in the client latency probe
LATENCY_PUTS = (("PUT 0 B (as a marker)", 0), ("PUT 1 B", 1), ("PUT 64 KiB", 64 << 10), ("PUT 4 MiB", 4 << 20))

LOCAL_BASE, BULK_LOCAL, UPSERT_LOCAL = "parquet partitioned, local", "bulk_insert, local", "upsert 10%, local"
S3_BASE, BULK_S3, UPSERT_S3 = "arrow parquet partitioned, S3", "bulk_insert, S3", "upsert 10%, S3"
VERSUS = {BULK_LOCAL: LOCAL_BASE, UPSERT_LOCAL: LOCAL_BASE, BULK_S3: S3_BASE, UPSERT_S3: S3_BASE}
LOCAL_TWIN = {BULK_S3: BULK_LOCAL, UPSERT_S3: UPSERT_LOCAL, S3_BASE: LOCAL_BASE}
BULK_OPTIONS = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}
UPSERT_OPTIONS = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "upsert"}


# --- requests ----------------------------------------------------------------------------------------
def settled_requests(server) -> list:
    """Every request the server has logged, read once two reads SETTLE_S apart agree."""
    seen = -1
    while True:
        time.sleep(SETTLE_S)
        requests = server.requests()
        if len(requests) == seen:
            return requests
        seen = len(requests)


def server_cpu(pids: list[int]) -> float:
    """CPU seconds the server's daemons (radosgw, the OSD, the monitor) have used so far."""
    stats = _proc_stats()
    return sum(stats[pid][2] for pid in pids if pid in stats) / _TICK


def target_of(request) -> str:
    """What a request touched: data files, the timeline, markers, the metadata table..."""
    path = request.path
    if request.kind == "LIST":
        path += "/" + "".join(parse_qs(request.query).get("prefix", [""]))
    if "/.hoodie_partition_metadata" in path:
        return "partition metadata"
    if "/.hoodie/.temp/" in path or path.endswith("/.hoodie/.temp"):
        return "markers"
    if "/.hoodie/metadata" in path:
        return "metadata table"
    if "/.hoodie/" in path or path.endswith("/.hoodie"):
        return "timeline"
    return "data" if request.kind != "LIST" else "listing"


def tally(requests) -> dict:
    """Counts and bytes by kind, failures, multipart parts and what the requests touched."""
    count = Counter(r.kind for r in requests)
    moved = Counter()
    for r in requests:
        moved[r.kind] += r.bytes
    return {"count": {k: count.get(k, 0) for k in REQUEST_KINDS},
            "bytes": {k: moved.get(k, 0) for k in REQUEST_KINDS},
            "total": len(requests),
            "failed": dict(Counter(f"{r.kind} {r.status}" for r in requests if r.status >= 400)),
            "parts": sum(1 for r in requests if r.method == "PUT" and "partNumber=" in r.query),
            "targets": {target: dict(Counter(r.kind for r in requests if target_of(r) == target).most_common())
                        for target, _ in Counter(target_of(r) for r in requests).most_common()}}


def targets_text(req: dict) -> str:
    """``data: GET 40, HEAD 40; timeline: ...``: what the requests touched, by kind."""
    return "; ".join(f"{target}: {', '.join(f'{k} {v}' for k, v in kinds.items())}"
                     for target, kinds in req["targets"].items())


def client_latencies(server, bucket: str) -> dict[str, float]:
    """Median milliseconds of single requests through pyarrow's S3 client with the engine's settings
    (``allow_delayed_open``: a small file is one PUT), the server otherwise idle."""
    from hudi_engine.storage import Storage
    from pyarrow.fs import FileSelector

    fs = server.filesystem(allow_delayed_open=True)
    root = f"{bucket}/latency"

    def median(action) -> float:
        took = []
        for i in range(LATENCY_SAMPLES):
            started = time.perf_counter()
            action(i)
            took.append((time.perf_counter() - started) * 1000)
        return statistics.median(took)

    def put(size: int):
        def action(i: int) -> None:
            with fs.open_output_stream(f"{root}/{size}/{i}") as out:
                out.write(b"x" * size)          # the engine's write_bytes writes b"" for a marker
        return action

    out = {label: median(put(size)) for label, size in LATENCY_PUTS}
    out["HEAD"] = median(lambda i: fs.get_file_info(f"{root}/1/{i}"))
    out["GET 4 MiB (HEAD and GET)"] = median(lambda i: fs.open_input_stream(f"{root}/{4 << 20}/{i}").read())
    out["LIST (20 keys)"] = median(lambda i: fs.get_file_info(FileSelector(f"{root}/1")))
    Storage(f"s3a://{root}", server.options()).delete_dir("")
    return out


# --- the S3 baseline: plain pyarrow in Spark's tasks ---------------------------------------------------
@dataclass(frozen=True)
class ArrowPartitionedWrite:
    """Executor side of the S3 baseline: a task's rows into one parquet file per region under
    ``root`` (``region=<value>/``, the column left out, as Spark's ``partitionBy`` does), a row group
    per FLUSH_ROWS rows of a region; yields (files, rows, bytes)."""
    s3: tuple                     # S3FileSystem keywords
    root: str                     # bucket/prefix

    def __call__(self, batches):
        import uuid

        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
        from hudi_engine.storage.options import CHECKSUM_ENV
        from pyarrow.fs import S3FileSystem
        from pyspark import TaskContext

        os.environ.update(CHECKSUM_ENV)
        fs = S3FileSystem(**dict(self.s3))
        name = f"part-{TaskContext.get().partitionId():05d}-{uuid.uuid4().hex[:12]}.{CODEC}.parquet"
        files: dict[str, tuple] = {}
        buffers: dict[str, list] = {}
        rows = 0

        def flush(region: str) -> None:
            table = pa.Table.from_batches(buffers.pop(region))
            if region not in files:
                stream = fs.open_output_stream(f"{self.root}/region={region}/{name}")
                files[region] = (stream, pq.ParquetWriter(stream, table.schema, compression=CODEC))
            files[region][1].write_table(table, row_group_size=table.num_rows)

        for batch in batches:
            column = batch.column("region")
            for region in pc.unique(column).to_pylist():
                part = batch.filter(pc.equal(column, region)).drop_columns(["region"])
                buffers.setdefault(region, []).append(part)
                rows += part.num_rows
                if sum(b.num_rows for b in buffers[region]) >= FLUSH_ROWS:
                    flush(region)
        for region in list(buffers):
            flush(region)
        written = 0
        for stream, writer in files.values():
            writer.close()
            written += stream.tell()
            stream.close()
        yield pa.RecordBatch.from_pydict({"files": [len(files)], "rows": [rows], "bytes": [written]})


def s3_keywords(server) -> tuple:
    """The S3FileSystem keywords the engine's client gets for this server (one PUT per small file)."""
    return (("access_key", server.access_key), ("secret_key", server.secret_key), ("region", server.region),
            ("scheme", "http"), ("endpoint_override", server.endpoint.removeprefix("http://")),
            ("force_virtual_addressing", False), ("allow_delayed_open", True))


def delete_table(path: str) -> None:
    """A table's files, removed as the engine removes them (no directory markers left behind)."""
    from hudi_engine.storage import Storage

    if "://" in path:
        Storage(path).delete_dir("")
    else:
        shutil.rmtree(path, ignore_errors=True)


# --- py-spy ------------------------------------------------------------------------------------------
@contextmanager
def py_spy(out: Path):
    """Samples this process and its descendants (Spark's Python workers too), idle threads included."""
    spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which("py-spy")
    if not spy:
        yield
        return
    proc = subprocess.Popen([spy, "record", "--pid", str(os.getpid()), "--subprocesses", "--idle",
                             "--nonblocking", "--rate", str(PROFILE_RATE), "--format", "raw", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)                # attached before the work starts
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _frame(text: str) -> tuple[str, str]:
    """(function, file) of one py-spy frame ``func (file:line)``."""
    func, _, where = text.rpartition(" (")
    return (func, where.rsplit(":", 1)[0]) if func else (text, "")


def _below(frames: list[tuple[str, str]]) -> str:
    """What the deepest engine frame was calling into."""
    for _, file in frames:
        for lib in ("pyspark", "py4j", "pyarrow", "obstore", "numpy"):
            if lib in file:
                return lib
    return "python" if frames else "itself"


def profile_summary(raw: Path) -> dict:
    """Driver seconds during the write (waiting on Spark, in the engine's storage and pyarrow calls,
    other Python) and the workers' seconds by their deepest engine frame."""
    driver: Counter = Counter()
    workers: Counter = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit() or not stack.startswith("process "):
            continue
        parts = stack.split(";")
        depth = sum(1 for p in parts if p.startswith("process "))
        frames = [_frame(p) for p in parts if not p.startswith("process ")]
        engine = [i for i, (_, file) in enumerate(frames) if "hudi_engine" in file]
        if not engine:
            continue
        n = int(count)
        total += n
        if depth == 1:
            if not any(f == "write" and "api/writes" in file for f, file in frames):
                continue
            if any("py4j" in file for _, file in frames):
                driver["waiting on Spark (py4j)"] += n
            elif any("hudi_engine/storage" in file or "pyarrow" in file or "obstore" in file
                     for _, file in frames):
                driver["storage calls (hudi_engine.storage, pyarrow)"] += n
            else:
                driver["other Python"] += n
        else:
            deepest = engine[-1]
            func, file = frames[deepest]
            workers[f"{func} ({file.split('hudi_engine/')[-1]}) > {_below(frames[deepest + 1:])}"] += n
    to_s = 1 / PROFILE_RATE
    return {"driver": {k: v * to_s for k, v in driver.most_common()},
            "workers": {k: v * to_s for k, v in workers.most_common(8)},
            "workers_total": sum(workers.values()) * to_s}


# --- one session, one row count ------------------------------------------------------------------------
class ObjectStoreBench(PhaseRecorder):
    """Every phase for one row count in one session; ``log=False`` runs the rounds untimed."""

    def __init__(self, spark, server, bucket: str, n: int, partitions: int, workdir: str, repeat: int,
                 log: bool = True, profile: bool = False, server_pids: tuple[int, ...] = ()):
        super().__init__(log)
        self.spark, self.server, self.bucket, self.n = spark, server, bucket, n
        self.server_pids = list(server_pids)
        self.partitions, self.workdir, self.repeat, self.profile = partitions, workdir, repeat, profile
        self.s3_root = f"s3a://{bucket}/{'warmup' if not log else 'bench'}_{n}"
        self.requests: dict[str, list[dict]] = {}
        self.files: dict[str, list[int]] = {}
        self.facts: dict = {}

    def run(self) -> tuple[list[Phase], dict]:
        self.say(f"== {self.n:,} rows: generating (untimed)")
        self.source = source_frame(self.spark, self.n, self.partitions).cache()
        check(self.source.count() == self.n, "the generated frame lost rows")
        rows, self.ts_sum, amended = checksum(self.source)
        check((rows, amended) == (self.n, 0), f"generated checksum {rows, amended}")
        self.updates = updates_frame(self.source).cache()
        self.n_updates = self.updates.count()
        check(0 < self.n_updates < self.n, "no rows to upsert")
        self.facts["updates"] = self.n_updates
        try:
            for rep in range(self.repeat):
                self.say(f"-- {self.n:,} rows, run {rep + 1} of {self.repeat}")
                self.round(rep, last=rep == self.repeat - 1)
            if self.log:
                self.growth()
        finally:
            self.source.unpersist()
            self.updates.unpersist()
        phases = [best_of(r) for r in self.runs.values()]
        best = {name: min(range(len(runs)), key=lambda i: runs[i].seconds) for name, runs in self.runs.items()}
        self.facts["splits"] = {name: self.splits[name][best[name]] for name in self.splits}
        self.facts["requests"] = {name: self.requests[name][best[name]] for name in self.requests}
        self.facts["files"] = {name: self.files[name][best[name]] for name in self.files}
        self.facts["request_totals"] = {name: [r["total"] for r in runs] for name, runs in self.requests.items()}
        return phases, self.facts

    # --- timing and requests ----------------------------------------------------------------------
    def phase(self, name: str, rows: int, action, split: str | None = None, s3: bool = False):
        """``action`` timed (and its S3 requests counted); the bucket holds no directory markers after."""
        if not (self.log and s3):
            out = self.timed(name, rows, action, split)
        else:
            before, cpu = len(settled_requests(self.server)), server_cpu(self.server_pids)
            out = self.timed(name, rows, action, split)
            cpu = server_cpu(self.server_pids) - cpu    # before the wait for the log, which is idle
            run = self.runs[name][-1]    # the server is ours: not outside load
            run.other_cores = run.other_max = max(0.0, run.other_cores - cpu / run.seconds)
            self.requests.setdefault(name, []).append(
                {**tally(settled_requests(self.server)[before:]), "server_cpu_s": cpu})
        if s3:
            self.no_markers(name)
        return out

    def no_markers(self, name: str) -> None:
        markers = self.server.directory_markers(self.bucket)
        check(markers == [], f"{name}: directory-marker objects in the bucket: {markers[:5]}")

    def wrote(self, name: str, files: int, size: int) -> None:
        """The data files and bytes the last run of ``name`` wrote."""
        if self.log and name in self.runs:
            self.runs[name][-1].written_bytes = size
            self.files.setdefault(name, []).append(files)
            if name in self.requests:
                self.requests[name][-1]["files"] = files

    # --- 1. the rounds ----------------------------------------------------------------------------
    def round(self, rep: int, last: bool) -> None:
        spark, n, source = self.spark, self.n, self.source
        plain = os.path.join(self.workdir, f"parquet_part_{n}")
        self.phase(LOCAL_BASE, n, lambda: source.write.mode("overwrite").partitionBy("region").parquet(plain))
        check(spark.read.parquet(plain).count() == n, f"{LOCAL_BASE}: wrong row count")
        self.wrote(LOCAL_BASE, sum(1 for _, _, fs in os.walk(plain) for f in fs if f.endswith(".parquet")),
                   dir_bytes(plain))
        shutil.rmtree(plain)
        local = os.path.join(self.workdir, f"hudi_{n}_{rep}")
        self.table(BULK_LOCAL, UPSERT_LOCAL, local, s3=False, keep=last and self.profile)

        arrow = f"{self.s3_root}/arrow_{rep}"
        out = self.phase(S3_BASE, n, lambda: source.mapInArrow(
            ArrowPartitionedWrite(s3_keywords(self.server), arrow.split("://", 1)[1]),
            "files long, rows long, bytes long").groupBy().sum().first(), s3=True)
        files, rows, size = (int(x) for x in out)
        check(rows == n, f"{S3_BASE}: tasks wrote {rows} rows, not {n}")
        self.check_arrow_copy(arrow, files)
        self.wrote(S3_BASE, files, size)
        delete_table(arrow)
        table = f"{self.s3_root}/hudi_{rep}"
        self.table(BULK_S3, UPSERT_S3, table, s3=True, keep=last and self.profile)
        if last and self.profile:
            self.profiled(local, table)

    def check_arrow_copy(self, path: str, files: int) -> None:
        import pyarrow.compute as pc
        import pyarrow.dataset as ds

        copy = ds.dataset(path.split("://", 1)[1], filesystem=self.server.filesystem(), format="parquet",
                          partitioning="hive")
        check(len(copy.files) == files, f"{S3_BASE}: {len(copy.files)} files listed, tasks wrote {files}")
        ts = copy.to_table(columns=["ts"]).column("ts")
        got = (len(ts), pc.sum(pc.subtract(ts, TS0)).as_py())
        check(got == (self.n, self.ts_sum), f"{S3_BASE}: read back (rows, ts sum) {got}, expected "
              f"{(self.n, self.ts_sum)}")

    def table(self, bulk: str, upsert: str, path: str, s3: bool, keep: bool) -> None:
        """bulk_insert then upsert 10% into a new table at ``path``, each checked."""
        from hudi_engine import read, write

        n, n_updates = self.n, self.n_updates
        instant = self.phase(bulk, n, lambda: write(self.source, path, BULK_OPTIONS), "bulk_insert", s3)
        action, stats = commit_of(path, instant)
        check(action == "commit", f"{bulk} completed as {action}")
        check(sum(s["numWrites"] for s in stats) == n, f"{bulk}: numWrites != rows")
        self.wrote(bulk, len(stats), sum(s["fileSizeInBytes"] for s in stats))
        got = checksum(read(self.spark, path))
        check(got == (n, self.ts_sum, 0), f"{bulk}: read back {got}, expected {(n, self.ts_sum, 0)}")

        instant = self.phase(upsert, n_updates, lambda: write(self.updates, path, UPSERT_OPTIONS), "upsert", s3)
        self.check_upsert(upsert, path, instant, n_updates, (n, self.ts_sum + n_updates, n_updates))
        if not keep:
            delete_table(path)

    def check_upsert(self, name: str, path: str, instant: str, rows: int, want: tuple) -> list[dict]:
        from hudi_engine import read

        action, stats = commit_of(path, instant)
        check(action == "commit", f"{name} completed as {action}")
        updated = sum(s["numUpdateWrites"] for s in stats)
        check(updated == rows, f"{name}: numUpdateWrites {updated} != {rows}")
        check(sum(s["numInserts"] for s in stats) == 0, f"{name}: inserted rows")
        self.wrote(name, len(stats), sum(s["fileSizeInBytes"] for s in stats))
        got = checksum(read(self.spark, path))
        check(got == want, f"{name}: read back {got}, expected {want}")
        return stats

    # --- 3. requests per commit as the table grows ------------------------------------------------
    def growth(self) -> None:
        from pyspark.sql import functions as F

        n, step = self.n, self.n // GROWTH_COMMITS
        path = f"{self.s3_root}/growing"
        row_id = ((F.col("ts") - F.lit(TS0)) / 1000).cast("long")     # ts = TS0 + id * 1000 + (0..999)
        bounds = [k * step for k in range(GROWTH_COMMITS)] + [n]
        chunks = [self.source.filter((row_id >= lo) & (row_id < hi)) for lo, hi in zip(bounds, bounds[1:])]
        first = checksum(chunks[0])
        small = (chunks[0].filter(F.col("region") == SMALL_REGION).orderBy("uuid").limit(SMALL_UPSERT)
                 .withColumn("ts", F.col("ts") + 1).withColumn("status", F.lit(NEW_STATUS)).cache())
        check(small.count() == SMALL_UPSERT, f"fewer than {SMALL_UPSERT} rows of {SMALL_REGION} in the first chunk")
        steps: list[dict] = []
        try:
            self.say(f"-- {n:,} rows: requests per commit as the table grows")
            for k, chunk in enumerate(chunks):
                rows = bounds[k + 1] - bounds[k]
                steps.append(self.grow_step(f"bulk_insert #{k + 1}", rows, path, lambda c=chunk: write_bulk(c, path),
                                            "bulk_insert"))
                if k in (0, len(chunks) - 1):
                    upserts = 1 if k == 0 else 2
                    before = (first[0], first[1]) if k == 0 else (n, self.ts_sum + SMALL_UPSERT)
                    frame = small if k == 0 else small.withColumn("ts", F.col("ts") + 1)
                    steps.append(self.grow_step(f"upsert {SMALL_UPSERT:,} keys", SMALL_UPSERT, path,
                                                lambda f=frame: write_upsert(f, path), "upsert",
                                                want=(before[0], before[1] + SMALL_UPSERT, SMALL_UPSERT),
                                                upserts=upserts))
        finally:
            small.unpersist()
        delete_table(path)
        self.facts["growth"] = steps

    def grow_step(self, name: str, rows: int, path: str, action, split: str, want: tuple | None = None,
                  upserts: int = 0) -> dict:
        """One commit into the growing table: its time, requests and files, the table's size after."""
        from hudi_engine.table.meta_client import HoodieTable

        instant = self.phase(name, rows, action, split, s3=True)
        if want is None:
            action_name, stats = commit_of(path, instant)
            written = sum(s["numWrites"] for s in stats)
            check(action_name == "commit" and written == rows,
                  f"growing table, {name}: completed as {action_name}, {written} of {rows} rows written")
            self.wrote(name, len(stats), sum(s["fileSizeInBytes"] for s in stats))
        else:
            self.check_upsert(name, path, instant, SMALL_UPSERT, want)
        phase, requests = self.runs.pop(name)[0], self.requests.pop(name)[0]
        self.files.pop(name)
        slices = latest_slices(path)
        return {"name": name, "upserts": upserts, "seconds": phase.seconds, "split": self.splits.pop(name)[0],
                "requests": requests, "files": requests["files"], "bytes": phase.written_bytes,
                "table_rows": checksum(self.read(path))[0], "table_files": len(slices),
                "partition_files": sum(1 for s in slices if s.partition == SMALL_REGION),
                "commits": len(HoodieTable.load(path).timeline.completed_writes())}

    def read(self, path: str):
        from hudi_engine import read

        return read(self.spark, path)

    # --- 4. profile -------------------------------------------------------------------------------
    def profiled(self, local: str, table: str) -> None:
        """One more upsert (``ts + 1`` again) into each table of the last round, under py-spy."""
        from pyspark.sql import functions as F

        again = self.updates.withColumn("ts", F.col("ts") + 1)
        want = (self.n, self.ts_sum + 2 * self.n_updates, self.n_updates)
        self.facts["profile"] = {}
        for where, path in (("local", local), ("S3", table)):
            self.say(f"-- {self.n:,} rows: upsert 10% into the {where} table under py-spy (untimed)")
            raw = Path(self.workdir) / f"py-spy-{where}.txt"
            started = time.perf_counter()
            with py_spy(raw):
                instant = write_upsert(again, path)
            seconds = time.perf_counter() - started
            self.check_upsert(f"profiled upsert, {where}", path, instant, self.n_updates, want)
            if where == "S3":
                self.no_markers("profiled upsert, S3")
            if raw.exists():
                self.facts["profile"][where] = {"seconds": seconds, **profile_summary(raw)}
            delete_table(path)


def write_bulk(frame, path: str) -> str:
    from hudi_engine import write

    return write(frame, path, BULK_OPTIONS)


def write_upsert(frame, path: str) -> str:
    from hudi_engine import write

    return write(frame, path, UPSERT_OPTIONS)


# --- sessions (in the subprocess) ----------------------------------------------------------------------
@contextmanager
def stock_session(args, options: dict[str, str]):
    """``SparkSession.builder`` as a user writes it: master, driver memory and the S3 settings."""
    from pyspark.sql import SparkSession

    info = machine()
    partitions = args.partitions or 2 * (os.cpu_count() or 2)
    builder = (SparkSession.builder.appName("hudi-s3-bench-stock").master(STOCK_MASTER)
               .config("spark.driver.memory", DRIVER_MEMORY))
    for key, value in options.items():
        builder = builder.config(f"spark.hadoop.{key}", value)
    spark = builder.getOrCreate()
    with tempfile.TemporaryDirectory(prefix="hudi-bench-s3-", dir=args.workdir) as workdir:
        try:
            yield spark, info, partitions, workdir
        finally:
            spark.stop()


@contextmanager
def engine_session(args, options: dict[str, str]):
    """``local_spark`` as run.py makes it; the S3 settings go in with ``spark.conf.set``."""
    with bench_session("hudi-s3-bench", args) as (spark, info, partitions, workdir):
        for key, value in options.items():
            spark.conf.set(f"spark.hadoop.{key}", value)
        yield spark, info, partitions, workdir


def child(job: dict, argv: list[str] | None) -> int:
    """One session kind: every row count, results to ``job['out']`` as JSON."""
    from hudi_engine.logs import show_progress
    from hudi_engine.spark import register

    from tests.support.s3_server import S3Server

    args, sizes, repeat, _ = parse_args("benchmarks.object_store", __doc__, DEFAULT_ROWS, argv)
    sizes = [QUICK_ROWS] if args.quick else sizes
    server = S3Server(job["endpoint"], job["access_key"], job["secret_key"], job["region"], Path(job["folder"]))
    kind, bucket = job["kind"], job["bucket"]
    show_progress()           # the engine's [hudi] lines, which split each write's time
    results, errors = [], []
    session = stock_session if kind == "stock" else engine_session
    with session(args, server.options()) as (spark, info, partitions, workdir):
        register(spark)
        _log(f"== {kind} session: {spark.sparkContext.master}, bucket {bucket}; warm-up on {WARMUP:,} rows (untimed)")
        ObjectStoreBench(spark, server, bucket, WARMUP, partitions, os.path.join(workdir, "warmup"), 1,
                         log=False).run()
        for n in sizes:
            try:
                os.makedirs(os.path.join(workdir, str(n)), exist_ok=True)
                phases, facts = ObjectStoreBench(spark, server, bucket, n, partitions, os.path.join(workdir, str(n)),
                                                 repeat, profile=kind == "local_spark",
                                                 server_pids=tuple(job["pids"])).run()
                results.append({"n": n, "phases": [asdict(p) for p in phases], "facts": facts})
                print("\n".join(summary_lines(kind, n, phases, facts)), flush=True)
            except Exception as exc:   # record it, still run the other sizes
                traceback.print_exc()
                errors.append(f"{kind}, {n:,} rows: {type(exc).__name__}: {str(exc).splitlines()[0][:500]}")
        Path(job["out"]).write_text(json.dumps({"kind": kind, "master": spark.sparkContext.master,
                                                "partitions": partitions, "results": results, "errors": errors,
                                                "info": info}))
    return 1 if errors else 0


# --- the run (parent) ----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    job = os.environ.get(CHILD_ENV)
    if job:
        return child(json.loads(job), argv)
    args, sizes, repeat, command = parse_args("benchmarks.object_store", __doc__, DEFAULT_ROWS, argv)
    sizes = [QUICK_ROWS] if args.quick else sizes
    from tests.support.s3_server import start_s3_server, stop_s3_server

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = dt.datetime.now(dt.timezone.utc).astimezone()
    folder = Path(tempfile.mkdtemp(prefix="hudi-bench-s3-server-"))
    runs: list[dict] = []
    errors: list[str] = []
    server = start_s3_server(folder)
    try:
        _log(f"S3 server: radosgw on {server.endpoint} (folder {folder})")
        server.create_bucket("bench-latency")
        latency = client_latencies(server, "bench-latency")
        _log("client latency (median ms): " + ", ".join(f"{k} {v:.1f}" for k, v in latency.items()))
        for kind in KINDS:
            bucket = f"bench-{kind.replace('_', '-')}"
            server.create_bucket(bucket)
            out = folder / f"{kind}.json"
            env = {**os.environ, CHILD_ENV: json.dumps({
                "kind": kind, "bucket": bucket, "out": str(out), "folder": str(folder),
                "endpoint": server.endpoint, "access_key": server.access_key,
                "secret_key": server.secret_key, "region": server.region,
                "pids": [d.process.pid for d in server.daemons]})}
            argv_child = list(argv if argv is not None else sys.argv[1:])
            code = subprocess.run([sys.executable, "-m", "benchmarks.object_store", *argv_child], env=env).returncode
            if out.exists():
                runs.append(json.loads(out.read_text()))
                errors += runs[-1]["errors"]
            if code != 0 and not (out.exists() and runs[-1]["errors"]):
                errors.append(f"{kind}: the session's process exited with {code}")
        requests_total = len(server.requests())
    finally:
        stop_s3_server(server)
        shutil.rmtree(folder, ignore_errors=True)
    for run in runs:
        for r in run["results"]:
            r["phases"] = [Phase(**p) for p in r["phases"]]
    text = report(command, started, runs, errors, repeat, requests_total, latency)
    print(text, flush=True)
    if not args.no_results:
        replace_section(Path(args.results), "object_store", text)
        _log(f"wrote {args.results}")
    for e in errors:
        print(f"FAILED {e}", file=sys.stderr)
    return 1 if errors or not runs else 0


# --- report ------------------------------------------------------------------------------------------
def _ratios(p: Phase, by_name: dict[str, Phase]) -> tuple[str, str]:
    base, twin = by_name.get(VERSUS.get(p.name, "")), by_name.get(LOCAL_TWIN.get(p.name, ""))
    vs = f"{p.seconds / base.seconds:.2f}x" if base else "baseline"
    return vs, (f"{p.seconds / twin.seconds:.2f}x" if twin else "-")


def _split_text(split: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in split.items()) if split else "-"


def _requests_text(req: dict) -> str:
    return " / ".join(str(req["count"][k]) for k in REQUEST_KINDS)


def summary_lines(kind: str, n: int, phases: list[Phase], facts: dict) -> list[str]:
    by_name = {p.name: p for p in phases}
    lines = [f"[{kind}] N = {n:,} rows ({facts.get('updates', 0):,} upserted); best of {len(phases[0].runs)} runs"]
    for p in phases:
        vs, s3 = _ratios(p, by_name)
        ratio = vs if vs == "baseline" else f"{vs} baseline"
        lines.append(phase_line(p, ratio if s3 == "-" else f"{ratio}, {s3} local", 30))
    for name, req in facts.get("requests", {}).items():
        files = req.get("files", 0)
        lines.append(f"  requests {name}: {req['total']} ({'/'.join(REQUEST_KINDS)} {_requests_text(req)}) "
                     f"for {files} files written: {req['total'] / max(files, 1):.1f} per file; "
                     f"{targets_text(req)}; failed {req['failed'] or 'none'}; multipart parts {req['parts']}")
    for step in facts.get("growth", []):
        lines.append(f"  growing table, {step['name']}: {step['seconds']:.2f} s, {step['requests']['total']} requests "
                     f"({_requests_text(step['requests'])}), {step['files']} files written; table after it: "
                     f"{step['table_rows']:,} rows, {step['table_files']} files, {step['commits']} commits")
    return lines


def report(command: str, started: dt.datetime, runs: list[dict], errors: list[str], repeat: int,
           requests_total: int, latency: dict[str, float]) -> str:
    info = runs[0]["info"] if runs else machine()
    partitions = runs[0]["partitions"] if runs else 0
    nproc = info["nproc"] or 1
    results = [(r["n"], r["phases"], r["facts"]) for run in runs for r in run["results"]]
    phases_all = [p for _, phases, _ in results for p in phases]
    out = [
        "# Object-store benchmark",
        "",
        "Hudi copy-on-write `bulk_insert` and `upsert` through `hudi_engine.write` into a table on local "
        "disk and into one on S3 (`s3a://`, the engine's `pyarrow.fs` storage; no Hadoop S3A connector), "
        "each against a plain write of the same cached rows in the same SparkSession, and the S3 "
        "requests each commit makes. Produced by `benchmarks/object_store.py` (`make bench-s3`); every "
        "run rewrites this section of the file.",
        "",
        *setup_lines(command, started, info, partitions),
        f"- **Sessions:** each kind in its own process, one after the other: *stock* = "
        f"`SparkSession.builder.master(\"{STOCK_MASTER}\").config(\"spark.driver.memory\", \"{DRIVER_MEMORY}\")` "
        "with `spark.hadoop.fs.s3a.*` in the builder and nothing else (Spark's defaults: 200 shuffle "
        "partitions, 10,000 rows per Arrow batch); *local_spark* = as the Spark bullet above, with "
        "`spark.conf.set(\"spark.hadoop.fs.s3a.*\", ...)`; both then `hudi_engine.spark.register(spark)`. "
        "`PYSPARK_PYTHON` is the venv's Python in both",
        "- **S3:** Ceph radosgw 16.2 (`tests/support/s3_server.py`) on a one-OSD in-memory cluster on "
        "this machine, plain HTTP over loopback, started by the benchmark; path-style, one bucket per "
        "session kind. Its CPU (in the requests table) is not in the sampled process tree; it is taken "
        "off *other procs*, which measures outside load",
        "- **Hudi:** record key `uuid`, partition path `region`, precombine `ts`, COPY_ON_WRITE, every other "
        "option at its default (bulk insert sort mode NONE, SIMPLE index)",
        f"- **Baselines:** local: Spark's `df.write.partitionBy(\"region\").parquet`; S3: the rows through "
        f"`mapInArrow`, each task writing one parquet file per region ({CODEC}, a row group per "
        f"{FLUSH_ROWS:,} rows of a region, `region=` folders) with pyarrow's `S3FileSystem` "
        "(`allow_delayed_open=True`, the engine's client settings) - the same path the engine's "
        "tasks take, without Hudi's work; no rows pass through the driver",
        "",
        f"Every timed phase ran {repeat} time(s), interleaved, after an untimed warm-up of all of them on "
        f"{WARMUP:,} rows; tables show the fastest run. Checked after every run, outside the clock: the "
        "row count and sum of `ts` read back (`hudi_engine.read` for Hudi, pyarrow's dataset for the S3 "
        "baseline, `spark.read` for the local one), the upserted rows' new values, the commits' write "
        "stats (all rows written; the upserts update exactly the upserted rows, insert none), and no "
        "directory-marker object in the bucket after any S3 phase.",
        "",
    ]
    for run in runs:
        out += [f"## Results: {run['kind']} session (`{run['master']}`)", "",
                "| rows | phase | seconds (best) | all runs | rows/s | vs baseline | S3 vs local | files written "
                "| MiB written | peak RSS MiB | JVM / driver py / py workers | CPU s JVM / py | other procs (cores) |",
                "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---:|"]
        for r in run["results"]:
            by_name = {p.name: p for p in r["phases"]}
            files = r["facts"]["files"]
            for p in r["phases"]:
                vs, s3 = _ratios(p, by_name)
                out.append(f"| {r['n']:,} | {p.name} | {p.seconds:.2f} | {', '.join(f'{x:.1f}' for x in p.runs)} | "
                           f"{p.rows_per_s:,.0f} | {vs} | {s3} | {files.get(p.name, '-')} | "
                           f"{p.written_bytes / 2**20:,.1f} | {p.peak_mib:,.0f} | {_mib_split(p)} | {_cpu_split(p)} | "
                           f"{p.other_cores:.2f} |")
        out.append("")
    out += ["*vs baseline*: wall time over the baseline's on the same storage (local: Spark's partitioned "
            "parquet write; S3: the pyarrow write in `mapInArrow`); *S3 vs local*: over the same phase on "
            "local disk (the S3 baseline's: over Spark's local write). An upsert's rows/s counts the upserted rows (10% of N). *files written*: data "
            "files (Hudi: the commit's write stats).", "",
            "## S3 requests per phase", "",
            "Requests radosgw served during the phase's best run (its access log before and after), by "
            "kind; LIST is a bucket listing, POST a multipart upload's start or end or a batch "
            "DeleteObjects. *MiB* is what moved either way (PUT bodies in, GET bodies out). *server CPU "
            "s*: CPU time radosgw, the OSD and the monitor used during the phase, on the same cores as "
            "Spark. *touched*: requests by what they addressed (data: base files; partition metadata: "
            "`.hoodie_partition_metadata`; timeline: `.hoodie/` outside markers and the metadata table; "
            "listing: other bucket listings); a 404 is an existence check of a missing object.", "",
            "| session | rows | phase | files written | GET | PUT | LIST | DELETE | HEAD | POST | total "
            "| per file | MiB GET / PUT | multipart parts | failed (4xx/5xx) | server CPU s | touched | total in every run |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|---|"]
    for run in runs:
        for r in run["results"]:
            for name, req in r["facts"]["requests"].items():
                out.append(request_row(run["kind"], r["n"], name, req, r["facts"]["request_totals"][name]))
    out += ["", "## Requests per commit as the table grows", "",
            f"One S3 table built by {GROWTH_COMMITS} `bulk_insert` commits of N/{GROWTH_COMMITS} rows each; "
            f"after the first and after the last, an upsert of the same {SMALL_UPSERT:,} keys of partition "
            f"`{SMALL_REGION}` (`ts + 1`, checked by reading the table back). Each commit ran once.", "",
            "| session | N | commit | seconds | files written | GET | PUT | LIST | DELETE | HEAD | POST | total "
            f"| table rows after | table files after | files in `{SMALL_REGION}` | commits on the timeline | touched |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for run in runs:
        for r in run["results"]:
            for step in r["facts"].get("growth", []):
                req = step["requests"]
                out.append(f"| {run['kind']} | {r['n']:,} | {step['name']} | {step['seconds']:.2f} | {step['files']} | "
                           + " | ".join(str(req["count"][k]) for k in REQUEST_KINDS)
                           + f" | {req['total']} | {step['table_rows']:,} | {step['table_files']} | "
                           f"{step['partition_files']} | {step['commits']} | {targets_text(req)} |")
    out += ["", "## Where the time goes", "",
            "The best run of each write split at the engine's `[hudi]` progress lines (seconds): a "
            "bulk_insert's *plan* is everything before its \"writing new file groups\" line, *write* the "
            "Spark job that writes the files, up to \"committed\"; an upsert's *tag and plan* is up to "
            "\"merging and writing\" (keys, the SIMPLE index join against the base files, counts per file "
            "group), *merge/append and commit* the Spark job that rewrites the file groups and the commit, "
            "*rest* what follows the commit (clean, archival).", "",
            "| session | rows | phase | seconds | split |", "|---|---:|---|---:|---|"]
    for run in runs:
        for r in run["results"]:
            by_name = {p.name: p for p in r["phases"]}
            for name, split in r["facts"]["splits"].items():
                out.append(f"| {run['kind']} | {r['n']:,} | {name} | {by_name[name].seconds:.2f} | {_split_text(split)} |")
    out += profile_lines(runs)
    out += ["", "### Single requests", "",
            f"Median of {LATENCY_SAMPLES} requests each through pyarrow's `S3FileSystem` with the engine's "
            "settings (`allow_delayed_open=True`), before the sessions started, the server otherwise idle. "
            "A marker is an empty object; the engine writes one, synchronously, before every file.", "",
            "| request | ms |", "|---|---:|"] + [f"| {k} | {v:.1f} |" for k, v in latency.items()]
    empty, byte = latency.get(LATENCY_PUTS[0][0], 0), latency.get(LATENCY_PUTS[1][0], 0)
    marker_note = [f"- Single requests: a PUT of an empty object (every marker) took {empty:.0f} ms, one of a "
                   f"single byte {byte:.0f} ms, a HEAD {latency.get('HEAD', 0):.0f} ms and a LIST "
                   f"{latency.get('LIST (20 keys)', 0):.0f} ms; the engine writes a marker, synchronously, before "
                   "every file, so on this server that empty PUT costs more than a small file's data."
                   ] if empty > 2 * byte > 0 else []
    out += (["", "## How to read this", ""] + findings(runs) + marker_note
            + reading_notes(nproc, phases_all, busy_phases(results)))
    out.append(f"- The server served {requests_total:,} requests over the whole run (warm-ups, checks and "
               "clean-up included).")
    if errors:
        out += ["", "## Failures", ""] + [f"- {e}" for e in errors]
    return "\n".join(out)


def request_row(kind: str, n: int, name: str, req: dict, totals: list[int]) -> str:
    files = req.get("files", 0)
    failed = ", ".join(f"{k}: {v}" for k, v in req["failed"].items()) or "0"
    touched = targets_text(req)
    return (f"| {kind} | {n:,} | {name} | {files} | " + " | ".join(str(req["count"][k]) for k in REQUEST_KINDS)
            + f" | {req['total']} | {req['total'] / max(files, 1):.1f} | "
            f"{req['bytes']['GET'] / 2**20:,.1f} / {req['bytes']['PUT'] / 2**20:,.1f} | {req['parts']} | {failed} | "
            f"{req.get('server_cpu_s', 0):.1f} | {touched} | {', '.join(map(str, totals))} |")


def profile_lines(runs: list[dict]) -> list[str]:
    out = []
    for run in runs:
        for r in run["results"]:
            prof = r["facts"].get("profile")
            if not prof:
                continue
            out += ["", f"### One 10% upsert under py-spy ({run['kind']} session, {r['n']:,} rows)", "",
                    f"An extra upsert (`ts + 1` again) into the last round's local table and into its S3 "
                    f"table, untimed in the tables above, sampled by `py-spy record --subprocesses --idle` at "
                    f"{PROFILE_RATE} Hz: the driver's main thread during `write`, and Spark's Python workers "
                    "in engine code, by their deepest engine frame and what it was calling into "
                    "(*pyarrow*: parquet and `pyarrow.fs` I/O, *pyspark*: rows from or to the JVM). Worker "
                    "seconds are summed over the workers running at once; idle waits count.", "",
                    "| | " + " | ".join(f"{w} (s)" for w in prof) + " |",
                    "|---|" + "---:|" * len(prof)]
            out.append("| wall time of the write | " + " | ".join(f"{p['seconds']:.2f}" for p in prof.values()) + " |")
            for key in sorted({k for p in prof.values() for k in p["driver"]}):
                out.append(f"| driver: {key} | " + " | ".join(f"{p['driver'].get(key, 0):.2f}" for p in prof.values()) + " |")
            out.append("| workers: in engine code | " + " | ".join(f"{p['workers_total']:.2f}" for p in prof.values()) + " |")
            keys = list(dict.fromkeys(k for p in prof.values() for k in p["workers"]))
            for key in keys:
                out.append(f"| workers: `{key}` | " + " | ".join(f"{p['workers'].get(key, 0):.2f}" for p in prof.values()) + " |")
    return out


def _by_target(a: dict, b: dict) -> dict[str, tuple[int, int]]:
    """Requests of two commits per target they touched."""
    totals = [{t: sum(kinds.values()) for t, kinds in s["requests"]["targets"].items()} for s in (a, b)]
    return {t: (totals[0].get(t, 0), totals[1].get(t, 0)) for t in dict.fromkeys([*totals[0], *totals[1]])}


def findings(runs: list[dict]) -> list[str]:
    """Notes computed from the numbers: S3 against local, requests per file, the growing table."""
    out = []
    for run in runs:
        for r in run["results"]:
            by_name = {p.name: p for p in r["phases"]}
            kind, n, reqs = run["kind"], r["n"], r["facts"]["requests"]
            parts = []
            for s3, local in ((BULK_S3, BULK_LOCAL), (UPSERT_S3, UPSERT_LOCAL)):
                if s3 in by_name and local in by_name:
                    parts.append(f"{s3} took {by_name[s3].seconds / by_name[local].seconds:.2f}x its local twin "
                                 f"and {by_name[s3].seconds / by_name[S3_BASE].seconds:.2f}x the pyarrow baseline")
            for name in (BULK_S3, UPSERT_S3):
                req = reqs.get(name)
                if req and req.get("files"):
                    per = {k: v / req["files"] for k, v in req["count"].items() if v}
                    parts.append(f"{name}: {req['total'] / req['files']:.1f} requests per file written ("
                                 + ", ".join(f"{v:.1f} {k}" for k, v in per.items()) + ")")
            growth = [s for s in r["facts"].get("growth", []) if s["upserts"]]
            if len(growth) == 2:
                a, b = growth
                parts.append(f"the {SMALL_UPSERT:,}-key upsert made {a['requests']['total']} requests writing "
                             f"{a['files']} files into a table of {a['table_files']} files and {a['commits']} "
                             f"commits, {b['requests']['total']} writing {b['files']} into one of "
                             f"{b['table_files']} files and {b['commits']} commits; by what they touched: "
                             + ", ".join(f"{t} {a_n} -> {b_n}" for t, (a_n, b_n) in _by_target(a, b).items()))
            if parts:
                out.append(f"- *{kind}, {n:,} rows:* " + "; ".join(parts) + ".")
            prof = r["facts"].get("profile", {})
            if "local" in prof and "S3" in prof:
                out.append(f"- *{kind}, {n:,} rows, the profiled upsert:* " + profile_finding(prof["local"], prof["S3"]))
    return out


def profile_finding(local: dict, s3: dict) -> str:
    """What the S3 upsert spent that the local one did not, from the two py-spy profiles."""
    def driver(p: dict, word: str) -> float:
        return sum(v for k, v in p["driver"].items() if word in k)
    extra = sorted(((s3["workers"].get(k, 0) - local["workers"].get(k, 0), k)
                    for k in {*s3["workers"], *local["workers"]}), reverse=True)[:3]
    return (f"{s3['seconds']:.1f} s on S3 against {local['seconds']:.1f} s locally. The driver spent "
            f"{driver(s3, 'storage'):.1f} s (locally {driver(local, 'storage'):.1f} s) in its own storage calls "
            f"(timeline, metadata table, commit) and {driver(s3, 'Spark'):.1f} s (locally "
            f"{driver(local, 'Spark'):.1f} s) waiting on Spark jobs; the workers spent {s3['workers_total']:.1f} s "
            f"in engine code (locally {local['workers_total']:.1f} s), most of the difference in "
            + ", ".join(f"`{k}` (+{d:.1f} s)" for d, k in extra if d > 0) + ".")


if __name__ == "__main__":
    sys.exit(main())
