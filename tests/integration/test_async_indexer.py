"""Hudi's asynchronous indexer on version 9 tables (copy-on-write; merge-on-read when killed) with real Spark: the record index and column
stats are scheduled (``indexing.requested``, partitions inflight), built while a second process
writes (before and after the build), and completed; their records equal a synchronous rebuild's,
reads pruned by them return the unpruned rows and hudi-rs's, readers ignore them until complete;
then a secondary index, an expression index and partition stats the same way, with a writer that
began before the schedule and commits after it; ``dropindex`` drops two of them, and ``CREATE
INDEX`` with ``hoodie.metadata.index.async`` goes through the indexer; an indexer killed in its
build leaves the table readable and writable and is resumed (then partition stats are built, as
the job's options enable them); DROP INDEX of an index being built rolls its indexing back."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from hudi_engine import read
from hudi_engine.api import build_index, create_index, drop_index, indexing_due
from hudi_engine.config import HoodieConfig
from hudi_engine.metadata_table.index_defs import read_definitions
from hudi_engine.metadata_table.layout import BLOOM_FILTERS, COLUMN_STATS, MDT_DIR, PARTITION_STATS, RECORD_INDEX, \
    set_table_partitions, table_partitions
from hudi_engine.metadata_table.reader import MetadataReader
from hudi_engine.read.plan import plan_read
from hudi_engine.services.indexer import build_indexing, finish_indexing
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import decode_instant_avro
from hudi_engine.timeline.index_plan import pending_indexing, plan_of
from hudi_engine.timeline.instant import INDEXING
from hudi_engine.transaction.metadata import index_ddl
from hudi_engine.transaction.metadata.writer import ensure_metadata
from hudi_jobs.table_service import parse_config, run_service
from hudictl.cli import main
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["id", "p", "ts", "fare"]
OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
       "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"}
OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.write.table.version": "9", "hoodie.parquet.small.file.limit": "0", **OCC}
# What writers run with while an indexer builds: the indexes on, their build left to the indexer.
WRITER_OPTS = {**OPTS, "hoodie.metadata.index.async": "true", "hoodie.metadata.record.index.enable": "true",
               "hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true"}
TYPES = ["RECORD_INDEX", "COLUMN_STATS"]

SECONDARY, EXPRESSION = "secondary_index_idx_fare", "expr_index_idx_len"

# A second process (no Spark: an Arrow write) upserting ids [lo, hi) and deleting ``deletes``; with
# HOLD set, its upsert waits before committing until that file exists.
WRITER = """
import json, os, sys, time
import pyarrow as pa
from hudi_engine import write
from hudi_engine.transaction.transaction import Transaction
if os.environ.get("HOLD"):
    commit = Transaction.commit
    def held(self, *args, **kwargs):
        while not os.path.exists(os.environ["HOLD"]):
            time.sleep(0.05)
        return commit(self, *args, **kwargs)
    Transaction.commit = held
path, opts, lo, hi, ts, deletes = sys.argv[1], json.loads(sys.argv[2]), *map(int, sys.argv[3:6]), json.loads(sys.argv[6])
ids = list(range(lo, hi))
data = pa.table({"id": [str(i) for i in ids], "p": [str(i % 3) for i in ids], "ts": [ts] * len(ids),
                 "fare": [float(i * ts) for i in ids]})
write(data, path, {**opts, "hoodie.datasource.write.operation": "upsert"})
if deletes:
    gone = pa.table({"id": [str(i) for i in deletes], "p": [str(i % 3) for i in deletes], "ts": [ts] * len(deletes),
                     "fare": [0.0] * len(deletes)})
    write(gone, path, {**opts, "hoodie.datasource.write.operation": "delete"})
"""

# An indexer killed once the record index's base files are written (by Spark tasks), before its build
# instant is on the metadata timeline; column stats were built before it.
KILLED = """
import json, os, sys
from hudi_engine.api import build_index
from hudi_engine.spark import local_spark
from hudi_engine.transaction.metadata import writer
complete = writer._complete
def dying(mdt, instant, stats, operation, begin):
    if operation == "bulk_insert" and stats[0]["partitionPath"] == "record_index":
        os._exit(9)
    complete(mdt, instant, stats, operation, begin)
