"""Merge-on-read failures: a delta commit that dies after appending its log blocks, and a compaction
killed half way (a real process, SIGKILLed). Readers, ours and hudi-rs, see the last commit; the
next writer or compaction run cleans up as Hudi does."""
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hudi_engine import read, write
from hudi_engine.file_group.log_file import BlockType, read_log_file
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import decode_instant_avro
from hudi_engine.timeline.instant import COMPACTION, ROLLBACK
from tests.integration.test_cow_failures import ROOT
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.lost_driver import lose_the_driver_before_delta_commits
from tests.support.processes import kill_when

pytestmark = pytest.mark.spark
MOR = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
V6 = {"hoodie.write.table.version": "6"}
COLS = ["name", "fruit"]


def op(operation, **extra):
    return {**MOR, "hoodie.datasource.write.operation": operation, **extra}


def state(spark, path):
    return sorted((r["name"], r["fruit"]) for r in read(spark, path).select(*COLS).collect())


def blocks_by_file(path):
    storage = Storage(path)
    return {info.path.rsplit("/", 1)[-1]: [(b.block_type, b.instant_time, b.target_instant_time)
                                           for b in read_log_file(storage, info.path)]
            for info in storage.list("eu")
            if ".log." in info.path}


def test_failed_delta_commit_is_rolled_back_with_a_command_block(spark, table_path, monkeypatch):
    """Version 6's rollback (Hudi 1.x deletes the logs instead: test_table_versions_8_and_9)."""
    write(spark.createDataFrame([("jack", "apple", "eu", 1), ("john", "kiwi", "eu", 1)], FRUIT_SCHEMA),
          table_path, op("insert", **V6))
    before = [("jack", "apple"), ("john", "kiwi")]

    # The writer dies after its log blocks are on storage, before the commit (and before it could
    # roll itself back): what a lost driver leaves.
    lose_the_driver_before_delta_commits(monkeypatch)
    with pytest.raises(RuntimeError, match="driver lost"):
        write(spark.createDataFrame([("jack", "banana", "eu", 2)], FRUIT_SCHEMA), table_path, op("upsert", **V6))
    monkeypatch.undo()

    [failed] = HoodieTable.load(table_path).timeline.pending()
    [(failed_log, failed_blocks)] = blocks_by_file(table_path).items()
    assert failed_blocks == [(BlockType.AVRO_DATA_BLOCK, failed.timestamp, None)]
    assert state(spark, table_path) == before
    assert rows(hudi_rs_read(table_path), COLS) == before

    write(spark.createDataFrame([("john", "mango", "eu", 3)], FRUIT_SCHEMA), table_path, op("upsert", **V6))
    table = HoodieTable.load(table_path)
    [rb] = table.timeline.filter([ROLLBACK], completed=True)
    meta = decode_instant_avro(table.timeline.read_details(rb))
    assert meta["commitsRollback"] == [failed.timestamp]
    part = meta["partitionMetadata"]["eu"]
    assert [k.rsplit("/", 1)[-1] for k in part["logFilesFromFailedCommit"]] == [failed_log]
    [command_log] = [k.rsplit("/", 1)[-1] for k in part["rollbackLogFiles"]]
    logs = blocks_by_file(table_path)
    # The failed blocks stay on storage; a command block after them voids them.
    assert logs[failed_log] == failed_blocks
    assert logs[command_log] == [(BlockType.COMMAND_BLOCK, rb.timestamp, failed.timestamp)]
    assert len(logs) == 3
    after = [("jack", "apple"), ("john", "mango")]
    assert state(spark, table_path) == after
    assert rows(hudi_rs_read(table_path), COLS) == after
    assert not table.timeline.pending()


COMPACTOR = textwrap.dedent("""
    import sys
    from hudi_engine.services.compaction import run_compactions
    from hudi_engine.spark import local_spark
    from hudi_engine.table.meta_client import HoodieTable
    spark = local_spark("killed-compactor", cores=1, memory="1g")
    run_compactions(spark, HoodieTable.load(sys.argv[1]))
""")


def test_compaction_killed_half_way_is_rolled_back_and_run_again(spark, table_path):
    """A real compaction process is SIGKILLed once it has written some of its base files."""
    small = {"hoodie.parquet.max.file.size": "3000000", "hoodie.parquet.small.file.limit": "0"}
    people = [(f"p{i:05d}", "apple", "eu", 1) for i in range(30000)]
    write(spark.createDataFrame(people, FRUIT_SCHEMA).repartition(4), table_path, op("insert", **small))
    changed = [(f"p{i:05d}", "banana", "eu", 2) for i in range(0, 30000, 7)]
    write(spark.createDataFrame(changed, FRUIT_SCHEMA), table_path, op("upsert", **small))
    expected = state(spark, table_path)
    table = HoodieTable.load(table_path)
    groups = len(table.fs_view().latest_file_slices())
    assert groups >= 8
    requested = schedule_compaction(table, force=True)
    compacted = f"_{requested.timestamp}.parquet"

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", COMPACTOR, table_path], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    timeline = Path(table_path) / table.timeline.timeline_dir
    kill_when(proc, lambda: (timeline / f"{requested.timestamp}.compaction.inflight").exists()
              and list(Path(table_path).glob(f"eu/*{compacted}")), "compaction", poll=0.02)
    [pending] = HoodieTable.load(table_path).timeline.pending()
    assert (pending.action, pending.timestamp) == (COMPACTION, requested.timestamp)
    assert len(list(Path(table_path).glob(f"eu/*{compacted}"))) < groups
    assert state(spark, table_path) == expected
    assert rows(hudi_rs_read(table_path), COLS) == expected

    # Its heartbeat is still fresh: another job leaves the plan to it, as it would to a live one.
    assert run_compactions(spark, HoodieTable.load(table_path)) == []
    # Once the heartbeat is older than interval x tolerable misses the plan counts as interrupted.
    time.sleep(1.1)
    expiring = {"hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "1"}
    assert run_compactions(spark, HoodieTable.load(table_path), options=expiring) == [requested.timestamp]
    table = HoodieTable.load(table_path)
    assert table.timeline.get(requested.timestamp).is_completed
    assert len(table.timeline.filter([ROLLBACK], completed=True)) == 1
    latest = table.fs_view().latest_file_slices()
    assert {s.base_instant for s in latest} == {requested.timestamp}
    assert not any(s.log_files for s in latest)
    assert len(list(Path(table_path).glob(f"eu/*{compacted}"))) == groups
    assert state(spark, table_path) == expected
    assert rows(hudi_rs_read(table_path), COLS) == expected
