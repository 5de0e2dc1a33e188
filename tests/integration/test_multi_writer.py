"""Several writers on one table under optimistic concurrency control: real writer processes, each
with its own SparkSession, held in flight together by a gate on their input; the table is checked
with our reader and with hudi-rs."""
from __future__ import annotations

import json
import os
import posixpath
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hudi_engine import read, write
from hudi_engine.config import HoodieConfig
from hudi_engine.concurrency.heartbeat import Heartbeat, heartbeat_path
from hudi_engine.concurrency.locks import AUX_DIR, LOCK_FILE_NAME
from hudi_engine.errors import HoodieError, HoodieWriteConflictError
from hudi_engine.metadata_table.layout import MDT_DIR
from hudi_engine.metadata_table.reader import table_view
from hudi_engine.services.clean import run_clean
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import decode_instant_avro
from hudi_engine.timeline.commit_metadata import commit_metadata
from hudi_engine.timeline.instant import DELTA_COMMIT, ROLLBACK, WRITE_ACTIONS, Instant, State, new_instant_time
from hudi_engine.transaction.metadata import listener
from hudi_engine.transaction.transaction import Transaction
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.occ_writer import CONFLICT_EXIT, live_writer_footprint
from tests.support.processes import kill_tree
from tests.support.storage import connection_options, files
from tests.support.zookeeper import zookeeper  # noqa: F401 (a fixture)

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
       "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
       "hoodie.client.heartbeat.interval_in_ms": "1000",
       "hoodie.client.heartbeat.tolerable.misses": "2"}
COLUMNS = ["name", "fruit", "region", "ts"]


def opts(operation="upsert", **extra):
    return {**FRUIT_OPTIONS, **OCC, "hoodie.datasource.write.operation": operation, **extra}


def start_writer(path, tmp_path, name, rows_, gate, operation="upsert", options=None):
    spec = {"rows": rows_, "gate": str(gate), "operation": operation, "options": {**OCC, **(options or {})}}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), str(ROOT / "platform"), str(ROOT / "jobs"), str(ROOT / "operator")])}
    log = open(tmp_path / f"{name}.log", "wb")
    return subprocess.Popen([sys.executable, "-m", "tests.support.occ_writer", str(path), json.dumps(spec)],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, start_new_session=True)


def pending_writes(path) -> list[Instant]:
    return HoodieTable.load(path).timeline.pending(WRITE_ACTIONS)


def wait_until(condition, what, procs=(), timeout=240):
    deadline = time.monotonic() + timeout
    while not condition():
        for p in procs:
            assert p.poll() is None, f"a writer ended before {what}: exit {p.returncode}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def finish(proc, timeout=240) -> tuple[int, dict]:
    out, _ = proc.communicate(timeout=timeout)
    lines = [line for line in out.decode().splitlines() if line.startswith("{")]
    return proc.returncode, json.loads(lines[-1]) if lines else {}


def race(path, tmp_path, writes: dict, options=None) -> dict[str, tuple[int, dict]]:
    """Writers (name → rows) started as processes, held at a gate until every one has its write in
    flight, then let go together: each one's exit code and last report."""
    gate = tmp_path / "go"
    writers = {name: start_writer(path, tmp_path, name, rows_, gate, options=options) for name, rows_ in writes.items()}
    try:
        wait_until(lambda: len(pending_writes(path)) == len(writers), "every writer in flight", writers.values())
        gate.touch()
        return {name: finish(p) for name, p in writers.items()}
    finally:
        for p in writers.values():
            if p.poll() is None:
                kill_tree(p.pid)


def table_rows(spark, path):
    ours = sorted(tuple(r[c] for c in COLUMNS) for r in read(spark, path).collect())
    theirs = rows(hudi_rs_read(path), COLUMNS)
    assert ours == theirs, "our reader and hudi-rs disagree"
    keys = [r[0] for r in ours]
    assert len(keys) == len(set(keys)), f"a key appears twice: {ours}"
    return ours