writer._complete = dying
build_index(local_spark("killed-indexer"), sys.argv[1], json.loads(sys.argv[2]), options=json.loads(sys.argv[3]))
"""


def second_process(path, lo, hi, ts, deletes=(), table_type="COPY_ON_WRITE", hold=None):
    """The writer, run to its end; with ``hold`` (a file that does not exist yet) started and left
    waiting to commit: the caller creates the file and waits for the process."""
    opts = {**WRITER_OPTS, "hoodie.datasource.write.table.type": table_type}
    args = [sys.executable, "-c", WRITER, path, json.dumps(opts), str(lo), str(hi), str(ts), json.dumps(list(deletes))]
    if hold is None:
        subprocess.run(args, check=True, env=os.environ.copy())
        return None
    return subprocess.Popen(args, env={**os.environ, "HOLD": str(hold)})


def first_write(spark, path, n, table_type="COPY_ON_WRITE"):
    from hudi_engine import write

    df = spark.createDataFrame([(str(i), str(i % 3), 1, float(i)) for i in range(n)], "id string, p string, ts long, fare double")
    write(df, path, {**OPTS, "hoodie.datasource.write.operation": "insert", "hoodie.datasource.write.table.type": table_type})


def index_records(path, partitions):
    """partition → its records: the record index's as key → (partition, file id), others' every live
    record (an expression index's of the latest slices' files only: a reader asks for no other, and
    one built from those slices has no other)."""
    table = HoodieTable.load(path)
    reader = MetadataReader(table)
    latest = {f.path.rsplit("/", 1)[-1] for s in plan_read(table, {"hoodie.metadata.enable": "false"}).slices
              for f in ([s.base_file] if s.base_file else []) + s.log_files}
    return {p: reader.record_locations(sorted(reader.records(p))) if p == RECORD_INDEX else
            {k: _untimed(v) for k, v in reader.records(p).items()
             if not p.startswith("expr_index_") or v["ColumnStatsMetadata"]["fileName"] in latest} for p in partitions}


def _untimed(record):
    """A bloom filter's record without the instant that recorded it (a build's or a write's)."""
    bloom = record.get("BloomFilterMetadata")
    return {**record, "BloomFilterMetadata": {**bloom, "timestamp": None}} if bloom else record


def rebuilt(spark, path, tmp_path, partitions):
    """The same partitions built synchronously from the table's files, on a copy of it."""
    copy = os.path.join(tempfile.mkdtemp(dir=tmp_path), "rebuilt")
    shutil.copytree(path, copy)
    table = HoodieTable.load(copy)
    for partition in partitions:
        shutil.rmtree(os.path.join(copy, MDT_DIR, partition))
    table = set_table_partitions(table, [p for p in table_partitions(table) if p not in partitions])
    enable = {RECORD_INDEX: "hoodie.metadata.record.index.enable", COLUMN_STATS: "hoodie.metadata.index.column.stats.enable",
              BLOOM_FILTERS: "hoodie.metadata.index.bloom.filter.enable",
              PARTITION_STATS: "hoodie.metadata.index.column.stats.enable"}        # secondary, expression: defined
    built = table_partitions(table)
    cfg = HoodieConfig({**OPTS, **{enable[p]: "true" for p in built + list(partitions) if p in enable}, **table.props})
    ensure_metadata(spark, table, cfg)
    return index_records(copy, partitions)


