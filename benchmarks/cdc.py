"""Change data capture benchmark: what CDC logging costs a copy-on-write upsert, and a CDC query of
that upsert against diffing the table's two versions.

    .venv/bin/python -m benchmarks.cdc                  # 5M rows (``make bench-cdc``)
    .venv/bin/python -m benchmarks.cdc --rows 1000000   # another size (repeatable)
    .venv/bin/python -m benchmarks.cdc --quick          # 200k rows, one run: a smoke test

For every row count N, in one SparkSession set up as ``benchmarks/run.py`` does (the rows, the
sampler, the timing and the report's shared parts are imported from there, the progress-line
splitter from ``benchmarks/mor.py``):

1. Four COPY_ON_WRITE tables of the same N rows (``bulk_insert``, once each): one without CDC and
   one per supplemental logging mode (``hoodie.table.cdc.enabled=true``,
   ``hoodie.table.cdc.supplemental.logging.mode`` OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER).
   The rows carry ``_hoodie_is_deleted = false`` so that one upsert can also delete.
2. ``--repeat`` rounds (default 3), each on fresh copies of the four tables (copied and synced to
   disk outside the clock; one untimed upsert at full size first): one ``upsert`` per table of 1% of the keys (one key slot in 100 by a hash of ``uuid``,
   so every file group gets some; ``ts + 1``, ``status`` changed) plus 0.01% of the keys
   flagged ``_hoodie_is_deleted = true``, all in one commit that rewrites every file group. The
   upsert without CDC is the baseline of the other three: the ratio is CDC logging's write cost.
   Each round starts one table further along, so no table always goes first.
3. ``--repeat`` rounds of reads of that commit, interleaved: the baseline ``snapshot diff`` (the
   table as of the bulk_insert, ``as.of.instant``, and its latest snapshot, both through
   ``hudi_engine.read``, full outer joined on ``_hoodie_record_key``, rows whose data columns
   differ counted by kind) and one CDC query per table (``hoodie.datasource.query.type=incremental``,
   ``hoodie.datasource.query.incremental.format=cdc``, begin instant = the bulk_insert's), rows
   counted per ``op`` (rotated per round as the upserts). The table without CDC answers the CDC
   query by inference (each rewritten base file diffed against the one it replaced).

Checked outside the clock: the bulk_insert's and every upsert's write stats (rows, updates,
deletes, every file group rewritten, one CDC log file per rewritten group for the CDC tables,
none without), the snapshot after every upsert (rows, ``sum(ts)``, updated values), every read's
counts per op (u = updated keys, d = deleted keys, nothing else), and once per table the CDC rows
themselves: every image's key, ``ts``, ``status`` and commit times, a fingerprint of all
changes' data that must equal the snapshot diff's, and a sample of before/after JSON compared
field by field with the generated rows.

Results go to stdout and to the ``cdc`` section of ``benchmarks/RESULTS.md`` (rewritten; the rest
of the file is left alone); temp tables are deleted.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
from functools import reduce
from operator import or_
from pathlib import Path

from .mor import RESULTS_TABLE_HEADER, PhaseRecorder, commit_of
from .run import (HUDI_OPTIONS, NEW_STATUS, TS0, WARMUP_ROWS, Phase, _cpu_split, _mib_split, best_of,
                  busy_phases, check, checksum, parse_args, phase_line, reading_notes, replace_section,
                  run_sizes, setup_lines, source_frame)

DEFAULT_ROWS = (5_000_000,)
KEY_SLOTS = 10_000               # a key's slot: a hash of uuid modulo this
UPDATE_SLOTS = 100               # slots 0 .. 99 are updated: 1% of the keys
DELETE_SLOTS = 1                 # the next slot is deleted: 0.01%
IS_DELETED = "_hoodie_is_deleted"
KEY = "_hoodie_record_key"
MODES = ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")
NO_CDC = "no CDC"
VARIANTS = (NO_CDC, *MODES)
SAMPLE_UPDATES, SAMPLE_DELETES = 4, 2

DIFF = "snapshot diff"
# Data columns in the images' JSON: event_time is a timestamp, written as microseconds.
JSON_SCHEMA = ("uuid string, ts long, region string, rider string, fare double, tip double, "
               "distance_km double, passengers int, rating int, status string, event_time long, "
               f"{IS_DELETED} boolean")


def options_of(variant: str) -> dict:
    if variant == NO_CDC:
        return dict(HUDI_OPTIONS)
    return {**HUDI_OPTIONS, "hoodie.table.cdc.enabled": "true",
            "hoodie.table.cdc.supplemental.logging.mode": variant}


def cdc_query(begin: str) -> dict:
    return {"hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.query.incremental.format": "cdc",
            "hoodie.datasource.read.begin.instanttime": begin}


def bulk_name(variant: str) -> str:
    return f"bulk_insert, {variant}"


def upsert_name(variant: str) -> str:
    return f"upsert 1% + deletes, {variant}"


def read_name(variant: str) -> str:
    return f"CDC read, {variant}" + (" (inferred)" if variant == NO_CDC else "")


def rotated(names: tuple[str, ...], rep: int) -> tuple[str, ...]:
    """Round ``rep``'s order: each round starts one further along, so no phase always runs first."""
    k = rep % len(names)
    return names[k:] + names[:k]


