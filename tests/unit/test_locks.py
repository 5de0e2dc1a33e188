"""The table lock: mutual exclusion between real processes (file system and ZooKeeper providers),
stale file locks, timeouts that name the holder, re-entrance."""
from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest

from hudi_engine.concurrency.hms_lock import HiveMetastoreLockProvider, HmsLockTarget
from hudi_engine.concurrency.lease_lock import KubernetesLeaseLockProvider
from hudi_engine.concurrency.locks import FileSystemLockProvider, InProcessLockProvider, acquire, table_lock
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieLockError
from tests.support.zookeeper import zookeeper  # noqa: F401 (a fixture)

FS = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
ZK = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
IN_PROCESS = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
PROCESSES = 4
ITERATIONS = 15


def occ(provider: str, **extra) -> dict:
    return {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
            "hoodie.write.lock.provider": provider, "hoodie.table.name": "locked",
            "hoodie.write.lock.wait_time_ms_between_retry": "20", **extra}


def _increment(args) -> list[tuple[float, float]]:
    """One contender (a separate process): read-modify-write a counter file under the lock."""
    base_path, options, counter, iterations = args
    cfg = HoodieConfig(options)
    held = []
    for _ in range(iterations):
        with table_lock(base_path, cfg, "incrementing"):
            start = time.time()
            value = int(Path(counter).read_text())
            time.sleep(0.003)  # widen the window a lost update would need
            Path(counter).write_text(str(value + 1))
            held.append((start, time.time()))
    return held


def assert_mutual_exclusion(tmp_path: Path, options: dict) -> None:
    base = tmp_path / "table"
    base.mkdir(exist_ok=True)
    counter = tmp_path / "counter"
    counter.write_text("0")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(PROCESSES) as pool:
        spans = pool.map(_increment, [(str(base), options, str(counter), ITERATIONS)] * PROCESSES)
    assert int(counter.read_text()) == PROCESSES * ITERATIONS, "an update was lost: two holders at once"
    ordered = sorted(s for per_process in spans for s in per_process)
    for (_, end), (start, _) in zip(ordered, ordered[1:]):
        assert start >= end, "two processes held the lock at the same time"


# --- file system ---------------------------------------------------------------------------------
def test_file_lock_excludes_processes(tmp_path):
    assert_mutual_exclusion(tmp_path, occ(FS))
    assert not (tmp_path / "table/.hoodie/.aux/lock").exists(), "the lock file is released"


def test_file_lock_in_configured_folder(tmp_path):
    folder = tmp_path / "locks"
    with table_lock(str(tmp_path / "t"), HoodieConfig(occ(FS, **{"hoodie.write.lock.filesystem.path": str(folder)})),
                    "testing"):
        holder = json.loads((folder / "lock").read_text())
        assert holder["pid"] == os.getpid() and "testing" in holder["purpose"]
    assert not (folder / "lock").exists()


def _dead_holder_lock(path: Path, age_s: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"owner": "dead", "host": "gone-host", "pid": 999999, "lockThreadName": "main",
                                "purpose": "a write that crashed", "lockCreateTime": "2024-01-01 00:00:00.000"}))
    old = time.time() - age_s
    os.utime(path, (old, old))


def test_stale_file_lock_expires_and_is_taken_over(tmp_path):
    base = tmp_path / "table"
    lock = base / ".hoodie/.aux/lock"
    _dead_holder_lock(lock, age_s=600)
    options = occ(FS, **{"hoodie.write.lock.filesystem.expire": "1", "hoodie.write.lock.wait_time_ms": "2000"})
    started = time.monotonic()
    with table_lock(str(base), HoodieConfig(options), "after a crash"):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert time.monotonic() - started < 2
    assert not lock.exists() and not lock.with_name("lock.reclaim").exists()


def test_fresh_lock_does_not_expire_and_timeout_names_lock_and_holder(tmp_path):
    base = tmp_path / "table"
    lock = base / ".hoodie/.aux/lock"
    _dead_holder_lock(lock, age_s=30)   # younger than the 1 minute expiry
    options = occ(FS, **{"hoodie.write.lock.filesystem.expire": "1", "hoodie.write.lock.wait_time_ms": "300",
                         "hoodie.write.lock.client.num_retries": "1",
                         "hoodie.write.lock.client.wait_time_ms_between_retry": "100"})
    started = time.monotonic()
    with pytest.raises(HoodieLockError) as err:
        with table_lock(str(base), HoodieConfig(options), "committing"):
            pass
    assert 0.6 <= time.monotonic() - started < 5
    message = str(err.value)
    assert str(lock) in message and "gone-host pid 999999" in message and "a write that crashed" in message
    assert "2 attempts" in message
    assert json.loads(lock.read_text())["pid"] == 999999, "a live lock is never taken over"


def test_without_expiry_a_dead_holders_lock_stays(tmp_path):
    base = tmp_path / "table"
    _dead_holder_lock(base / ".hoodie/.aux/lock", age_s=10_000)
    options = occ(FS, **{"hoodie.write.lock.wait_time_ms": "100", "hoodie.write.lock.client.num_retries": "0"})
    with pytest.raises(HoodieLockError, match="delete the lock file"):
        with table_lock(str(base), HoodieConfig(options), "committing"):
            pass