def assert_no_leftovers(path):
    table = HoodieTable.load(path)
    assert not table.timeline.pending(WRITE_ACTIONS)
    committed = {i.timestamp for i in table.timeline.completed_writes()}
    for f in files(path, "*.parquet"):
        assert f.rsplit("_", 1)[1][:-len(".parquet")] in committed, f"{f} belongs to no commit"
    assert not files(path, under=".hoodie/.temp"), "markers left behind"
    assert not files(path, under=".hoodie/.heartbeat"), "heartbeats left behind"


def zookeeper_lock(zookeeper) -> dict[str, str]:
    host, port = zookeeper.url.split(":")
    return {"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
            "hoodie.write.lock.zookeeper.url": host, "hoodie.write.lock.zookeeper.port": port,
            "hoodie.write.lock.zookeeper.base_path": "/hudi/locks"}


@pytest.fixture
def lock_for(request):
    """Lock options fit for a base path: the file-system lock on local disk, ZooKeeper's on an
    object store (which cannot create a file atomically)."""
    def options(base_path: str) -> dict[str, str]:
        if "://" not in base_path:
            return {}
        return zookeeper_lock(request.getfixturevalue("zookeeper"))
    return options


def test_writers_of_disjoint_partitions_both_commit(spark, table_path, tmp_path):
    write(spark.createDataFrame([("a", "apple", "eu", 1), ("b", "berry", "us", 1)], FRUIT_SCHEMA),
          table_path, opts("insert"))
    (code_eu, out_eu), (code_us, out_us) = race(table_path, tmp_path, {
        "eu": [("a", "apricot", "eu", 2), ("c", "cherry", "eu", 2)],
        "us": [("b", "banana", "us", 2), ("d", "date", "us", 2)]}).values()
    assert (code_eu, code_us) == (0, 0), (out_eu, out_us, (tmp_path / "eu.log").read_text()[-3000:])
    assert out_eu["committed"] != out_us["committed"]
    assert table_rows(spark, table_path) == [("a", "apricot", "eu", 2), ("b", "banana", "us", 2),
                                             ("c", "cherry", "eu", 2), ("d", "date", "us", 2)]
    assert_no_leftovers(table_path)


def test_writers_of_one_file_group_one_wins_other_conflicts_and_is_rolled_back(spark, base_path, tmp_path, lock_for):
    """On S3 under ZooKeeper's lock, each writer a process given the store's settings as options."""
    table_path, lock = base_path, lock_for(base_path)
    write(spark.createDataFrame([("k1", "kiwi", "eu", 1), ("k2", "kale", "eu", 1)], FRUIT_SCHEMA),
          table_path, opts("insert", **lock))
    [group] = {f.rsplit("/", 1)[1].split("_")[0] for f in files(table_path, "eu/*.parquet")}
    results = race(table_path, tmp_path, {name: [("k1", f"from-{name}", "eu", 2), (f"new-{name}", name, "eu", 2)]
                                          for name in ("x", "y")}, options={**lock, **connection_options(table_path)})
    winners = [n for n, (code, _) in results.items() if code == 0]
    losers = [n for n, (code, _) in results.items() if code == CONFLICT_EXIT]
    assert len(winners) == 1 and len(losers) == 1, results
    [winner], [loser] = winners, losers
    won = results[winner][1]["committed"]
    message = results[loser][1]["conflict"]
    assert f"conflicts with commit {won}" in message and f"eu/{group}" in message and "retry" in message
    assert table_rows(spark, table_path) == sorted([("k1", f"from-{winner}", "eu", 2), ("k2", "kale", "eu", 1),
                                                    (f"new-{winner}", winner, "eu", 2)])
    table = HoodieTable.load(table_path)
    [rb] = table.timeline.filter([ROLLBACK], completed=True)
    [lost] = decode_instant_avro(table.timeline.read_details(rb))["commitsRollback"]
    assert lost not in {i.timestamp for i in table.timeline.completed_writes()}
    assert not files(table_path, f"*_{lost}.parquet")
    assert files(table_path, f"*_{won}.parquet")
    assert_no_leftovers(table_path)