def versus(name: str) -> str | None:
    if name.startswith("upsert") and name != upsert_name(NO_CDC):
        return upsert_name(NO_CDC)
    if name.startswith("bulk_insert") and name != bulk_name(NO_CDC):
        return bulk_name(NO_CDC)
    if name.startswith("CDC read"):
        return DIFF
    return None


# --- data ------------------------------------------------------------------------------------------
def slot():
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(F.col("uuid"), F.lit("cdc")), F.lit(KEY_SLOTS))


def is_update():
    return slot() < UPDATE_SLOTS


def is_delete():
    return (slot() >= UPDATE_SLOTS) & (slot() < UPDATE_SLOTS + DELETE_SLOTS)


def rows_frame(spark, n: int, partitions: int):
    from pyspark.sql import functions as F

    return source_frame(spark, n, partitions).withColumn(IS_DELETED, F.lit(False))


def changes_frame(source):
    """The upsert's input: the updated keys' new versions and the deleted keys flagged."""
    from pyspark.sql import functions as F

    upd = is_update()
    return (source.filter(upd | is_delete())
            .select(*[F.when(upd, F.col("ts") + 1).otherwise(F.col("ts")).alias(c) if c == "ts" else
                      F.when(upd, F.lit(NEW_STATUS)).otherwise(F.col(c)).alias(c) if c == "status" else
                      (~upd).alias(c) if c == IS_DELETED else F.col(c)
                      for c in source.columns]))


def hash_sum(*cols):
    """An order-free fingerprint of rows: the sum of a 31-bit hash of each (no overflow in ANSI)."""
    from pyspark.sql import functions as F

    return F.sum(F.pmod(F.xxhash64(*cols), F.lit(2**31 - 1)))


def op_counts(df) -> dict[str, int]:
    """The timed query of every read: rows per op."""
    return {r[0]: int(r[1]) for r in df.groupBy("op").count().collect()}


# --- the baseline: diff the two versions -----------------------------------------------------------
def version_diff(spark, path: str, before_instant: str, data_columns: list[str]):
    """Changed rows between the table as of ``before_instant`` and now: ``op`` (i/u/d) and each
    side's data columns prefixed ``b_`` / ``a_``."""
    from hudi_engine import read
    from pyspark.sql import functions as F

    old = read(spark, path, {"as.of.instant": before_instant}).select(
        F.col(KEY).alias("b_key"), *[F.col(c).alias(f"b_{c}") for c in data_columns])
    new = read(spark, path).select(
        F.col(KEY).alias("a_key"), *[F.col(c).alias(f"a_{c}") for c in data_columns])
    joined = old.join(new, old["b_key"] == new["a_key"], "full_outer")
    differs = reduce(or_, [~F.col(f"b_{c}").eqNullSafe(F.col(f"a_{c}")) for c in data_columns])
    changed = joined.filter(F.col("b_key").isNull() | F.col("a_key").isNull() | differs)
    op = (F.when(F.col("b_key").isNull(), F.lit("i")).when(F.col("a_key").isNull(), F.lit("d"))
          .otherwise(F.lit("u")))
    return changed.withColumn("op", op)


