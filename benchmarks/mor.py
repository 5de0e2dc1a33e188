"""Merge-on-read benchmark: small upserts, snapshot reads as the log grows, and compaction.

    .venv/bin/python -m benchmarks.mor                  # 5M rows (``make bench-mor``)
    .venv/bin/python -m benchmarks.mor --rows 1000000   # another size (repeatable)
    .venv/bin/python -m benchmarks.mor --quick          # 200k rows, one run: a smoke test

For every row count N, in one SparkSession set up as ``benchmarks/run.py`` does (the rows, the
sampler, the timing and the report's shared parts are imported from there):

1. Writes. ``--repeat`` rounds (default 3), interleaved: ``parquet write`` of the N rows (the
   baseline of every write) and ``parquet read`` of them (``count`` and ``sum(ts)``, the baseline of
   every read); ``bulk_insert`` of the rows into a new COPY_ON_WRITE table, then ``upsert 1%`` of the
   keys into it; the same into a new MERGE_ON_READ table, with a snapshot read before its upsert
   (no log files yet) and after it (one log file per file group). The upsert takes one key in 100,
   hashed, so every file group of every partition gets some (``ts + 1``, ``status`` changed):
   copy-on-write rewrites every file group, merge-on-read appends a log file to each.
2. Reads as the log grows: more 1% upserts into the last round's merge-on-read table, each on a
   new set of keys (upsert k takes the keys whose hash is k - 1 modulo 100 and sets
   ``status = 'amended-k'``), until every file group has 5 and then 20 log files; at each level
   ``--repeat`` snapshot reads, and ``read_optimized`` reads at the last level.
3. Compaction of that table (``schedule_compaction(force=True)`` and ``run_compactions``), run
   ``--repeat`` times on copies of the uncompacted table (copied outside the clock), then snapshot
   reads of the compacted table.

Every phase is checked after its clock stops: row count and ``sum(ts)`` of every read, the rows
of every upsert by their ``status``, the commits' actions and write stats (a merge-on-read upsert
is a deltacommit of log files only, one per file group), the log files per file group in the file
system view, and the compacted slices. While a phase runs, ``run.TreeSampler`` samples RSS and CPU
of the process tree, and the engine's progress messages (its ``hudi_engine`` logger) are timed
to split each write.

Results go to stdout and to the ``mor`` section of ``benchmarks/RESULTS.md`` (rewritten; the rest
of the file is left alone); temp tables are deleted.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import sys
import time
from pathlib import Path

from .run import (CODEC, HUDI_OPTIONS, NEW_STATUS, TS0, WARMUP_ROWS, Phase, _cpu_split, _log,
                  _mib_split, best_of, busy_phases, check, dir_bytes, parse_args, phase_line,
                  reading_notes, replace_section, run_sizes, setup_lines, source_frame, timed)

DEFAULT_ROWS = (5_000_000,)
LOG_LEVELS = (5, 20)             # snapshot reads with this many log files per file group
WARMUP_LOG_LEVELS = (2,)
KEY_SETS = 100                   # an upsert takes one key set in KEY_SETS: 1% of the keys
MOR_OPTIONS = {**HUDI_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COW_OPTIONS = dict(HUDI_OPTIONS)
READ_OPTIMIZED = {"hoodie.datasource.query.type": "read_optimized"}
DATA_COLUMNS = ("uuid", "ts", "region", "rider", "fare", "tip", "distance_km", "passengers", "rating",
                "status", "event_time")

PARQUET_WRITE, PARQUET_READ = "parquet write", "parquet read"
PARQUET_READ_ALL = "parquet read, all columns"
BULK_COW, UPSERT_COW = "bulk_insert COW", "upsert 1% COW"
BULK_MOR, UPSERT_MOR = "bulk_insert MOR", "upsert 1% MOR"
COMPACTION = "compaction"
# What each phase's time is compared with (the first is the table's main ratio).
VERSUS = {BULK_COW: (PARQUET_WRITE,), UPSERT_COW: (PARQUET_WRITE,), BULK_MOR: (PARQUET_WRITE,),
          UPSERT_MOR: (UPSERT_COW, PARQUET_WRITE), COMPACTION: (BULK_MOR, PARQUET_WRITE)}


def snapshot_name(logs: int | None) -> str:
    """The snapshot read phase with ``logs`` log files per file group (None: after compaction)."""
    if logs is None:
        return "snapshot read, compacted"
    return f"snapshot read, {logs} log file{'' if logs == 1 else 's'}"


def all_columns_name(logs: int) -> str:
    """The snapshot read of every data column with ``logs`` log files per file group."""
    return f"{snapshot_name(logs)}, all columns"


def versus(name: str) -> tuple[str, ...]:
    if name in VERSUS:
        return VERSUS[name]
    if name.endswith("all columns") and name != PARQUET_READ_ALL:
        return (PARQUET_READ_ALL,)
    return (PARQUET_READ,) if "read" in name and name not in (PARQUET_READ, PARQUET_READ_ALL) else ()


# --- data ------------------------------------------------------------------------------------------
def key_set():
    """The key set (0 .. KEY_SETS - 1) a row's key hashes to; upsert k takes set k - 1."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(F.col("uuid"), F.lit("mor")), F.lit(KEY_SETS))


