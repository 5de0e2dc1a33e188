"""A streamer batch that loses a write conflict to another writer of the same file group retries by
itself (hoodie.write.num.retries.on.conflict.failures), and past the bound fails with the conflict
named. The other writer is a live writer's footprint on storage (its instant, beating heartbeat and
marker on the file group), which the streamer's early conflict detection sees, as it would see a
writer process in flight."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from hudi_engine import read
from hudi_engine.errors import HoodieWriteConflictError
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import decode_instant_avro
from hudi_engine.timeline.instant import ROLLBACK
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer
from tests.support.occ_writer import live_writer_footprint
from tests.support.streamer import orders_argv

pytestmark = pytest.mark.spark
OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
       "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
       "hoodie.cleaner.policy.failed.writes": "LAZY",
       "hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "2",
       "hoodie.write.concurrency.early.conflict.detection.enable": "true"}


def argv(root: Path, retries: int) -> list[str]:
    options = {**OCC, "hoodie.write.num.retries.on.conflict.failures": str(retries)}
    return orders_argv(root, "--op", "UPSERT", *[a for k, v in options.items() for a in ("--hoodie-conf", f"{k}={v}")])


def drop_file(inbox: Path, name: str, records: list[dict], age: float) -> None:
    path = inbox / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(path, (time.time() - age, time.time() - age))


def sync_once(spark, args: list[str]):
    streamer = Streamer(spark, build_config(args))
    try:
        return streamer.sync_once()
    finally:
        streamer.close()


def rolled_back(base_path: str) -> list[str]:
    table = HoodieTable.load(base_path)
    return [t for rb in table.timeline.filter([ROLLBACK], completed=True)
            for t in decode_instant_avro(table.timeline.read_details(rb))["commitsRollback"]]


@pytest.fixture
def contested(spark, tmp_path):
    """An orders table with o1 in eu, a new batch updating o1, and a live writer of o1's file group."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    drop_file(inbox, "part-0.json", [{"id": "o1", "amount": 10.0, "region": "eu", "ts": 1}], age=100)
    assert sync_once(spark, argv(tmp_path, 0)).instant
    base_path = str(tmp_path / "orders")
    [group] = {f.name.split("_")[0] for f in Path(base_path, "eu").glob("*.parquet")}
    drop_file(inbox, "part-1.json", [{"id": "o1", "amount": 20.0, "region": "eu", "ts": 2}], age=50)
    other, beat = live_writer_footprint(base_path, "eu", group)
    try:
        yield base_path, group, other, beat
    finally:
        beat.stop()


def test_a_batch_that_loses_a_conflict_retries_and_commits(spark, tmp_path, contested):
    base_path, group, other, beat = contested

    def other_writer_dies_after_the_first_conflict():
        deadline = time.monotonic() + 240
        while not rolled_back(base_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        beat.stop()
    dying = threading.Thread(target=other_writer_dies_after_the_first_conflict)
    dying.start()
    try:
        result = sync_once(spark, argv(tmp_path, 5))
    finally:
        dying.join()
    lost = rolled_back(base_path)
    assert lost and lost[0] != other.timestamp               # the streamer's own first attempt was undone
    assert result.instant not in lost
    assert result.instant in {i.timestamp for i in HoodieTable.load(base_path).timeline.completed_writes()}
    rows = sorted((r["id"], r["amount"]) for r in read(spark, base_path).collect())
    assert rows == [("o1", 20.0)]


def test_past_the_bound_the_batch_fails_with_the_conflict_named(spark, tmp_path, contested):
    base_path, group, other, _ = contested
    with pytest.raises(HoodieWriteConflictError) as failed:
        sync_once(spark, argv(tmp_path, 1))
    message = str(failed.value)
    assert message.startswith("the batch into orders lost a write conflict on each of 2 attempts "
                              "(hoodie.write.num.retries.on.conflict.failures=1)")
    assert f"conflicts with commit {other.timestamp}" in message and f"eu/{group}" in message
    assert len(rolled_back(base_path)) == 2                   # both attempts left nothing behind
    assert sorted((r["id"], r["amount"]) for r in read(spark, base_path).collect()) == [("o1", 10.0)]