def test_killed_writer_is_rolled_back_after_its_heartbeat_expires_live_writer_left_alone(spark, table_path, tmp_path):
    write(spark.createDataFrame([("e1", "elder", "eu", 1)], FRUIT_SCHEMA), table_path, opts("insert"))
    doomed = start_writer(table_path, tmp_path, "doomed", [("u1", "ugli", "us", 2)], tmp_path / "never")
    live = start_writer(table_path, tmp_path, "live", [("s1", "sloe", "asia", 2)], tmp_path / "go-live")
    try:
        wait_until(lambda: len(pending_writes(table_path)) == 2, "both writers in flight", [doomed, live])
        first = min(pending_writes(table_path)).timestamp
        # Which of the two is which: the doomed writer's gate never opens; kill it.
        beats = {i.timestamp: Path(table_path, heartbeat_path(i.timestamp)) for i in pending_writes(table_path)}
        kill_tree(doomed.pid)
        doomed.wait()
        wait_until(lambda: any(not b.exists() or time.time() - b.stat().st_mtime > 2.5 for b in beats.values()),
                   "the killed writer's heartbeat to expire", [live])
        [dead] = [ts for ts, b in beats.items() if time.time() - b.stat().st_mtime > 2.5]
        [alive] = [ts for ts in beats if ts != dead]
        assert first in beats

        # The next writer (LAZY) rolls back the dead instant only.
        write(spark.createDataFrame([("e1", "endive", "eu", 3)], FRUIT_SCHEMA), table_path, opts())
        table = HoodieTable.load(table_path)
        [rb] = table.timeline.filter([ROLLBACK], completed=True)
        assert decode_instant_avro(table.timeline.read_details(rb))["commitsRollback"] == [dead]
        assert [i.timestamp for i in table.timeline.pending(WRITE_ACTIONS)] == [alive]
        assert Path(table_path, heartbeat_path(alive)).exists()
        assert not Path(table_path, heartbeat_path(dead)).exists()

        (tmp_path / "go-live").touch()
        code, out = finish(live)
        assert code == 0 and out["committed"] == alive, (tmp_path / "live.log").read_text()[-3000:]
    finally:
        for p in (doomed, live):
            if p.poll() is None:
                kill_tree(p.pid)
    assert table_rows(spark, table_path) == [("e1", "endive", "eu", 3), ("s1", "sloe", "asia", 2)]
    assert_no_leftovers(table_path)


def test_early_conflict_detection_fails_before_writing_data_files(spark, table_path):
    write(spark.createDataFrame([("k1", "kiwi", "eu", 1)], FRUIT_SCHEMA), table_path, opts("insert"))
    [group] = {f.name.split("_")[0] for f in Path(table_path, "eu").glob("*.parquet")}
    other, beat = live_writer_footprint(table_path, "eu", group)
    try:
        early = opts(**{"hoodie.write.concurrency.early.conflict.detection.enable": "true"})
        with pytest.raises(HoodieWriteConflictError) as err:
            write(spark.createDataFrame([("k1", "kumquat", "eu", 2)], FRUIT_SCHEMA), table_path, early)
        assert f"conflicts with commit {other.timestamp}" in str(err.value) and f"eu/{group}" in str(err.value)
        table = HoodieTable.load(table_path)
        [rb] = table.timeline.filter([ROLLBACK], completed=True)
        [ours] = decode_instant_avro(table.timeline.read_details(rb))["commitsRollback"]
        assert not [f for f in Path(table_path).rglob(f"*{ours}*") if ".hoodie" not in f.parts]
        # The live writer's instant is untouched.
        assert [i.timestamp for i in table.timeline.pending(WRITE_ACTIONS)] == [other.timestamp]
        # A write to another file group goes ahead beside it.
        write(spark.createDataFrame([("n1", "nut", "us", 2)], FRUIT_SCHEMA), table_path, early)
    finally:
        beat.stop()
    assert table_rows(spark, table_path) == [("k1", "kiwi", "eu", 1), ("n1", "nut", "us", 2)]