def status_of(k: int) -> str:
    return f"{NEW_STATUS}-{k}"


def upsert_frame(source, k: int):
    from pyspark.sql import functions as F

    return (source.filter(key_set() == k - 1)
            .withColumn("ts", F.col("ts") + 1)
            .withColumn("status", F.lit(status_of(k))))


def totals(df) -> tuple[int, int]:
    """The timed query: (rows, sum of ts - TS0) in one pass."""
    from pyspark.sql import functions as F

    row = df.agg(F.count(F.lit(1)), F.sum(F.col("ts") - F.lit(TS0))).first()
    return int(row[0]), int(row[1] or 0)


def all_columns(df) -> int:
    """The timed query over every data column: rows, and a hash of each row summed so no column
    goes unread."""
    from pyspark.sql import functions as F

    row = df.agg(F.count(F.lit(1)), F.sum(F.hash(*DATA_COLUMNS))).first()
    return int(row[0])


def statuses(df) -> dict[str, int]:
    """Rows per upserted status (untimed check of the latest values)."""
    from pyspark.sql import functions as F

    rows = df.filter(F.col("status").startswith(NEW_STATUS)).groupBy("status").count().collect()
    return {r[0]: int(r[1]) for r in rows}


# --- the table as the engine sees it ---------------------------------------------------------------
def commit_of(path: str, instant: str) -> tuple[str, list[dict]]:
    """(action, write stats) of the completed write ``instant``."""
    from hudi_engine.table.meta_client import HoodieTable

    timeline = HoodieTable.load(path).timeline
    found = [i for i in timeline.completed_writes() if i.timestamp == instant]
    check(len(found) == 1, f"no completed write {instant} in {path}")
    meta = timeline.commit_metadata(found[0])
    return found[0].action, [s for stats in meta["partitionToWriteStats"].values() for s in stats]


def latest_slices(path: str):
    from hudi_engine.table.meta_client import HoodieTable

    return HoodieTable.load(path).fs_view().latest_file_slices()


def parquet_codec(table_path: str, file: str) -> str:
    """Compression codec of a base file's first column chunk."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(os.path.join(table_path, file)).metadata.row_group(0).column(0).compression


def check_log_files(path: str, want: int, groups: int) -> None:
    slices = latest_slices(path)
    counts = sorted({len(s.log_files) for s in slices})
    check(len(slices) == groups, f"{len(slices)} file groups, expected {groups}")
    check(counts == [want], f"log files per file group {counts}, expected {want} in every one")


class ProgressMarks(logging.Handler):
    """Times (from entry) of the engine's progress messages: a handler on its ``hudi_engine``
    logger, at INFO while inside (what reaches the terminal, if anything, is left as it was)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[tuple[float, str]] = []

    def __enter__(self):
        from hudi_engine.logs import ENGINE_LOGGER

        self.logger = logging.getLogger(ENGINE_LOGGER)
        self._level = self.logger.level
        if self.logger.getEffectiveLevel() > logging.INFO:
            self.logger.setLevel(logging.INFO)
        self.logger.addHandler(self)
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self)
        self.logger.setLevel(self._level)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((time.perf_counter() - self.t0, record.getMessage()))

    def at(self, *words: str) -> float | None:
        """When the first message holding all ``words`` came."""
        return next((t for t, line in self.lines if all(w in line for w in words)), None)


