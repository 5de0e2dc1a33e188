"""The streamer as a job: killed mid-batch and restarted, stopped by SIGTERM, run continuously on
a merge-on-read table with async compaction, and fed from an upstream Hudi table (bronze → silver).
Every test checks each record is in the target exactly once."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hudi_engine import read, write
from hudi_engine.table.meta_client import HoodieTable
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer
from tests.support.data import three_commits
from tests.support.hudi_rs import hudi_rs_read
from tests.support.streamer import orders_argv
from tests.support.processes import kill_when

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def write_orders(folder: Path, files: int, per_file: int, start_mtime: float, ts: int = 1, prefix: str = "orders"):
    folder.mkdir(exist_ok=True)
    for n in range(files):
        path = folder / f"{prefix}-{n:03d}.json"
        rows = (json.dumps({"id": f"o{n * per_file + i}", "amount": float(i), "ts": ts,
                            "region": ("eu", "us")[i % 2]}) for i in range(per_file))
        path.write_text("\n".join(rows) + "\n")
        os.utime(path, (start_mtime + n, start_mtime + n))


def start_streamer(argv):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "hudi_jobs.streamer", *argv], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def writing(base: Path):
    """True once a write's markers are on disk: the batch is being written, not yet committed."""
    temp = base / ".hoodie" / ".temp"
    return lambda: temp.exists() and any(p.is_file() for p in temp.rglob("*"))


def ids(spark, base):
    return [r["id"] for r in read(spark, str(base)).select("id").collect()]


@pytest.mark.slow
def test_killed_in_the_middle_of_a_batch_then_restarted_ingests_every_record_once(spark, tmp_path):
    write_orders(tmp_path / "in", files=4, per_file=40000, start_mtime=time.time() - 100)
    one_file = (tmp_path / "in" / "orders-000.json").stat().st_size
    # INSERT does not deduplicate against the table: a replayed batch would show up twice.
    first = Streamer(spark, build_config(orders_argv(tmp_path, "--op", "INSERT", "--source-limit", str(one_file))))
    assert first.sync_once().instant
    first.close()

    proc = start_streamer(orders_argv(tmp_path, "--op", "INSERT"))
    kill_when(proc, writing(tmp_path / "orders"), "streamer")
    assert HoodieTable.load(str(tmp_path / "orders")).timeline.pending(), "the kill left its batch inflight"
    assert len(ids(spark, tmp_path / "orders")) == 40000          # readers still see the last commit

    again = Streamer(spark, build_config(orders_argv(tmp_path, "--op", "INSERT")))
    assert again.sync_once().instant
    assert again.sync_once().instant is None
    again.close()
    got = ids(spark, tmp_path / "orders")
    assert len(got) == 160000 and len(set(got)) == 160000
    assert hudi_rs_read(tmp_path / "orders").num_rows == 160000


@pytest.mark.slow
def test_sigterm_finishes_the_batch_in_flight_and_takes_no_more(spark, tmp_path):
    write_orders(tmp_path / "in", files=3, per_file=40000, start_mtime=time.time() - 100)
    one_file = (tmp_path / "in" / "orders-000.json").stat().st_size
    proc = start_streamer(orders_argv(tmp_path, "--continuous", "--source-limit", str(one_file)))
    deadline = time.monotonic() + 240
    while not writing(tmp_path / "orders")():
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=240) == 0, proc.stderr.read().decode()[-3000:]
    table = HoodieTable.load(str(tmp_path / "orders"))
    assert not table.timeline.pending()
    assert len(table.timeline.completed_writes()) == 1
    assert sorted(ids(spark, tmp_path / "orders")) == sorted(f"o{i}" for i in range(40000))


def test_continuous_merge_on_read_with_async_compaction_stops_when_no_new_data(spark, tmp_path):
    inbox = tmp_path / "in"
    start = time.time() - 100
    write_orders(inbox, files=2, per_file=500, start_mtime=start, ts=1)
    write_orders(inbox, files=2, per_file=500, start_mtime=start + 2, ts=2, prefix="update")  # the same ids
    one_file = (inbox / "orders-000.json").stat().st_size
    cfg = build_config(orders_argv(
        tmp_path, "--table-type", "MERGE_ON_READ", "--continuous", "--min-sync-interval-seconds", "0",
        "--source-limit", str(one_file),
        "--post-write-termination-strategy-class", "NoNewDataTerminationStrategy",
        "--hoodie-conf", "max.rounds.without.new.data.to.shutdown=2",
        "--hoodie-conf", "hoodie.compact.inline.max.delta.commits=2"))
    streamer = Streamer(spark, cfg)
    streamer.run()
    streamer.close()
    table = HoodieTable.load(str(tmp_path / "orders"))
    actions = [i.action for i in table.timeline.instants if i.is_completed]
    assert actions.count("deltacommit") >= 3 and "commit" in actions     # a compaction completed
    assert not table.timeline.pending()
    rows = sorted((r["id"], r["ts"]) for r in read(spark, str(tmp_path / "orders")).collect())
    assert rows == sorted((f"o{i}", 2) for i in range(1000))
    outside = hudi_rs_read(tmp_path / "orders")
    assert sorted(zip(outside.column("id").to_pylist(), outside.column("ts").to_pylist())) == rows


@pytest.mark.parametrize("cdc", [True, False], ids=["cdc-upstream", "plain-upstream"])
def test_bronze_to_silver_one_upstream_commit_per_batch(spark, tmp_path, cdc):
    bronze, silver = tmp_path / "bronze", tmp_path / "silver"
    three_commits(spark, write, str(bronze), {"hoodie.table.cdc.enabled": str(cdc).lower()})
    argv = ["--target-base-path", str(silver), "--target-table", "silver",
            "--source-class", "org.apache.hudi.utilities.sources.HoodieIncrSource",
            "--transformer-class", "SqlQueryBasedTransformer",
            "--hoodie-conf", "hoodie.streamer.transformer.sql=SELECT *, upper(fruit) AS fruit_upper FROM <SRC>",
            "--hoodie-conf", f"hoodie.streamer.source.hoodieincr.path={bronze}",
            "--hoodie-conf", "hoodie.streamer.source.hoodieincr.num_instants=1",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=name",
            "--hoodie-conf", "hoodie.datasource.write.partitionpath.field=region"]
    streamer = Streamer(spark, build_config(argv))
    results = [streamer.sync_once() for _ in range(4)]
    streamer.close()
    # the delete commit brings no rows without CDC, but its empty commit still moves the checkpoint
    assert [bool(r.instant) for r in results] == [True, True, True, False]
    silver_rows = sorted((r["name"], r["fruit_upper"]) for r in read(spark, str(silver)).collect())
    if cdc:   # the change feed carries the delete of john downstream
        assert silver_rows == [("jack", "BANANA"), ("sarah", "ORANGE")]
    else:     # a plain incremental query has no record of deletes (as in Hudi)
        assert silver_rows == [("jack", "BANANA"), ("john", "PINEAPPLE"), ("sarah", "ORANGE")]
    outside = hudi_rs_read(silver)
    assert sorted(zip(outside.column("name").to_pylist(), outside.column("fruit_upper").to_pylist())) == silver_rows
