"""Hudi's HiveMetastoreBasedLockProvider against a real Hive 2.3 metastore (pyspark's jars, its
transaction tables created from the chart's DDL): contention between threads and between
processes, a timed-out waiter leaving nothing queued, a killed holder's lock expiring through the
metastore's own housekeeping, heartbeats keeping a live holder's lock, and OCC writes under it."""
from __future__ import annotations

import multiprocessing
import threading
import time
import uuid

import pytest

from hudi_engine import write
from hudi_engine.api import HoodieTable
from hudi_engine.services import compaction
from hudi_engine.transaction.metadata.listener import MetadataSync
from hudi_engine.concurrency.hms_lock import HiveMetastoreLockProvider
from hudi_engine.concurrency.locks import lock_provider, table_lock
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieLockError
from pymetastore.hive_metastore.ttypes import LockState, ShowLocksRequest, UnlockRequest
from tests.integration.test_multi_writer import CONFLICT_EXIT, assert_no_leftovers, opts, race, table_rows, wait_until
from tests.support.data import FRUIT_SCHEMA
from tests.support.metastore import TXN_TIMEOUT_S
from tests.unit.test_locks import assert_mutual_exclusion

HMS = "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider"


def hms_options(uri: str, table: str | None = None, **extra) -> dict[str, str]:
    """OCC under the metastore's lock; heartbeats every second, well inside its hive.txn.timeout."""
    return {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL", "hoodie.write.lock.provider": HMS,
            "hoodie.write.lock.hivemetastore.uris": uri, "hoodie.table.name": table or f"t_{uuid.uuid4().hex[:8]}",
            "hoodie.write.lock.heartbeat_interval_ms": "1000",
            "hoodie.write.lock.wait_time_ms_between_retry": "100", **extra}


def provider(options: dict, purpose: str = "test") -> HiveMetastoreLockProvider:
    p = lock_provider("/unused", HoodieConfig(options), purpose=purpose)
    assert isinstance(p, HiveMetastoreLockProvider)
    return p


def locks_on(p: HiveMetastoreLockProvider) -> list:
    request = ShowLocksRequest(dbname=p.target.database, tablename=p.target.table)
    return p._call("show_locks", lambda c: c.show_locks(request)).locks or []


def _hold_until_killed(options: dict, held: multiprocessing.Event) -> None:
    """A holder in its own process that never lets go: only its death ends its heartbeats."""
    p = provider(options, "holder process")
    assert p.try_lock(60)
    held.set()
    time.sleep(3600)


def test_a_waiter_gets_the_lock_when_the_holder_unlocks(metastore):
    options = hms_options(metastore.uri)
    first, second = provider(options, "first"), provider(options, "second")
    try:
        assert first.try_lock(10)
        acquired = threading.Event()
        waiter = threading.Thread(target=lambda: second.try_lock(60) and acquired.set())
        waiter.start()
        wait_until(lambda: len(locks_on(first)) == 2, "the second request queued")
        assert not acquired.wait(1.5), "two holders at once"
        states = {lock.agentInfo.split(": ")[-1]: lock.state for lock in locks_on(first)}
        assert states == {"first": LockState.ACQUIRED, "second": LockState.WAITING}
        assert "first" in second.holder() and "second" not in second.holder()
        first.unlock()
        assert acquired.wait(10), "the waiter did not get the released lock"
        waiter.join()
        [lock] = locks_on(first)
        assert (lock.lockid, lock.state) == (second.lock_id, LockState.ACQUIRED)
        second.unlock()
        assert locks_on(first) == []
    finally:
        first.close()
        second.close()


def test_a_waiter_that_times_out_leaves_no_request_behind(metastore):
    options = hms_options(metastore.uri)
    holder, waiter = provider(options, "holder"), provider(options, "waiter")
    try:
        assert holder.try_lock(10)
        started = time.monotonic()
        assert not waiter.try_lock(1.0)
        assert 1.0 <= time.monotonic() - started < 5
        [lock] = locks_on(holder)
        assert (lock.lockid, lock.state) == (holder.lock_id, LockState.ACQUIRED)
        holder.unlock()
        assert locks_on(holder) == []
    finally:
        holder.close()
        waiter.close()