def split_write(marks: ProgressMarks, seconds: float, operation: str) -> dict[str, float]:
    """A write's wall time split at its progress lines."""
    if operation == "compaction":
        scheduled, started, done = (marks.at("scheduled compaction"), marks.at("merging", "file groups"),
                                    marks.at("committed compaction"))
        if None in (scheduled, started, done):
            return {}
        return {"schedule": scheduled, "merge and write": done - started,
                "commit and rest": seconds - done + (started - scheduled)}
    if operation == "bulk_insert":
        started, done = marks.at("bulk_insert", "writing"), marks.at("committed")
        if None in (started, done):
            return {}
        return {"plan": started, "write": done - started, "rest": seconds - done}
    planned, done = marks.at(operation, "merging and writing"), marks.at("committed")
    if None in (planned, done):
        return {}
    return {"tag and plan": planned, "merge/append and commit": done - planned, "rest": seconds - done}


# --- one row count ---------------------------------------------------------------------------------
# The phase table of the merge-on-read and CDC reports.
RESULTS_TABLE_HEADER = (
    "## Results", "",
    "| rows | phase | seconds (best) | all runs | rows/s | vs | MiB written | peak RSS MiB "
    "| JVM / driver py / py workers | CPU s JVM / py | other procs (cores) |",
    "|---:|---|---:|---|---:|---|---:|---:|---|---|---:|",
)


class PhaseRecorder:
    """Times named phases of one benchmark (untimed when ``log`` is off: the warm-up) and splits
    each write by the engine's progress lines."""

    def __init__(self, log: bool):
        self.log = log
        self.runs: dict[str, list[Phase]] = {}
        self.splits: dict[str, list[dict]] = {}

    def say(self, message: str) -> None:
        if self.log:
            _log(message)

    def timed(self, name: str, rows: int, action, split: str | None = None):
        """Run ``action`` (timed unless warming up); returns what it returned."""
        box = {}
        marks = ProgressMarks()

        def act():
            with marks:
                box["out"] = action()
        if not self.log:
            act()
            return box["out"]
        phase = timed(name, rows, act)
        self.runs.setdefault(name, []).append(phase)
        if split:
            self.splits.setdefault(name, []).append(split_write(marks, phase.seconds, split))
        box["phase"] = phase
        return box["out"]