def diff_fingerprint(diff, data_columns: list[str]) -> int:
    """The fingerprint ``cdc_fingerprint`` gives for the same changes."""
    from pyspark.sql import functions as F

    def image(side: str, key: str):
        fields = [(F.unix_micros(F.col(f"{side}_{c}")) if c == "event_time" else F.col(f"{side}_{c}")).alias(c)
                  for c in data_columns]
        return F.when(F.col(key).isNull(), F.lit(None)).otherwise(F.struct(*fields))
    row = diff.agg(hash_sum(F.col("op"), image("b", "b_key"), image("a", "a_key"))).first()
    return int(row[0] or 0)


def cdc_fingerprint(cdc) -> int:
    """Sum of a hash of (op, before's data, after's data) over the CDC rows; meta columns (commit
    times, file names) differ between tables and are left out."""
    from pyspark.sql import functions as F

    row = cdc.agg(hash_sum(F.col("op"), F.from_json("before", JSON_SCHEMA),
                           F.from_json("after", JSON_SCHEMA))).first()
    return int(row[0] or 0)


# --- one row count ---------------------------------------------------------------------------------
class Bench(PhaseRecorder):
    """Every phase for one row count; ``log=False`` runs them untimed (the warm-up)."""

    def __init__(self, spark, n: int, partitions: int, workdir: str, repeat: int, log: bool = True):
        super().__init__(log)
        self.spark, self.n, self.partitions, self.workdir = spark, n, partitions, workdir
        self.repeat = repeat
        self.facts: dict = {"variants": {v: {} for v in VARIANTS}}

    def last(self, name: str) -> Phase | None:
        return self.runs[name][-1] if self.log else None

    def path(self, variant: str, pristine: bool = False) -> str:
        name = variant.replace(" ", "_").lower()
        return os.path.join(self.workdir, f"cdc_{self.n}", name + ("_bulk" if pristine else ""))

    def run(self) -> tuple[list[Phase], dict]:
        from pyspark.sql import functions as F

        spark, n = self.spark, self.n
        self.say(f"== {n:,} rows: generating (untimed)")
        self.source = rows_frame(spark, n, self.partitions).cache()
        self.changes = changes_frame(self.source).cache()
        try:
            check(self.source.count() == n, "the generated frame lost rows")
            self.base = checksum(self.source)
            check(self.base[0] == n and self.base[2] == 0, f"generated checksum {self.base}")
            row = self.changes.agg(F.sum((~F.col(IS_DELETED)).cast("long")), F.sum(F.col(IS_DELETED).cast("long")),
                                   F.sum(F.when(F.col(IS_DELETED), F.col("ts") - F.lit(TS0))),
                                   hash_sum(F.when(~F.col(IS_DELETED), F.col("uuid"))),
                                   hash_sum(F.when(F.col(IS_DELETED), F.col("uuid")))).first()
            self.updates, self.deletes, self.deleted_ts = int(row[0] or 0), int(row[1] or 0), int(row[2] or 0)
            self.key_hashes = {"u": int(row[3] or 0), "d": int(row[4] or 0)}
            check(self.updates > 0 and self.deletes > 0, f"{self.updates} updates, {self.deletes} deletes")
            self.facts.update(updates=self.updates, deletes=self.deletes)
            self.data_columns = [c for c in self.source.columns]
            self.bulk_inserts()
            self.upserts()
            self.reads()
        finally:
            self.source.unpersist()
            self.changes.unpersist()
            shutil.rmtree(os.path.join(self.workdir, f"cdc_{n}"), ignore_errors=True)
        phases = [best_of(r) for r in self.runs.values()]
        self.facts["splits"] = {name: self.splits[name][min(range(len(self.runs[name])),
                                                             key=lambda i: self.runs[name][i].seconds)]
                                for name in self.splits}
        return phases, self.facts

    # --- 1. the tables ----------------------------------------------------------------------------
    def bulk_inserts(self) -> None:
        from hudi_engine import write

        self.say(f"-- {self.n:,} rows: bulk_insert of the 4 tables (once each)")
        for variant in VARIANTS:
            path = self.path(variant, pristine=True)
            instant = self.timed(bulk_name(variant), self.n, lambda: write(
                self.source, path, {**options_of(variant), "hoodie.datasource.write.operation": "bulk_insert"}),
                "bulk_insert")
            action, stats = commit_of(path, instant)
            check(action == "commit", f"{variant} bulk_insert completed as {action}")
            check(sum(s["numWrites"] for s in stats) == self.n, f"{variant} bulk_insert: numWrites != rows")
            check(not any(s.get("cdcStats") for s in stats), f"{variant} bulk_insert wrote CDC log files")
            groups = {(s["partitionPath"], s["fileId"]) for s in stats}
            if self.log:
                self.last(bulk_name(variant)).written_bytes = sum(s["fileSizeInBytes"] for s in stats)
            self.facts["variants"][variant]["bulk_instant"] = instant
            self.facts.setdefault("groups", len(groups))
            check(len(groups) == self.facts["groups"], f"{variant}: {len(groups)} file groups, "
                  f"the first table has {self.facts['groups']}")

    # --- 2. upserts -------------------------------------------------------------------------------
    def upserts(self) -> None:
        from hudi_engine import write

        if self.log:   # the first upsert at a new size runs slow (the JVM's heap grows): not timed
            self.say(f"-- {self.n:,} rows: one untimed upsert first")
            path = self.fresh_copy(NO_CDC)
            write(self.changes, path, {**options_of(NO_CDC), "hoodie.datasource.write.operation": "upsert"})
        for rep in range(self.repeat):
            self.say(f"-- {self.n:,} rows: upserts, run {rep + 1} of {self.repeat}")
            for variant in rotated(VARIANTS, rep):
                self.upsert(variant)

    def fresh_copy(self, variant: str) -> str:
        """A copy of the table as the bulk_insert left it, written through to disk (so the clock
        that follows does not pay for the copy's write-back)."""
        path = self.path(variant)
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(self.path(variant, pristine=True), path)
        os.sync()
        return path

    def upsert(self, variant: str) -> None:
        from hudi_engine import read, write

        path = self.fresh_copy(variant)
        name = upsert_name(variant)
        instant = self.timed(name, self.updates + self.deletes, lambda: write(
            self.changes, path, {**options_of(variant), "hoodie.datasource.write.operation": "upsert"}), "upsert")
        action, stats = commit_of(path, instant)
        check(action == "commit", f"{name} completed as {action}")
        got = {k: sum(s[k] for s in stats) for k in ("numUpdateWrites", "numDeletes", "numInserts")}
        want = {"numUpdateWrites": self.updates, "numDeletes": self.deletes, "numInserts": 0}
        check(got == want, f"{name}: write stats {got}, expected {want}")
        check(len({s["fileId"] for s in stats}) == self.facts["groups"],
              f"{name} rewrote {len(stats)} of {self.facts['groups']} file groups")
        cdc = {p: b for s in stats for p, b in (s.get("cdcStats") or {}).items()}
        if variant == NO_CDC:
            check(not cdc, f"{name} wrote CDC log files")
        else:
            with_cdc = sum(1 for s in stats if s.get("cdcStats"))
            check(with_cdc == len(stats), f"{name}: {with_cdc} of {len(stats)} rewritten groups have a CDC log")
            check(all(os.path.getsize(os.path.join(path, p)) == b for p, b in cdc.items()),
                  f"{name}: cdcStats sizes differ from the files")
        facts = self.facts["variants"][variant]
        facts.update(upsert_instant=instant, cdc_files=len(cdc), cdc_bytes=sum(cdc.values()),
                     base_bytes=sum(s["fileSizeInBytes"] for s in stats))
        if self.log:
            self.last(name).written_bytes = facts["base_bytes"] + facts["cdc_bytes"]
        rows, ts_sum, amended = self.base
        want_sum = (rows - self.deletes, ts_sum + self.updates - self.deleted_ts, self.updates)
        got_sum = checksum(read(self.spark, path))
        check(got_sum == want_sum, f"{name}: snapshot (rows, ts sum, amended) {got_sum}, expected {want_sum}")

    # --- 3. reads ---------------------------------------------------------------------------------
    def reads(self) -> None:
        from hudi_engine import read

        spark, n = self.spark, self.n
        want = {"u": self.updates, "d": self.deletes}
        base = self.path(NO_CDC)
        c1 = self.facts["variants"][NO_CDC]["bulk_instant"]
        for rep in range(self.repeat):
            self.say(f"-- {n:,} rows: reads, run {rep + 1} of {self.repeat}")
            for variant in rotated((DIFF, *VARIANTS), rep):
                if variant == DIFF:
                    got = self.timed(DIFF, n, lambda: op_counts(version_diff(spark, base, c1, self.data_columns)))
                    check(got == want, f"{DIFF}: changes per op {got}, expected {want}")
                    continue
                begin = self.facts["variants"][variant]["bulk_instant"]
                path = self.path(variant)
                got = self.timed(read_name(variant), n, lambda: op_counts(read(spark, path, cdc_query(begin))))
                check(got == want, f"{read_name(variant)}: changes per op {got}, expected {want}")
        self.check_changes()

    def check_changes(self) -> None:
        """The CDC rows themselves (untimed): every image, the fingerprint, a sample field by field."""
        from hudi_engine import read

        c1 = self.facts["variants"][NO_CDC]["bulk_instant"]
        diff_print = diff_fingerprint(version_diff(self.spark, self.path(NO_CDC), c1, self.data_columns),
                                      self.data_columns)
        sample = self.sample()
        for variant in VARIANTS:
            facts = self.facts["variants"][variant]
            cdc = read(self.spark, self.path(variant), cdc_query(facts["bulk_instant"])).cache()
            try:
                self.check_images(variant, cdc, facts["bulk_instant"], facts["upsert_instant"])
                got = cdc_fingerprint(cdc)
                check(got == diff_print, f"{read_name(variant)}: fingerprint of the changes {got}, "
                      f"the snapshot diff's {diff_print}")
                self.check_sample(variant, cdc, sample, facts["bulk_instant"], facts["upsert_instant"])
            finally:
                cdc.unpersist()

    def check_images(self, variant: str, cdc, c1: str, c2: str) -> None:
        from pyspark.sql import functions as F

        def j(side: str, field: str):
            return F.get_json_object(F.col(side), f"$.{field}")
        u, d = F.col("op") == "u", F.col("op") == "d"
        good_u = (u & (j("before", "uuid") == j("after", "uuid")) & (F.col("ts_ms") == c2)
                  & (j("after", "ts").cast("long") == j("before", "ts").cast("long") + 1)
                  & (j("after", "status") == NEW_STATUS) & (j("before", "status") != NEW_STATUS)
                  & (j("before", "_hoodie_commit_time") == c1) & (j("after", "_hoodie_commit_time") == c2)
                  & (j("before", KEY) == j("before", "uuid")))
        good_d = (d & F.col("after").isNull() & (F.col("ts_ms") == c2)
                  & (j("before", "_hoodie_commit_time") == c1) & (j("before", IS_DELETED) == "false"))
        row = cdc.agg(F.count(F.lit(1)), F.sum(good_u.cast("long")), F.sum(good_d.cast("long")),
                      hash_sum(F.when(u, j("before", "uuid"))), hash_sum(F.when(d, j("before", "uuid")))).first()
        got = (int(row[0]), int(row[1] or 0), int(row[2] or 0), {"u": int(row[3] or 0), "d": int(row[4] or 0)})
        want = (self.updates + self.deletes, self.updates, self.deletes, self.key_hashes)
        check(got == want, f"{read_name(variant)}: (rows, good updates, good deletes, key hashes) {got}, "
              f"expected {want}")

    def sample(self) -> dict[str, tuple[str, dict]]:
        """A few updated and deleted keys: uuid -> (op, the generated row)."""
        out = {}
        for op, cond, k in (("u", is_update(), SAMPLE_UPDATES), ("d", is_delete(), SAMPLE_DELETES)):
            for r in self.source.filter(cond).orderBy("uuid").limit(k).collect():
                out[r["uuid"]] = (op, r.asDict())
        return out

    def check_sample(self, variant: str, cdc, sample: dict, c1: str, c2: str) -> None:
        """The sampled keys' CDC rows, their JSON parsed and compared with the generated rows."""
        from pyspark.sql import functions as F

        key = F.coalesce(F.get_json_object("before", "$.uuid"), F.get_json_object("after", "$.uuid"))
        rows = cdc.filter(key.isin(list(sample))).collect()
        what = read_name(variant)
        check(len(rows) == len(sample), f"{what}: {len(rows)} rows for the {len(sample)} sampled keys")
        for r in rows:
            before = json.loads(r["before"])
            op, src = sample[before["uuid"]]
            check(r["op"] == op and r["ts_ms"] == c2, f"{what}: {before['uuid']} op {r['op']} at {r['ts_ms']}")
            # event_time is timestamp_millis(ts); images give a timestamp in microseconds
            expected = {**src, "event_time": src["ts"] * 1000, KEY: src["uuid"],
                        "_hoodie_partition_path": src["region"], "_hoodie_commit_time": c1}
            check(all(before.get(k) == v for k, v in expected.items()),
                  f"{what}: before image of {src['uuid']} {before}, expected {expected}")
            if op == "d":
                check(r["after"] is None, f"{what}: deleted {src['uuid']} has an after image")
                continue
            after = json.loads(r["after"])
            new = {**expected, "ts": src["ts"] + 1, "status": NEW_STATUS, "_hoodie_commit_time": c2}
            check(all(after.get(k) == v for k, v in new.items()),
                  f"{what}: after image of {src['uuid']} {after}, expected {new}")
            check(set(after) == set(before) and len(after) == len(self.data_columns) + 5,
                  f"{what}: image fields {sorted(after)}")
        updated = [r for r in rows if r["op"] == "u"]
        self.facts.setdefault("sample_json", {})[variant] = updated[0].asDict() if updated else {}