def test_locks_of_different_tables_do_not_contend(metastore):
    one, two = provider(hms_options(metastore.uri, "orders")), provider(hms_options(metastore.uri, "customers"))
    try:
        assert one.try_lock(5) and two.try_lock(5)
        one.unlock()
        two.unlock()
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize("interval_ms", ["1000", "60000"], ids=["configured-1s", "hudi-default-60s"])
def test_heartbeats_keep_a_lock_held_past_the_metastores_timeout(metastore, interval_ms):
    """With Hudi's default interval (60 s, against this metastore's 4 s expiry) the holder heartbeats
    at a third of the metastore's hive.txn.timeout instead: a lock it dropped while held would let a
    second writer into the critical section."""
    options = hms_options(metastore.uri, **{"hoodie.write.lock.heartbeat_interval_ms": interval_ms})
    holder, other = provider(options, "long holder"), provider(options, "other")
    try:
        assert holder.try_lock(10)
        time.sleep(TXN_TIMEOUT_S * 2.5)
        holder.check_held()
        assert not other.try_lock(0.5), "the held lock expired although heartbeated"
        [lock] = locks_on(holder)
        assert lock.lockid == holder.lock_id
        assert lock.lastheartbeat - lock.acquiredat > TXN_TIMEOUT_S * 1000, "no heartbeat reached the metastore"
        assert holder._cadence_s <= TXN_TIMEOUT_S / 3
        holder.unlock()
    finally:
        holder.close()
        other.close()


def test_a_killed_holders_lock_expires_and_the_next_writer_gets_it(metastore):
    options = hms_options(metastore.uri)
    ctx = multiprocessing.get_context("spawn")
    held = ctx.Event()
    process = ctx.Process(target=_hold_until_killed, args=(options, held))
    process.start()
    successor = provider(options, "successor")
    try:
        assert held.wait(60), "the holder process did not get the lock"
        [dead] = locks_on(successor)
        assert "holder process" in dead.agentInfo
        assert not successor.try_lock(1.0), "got the lock while its holder lived"
        process.kill()
        process.join()
        started = time.monotonic()
        assert successor.try_lock(TXN_TIMEOUT_S * 5), "the dead holder's lock never expired"
        assert time.monotonic() - started >= 1.0
        [lock] = locks_on(successor)
        assert (lock.lockid, lock.state) == (successor.lock_id, LockState.ACQUIRED)
        successor.unlock()
    finally:
        if process.is_alive():
            process.kill()
        successor.close()


def test_processes_exclude_each_other(metastore, tmp_path):
    assert_mutual_exclusion(tmp_path, hms_options(metastore.uri))


def test_table_lock_is_reentrant_and_a_timeout_names_the_holder(metastore, tmp_path):
    options = hms_options(metastore.uri, "reentrant", **{"hoodie.write.lock.wait_time_ms": "500",
                                                         "hoodie.write.lock.client.num_retries": "0"})
    cfg = HoodieConfig(options)
    base = str(tmp_path / "table")
    with table_lock(base, cfg, "outer") as outer:
        with table_lock(base, cfg, "inner") as inner:
            assert inner is outer
            assert len(locks_on(outer)) == 1
        errors: list[Exception | None] = []
        other = threading.Thread(target=lambda: errors.append(_try(base, cfg)))
        other.start()
        other.join()
        [error] = errors
        assert isinstance(error, HoodieLockError)
        assert "outer of" in str(error) and "Hive Metastore lock default.reentrant" in str(error)
    assert locks_on(outer) == []


def _try(base: str, cfg: HoodieConfig) -> Exception | None:
    try:
        with table_lock(base, cfg, "another thread"):
            return None
    except HoodieLockError as exc:
        return exc


# --- the write path under the metastore's lock ---------------------------------------------------
@pytest.mark.spark
def test_occ_writers_of_disjoint_partitions_both_commit(spark, metastore, table_path, tmp_path):
    lock = hms_options(metastore.uri, "fruit")
    write(spark.createDataFrame([("a", "apple", "eu", 1), ("b", "berry", "us", 1)], FRUIT_SCHEMA),
          table_path, opts("insert", **lock))
    results = race(table_path, tmp_path, {region: [(key, f"{region}-fruit", region, 2)]
                                          for key, region in (("a", "eu"), ("b", "us"))}, options=lock)
    assert [code for code, _ in results.values()] == [0, 0], results
    assert table_rows(spark, table_path) == [("a", "eu-fruit", "eu", 2), ("b", "us-fruit", "us", 2)]
    assert_no_leftovers(table_path)