class Bench(PhaseRecorder):
    """Every phase for one row count; ``log=False`` runs them untimed (the warm-up)."""

    def __init__(self, spark, n: int, partitions: int, workdir: str, repeat: int,
                 log_levels: tuple[int, ...], log: bool = True):
        super().__init__(log)
        self.spark, self.n, self.partitions, self.workdir = spark, n, partitions, workdir
        self.repeat, self.log_levels = repeat, log_levels
        self.later: list[dict] = []          # upserts 2.. into the merge-on-read table
        self.facts: dict = {}

    def last(self, name: str) -> Phase | None:
        return self.runs[name][-1] if self.log else None

    def run(self) -> tuple[list[Phase], dict]:
        from pyspark.sql import functions as F

        spark, n = self.spark, self.n
        self.say(f"== {n:,} rows: generating (untimed)")
        self.source = source_frame(spark, n, self.partitions).cache()
        check(self.source.count() == n, "the generated frame lost rows")
        self.base_totals = totals(self.source)
        sets = {int(r[0]): int(r[1]) for r in self.source.groupBy(key_set().alias("k")).count().collect()}
        self.set_rows = [sets.get(k, 0) for k in range(KEY_SETS)]
        check(all(self.set_rows[:max(self.log_levels)]), "an empty key set")
        check(self.source.filter(F.col("status").startswith(NEW_STATUS)).count() == 0,
              "generated rows already carry an upserted status")
        self.mor = os.path.join(self.workdir, f"mor_{n}")
        try:
            self.writes()
            self.facts["groups"] = self.groups
            self.reads()
            self.compaction()
        finally:
            self.source.unpersist()
        phases = [best_of(r) for r in self.runs.values()]
        self.facts["splits"] = {name: self.splits[name][min(range(len(self.runs[name])),
                                                             key=lambda i: self.runs[name][i].seconds)]
                                for name in self.splits}
        self.facts["later"] = self.later
        return phases, self.facts

    # --- expected state ---------------------------------------------------------------------------
    def expected(self, upserts: int) -> tuple[tuple[int, int], dict[str, int]]:
        """(rows, ts sum) and rows per status after upserts 1 .. ``upserts``."""
        rows, ts_sum = self.base_totals
        return ((rows, ts_sum + sum(self.set_rows[:upserts])),
                {status_of(k): self.set_rows[k - 1] for k in range(1, upserts + 1)})

    def check_read(self, what: str, got: tuple[int, int], upserts: int) -> None:
        want = self.expected(upserts)[0]
        check(got == want, f"{what}: read (rows, ts sum) {got}, expected {want}")

    def check_statuses(self, what: str, df, upserts: int) -> None:
        got, want = statuses(df), self.expected(upserts)[1]
        check(got == want, f"{what}: rows per upserted status {got}, expected {want}")

    # --- 1. writes --------------------------------------------------------------------------------
    def writes(self) -> None:
        from hudi_engine import read, write

        spark, n, source = self.spark, self.n, self.source
        plain = self.plain = os.path.join(self.workdir, f"parquet_{n}")
        cow = os.path.join(self.workdir, f"cow_{n}")
        first = upsert_frame(source, 1).cache()
        n1 = first.count()
        check(n1 == self.set_rows[0], f"upsert 1 has {n1} rows, key set 0 {self.set_rows[0]}")
        self.facts["updates"] = n1
        try:
            for rep in range(self.repeat):
                self.say(f"-- {n:,} rows: writes, run {rep + 1} of {self.repeat}")
                self.timed(PARQUET_WRITE, n, lambda: source.write.mode("overwrite").parquet(plain))
                if self.log:
                    self.last(PARQUET_WRITE).written_bytes = dir_bytes(plain)
                got = self.timed(PARQUET_READ, n, lambda: totals(spark.read.parquet(plain)))
                self.check_read("parquet", got, 0)
                got = self.timed(PARQUET_READ_ALL, n, lambda: all_columns(spark.read.parquet(plain)))
                check(got == n, f"parquet read of all columns: {got} rows")

                shutil.rmtree(cow, ignore_errors=True)
                self.bulk_insert(BULK_COW, cow, COW_OPTIONS, "commit")
                instant = self.timed(UPSERT_COW, n1, lambda: write(
                    first, cow, {**COW_OPTIONS, "hoodie.datasource.write.operation": "upsert"}), "upsert")
                action, stats = commit_of(cow, instant)
                check(action == "commit", f"COW upsert completed as {action}")
                self.check_upsert_stats("COW upsert", stats, n1)
                check(not any(".log." in s["path"] for s in stats), "COW upsert wrote log files")
                self.facts["cow_rewritten"] = (len(stats), sum(s["numWrites"] for s in stats))
                self.set_written(UPSERT_COW, stats)
                self.check_read("COW after upsert", totals(read(spark, cow)), 1)
                shutil.rmtree(cow)

                shutil.rmtree(self.mor, ignore_errors=True)
                self.groups = self.bulk_insert(BULK_MOR, self.mor, MOR_OPTIONS, "deltacommit")
                check_log_files(self.mor, 0, self.groups)
                got = self.timed(snapshot_name(0), n, lambda: totals(read(spark, self.mor)))
                self.check_read("snapshot, 0 log files", got, 0)
                self.upsert_mor(UPSERT_MOR, first, 1)
                got = self.timed(snapshot_name(1), n, lambda: totals(read(spark, self.mor)))
                self.check_read("snapshot, 1 log file", got, 1)
                got = self.timed(all_columns_name(1), n, lambda: all_columns(read(spark, self.mor)))
                check(got == n, f"snapshot of all columns, 1 log file: {got} rows")
                if rep == self.repeat - 1:
                    self.check_statuses("snapshot, 1 log file", read(spark, self.mor), 1)
        finally:
            first.unpersist()

    def bulk_insert(self, name: str, path: str, options: dict, want_action: str) -> int:
        """A new table of the source rows; returns its number of file groups."""
        from hudi_engine import write

        instant = self.timed(name, self.n, lambda: write(
            self.source, path, {**options, "hoodie.datasource.write.operation": "bulk_insert"}), "bulk_insert")
        action, stats = commit_of(path, instant)
        check(action == want_action, f"{name} completed as {action}, expected {want_action}")
        check(sum(s["numWrites"] for s in stats) == self.n, f"{name}: numWrites != rows")
        self.set_written(name, stats)
        self.bulk_codec = parquet_codec(path, stats[0]["path"])
        return len({(s["partitionPath"], s["fileId"]) for s in stats})

    def upsert_mor(self, name: str, updates, k: int) -> None:
        """Upsert ``k`` into the merge-on-read table and check it logged every file group."""
        from hudi_engine import write

        rows = self.set_rows[k - 1]
        instant = self.timed(name, rows, lambda: write(
            updates, self.mor, {**MOR_OPTIONS, "hoodie.datasource.write.operation": "upsert"}), "upsert")
        action, stats = commit_of(self.mor, instant)
        check(action == "deltacommit", f"MOR upsert {k} completed as {action}, expected deltacommit")
        check(all(".log." in s["path"] for s in stats),
              f"MOR upsert {k} wrote base files: {[s['path'] for s in stats if '.log.' not in s['path']][:3]}")
        self.check_upsert_stats(f"MOR upsert {k}", stats, rows)
        check(len({s["fileId"] for s in stats}) == self.groups,
              f"MOR upsert {k} logged {len({s['fileId'] for s in stats})} of {self.groups} file groups")
        check_log_files(self.mor, k, self.groups)
        self.set_written(name, stats)

    def check_upsert_stats(self, what: str, stats: list[dict], rows: int) -> None:
        updated = sum(s["numUpdateWrites"] for s in stats)
        check(updated == rows, f"{what}: numUpdateWrites {updated} != {rows}")
        check(sum(s["numInserts"] for s in stats) == 0, f"{what}: inserted rows")

    def set_written(self, name: str, stats: list[dict]) -> None:
        if self.log:
            self.last(name).written_bytes = sum(s["fileSizeInBytes"] for s in stats)

    # --- 2. reads as the log grows ----------------------------------------------------------------
    def reads(self) -> None:
        from hudi_engine import read

        spark, n = self.spark, self.n
        done = 1
        for level in self.log_levels:
            while done < level:
                done += 1
                updates = upsert_frame(self.source, done).cache()
                check(updates.count() == self.set_rows[done - 1], f"upsert {done}: wrong row count")
                try:
                    name = f"upsert 1% MOR #{done}"
                    self.upsert_mor(name, updates, done)
                    if self.log:
                        p = self.runs.pop(name)[0]
                        self.later.append({"k": done, "phase": p, "split": self.splits.pop(name)[0]})
                        self.say(f"  (upsert {done}: {len(latest_slices(self.mor)[0].log_files)} "
                                 "log files per file group)")
                finally:
                    updates.unpersist()
            self.say(f"-- {n:,} rows: {level} log files per file group")
            for rep in range(self.repeat):
                got = self.timed(snapshot_name(level), n, lambda: totals(read(spark, self.mor)))
                self.check_read(f"snapshot, {level} log files", got, done)
                got = self.timed(all_columns_name(level), n, lambda: all_columns(read(spark, self.mor)))
                check(got == n, f"snapshot of all columns, {level} log files: {got} rows")
            self.check_statuses(f"snapshot, {level} log files", read(spark, self.mor), done)
        self.upserts = done
        name = f"read_optimized, {done} log files"
        for rep in range(self.repeat):
            got = self.timed(name, n, lambda: totals(read(spark, self.mor, READ_OPTIMIZED)))
            self.check_read(name, got, 0)     # base files only: the bulk_insert's rows
        self.check_statuses(name, read(spark, self.mor, READ_OPTIMIZED), 0)

    # --- 3. compaction ----------------------------------------------------------------------------
    def compaction(self) -> None:
        from hudi_engine import read
        from hudi_engine.services.compaction import run_compactions, schedule_compaction
        from hudi_engine.table.meta_client import HoodieTable

        spark, n = self.spark, self.n
        pristine = self.mor + "_uncompacted"
        if self.repeat > 1:
            shutil.copytree(self.mor, pristine)
        logs = sum(f.size for s in latest_slices(self.mor) for f in s.log_files)
        self.facts["log_bytes"] = logs

        def compact() -> list[str]:
            planned = schedule_compaction(HoodieTable.load(self.mor), force=True)
            check(planned is not None, "nothing to compact")
            # The writes' settings (snappy) for the compacted base files too.
            return run_compactions(spark, HoodieTable.load(self.mor), options=MOR_OPTIONS)
        try:
            for rep in range(self.repeat):
                if rep:
                    shutil.rmtree(self.mor)
                    shutil.copytree(pristine, self.mor)
                self.say(f"-- {n:,} rows: compaction, run {rep + 1} of {self.repeat}")
                done = self.timed(COMPACTION, n, compact, "compaction")
                check(len(done) == 1, f"{len(done)} compactions ran, expected 1")
                action, stats = commit_of(self.mor, done[0])
                check(action == "commit", f"compaction completed as {action}")
                check(sum(s["numWrites"] for s in stats) == n, "compaction: numWrites != rows")
                check(len(stats) == self.groups, f"compaction wrote {len(stats)} files for {self.groups} groups")
                compacted = sum(s.get("totalLogFilesCompacted", 0) for s in stats)
                check(compacted == self.groups * self.upserts,
                      f"compaction took {compacted} log files, expected {self.groups * self.upserts}")
                slices = latest_slices(self.mor)
                check(all(s.base_file and s.base_instant == done[0] and not s.log_files for s in slices),
                      "after compaction a file group still has log files or an older base file")
                self.set_written(COMPACTION, stats)
                self.facts["codecs"] = {"bulk_insert": self.bulk_codec,
                                        "compaction": parquet_codec(self.mor, stats[0]["path"])}
        finally:
            shutil.rmtree(pristine, ignore_errors=True)
        name = snapshot_name(None)
        for rep in range(self.repeat):
            got = self.timed(name, n, lambda: totals(read(spark, self.mor)))
            self.check_read(name, got, self.upserts)
        self.check_statuses(name, read(spark, self.mor), self.upserts)
        shutil.rmtree(self.mor)
        shutil.rmtree(self.plain)