def test_occ_compaction_is_scheduled_beside_a_pending_write(spark, table_path):
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write(spark.createDataFrame([("k1", "kiwi", "eu", 1)], FRUIT_SCHEMA), table_path, opts("insert", **mor))
    write(spark.createDataFrame([("k1", "kumquat", "eu", 2)], FRUIT_SCHEMA), table_path, opts(**mor))
    table = HoodieTable.load(table_path)
    pending = Instant(new_instant_time(table.timeline.last_instant_time), DELTA_COMMIT, State.REQUESTED)
    beat = Heartbeat(table.storage, pending.timestamp, 1000).start()
    try:
        table.timeline.create_requested(pending)
        with pytest.raises(HoodieError, match="while write .* is pending"):
            schedule_compaction(table.reload(), {}, force=True)
        planned = schedule_compaction(table.reload(), opts(**mor), force=True)
        assert planned is not None and planned.action == "compaction"
    finally:
        beat.stop()


def test_writes_under_a_zookeeper_lock(spark, table_path, zookeeper):
    """The write path with ZooKeeper's lock: instants start and commit under /hudi/locks/fruit."""
    from kazoo.client import KazooClient

    zk = zookeeper_lock(zookeeper)
    write(spark.createDataFrame([("z1", "zucchini", "eu", 1)], FRUIT_SCHEMA), table_path, opts("insert", **zk))
    write(spark.createDataFrame([("z1", "zest", "eu", 2), ("z2", "ziziphus", "us", 2)], FRUIT_SCHEMA),
          table_path, opts(**zk))
    assert table_rows(spark, table_path) == [("z1", "zest", "eu", 2), ("z2", "ziziphus", "us", 2)]
    assert not (Path(table_path) / ".hoodie/.aux/lock").exists()
    client = KazooClient(hosts=zookeeper.url)
    client.start(timeout=10)
    try:
        assert client.exists("/hudi/locks/fruit") is not None
        assert client.get_children("/hudi/locks/fruit") == [], "every lock was released"
    finally:
        client.stop()
        client.close()
    assert_no_leftovers(table_path)


def test_clustering_runs_beside_a_writer_and_wins_only_where_they_overlap(spark, table_path, tmp_path):
    """MVCC: a clustering planned and completed while a writer process is in flight does not wait
    for it. On other file groups both commit; on the writer's file group the writer, which started
    before the plan, fails its conflict check and is rolled back, losing nothing that committed."""
    from hudi_engine.services.clustering import run_clusterings, schedule_clustering

    small = {"hoodie.parquet.small.file.limit": "0"}
    for n in (1, 2):
        write(spark.createDataFrame([(f"e{n}", "elder", "eu", n), (f"u{n}", "ugli", "us", n)], FRUIT_SCHEMA),
              table_path, opts("insert", **small))

    def cluster(partition):
        options = {**OCC, "hoodie.clustering.plan.strategy.partition.selected": partition}
        planned = schedule_clustering(HoodieTable.load(table_path), options)
        assert run_clusterings(spark, HoodieTable.load(table_path), options=options) == [planned.timestamp]

    def writer(name, rows_):
        gate = tmp_path / f"go-{name}"
        proc = start_writer(table_path, tmp_path, name, rows_, gate, options=small)
        try:
            wait_until(lambda: len(pending_writes(table_path)) == 1, f"{name} in flight", [proc])
            cluster("eu")                                   # while the write is in flight
            gate.touch()
            return finish(proc)
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)

    code, out = writer("us", [("u1", "updated", "us", 3)])
    assert code == 0, (out, (tmp_path / "us.log").read_text()[-3000:])
    expected = [("e1", "elder", "eu", 1), ("e2", "elder", "eu", 2), ("u1", "updated", "us", 3), ("u2", "ugli", "us", 2)]
    assert table_rows(spark, table_path) == expected
    assert len(HoodieTable.load(table_path).fs_view().latest_file_slices(partitions={"eu"})) == 1

    code, out = writer("eu", [("e1", "updated", "eu", 4)])
    assert code == CONFLICT_EXIT, out
    assert "replacecommit" in out["conflict"] and "retry" in out["conflict"], out
    assert table_rows(spark, table_path) == expected
    assert_no_leftovers(table_path)


