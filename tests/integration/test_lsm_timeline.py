"""Archival of version 8 timelines into Hudi 1.x's LSM history, with real Spark: the history's
parquet files decode to the archived instants and their Avro commit metadata, our reader and
hudi-rs still agree, incremental windows over archived commits are refused as in version 6, the
metadata table archives into its own history, a killed archival leaves the table readable and the
next one finishes, and upgrade / downgrade move the archived timeline between the layouts."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from hudi_engine import read
from hudi_engine.api import archive, downgrade_table, open_mdt, upgrade_table
from hudi_engine.errors import HoodieTimelineError
from hudi_engine.table.archived import history_folder, read_archived
from hudi_engine.table.archived_timeline import archived_instants
from hudi_engine.table.lsm_history import LSMHistory
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import decode_instant_avro
from tests.integration.test_archival import COLS, MOR, SERVICES, upsert
from tests.integration.test_sql_procedures import call
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
V8 = {"hoodie.write.table.version": "8", "hoodie.timeline.compaction.batch.size": "2"}
FRUITS = ["banana", "cherry", "date", "fig", "grape", "lime", "mango"]


def history_records(table: HoodieTable) -> list[dict]:
    """The records of the history's newest snapshot, read straight from its parquet files."""
    folder = history_folder(table)
    history = LSMHistory(table.storage, folder)
    found = []
    for f in history.files():
        with table.storage.open_input_file(f"{folder}/{f.name}") as stream:
            found += pq.read_table(stream).to_pylist()
    return sorted(found, key=lambda r: r["instantTime"])


def agree(spark, path) -> list[tuple]:
    ours = sorted((r["name"], r["fruit"]) for r in read(spark, path).select(*COLS).collect())
    assert ours == rows(hudi_rs_read(path), COLS), "our reader and hudi-rs disagree"
    return ours


def write_history(spark, path, extra) -> list[str]:
    first = upsert(spark, path, [("sarah", "kiwi", "us"), ("jack", "apple", "eu")], 0, extra)
    return [first] + [upsert(spark, path, [("jack", fruit, "eu")], n, extra) for n, fruit in enumerate(FRUITS, 1)]


@pytest.mark.parametrize("extra", [pytest.param(V8, id="cow"),
                                   pytest.param({**V8, **MOR}, id="mor", marks=pytest.mark.slow)])
def test_a_version_8_table_archives_into_its_lsm_history(spark, table_path, extra):
    commits = write_history(spark, table_path, extra)
    table = HoodieTable.load(table_path)
    history = history_folder(table)
    names = {f.path.rsplit("/", 1)[-1] for f in table.storage.list(history)}
    assert "_version_" in names and any(n.startswith("manifest_") for n in names)
    records = history_records(table)
    archived = {r["instantTime"]: r for r in records}
    assert commits[0] in archived and not set(archived) & {i.timestamp for i in table.timeline.instants}
    writes = [r for r in records if r["action"] in ("commit", "deltacommit")]
    for record in writes:
        assert record["version"] == 1 and record["completionTime"] > record["instantTime"]
        meta = decode_instant_avro(record["metadata"])
        assert meta["operationType"] in ("UPSERT", "COMPACT") and meta["partitionToWriteStats"]
    first = decode_instant_avro(archived[commits[0]]["metadata"])
    assert {s["partitionPath"] for group in first["partitionToWriteStats"].values() for s in group} == {"eu", "us"}
    for clean in (r for r in records if r["action"] == "clean"):
        assert decode_instant_avro(clean["plan"])["policy"] == "KEEP_LATEST_COMMITS"
    # Our reader of the archived timeline sees the same instants, with their completion times.
    assert [(i.timestamp, i.action, i.completion_time) for i in read_archived(table)] == [
        (r["instantTime"], r["action"], r["completionTime"]) for r in records]
    shown = call(spark, {"t": table_path}, "CALL show_archived_commits(table => 't', limit => 100)")
    assert [(r.commit_time, r.state_transition_time) for r in reversed(shown)] == [
        (r["instantTime"], r["completionTime"]) for r in writes]
    assert shown[-1].total_records_written == 2                 # the first commit: sarah and jack

    # sarah's file group was last written by an archived commit: still read by both readers.
    assert agree(spark, table_path) == [("jack", "mango"), ("sarah", "kiwi")]
    with pytest.raises(HoodieTimelineError, match="archived"):
        read(spark, table_path, {"hoodie.datasource.query.type": "incremental",
                                 "hoodie.datasource.read.begin.instanttime": "0"}).collect()
    # Time travel to an archived commit: refused, as at version 6, since the cleaner took its files.
    with pytest.raises(HoodieTimelineError, match="cleaner's retention"):
        read(spark, table_path, {"as.of.instant": commits[1]}).collect()
    begin = [i for i in table.timeline.completed_writes() if i.timestamp < commits[-1]][-1].completion_time
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
    ours = sorted((r["name"], r["fruit"]) for r in read(spark, table_path, incremental).select(*COLS).collect())
    assert ours == rows(hudi_rs_read(table_path, begin=begin), COLS) == [("jack", "mango")]

    # The metadata table archives into a history of its own.
    mdt = open_mdt(table)
    mdt_records = history_records(mdt)
    assert mdt_records and {r["action"] for r in mdt_records} <= {"deltacommit", "commit"}
    assert not {r["instantTime"] for r in mdt_records} & {i.timestamp for i in mdt.timeline.instants}
    assert max(r["instantTime"] for r in mdt_records) < table.timeline.instants[0].timestamp