# --- report ----------------------------------------------------------------------------------------
def _ratios(p: Phase, by_name: dict[str, Phase]) -> str:
    parts = [f"{p.seconds / by_name[b].seconds:.2f}x {b}" for b in versus(p.name) if b in by_name]
    return "; ".join(parts) if parts else "baseline"


def _split_text(split: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in split.items()) if split else "-"


def summary_lines(n: int, phases: list[Phase], facts: dict) -> list[str]:
    by_name = {p.name: p for p in phases}
    lines = [f"N = {n:,} rows ({facts.get('updates', 0):,} upserted per 1% upsert); best of "
             f"{len(phases[0].runs)} runs; codec {CODEC}"]
    for p in phases:
        lines.append(phase_line(p, _ratios(p, by_name), 32))
    for name, split in facts.get("splits", {}).items():
        lines.append(f"  split of {name}: {_split_text(split)} s")
    later = facts.get("later", [])
    if later:
        lines.append("  later MOR upserts (s): " + ", ".join(f"#{u['k']} {u['phase'].seconds:.1f}" for u in later))
    return lines


def write_results(path: Path, command: str, started: dt.datetime, info: dict, partitions: int,
                  repeat: int, results: list[tuple[int, list[Phase], dict]], errors: list[str]) -> None:
    nproc = info["nproc"] or 1
    phases_all = [p for _, phases, _ in results for p in phases]
    busy = busy_phases(results)
    levels = ", ".join(str(x) for x in LOG_LEVELS)
    out = [
        "# MOR benchmark",
        "",
        "Hudi merge-on-read through `hudi_engine`: 1% upserts against copy-on-write, snapshot reads "
        "as log files pile up, and compaction, each against Spark's own parquet write or read of the "
        "same rows in the same SparkSession. Produced by `benchmarks/mor.py` (`make bench-mor`); "
        "every run rewrites this section of the file.",
        "",
        *setup_lines(command, started, info, partitions),
        "- **Hudi:** record key `uuid`, partition path `region`, precombine `ts`; the COPY_ON_WRITE "
        "and MERGE_ON_READ tables are made by `bulk_insert` (sort mode NONE: each input partition "
        "writes one file per region) and otherwise use the defaults (SIMPLE index, Avro log blocks, "
        "1 GiB log files, so each upsert adds one log file per file group)",
        f"- **Upserts:** 1% of the keys each (one key set in {KEY_SETS} by a hash of `uuid`, so every "
        "file group of every partition gets updates), `ts + 1` and `status = 'amended-k'` for the "
        f"k-th; upsert k takes key set k - 1, so the upserts touch disjoint keys. The first goes "
        f"into a fresh COW and a fresh MOR table; upserts 2 to {LOG_LEVELS[-1]} go into the last "
        f"round's MOR table, which is read with {levels} log files per file group",
        "- **Reads:** the timed query is `count(*)` and `sum(ts)` in one pass over "
        "`hudi_engine.read(spark, path, options)` (snapshot, or `hoodie.datasource.query.type="
        "read_optimized`), against the same over `spark.read.parquet` of the N rows the parquet "
        "write wrote (its 4 files); the *all columns* reads time `count(*)` and the sum of "
        "`hash()` over the 11 data columns instead, so every column is read (a query that wants "
        "whole rows), against the same over those parquet files",
        f"- **Compaction:** `schedule_compaction(table, force=True)` then `run_compactions(spark, "
        f"table, options=...)` with the writes' options (so {CODEC} base files), on the table with "
        f"{LOG_LEVELS[-1]} log files per file group; each run on a fresh copy of it (copied outside "
        "the clock); rows/s counts the rows written to the compacted file groups",
        "",
        f"Every phase ran {repeat} time(s) (the writes interleaved: parquet write, parquet read, "
        "bulk_insert COW, upsert COW, bulk_insert MOR, snapshot read, upsert MOR, snapshot read, "
        f"then again), after an untimed warm-up of all of them on {WARMUP_ROWS:,} rows; the table "
        "shows the fastest run and lists all. Checked after every run, outside the clock: the "
        "(rows, sum of `ts`) every read returned; the rows per `status` of a snapshot read at every "
        "log level (every upsert's rows, with their values); the commits' actions (COW upsert: "
        "`commit`; MOR bulk_insert and upserts: `deltacommit`; compaction: `commit`) and write stats "
        "(updated rows = the upsert's rows, no inserts; a MOR upsert writes only log files, "
        "`.log.` in every path, one per file group); the log files per file group in "
        "`fs_view().latest_file_slices()` after every MOR write; after compaction one new base file "
        "per file group and no log files.",
        "",
        *RESULTS_TABLE_HEADER,
    ]
    for n, phases, facts in results:
        by_name = {p.name: p for p in phases}
        for p in phases:
            written = f"{p.written_bytes / 2**20:,.1f}" if p.written_bytes else "-"
            out.append(f"| {n:,} | {p.name} | {p.seconds:.2f} | {', '.join(f'{r:.1f}' for r in p.runs)} | "
                       f"{p.rows_per_s:,.0f} | {_ratios(p, by_name)} | {written} | {p.peak_mib:,.0f} | "
                       f"{_mib_split(p)} | {_cpu_split(p)} | {p.other_cores:.2f} |")
    out += ["", "rows/s: an upsert's counts the upserted rows (1% of N), a read's and the compaction's "
            "all N. *vs*: wall time over the named phase's (best runs). *MiB written*: data files "
            "(Hudi: the commit's `fileSizeInBytes`; a MOR upsert's are its log files).", "",
            "## Where a write's time goes", "",
            "The best run split at the engine's progress messages (its `hudi_engine` logger; seconds): an upsert's *tag "
            "and plan* is everything up to its \"merging and writing\" line (keys made, the SIMPLE "
            "index join against the base files, counts per file group), *merge/append and commit* "
            "the Spark job that rewrites (COW) or logs (MOR) each file group, then the commit.", "",
            "| rows | phase | seconds | split |", "|---:|---|---:|---|"]
    for n, phases, facts in results:
        by_name = {p.name: p for p in phases}
        for name, split in facts.get("splits", {}).items():
            out.append(f"| {n:,} | {name} | {by_name[name].seconds:.2f} | {_split_text(split)} |")
    out += ["", "## Every MOR upsert", "",
            "Upsert 1 is the best of the *upsert 1% MOR* runs above; the later ones ran once each, "
            "into the same table, as its log grew.", "",
            "| rows | upsert (= log files per file group after it) | seconds | tag and plan | "
            "merge/append and commit | MiB of logs written | peak RSS MiB | other procs (cores) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, phases, facts in results:
        by_name = {p.name: p for p in phases}
        first = by_name.get(UPSERT_MOR)
        rows = ([{"k": 1, "phase": first, "split": facts["splits"].get(UPSERT_MOR, {})}] if first else []) \
            + facts.get("later", [])
        for u in rows:
            p, split = u["phase"], u["split"]
            out.append(f"| {n:,} | {u['k']} | {p.seconds:.2f} | "
                       f"{split.get('tag and plan', 0):.2f} | {split.get('merge/append and commit', 0):.2f} | "
                       f"{p.written_bytes / 2**20:,.1f} | {p.peak_mib:,.0f} | {p.other_cores:.2f} |")
    out += ["", "## Table facts", "",
            "| rows | file groups | rows per 1% upsert | COW upsert rewrote (files, rows) | "
            "log bytes compacted (MiB) | base file codec: bulk_insert / compaction |",
            "|---:|---:|---:|---|---:|---|"]
    for n, phases, facts in results:
        files, rows = facts.get("cow_rewritten", (0, 0))
        out.append(f"| {n:,} | {facts.get('groups', '-')} | {facts.get('updates', 0):,} | {files}, {rows:,} | "
                   f"{facts.get('log_bytes', 0) / 2**20:,.1f} | "
                   f"{' / '.join(facts.get('codecs', {}).values()) or '-'} |")
    out += ["", "## How to read this", ""] + reading_notes(nproc, phases_all, busy)
    if errors:
        out += ["", "## Failures", ""] + [f"- {e}" for e in errors]
    replace_section(path, "mor", "\n".join(out))


# --- main ------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    args, sizes, repeat, command = parse_args("benchmarks.mor", __doc__, DEFAULT_ROWS, argv)

    def measure(spark, n: int, partitions: int, workdir: str, rep: int, log: bool):
        levels = LOG_LEVELS if log else WARMUP_LOG_LEVELS   # the warm-up builds a short log only
        return Bench(spark, n, partitions, workdir, rep, levels, log=log).run()
    return run_sizes("hudi-mor-bench", args, sizes, repeat, command, measure, summary_lines, write_results)


if __name__ == "__main__":
    sys.exit(main())