def assert_like_rebuild_and_readers(spark, path, tmp_path, ids=(), partitions=(RECORD_INDEX, COLUMN_STATS), filters=()):
    ours, expected = index_records(path, partitions), rebuilt(spark, path, tmp_path, partitions)
    everything = sorted(rows(read(spark, path).toArrow(), COLS))
    if RECORD_INDEX in partitions:
        assert sorted(ours[RECORD_INDEX]) == sorted(r[0] for r in everything)
    for partition in partitions:
        mine, theirs = ours[partition], expected[partition]
        differing = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        assert mine and not differing, (partition, [(mine.get(k), theirs.get(k)) for k in differing[:3]])
    table = HoodieTable.load(path)
    every = len(plan_read(table).slices)
    assert everything == sorted(rows(hudi_rs_read(path), COLS))
    off = {"hoodie.metadata.enable": "false"}
    for wanted in filters or (([("id", "IN", list(ids))], [("fare", ">", 100.0)]) if ids else ()):
        assert len(plan_read(table, None, wanted).slices) < every
        pruned = sorted(rows(read(spark, path, filters=wanted).toArrow(), COLS))
        assert pruned == sorted(rows(read(spark, path, off, filters=wanted).toArrow(), COLS))
        assert pruned and pruned == [r for r in everything if _holds(wanted[0], dict(zip(COLS, r)))]


def _holds(pred, row):
    column, op, value = pred
    if column == "length(id)":
        return len(row["id"]) == value
    return {"IN": lambda: row[column] in value, "=": lambda: row[column] == value,
            ">": lambda: row[column] > value}[op]()