def test_a_write_that_completed_while_another_ran_stays_in_the_metadata_table(spark, table_path):
    """A writer's timeline dates from when it began. When its commit's metadata sync compacts the
    metadata table, a delta commit that completed since must be trusted, or its log files vanish
    from the files listing and the next compaction or clustering plans the slice without them (the
    soak test's lost updates). In-process: writer A holds its transaction open while B commits."""
    options = opts(**{"hoodie.datasource.write.table.type": "MERGE_ON_READ",
                      "hoodie.metadata.compact.max.delta.commits": "3"})
    write(spark.createDataFrame([("jack", "apple", "eu", 1), ("john", "kiwi", "eu", 1)], FRUIT_SCHEMA),
          table_path, opts("insert", **options))
    slow = Transaction.begin(HoodieTable.load(table_path), DELTA_COMMIT, HoodieConfig(options), spark)
    updated = write(spark.createDataFrame([("jack", "banana", "eu", 2)], FRUIT_SCHEMA), table_path, options)
    logged = {f for f in files(table_path) if ".log." in f and not f.startswith(".hoodie/")}
    assert logged
    slow.inflight()
    slow.commit(commit_metadata([], "upsert", HoodieTable.load(table_path).timeline.latest_schema()), changed=set())
    slow.stop_heartbeat()

    mdt = HoodieTable.load(posixpath.join(table_path, MDT_DIR))
    assert [i for i in mdt.timeline.completed_writes() if i.action == "commit" and i.timestamp > updated]
    listed = {f.path for f in table_view(HoodieTable.load(table_path)).data_files()}
    assert logged <= listed
    assert table_rows(spark, table_path) == [("jack", "banana", "eu", 2), ("john", "kiwi", "eu", 1)]
    schedule_compaction(HoodieTable.load(table_path), options, force=True)
    run_compactions(spark, HoodieTable.load(table_path), options=options)
    assert table_rows(spark, table_path) == [("jack", "banana", "eu", 2), ("john", "kiwi", "eu", 1)]


def test_a_clean_writes_the_metadata_table_under_the_table_lock(spark, table_path, monkeypatch):
    """Deleting needs no lock, completing does: the clean's metadata delta commit (and any metadata
    compaction it runs) must not interleave with another writer's, or one overwrites the other's
    log file and the listing loses files."""
    options = opts(**{"hoodie.cleaner.commits.retained": "1", "hoodie.clean.automatic": "false"})
    for fruit in ("apple", "banana", "cherry"):
        write(spark.createDataFrame([("jack", fruit, "eu", 1)], FRUIT_SCHEMA), table_path, options)
    lock_file = posixpath.join(AUX_DIR, LOCK_FILE_NAME)
    held = []
    real = listener.sync_clean

    def recording(table, *args):
        held.append(table.storage.exists(lock_file))
        return real(table, *args)
    monkeypatch.setattr(listener, "sync_clean", recording)
    assert run_clean(HoodieTable.load(table_path), options, spark, force=True)
    assert held == [True]
    assert table_rows(spark, table_path) == [("jack", "cherry", "eu", 1)]