# --- report ----------------------------------------------------------------------------------------
def _ratio(p: Phase, by_name: dict[str, Phase]) -> str:
    base = by_name.get(versus(p.name) or "")
    return f"{p.seconds / base.seconds:.2f}x {base.name}" if base else "baseline" if p.name in (
        DIFF, upsert_name(NO_CDC), bulk_name(NO_CDC)) else "-"


def _split_text(split: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in split.items()) if split else "-"


def _cpu_total(p: Phase) -> float:
    return sum(p.cpu.get(k, 0.0) for k in ("jvm", "driver_py", "py_workers"))


def _mib(b: int) -> str:
    return f"{b / 2**20:,.1f}"


def summary_lines(n: int, phases: list[Phase], facts: dict) -> list[str]:
    by_name = {p.name: p for p in phases}
    lines = [f"N = {n:,} rows ({facts.get('updates', 0):,} updated, {facts.get('deletes', 0):,} deleted "
             f"in one upsert; {facts.get('groups', 0)} file groups); best of {len(phases[-1].runs)} runs"]
    for p in phases:
        lines.append(phase_line(p, _ratio(p, by_name), 34))
    for variant, v in facts.get("variants", {}).items():
        if "cdc_bytes" in v:
            lines.append(f"  {variant}: upsert wrote {_mib(v['base_bytes'])} MiB of base files and "
                         f"{v['cdc_files']} CDC log files, {_mib(v['cdc_bytes'])} MiB")
    for name, split in facts.get("splits", {}).items():
        if name.startswith("upsert"):
            lines.append(f"  split of {name}: {_split_text(split)} s")
    return lines