def test_built_while_another_process_writes(spark, tmp_path):
    path = str(tmp_path / "trips")
    first_write(spark, path, 40)
    enabled = {**OCC, "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.index.column.stats.enable": "true"}
    # What an operator starts the indexing job on: enabled indexes missing, then the pending plan, then nothing.
    assert indexing_due(HoodieTable.load(path), enabled) == "column_stats, record_index enabled but not built"
    assert indexing_due(HoodieTable.load(path), OCC) is None
    scheduled = build_index(spark, path, TYPES, mode="schedule", options=OCC)
    table = HoodieTable.load(path)
    assert indexing_due(table, enabled) == f"indexing {scheduled.timestamp} is pending"
    plan = plan_of(table.timeline, scheduled)
    base = table.timeline.last_completed_write().timestamp
    assert [(p.partition, p.upto) for p in plan] == [(COLUMN_STATS, base), (RECORD_INDEX, base)]
    assert os.path.exists(os.path.join(path, ".hoodie/timeline", f"{scheduled.timestamp}.indexing.requested"))
    assert table.props["hoodie.table.metadata.partitions.inflight"] == "column_stats,record_index"
    assert table_partitions(table) == ["files"]
    rewritten = set_table_partitions(table, ["files"])               # as any other build or drop does
    assert rewritten.props["hoodie.table.metadata.partitions.inflight"] == "column_stats,record_index"

    second_process(path, 30, 50, 2)                     # scheduled, not built: logged in the partitions
    cfg = HoodieConfig({**OCC, **table.props})
    building = build_indexing(spark, HoodieTable.load(path), cfg)
    assert building.timestamp == scheduled.timestamp
    second_process(path, 50, 55, 3, deletes=[0, 1, 31])  # built, not complete
    table = HoodieTable.load(path)
    assert table_partitions(table) == ["files"]          # readers do not use them yet
    assert not MetadataReader(table).has(RECORD_INDEX)

    done = finish_indexing(table, cfg, scheduled.timestamp)
    table = HoodieTable.load(path)
    assert sorted(table_partitions(table)) == ["column_stats", "files", "record_index"]
    assert table.props["hoodie.table.metadata.partitions.inflight"] == ""
    assert done.action == INDEXING and not pending_indexing(table.timeline)
    meta = decode_instant_avro(table.timeline.read_details(done))
    assert meta["operationType"] == "INDEX"
    last = table.timeline.filter(["commit"], completed=True)[-1].timestamp
    assert {i["metadataPartitionPath"]: i["indexUptoInstant"] for i in meta["indexPartitionInfos"]} == {
        COLUMN_STATS: last, RECORD_INDEX: last}
    assert_like_rebuild_and_readers(spark, path, tmp_path, ["42", "7", "53"])
    assert build_index(spark, path, TYPES, options=OCC) is None       # nothing left to index
    # Partition stats (on with column stats) waited for column stats; now it is the indexer's work.
    assert indexing_due(HoodieTable.load(path), enabled) == "partition_stats enabled but not built"
    assert indexing_due(HoodieTable.load(path), {**enabled, "hoodie.metadata.index.partition.stats.enable": "false"}) is None

    conf = [a for k, v in OCC.items() for a in ("--hoodie-conf", f"{k}={v}")]
    cli = ["table", "index", "build", "--base-path", path, *conf]
    assert main([*cli, "--index-types", "BLOOM_FILTERS", "--mode", "schedule"]) == 0
    table = HoodieTable.load(path)
    [bloom] = pending_indexing(table.timeline)
    assert table.props["hoodie.table.metadata.partitions.inflight"] == "bloom_filters"
    assert main([*cli, "--mode", "rollback"]) == 0
    table = HoodieTable.load(path)
    assert not pending_indexing(table.timeline) and table.props["hoodie.table.metadata.partitions.inflight"] == ""
    assert not os.path.exists(os.path.join(path, MDT_DIR, "bloom_filters"))
    assert sorted(table_partitions(table)) == ["column_stats", "files", "record_index"]

    # A secondary index (fare), an expression index (length(id)) and partition stats, defined as CREATE INDEX
    # defines them for the indexer; a writer begins before the indexing is scheduled and commits after it.
    table = index_ddl.define(table, index_ddl.secondary_index(table, "idx_fare", "fare"), False)
    index_ddl.define(table, index_ddl.expression_index(table, "idx_len", "id", "column_stats", {"expr": "length"}), False)
    hold = tmp_path / "commit-now"
    early = second_process(path, 8, 14, 4, hold=hold)          # updates 8..13 (fare = 4 * id)
    while not HoodieTable.load(path).timeline.pending(["commit"]):       # begun: its instant is on the timeline
        assert early.poll() is None
    later = build_index(spark, path, ["SECONDARY_INDEX", "EXPRESSION_INDEX", "PARTITION_STATS"], mode="schedule",
                        options=OCC)
    table = HoodieTable.load(path)
    assert [(p.partition, p.upto) for p in plan_of(table.timeline, later)] == [
        (PARTITION_STATS, last), (EXPRESSION, last), (SECONDARY, last)]       # the early writer is not in the base
    assert table.props["hoodie.table.metadata.partitions.inflight"] == ",".join(sorted([PARTITION_STATS, EXPRESSION,
                                                                                        SECONDARY]))
    hold.touch()
    assert early.wait(120) == 0
    early_instant = HoodieTable.load(path).timeline.filter(["commit"], completed=True)[-1]
    assert early_instant.timestamp < later.timestamp < early_instant.completion_time     # began before, committed after
    build_indexing(spark, HoodieTable.load(path), cfg, later.timestamp)
    second_process(path, 55, 58, 5, deletes=[9, 44])          # built, not complete
    finish_indexing(HoodieTable.load(path), cfg, later.timestamp)
    table = HoodieTable.load(path)
    assert sorted(table_partitions(table)) == sorted(["column_stats", "files", "record_index", PARTITION_STATS,
                                                      EXPRESSION, SECONDARY])
    new = (PARTITION_STATS, EXPRESSION, SECONDARY)
    assert_like_rebuild_and_readers(spark, path, tmp_path, partitions=new, filters=(
        [("fare", "=", 40.0)], [("length(id)", "=", 1)]))
    assert [k for k in index_records(path, [SECONDARY])[SECONDARY] if k.startswith("40.0")] == ["40.0$10"]   # early

    # dropindex: the secondary index and partition stats go, from hoodie.properties, index.json and storage.
    assert main([*cli, "--index-types", f"PARTITION_STATS,{SECONDARY}", "--mode", "dropindex"]) == 0
    table = HoodieTable.load(path)
    assert sorted(table_partitions(table)) == ["column_stats", EXPRESSION, "files", "record_index"]
    assert list(read_definitions(table)) == [EXPRESSION]
    assert not any(os.path.exists(os.path.join(path, MDT_DIR, p)) for p in (PARTITION_STATS, SECONDARY))
    everything = sorted(rows(read(spark, path).toArrow(), COLS))
    assert everything == sorted(rows(hudi_rs_read(path), COLS))

    # CREATE INDEX through the indexer (hoodie.metadata.index.async): an indexing instant builds it.
    create_index(spark, path, "idx_ts", "ts", options={**OCC, "hoodie.metadata.index.async": "true"})
    table = HoodieTable.load(path)
    assert "secondary_index_idx_ts" in table_partitions(table) and not pending_indexing(table.timeline)
    [indexed] = plan_of(table.timeline, table.timeline.filter([INDEXING], completed=True)[-1])
    assert indexed.partition == "secondary_index_idx_ts"
    entries = index_records(path, ["secondary_index_idx_ts"])["secondary_index_idx_ts"]
    assert sorted(entries) == sorted(f"{r[2]}${r[0]}" for r in everything)
    wanted = [("ts", "=", 5)]
    assert len(plan_read(table, None, wanted).slices) < len(plan_read(table).slices)
    assert sorted(rows(read(spark, path, filters=wanted).toArrow(), COLS)) == [r for r in everything if r[2] == 5]


