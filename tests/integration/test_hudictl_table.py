"""``hudictl table`` on tables written by real Apache Hudi (fixtures) and by this engine: what it
reports is checked against the files and timeline on disk."""
import json

import pytest

from hudi_engine import write
from hudi_engine.services.compaction import schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudictl.cli import main
from tests.conftest import unzip_fixture
from tests.support.data import FRUIT_OPTIONS, three_commits


def show(capsys, view, base, *extra):
    assert main(["table", view, "--base-path", str(base), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_describe_timeline_and_files_of_a_real_hudi_mor_table(tmp_path, capsys):
    base = unzip_fixture("quickstart_trips_table/mor/avro/v6_trips_8i3d.zip", tmp_path)
    table = HoodieTable.load(str(base))
    info = show(capsys, "describe", base)
    assert (info["tableType"], info["tableVersion"], info["name"]) == ("MERGE_ON_READ", 6, table.name)
    assert info["lastCommit"] == table.timeline.last_completed_write().timestamp
    timeline = show(capsys, "timeline", base)
    assert [r["instant"] for r in timeline] == [i.timestamp for i in table.timeline.instants]
    first = timeline[0]
    assert first["action"] == "deltacommit" and first["inserts"] == 8      # the fixture's 8 inserts
    assert sum(r.get("deletes") or 0 for r in timeline) == 3              # and 3 deletes
    files = show(capsys, "files", base)
    on_disk = {p.name for p in base.rglob("*.parquet")}
    assert {f["baseFile"] for f in files if f["baseFile"]} <= on_disk
    assert sum(f["logFiles"] for f in files) >= 1
    assert show(capsys, "timeline", base, "--limit", "2") == timeline[-2:]


@pytest.mark.spark
def test_pending_shows_a_scheduled_compaction_and_its_file_groups(spark, tmp_path, capsys):
    base = str(tmp_path / "fruit")
    three_commits(spark, write, base, {"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    with_logs = sum(1 for s in HoodieTable.load(base).fs_view().latest_file_slices() if s.log_files)
    planned = schedule_compaction(HoodieTable.load(base), {**FRUIT_OPTIONS}, force=True)
    pending = show(capsys, "pending", base)
    assert pending == [{"instant": planned.timestamp, "action": "compaction", "state": "REQUESTED",
                        "fileGroups": with_logs}]


def test_metadata_partitions_and_record_index_lookups_of_a_real_hudi_table(tmp_path, capsys):
    base = unzip_fixture("sample_table/cow/v9_txns_simple_meta.zip", tmp_path)
    table = HoodieTable.load(str(base))
    rows = {r["partition"]: r for r in show(capsys, "metadata", base)}
    assert {"files", "column_stats", "record_index"} <= {p for p, r in rows.items() if r["complete"]}
    assert rows["files"]["fileGroups"] == 1 and rows["record_index"]["fileGroups"] >= 1
    slice_ = next(s for s in table.fs_view().latest_file_slices() if s.base_file)
    import pyarrow.parquet as pq
    key = pq.read_table(table.storage.full(slice_.base_file.path), columns=["_hoodie_record_key"])[0][0].as_py()
    assert show(capsys, "metadata", base, "--key", key, "--key", "no-such-key") == [
        {"key": key, "partition": slice_.partition, "fileId": slice_.file_id},
        {"key": "no-such-key", "partition": None, "fileId": None}]


def test_a_folder_that_is_not_a_table_is_refused(tmp_path, capsys):
    assert main(["table", "describe", "--base-path", str(tmp_path)]) == 2
    assert "not a Hudi table" in capsys.readouterr().out