def test_a_killed_archival_leaves_the_table_readable_and_the_next_one_finishes(spark, table_path, monkeypatch):
    commits = write_history(spark, table_path, {**V8, "hoodie.archive.automatic": "false"})
    before = [i.timestamp for i in HoodieTable.load(table_path).timeline.instants]
    expected = agree(spark, table_path)

    monkeypatch.setattr(LSMHistory, "_commit", lambda self, files: (_ for _ in ()).throw(OSError("killed")))
    with pytest.raises(OSError, match="killed"):
        archive(HoodieTable.load(table_path), {**SERVICES, **V8})
    monkeypatch.undo()
    table = HoodieTable.load(table_path)
    left = [f.path for f in table.storage.list(history_folder(table))]
    assert len(left) == 1 and left[0].endswith("_0.parquet")         # written, but in no manifest
    assert read_archived(table) == []
    assert [i.timestamp for i in table.timeline.instants] == before
    assert agree(spark, table_path) == expected

    done = archive(table, {**SERVICES, **V8})
    table = HoodieTable.load(table_path)
    assert commits[0] in [i.timestamp for i in done]
    assert [i.timestamp for i in read_archived(table)] == [i.timestamp for i in done]
    assert commits[0] not in {i.timestamp for i in table.timeline.instants}
    assert agree(spark, table_path) == expected


def test_upgrade_moves_the_archived_timeline_into_the_history_and_downgrade_moves_it_back(spark, table_path):
    write_history(spark, table_path, {})
    table = HoodieTable.load(table_path)
    archived_at_6 = [(i.timestamp, i.action) for i in archived_instants(table.storage, ".hoodie/archived")]
    assert archived_at_6
    expected = agree(spark, table_path)

    upgraded = upgrade_table(table, 8)
    assert [(i.timestamp, i.action) for i in read_archived(upgraded)] == archived_at_6
    assert not upgraded.storage.list(".hoodie/archived")
    writes = [r for r in history_records(upgraded) if r["action"] == "commit"]
    assert writes and all(decode_instant_avro(r["metadata"])["operationType"] == "UPSERT" for r in writes)
    assert agree(spark, table_path) == expected

    downgraded = downgrade_table(HoodieTable.load(table_path), 6)
    assert [(i.timestamp, i.action) for i in read_archived(downgraded)] == archived_at_6
    assert not downgraded.storage.exists(".hoodie/timeline")
    assert agree(spark, table_path) == expected