@pytest.mark.spark
def test_occ_writers_of_one_file_group_one_conflicts(spark, metastore, table_path, tmp_path):
    lock = hms_options(metastore.uri, "fruit_overlap")
    write(spark.createDataFrame([("k1", "kiwi", "eu", 1)], FRUIT_SCHEMA), table_path, opts("insert", **lock))
    results = race(table_path, tmp_path, {name: [("k1", f"from-{name}", "eu", 2)] for name in ("x", "y")},
                   options=lock)
    codes = sorted(code for code, _ in results.values())
    assert codes == [0, CONFLICT_EXIT], results
    [winner] = [name for name, (code, _) in results.items() if code == 0]
    assert table_rows(spark, table_path) == [("k1", f"from-{winner}", "eu", 2)]
    assert_no_leftovers(table_path)


def drop_locks_of(p: HiveMetastoreLockProvider) -> None:
    """What the metastore's housekeeping does to a holder whose heartbeats stopped: its lock goes."""
    for lock in locks_on(p):
        p._call("unlock", lambda c, lock_id=lock.lockid: c.unlock(UnlockRequest(lockid=lock_id)))


@pytest.mark.spark
def test_a_commit_whose_lock_was_lost_while_held_is_not_published(spark, metastore, table_path, monkeypatch):
    """The metastore drops the writer's lock while the metadata table is brought in step: another
    writer could be in the critical section now, so the commit is refused and rolled back; the table,
    its metadata table included, reads as before, and the next write commits."""
    lock = hms_options(metastore.uri, "lost_in_commit")
    write(spark.createDataFrame([("a", "apple", "eu", 1)], FRUIT_SCHEMA), table_path, opts("insert", **lock))
    housekeeping = provider(lock, "housekeeping")
    sync = MetadataSync.before_complete

    def sync_then_lose_the_lock(self, table, instant, metadata):
        sync(self, table, instant, metadata)
        if instant.action == "commit":
            drop_locks_of(housekeeping)

    monkeypatch.setattr(MetadataSync, "before_complete", sync_then_lose_the_lock)
    try:
        with pytest.raises(HoodieLockError, match="lost while held"):
            write(spark.createDataFrame([("a", "avocado", "eu", 2)], FRUIT_SCHEMA), table_path, opts(**lock))
    finally:
        monkeypatch.undo()
        housekeeping.close()
    assert table_rows(spark, table_path) == [("a", "apple", "eu", 1)]
    assert_no_leftovers(table_path)
    assert len(HoodieTable.load(table_path).timeline.completed_writes()) == 1
    write(spark.createDataFrame([("a", "avocado", "eu", 2)], FRUIT_SCHEMA), table_path, opts(**lock))
    assert table_rows(spark, table_path) == [("a", "avocado", "eu", 2)]


@pytest.mark.spark
def test_a_compaction_plan_made_under_a_lost_lock_is_not_published(spark, metastore, table_path, monkeypatch):
    """A plan decided under a lock the metastore dropped meanwhile may miss a write that committed
    beside it: it is not written to the timeline, and planning again works."""
    lock = hms_options(metastore.uri, "lost_in_plan", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    for ts, fruit in ((1, "apple"), (2, "avocado")):
        write(spark.createDataFrame([("a", fruit, "eu", ts)], FRUIT_SCHEMA), table_path,
              opts("insert" if ts == 1 else "upsert", **lock))
    housekeeping = provider(lock, "housekeeping")
    plan = compaction.plan_compaction

    def plan_then_lose_the_lock(*args, **kwargs):
        planned = plan(*args, **kwargs)
        drop_locks_of(housekeeping)
        return planned

    monkeypatch.setattr(compaction, "plan_compaction", plan_then_lose_the_lock)
    try:
        with pytest.raises(HoodieLockError, match="lost while held"):
            compaction.schedule_compaction(HoodieTable.load(table_path), lock, force=True)
    finally:
        monkeypatch.undo()
        housekeeping.close()
    assert HoodieTable.load(table_path).timeline.filter(["compaction"]) == []
    assert compaction.schedule_compaction(HoodieTable.load(table_path), lock, force=True) is not None