@pytest.mark.parametrize("make, hint", [
    (lambda tmp: FileSystemLockProvider(str(tmp), expire_minutes=2, poll_ms=10),
     "its lock file is taken over 2 minutes after its last refresh (hoodie.write.lock.filesystem.expire)"),
    (lambda tmp: FileSystemLockProvider(str(tmp), expire_minutes=0, poll_ms=10),
     "set hoodie.write.lock.filesystem.expire (minutes) or delete the lock file"),
    (lambda tmp: InProcessLockProvider(str(tmp)), "its lock went with its process"),
    (lambda tmp: KubernetesLeaseLockProvider("lake", "hudi-lock-orders", duration_s=45, api_client=object()),
     "the Lease expires its leaseDurationSeconds (ours: hoodie.write.lock.kubernetes.lease.duration.seconds=45) "
     "after its last renewal"),
    (lambda tmp: HiveMetastoreLockProvider(HmsLockTarget(("thrift://hms:9083",), "sales", "orders"), 1000, 100),
     "the metastore expires its lock hive.txn.timeout"),
], ids=["file with expiry", "file without", "in-process", "lease", "metastore"])
def test_a_timed_out_wait_says_how_a_dead_holders_lock_goes_away(tmp_path, monkeypatch, make, hint):
    """Each kind of lock frees a dead holder's lock its own way; the message says which."""
    provider = make(tmp_path)
    monkeypatch.setattr(provider, "try_lock", lambda timeout: False)
    monkeypatch.setattr(provider, "holder", lambda: "host gone pid 1")
    cfg = HoodieConfig({"hoodie.write.lock.wait_time_ms": "10", "hoodie.write.lock.client.num_retries": "0"})
    with pytest.raises(HoodieLockError) as err:
        acquire(provider, cfg, "committing")
    assert f"held by host gone pid 1. Retry later; if that holder died, {hint}" in str(err.value)


def test_held_file_lock_is_kept_fresh(tmp_path):
    """A holder refreshes its lock file, so a long critical section is not mistaken for a dead one."""
    a = FileSystemLockProvider(str(tmp_path), expire_minutes=0.01, poll_ms=10, purpose="long")   # 0.6 s
    b = FileSystemLockProvider(str(tmp_path), expire_minutes=0.01, poll_ms=10, purpose="waiting")
    assert a.try_lock(1)
    try:
        time.sleep(1.5)
        assert not b.try_lock(0.5)
        a.check_held()
    finally:
        a.unlock()
    assert b.try_lock(0.5)
    b.unlock()


def test_lock_is_reentrant_within_a_thread(tmp_path):
    options = HoodieConfig(occ(FS, **{"hoodie.write.lock.wait_time_ms": "200", "hoodie.write.lock.client.num_retries": "0"}))
    with table_lock(str(tmp_path), options, "a write"):
        with table_lock(str(tmp_path), options, "its inline clean"):
            assert (tmp_path / ".hoodie/.aux/lock").exists()
        assert (tmp_path / ".hoodie/.aux/lock").exists()
    assert not (tmp_path / ".hoodie/.aux/lock").exists()


def test_single_writer_takes_no_lock(tmp_path):
    with table_lock(str(tmp_path), HoodieConfig({}), "a write") as lock:
        assert lock is None
    assert not (tmp_path / ".hoodie").exists()


def test_file_lock_refuses_object_stores():
    with pytest.raises(HoodieConfigError, match="atomically"):
        with table_lock("mock://bucket/table", HoodieConfig(occ(FS)), "a write"):
            pass


# --- in process ----------------------------------------------------------------------------------
def test_in_process_lock_excludes_threads(tmp_path):
    options = HoodieConfig(occ(IN_PROCESS))
    counter = {"value": 0}

    def bump():
        for _ in range(50):
            with table_lock(str(tmp_path), options, "bump"):
                value = counter["value"]
                time.sleep(0.0005)
                counter["value"] = value + 1
    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter["value"] == 200


# --- ZooKeeper -----------------------------------------------------------------------------------
def zk_options(server, **extra) -> dict:
    host, port = server.url.split(":")
    return occ(ZK, **{"hoodie.write.lock.zookeeper.url": host, "hoodie.write.lock.zookeeper.port": port,
                      "hoodie.write.lock.zookeeper.base_path": "/hudi/locks", **extra})


def test_zookeeper_lock_excludes_processes(tmp_path, zookeeper):
    assert_mutual_exclusion(tmp_path, zk_options(zookeeper))


def test_zookeeper_lock_timeout_names_znode_and_holder(tmp_path, zookeeper):
    options = zk_options(zookeeper, **{"hoodie.write.lock.zookeeper.lock_key": "timeouts",
                                       "hoodie.write.lock.wait_time_ms": "300",
                                       "hoodie.write.lock.client.num_retries": "0"})
    entered = threading.Event()
    release = threading.Event()

    def hold():
        with table_lock(str(tmp_path), HoodieConfig(options), "a long commit"):
            entered.set()
            release.wait(10)
    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert entered.wait(10)
        with pytest.raises(HoodieLockError) as err:
            with table_lock(str(tmp_path), HoodieConfig(options), "another commit"):
                pass
        message = str(err.value)
        assert "/hudi/locks/timeouts" in message and f"pid {os.getpid()}" in message and "a long commit" in message
        assert ("if that holder died, its ZooKeeper session ends at most "
                "hoodie.write.lock.zookeeper.session_timeout_ms=60000 ms after it died") in message
    finally:
        release.set()
        holder.join()
    with table_lock(str(tmp_path), HoodieConfig(options), "after release"):
        pass


def test_zookeeper_lock_needs_url_and_base_path(tmp_path):
    with pytest.raises(HoodieConfigError, match="zookeeper.url"):
        with table_lock(str(tmp_path), HoodieConfig(occ(ZK)), "a write"):
            pass