def write_results(path: Path, command: str, started: dt.datetime, info: dict, partitions: int,
                  repeat: int, results: list[tuple[int, list[Phase], dict]], errors: list[str]) -> None:
    nproc = info["nproc"] or 1
    phases_all = [p for _, phases, _ in results for p in phases]
    busy = busy_phases(results)
    out = [
        "# CDC benchmark",
        "",
        "Hudi change data capture through `hudi_engine` on COPY_ON_WRITE: what each supplemental "
        "logging mode costs an upsert (against the same upsert into a table without CDC), and a CDC "
        "query of that upsert's commit (against diffing the table's two versions with Spark), all in "
        "the same SparkSession. Produced by `benchmarks/cdc.py` (`make bench-cdc`); every run "
        "rewrites this section of the file.",
        "",
        *setup_lines(command, started, info, partitions),
        "- **Tables:** four, each `bulk_insert` of the same N rows (once per table, not repeated): "
        f"without CDC, and with `hoodie.table.cdc.enabled=true` and "
        f"`hoodie.table.cdc.supplemental.logging.mode` = {', '.join(MODES)}; record key `uuid`, "
        "partition path `region`, precombine `ts`, every other option at its default (sort mode "
        f"NONE, SIMPLE index). The rows carry a 12th column `{IS_DELETED} = false`",
        f"- **Upsert:** one commit per table: {UPDATE_SLOTS * 100 / KEY_SLOTS:g}% of the keys (a hash "
        f"of `uuid` modulo {KEY_SLOTS:,} below {UPDATE_SLOTS}, so every file group has some) with "
        f"`ts + 1` and `status = '{NEW_STATUS}'`, plus {DELETE_SLOTS * 100 / KEY_SLOTS:g}% of the keys "
        f"(the next hash slot) with `{IS_DELETED} = true`; each run on fresh copies of the "
        "bulk_insert tables (copied and `os.sync()`ed outside the clock), after one untimed upsert "
        "at full size (the first one runs slow while the JVM's heap grows). Every file group is "
        "rewritten",
        "- **CDC read:** `hudi_engine.read(spark, path, {\"hoodie.datasource.query.type\": "
        "\"incremental\", \"hoodie.datasource.query.incremental.format\": \"cdc\", "
        "\"hoodie.datasource.read.begin.instanttime\": <bulk_insert instant>})`: the upsert's commit "
        "only. The table without CDC answers by inference (each rewritten base file diffed with the "
        "one it replaced). Timed query: `groupBy(\"op\").count()`, planning included",
        f"- **{DIFF}** (baseline of the reads): `read(spark, path, {{\"as.of.instant\": <bulk_insert "
        "instant>})` and `read(spark, path)` of the table without CDC, full outer join on "
        "`_hoodie_record_key`, rows where a key is missing on one side or any of the 12 data "
        "columns differs (`<=>`), counted per kind (i/u/d): the same answer as the CDC read's op "
        "counts, without images",
        "",
        f"Upserts ran {repeat} time(s) per table, interleaved (no CDC, {', '.join(MODES)}, then "
        f"again, each round starting one table further along); the reads {repeat} time(s), "
        f"interleaved the same way ({DIFF}, then the CDC read of each table), "
        f"after an untimed warm-up of everything on {WARMUP_ROWS:,} rows; the table shows the fastest "
        "run and lists all. Checked outside the clock: each bulk_insert's and upsert's write stats "
        "(rows; updates = updated keys, deletes = deleted keys, no inserts; every file group "
        "rewritten; a CDC log file per rewritten group for the CDC tables with `cdcStats` sizes equal "
        "to the files', none without), the snapshot after every upsert (rows, `sum(ts)`, rows with "
        "the new status), every read's counts per op (u = updated keys, d = deleted keys, nothing "
        "else); once per table, every CDC row (before and after images of the same key, `ts + 1`, "
        "the new status, `_hoodie_commit_time` of the bulk_insert before and the upsert after, "
        "`ts_ms` the upsert's instant, deletes with no after image; a hash sum of the updated and "
        "the deleted keys equal to the generated ones), a fingerprint of every change's op and "
        "images (data columns) equal to the snapshot diff's, and the JSON of "
        f"{SAMPLE_UPDATES} updated and {SAMPLE_DELETES} deleted keys compared field by field with "
        "the generated rows.",
        "",
        *RESULTS_TABLE_HEADER,
    ]
    for n, phases, facts in results:
        by_name = {p.name: p for p in phases}
        for p in phases:
            written = _mib(p.written_bytes) if p.written_bytes else "-"
            out.append(f"| {n:,} | {p.name} | {p.seconds:.2f} | {', '.join(f'{r:.1f}' for r in p.runs)} | "
                       f"{p.rows_per_s:,.0f} | {_ratio(p, by_name)} | {written} | {p.peak_mib:,.0f} | "
                       f"{_mib_split(p)} | {_cpu_split(p)} | {p.other_cores:.2f} |")
    out += ["", "rows/s: an upsert's counts its input rows (updates and deletes), a read's and a "
            "bulk_insert's all N. *vs*: wall time over the named phase's (best runs). *MiB written*: "
            "the commit's base files plus its CDC log files.", "",
            "## By logging mode", "",
            "The upsert's CDC cost and the CDC read, per table (best runs).", "",
            "| rows | table | upsert s | vs no CDC | all runs | merge and commit s | vs no CDC | upsert CPU s "
            "| CDC log files | CDC MiB | CDC bytes per change | base files MiB | CDC read s | vs snapshot diff "
            "| CDC read CPU s | CDC read peak RSS MiB |",
            "|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, phases, facts in results:
        by_name = {p.name: p for p in phases}
        base_up, diff = by_name.get(upsert_name(NO_CDC)), by_name.get(DIFF)
        changes = facts.get("updates", 0) + facts.get("deletes", 0)
        for variant, v in facts.get("variants", {}).items():
            up, rd = by_name.get(upsert_name(variant)), by_name.get(read_name(variant))
            if not (up and rd and "cdc_bytes" in v):
                continue
            merge = facts.get("splits", {}).get(upsert_name(variant), {}).get("merge/append and commit")
            merge0 = facts.get("splits", {}).get(upsert_name(NO_CDC), {}).get("merge/append and commit")
            out.append(f"| {n:,} | {variant} | {up.seconds:.2f} | {up.seconds / base_up.seconds:.2f}x | "
                       f"{', '.join(f'{r:.1f}' for r in up.runs)} | {f'{merge:.2f}' if merge else '-'} | "
                       f"{f'{merge / merge0:.2f}x' if merge and merge0 else '-'} | {_cpu_total(up):.1f} | "
                       f"{v['cdc_files']} | {_mib(v['cdc_bytes'])} | "
                       f"{v['cdc_bytes'] / changes if changes else 0:,.0f} | {_mib(v['base_bytes'])} | "
                       f"{rd.seconds:.2f} | {rd.seconds / diff.seconds:.2f}x | {_cpu_total(rd):.1f} | "
                       f"{rd.peak_mib:,.0f} |")
    out += ["", "*merge and commit*: the best upsert run's time from the engine's \"merging and "
            "writing\" progress line to its commit (the Spark job that rewrites each file group and, "
            "with CDC, writes its CDC log); the rest of an upsert is tagging (the SIMPLE index join) "
            "and planning, which CDC does not change. *CPU s*: CPU time of the JVM and the Python "
            "processes during the best run. *CDC bytes per change*: CDC MiB over the updated and "
            "deleted keys. Upsert times of one table vary by 10-25% from run to run here (see *all "
            "runs*), more than CDC logging costs, so read a *vs no CDC* within that band as no "
            "measurable difference.", "",
            "## Where a write's time goes", "",
            "The best run split at the engine's `[hudi]` progress lines (seconds).", "",
            "| rows | phase | seconds | split |", "|---:|---|---:|---|"]
    for n, phases, facts in results:
        by_name = {p.name: p for p in phases}
        for name, split in facts.get("splits", {}).items():
            out.append(f"| {n:,} | {name} | {by_name[name].seconds:.2f} | {_split_text(split)} |")
    sample = next((f["sample_json"] for _, _, f in results if f.get("sample_json")), {})
    if sample:
        variant = MODES[-1] if MODES[-1] in sample else next(iter(sample))
        row = sample[variant]
        out += ["", "## A CDC row", "", f"One updated key's row of the CDC read of the {variant} table "
                f"(the last size); every table returns the same images, meta columns aside:", "",
                "```text", *[f"{k}: {row.get(k)}" for k in ("op", "ts_ms", "before", "after")], "```"]
    out += ["", "## How to read this", ""] + reading_notes(nproc, phases_all, busy)
    if errors:
        out += ["", "## Failures", ""] + [f"- {e}" for e in errors]
    replace_section(path, "cdc", "\n".join(out))


# --- main ------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    args, sizes, repeat, command = parse_args("benchmarks.cdc", __doc__, DEFAULT_ROWS, argv)
    return run_sizes("hudi-cdc-bench", args, sizes, repeat, command,
                     lambda spark, n, partitions, workdir, rep, log: Bench(spark, n, partitions, workdir, rep, log=log).run(),
                     summary_lines, write_results)


if __name__ == "__main__":
    sys.exit(main())