def test_killed_indexer_leaves_the_table_usable_and_resumes(spark, tmp_path):
    path = str(tmp_path / "trips")
    first_write(spark, path, 30, "MERGE_ON_READ")          # the writer's updates and deletes go to log files
    proc = subprocess.run([sys.executable, "-c", KILLED, path, json.dumps([*TYPES, "BLOOM_FILTERS"]), json.dumps(OCC)],
                          env=os.environ.copy())
    assert proc.returncode == 9
    table = HoodieTable.load(path)
    [pending] = pending_indexing(table.timeline)
    written = os.listdir(os.path.join(path, MDT_DIR, RECORD_INDEX))
    assert any(name.endswith(".hfile") for name in written)                 # killed half way
    assert not os.path.exists(os.path.join(path, MDT_DIR, BLOOM_FILTERS))   # not started
    assert table_partitions(table) == ["files"]
    assert len(rows(read(spark, path).toArrow(), COLS)) == 30       # readable
    second_process(path, 25, 35, 2, deletes=[3], table_type="MERGE_ON_READ")   # writable, and kept in step
    assert any(".log." in name for _, _, names in os.walk(path) for name in names if "metadata" not in _)

    job = parse_config({"basePath": path, "service": "indexing", "hoodieConf": {     # resumes the killed one
        **WRITER_OPTS, "hoodie.metadata.index.async": "false"}},
        "indexing job")
    resumed, stats = run_service(job)             # then partition stats, as column stats are on
    assert resumed == f"indexed {pending.timestamp}"
    planned = {p.partition: p for p in plan_of(HoodieTable.load(path).timeline, pending)}[RECORD_INDEX]
    bases = [n for n in os.listdir(os.path.join(path, MDT_DIR, RECORD_INDEX)) if n.endswith(".hfile")]
    assert len(bases) == planned.file_groups                                 # the killed run's are gone
    table = HoodieTable.load(path)
    assert sorted(table_partitions(table)) == ["bloom_filters", "column_stats", "files", "partition_stats", "record_index"]
    assert [p.partition for p in plan_of(table.timeline, table.timeline.get(stats.split()[-1]))] == [PARTITION_STATS]
    assert_like_rebuild_and_readers(spark, path, tmp_path,
                                    partitions=(RECORD_INDEX, COLUMN_STATS, BLOOM_FILTERS, PARTITION_STATS))

    # DROP INDEX of an index the indexer is building: its indexing instant is rolled back, its definition goes.
    index_ddl.define(table, index_ddl.secondary_index(table, "idx_fare", "fare"), False)
    build_index(spark, path, [SECONDARY], mode="schedule", options=OCC)
    assert HoodieTable.load(path).props["hoodie.table.metadata.partitions.inflight"] == SECONDARY
    drop_index(path, "idx_fare", options=OCC)
    table = HoodieTable.load(path)
    assert not pending_indexing(table.timeline) and table.props["hoodie.table.metadata.partitions.inflight"] == ""
    assert read_definitions(table) == {} and not os.path.exists(os.path.join(path, MDT_DIR, SECONDARY))
    assert len(rows(read(spark, path).toArrow(), COLS)) == 34
