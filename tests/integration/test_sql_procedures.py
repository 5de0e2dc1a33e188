"""Hudi's CALL procedures with real Spark on real tables: each procedure's rows are checked
against the timeline, the files on disk and hoodie.properties, and the procedures that change a
table (compaction, clustering, clean, savepoints, rollback, archival, Hive sync) against the data
read back and the timeline they leave."""
import os
from pathlib import Path
from urllib.parse import urlparse

import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieConfigError, HoodieError, HoodieTimelineError
from hudi_engine.sql.procedures import call_procedure
from hudi_engine.sql.statements import parse
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.properties import read_properties_text
from hudi_engine.table.archived import read_archived
from hudi_engine.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, ROLLBACK
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA, three_commits
from tests.support.metastore import thrift

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region"]
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
NO_SERVICES = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


@pytest.fixture
def tables(tmp_path):
    """Test table names → base paths: what ``locate`` resolves (``db.cow`` and ``cow`` alike)."""
    return {"cow": str(tmp_path / "cow"), "mor": str(tmp_path / "mor")}


def call(spark, tables, text):
    def locate(name):
        path = tables.get(name.split(".")[-1])
        if path is None or not HoodieTable.exists(path):
            raise HoodieConfigError(f"{name} is not a Hudi table")
        return path
    return call_procedure(spark, parse(text), locate).collect()


def upsert(spark, path, people, ts, operation="upsert", **extra):
    df = spark.createDataFrame([(n, f, r, ts) for n, f, r in people], FRUIT_SCHEMA)
    return write(df, path, {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": operation, **extra})


def state(spark, path):
    return sorted(tuple(r) for r in read(spark, path).select(*COLS).collect())


def stats_of(table, instant):
    return [s for ss in table.timeline.commit_metadata(instant)["partitionToWriteStats"].values() for s in ss]


def data_files(path, partition):
    return sorted(n for n in os.listdir(Path(path) / partition) if not n.startswith(".hoodie_partition_metadata"))


def test_show_commits_match_the_timeline(spark, tables):
    c1, c2, c3 = three_commits(spark, write, tables["cow"])
    table = HoodieTable.load(tables["cow"])
    got = call(spark, tables, "CALL show_commits(table => 'db.cow')")
    assert [r.commit_time for r in got] == [c3, c2, c1] == \
        [i.timestamp for i in reversed(table.timeline.completed_writes())]
    for r in got:
        stats = stats_of(table, table.timeline.get(r.commit_time))
        assert r.action == COMMIT and r.state_transition_time >= r.commit_time
        assert r.total_records_written == sum(s["numWrites"] for s in stats)
        assert r.total_bytes_written == sum(s["totalWriteBytes"] for s in stats)
    first, second = got[2], got[1]
    # the insert: three records in two new file groups of two partitions
    assert (first.total_records_written, first.total_files_added, first.total_files_updated,
            first.total_partitions_written, first.total_update_records_written) == (3, 2, 0, 2, 0)
    # jack's update rewrote the eu file group: jack and john
    assert (second.total_records_written, second.total_files_added, second.total_files_updated,
            second.total_update_records_written) == (2, 0, 1, 1)
    assert [r.commit_time for r in call(spark, tables, "CALL show_commits('cow', 2)")] == [c3, c2]

    per_file = call(spark, tables, "CALL show_commits_metadata(table => 'cow', limit => 100)")
    assert sorted((r.commit_time, r.file_id, r.num_writes) for r in per_file) == sorted(
        (i.timestamp, s["fileId"], s["numWrites"])
        for i in table.timeline.completed_writes() for s in stats_of(table, i))

    files = call(spark, tables, f"CALL show_commit_files(table => 'cow', instant_time => '{c2}')")
    [eu] = stats_of(table, table.timeline.get(c2))
    assert [(r.action, r.partition_path, r.file_id, r.previous_commit, r.total_records_updated,
             r.total_records_written, r.file_size) for r in files] == \
        [(COMMIT, "eu", eu["fileId"], c1, 1, 2, os.path.getsize(Path(tables["cow"]) / eu["path"]))]
    with pytest.raises(HoodieTimelineError, match="not a completed commit"):
        call(spark, tables, "CALL show_commit_files(table => 'cow', instant_time => '20000101000000000')")


def test_show_table_properties_match_hoodie_properties(spark, tables):
    three_commits(spark, write, tables["cow"])
    props = read_properties_text((Path(tables["cow"]) / ".hoodie/hoodie.properties").read_text())
    got = call(spark, tables, f"CALL show_table_properties(path => '{tables['cow']}', limit => 100)")
    assert dict((r.key, r.value) for r in got) == props and props["hoodie.table.name"] == "fruit"
    assert len(call(spark, tables, "CALL show_table_properties(table => 'cow')")) == 10
    with pytest.raises(HoodieConfigError, match="mor is not a Hudi table"):
        call(spark, tables, "CALL show_table_properties(table => 'mor')")
    with pytest.raises(HoodieConfigError, match="name the table with table => 'name' or path => 'base path'"):
        call(spark, tables, "CALL show_table_properties(limit => 5)")


def test_mor_compaction_and_the_file_system_view(spark, tables):
    path = tables["mor"]
    people = [("jack", "apple", "eu"), ("sarah", "kiwi", "eu"), ("tom", "plum", "us")]
    upsert(spark, path, people, 1, "insert", **MOR)
    upsert(spark, path, [("jack", "banana", "eu")], 2, **MOR)
    upsert(spark, path, [("tom", "fig", "us"), ("sarah", "lime", "eu")], 3, **MOR)
    before = state(spark, path)
    assert before == [("jack", "banana", "eu"), ("sarah", "lime", "eu"), ("tom", "fig", "us")]

    latest = call(spark, tables, "CALL show_fsview_latest(table => 'mor')")
    assert sorted(r.partition for r in latest) == ["eu", "us"]
    for r in latest:
        logs = [n for n in data_files(path, r.partition) if n.startswith(f".{r.file_id}_")]
        assert r.num_delta_files == len(logs) > 0
        assert r.total_delta_file_size == sum(os.path.getsize(Path(path) / r.partition / n) for n in logs)
        assert r.data_file == f"file://{path}/{r.partition}/{data_files(path, r.partition)[-1]}"
        assert r.data_file_size == os.path.getsize(urlparse(r.data_file).path)
        assert r.delta_size_compaction_unscheduled == 0   # every log's delta commit completed
    assert len(call(spark, tables, "CALL show_fsview_all(table => 'mor', path_regex => 'u*')")) == 1

    due = "hoodie.compact.inline.max.delta.commits=1"
    [planned] = call(spark, tables, f"CALL run_compaction(op => 'schedule', table => 'mor', options => '{due}')")
    assert planned.state == "REQUESTED" and planned.operation_size == 2
    assert [tuple(r) for r in call(spark, tables, "CALL show_compaction(table => 'mor')")] == [tuple(planned)]
    [done] = call(spark, tables, "CALL run_compaction(op => 'execute', table => 'mor')")
    assert (done.timestamp, done.state, done.operation_size) == (planned.timestamp, "COMPLETED", 2)

    table = HoodieTable.load(path)
    assert table.timeline.pending([COMPACTION]) == []
    assert table.timeline.get(planned.timestamp).action == COMMIT
    assert state(spark, path) == before
    compacted = call(spark, tables, "CALL show_fsview_latest(table => 'mor')")
    assert {(r.base_instant, r.num_delta_files) for r in compacted} == {(planned.timestamp, 0)}
    everything = call(spark, tables, "CALL show_fsview_all(table => 'mor')")
    assert len(everything) == 4 and {r.base_instant for r in everything} - {planned.timestamp} != set()
    assert [r.action for r in call(spark, tables, "CALL show_commits(table => 'mor')")] == \
        [COMMIT, DELTA_COMMIT, DELTA_COMMIT, DELTA_COMMIT]
    three_commits(spark, write, tables["cow"])
    with pytest.raises(HoodieError, match="only merge-on-read tables compact"):
        call(spark, tables, "CALL run_compaction(op => 'schedule', table => 'cow')")


def test_savepoints_and_rollback_to_savepoint(spark, tables):
    path = tables["cow"]
    c1 = upsert(spark, path, [("jack", "apple", "eu"), ("tom", "plum", "us")], 1, "insert")
    at_c1 = state(spark, path)
    c2 = upsert(spark, path, [("jack", "banana", "eu")], 2)
    assert call(spark, tables, f"CALL create_savepoint(table => 'cow', commit_time => '{c1}')")[0][0] is True
    assert call(spark, tables, f"CALL create_savepoint(table => 'cow', commit_time => '{c1}')")[0][0] is False
    with pytest.raises(HoodieTimelineError, match="not a completed commit"):
        call(spark, tables, "CALL create_savepoint(table => 'cow', commit_time => '20000101000000000')")
    assert call(spark, tables, "CALL create_savepoint(table => 'cow', comments => 'latest')")[0][0] is True
    assert call(spark, tables, "CALL show_savepoints(table => 'cow')") == [(c2,), (c1,)]
    upsert(spark, path, [("tom", "fig", "us"), ("amy", "pear", "eu")], 3)
    assert len(state(spark, path)) == 3

    # a restore may not leave a newer savepoint behind: Hudi refuses, the result is false
    assert call(spark, tables, f"CALL rollback_to_savepoint(table => 'cow', instant_time => '{c1}')")[0][0] is False
    assert call(spark, tables, "CALL delete_savepoint(table => 'cow')")[0][0] is True      # the latest: c2
    assert call(spark, tables, f"CALL show_savepoints(path => '{path}')") == [(c1,)]
    assert call(spark, tables, f"CALL rollback_to_savepoint(table => 'cow', instant_time => '{c1}')")[0][0] is True
    assert state(spark, path) == at_c1
    assert [i.timestamp for i in HoodieTable.load(path).timeline.completed_writes()] == [c1]

    assert call(spark, tables, f"CALL delete_savepoint(table => 'cow', instant_time => '{c1}')")[0][0] is True
    assert call(spark, tables, "CALL show_savepoints(table => 'cow')") == []
    with pytest.raises(HoodieTimelineError, match="has no completed savepoint"):
        call(spark, tables, "CALL delete_savepoint(table => 'cow')")


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_rollback_to_instant_undoes_the_latest_commit(spark, tables, kind):
    path, extra = tables[kind], (MOR if kind == "mor" else {})
    c1 = upsert(spark, path, [("jack", "apple", "eu"), ("tom", "plum", "us")], 1, "insert", **extra)
    at_c1 = state(spark, path)
    c2 = upsert(spark, path, [("jack", "banana", "eu"), ("amy", "pear", "us")], 2, **extra)
    assert state(spark, path) != at_c1
    with pytest.raises(HoodieError, match=f"cannot roll back {c1}: .* has later commits \\['{c2}'\\]"):
        call(spark, tables, f"CALL rollback_to_instant(table => '{kind}', instant_time => '{c1}')")
    with pytest.raises(HoodieTimelineError, match="no instant 20000101000000000"):
        call(spark, tables, f"CALL rollback_to_instant(table => '{kind}', instant_time => '20000101000000000')")

    assert call(spark, tables, f"CALL rollback_to_instant('{kind}', '{c2}')") == [(True,)]
    table = HoodieTable.load(path)
    assert [i.timestamp for i in table.timeline.completed_writes()] == [c1]
    assert state(spark, path) == at_c1
    [rollback] = table.timeline.filter([ROLLBACK], completed=True)
    shown = call(spark, tables, f"CALL show_rollbacks(table => '{kind}')")
    assert [(r.instant, r.rollback_instant) for r in shown] == [(rollback.timestamp, c2)]
    detail = call(spark, tables,
                  f"CALL show_rollback_detail(table => '{kind}', instant_time => '{rollback.timestamp}')")
    assert len(detail) == shown[0].total_files_deleted and all(r.succeeded for r in detail)
    for r in detail:
        assert r.rollback_instant == f"[{c2}]" and c2 in r.deleted_file
        assert not os.path.exists(urlparse(r.deleted_file).path)

    # the metadata table followed: its listing is the files left on disk (the failed commit's log
    # files stay, their blocks voided, as Hudi's logFilesFromFailedCommit lists them)
    listed = {r.file_path for r in call(spark, tables, f"CALL show_metadata_table_files(table => '{kind}', "
                                                       "partition => 'eu')")}
    on_disk = set(data_files(path, "eu"))
    assert listed == on_disk


def test_run_clean_removes_old_file_versions(spark, tables):
    path = tables["cow"]
    for n, fruit in enumerate(["apple", "banana", "cherry"], 1):
        upsert(spark, path, [("jack", fruit, "eu")], n, **NO_SERVICES)
    versions = data_files(path, "eu")
    assert len(versions) == 3
    [cleaned] = call(spark, tables, "CALL run_clean(table => 'cow', clean_policy => 'KEEP_LATEST_FILE_VERSIONS', "
                                    "file_versions_retained => 1)")
    assert cleaned.total_files_deleted == 2 and cleaned.bootstrap_part_metadata == "{}"
    assert data_files(path, "eu") == versions[-1:]
    table = HoodieTable.load(path)
    [clean] = table.timeline.filter([CLEAN], completed=True)
    assert cleaned.start_clean_time == clean.timestamp
    assert state(spark, path) == [("jack", "cherry", "eu")]
    assert call(spark, tables, "CALL run_clean(table => 'cow')") == []     # no commit since: not due


def test_metadata_table_procedures(spark, tables):
    three_commits(spark, write, tables["cow"])
    assert call(spark, tables, "CALL show_metadata_table_partitions(table => 'cow')") == [("eu",), ("us",)]
    for partition in ("eu", "us"):
        got = call(spark, tables, f"CALL show_metadata_table_files(table => 'cow', partition => '{partition}')")
        assert [r.file_path for r in got] == data_files(tables["cow"], partition)
    stats = dict(call(spark, tables, "CALL show_metadata_table_stats(table => 'cow')"))
    mdt_files = Path(tables["cow"]) / ".hoodie/metadata/files"
    on_disk = [n for n in os.listdir(mdt_files) if not n.startswith(".hoodie_partition_metadata")]
    assert stats["partitionCount"] == "2"
    assert int(stats["files.baseFileCount"]) + int(stats["files.logFileCount"]) == len(on_disk)
    upsert(spark, tables["mor"], [("jack", "apple", "eu")], 1, "insert", **{"hoodie.metadata.enable": "false"})
    with pytest.raises(HoodieConfigError, match="metadata table of fruit is not enabled"):
        call(spark, tables, "CALL show_metadata_table_partitions(table => 'mor')")


def test_run_and_show_clustering(spark, tables):
    path = tables["cow"]
    for n, (name, region) in enumerate([("jack", "eu"), ("sarah", "eu"), ("tom", "us"), ("amy", "us")], 1):
        upsert(spark, path, [(name, "apple", region)], n, "bulk_insert", **NO_SERVICES)
    before = state(spark, path)
    with pytest.raises(HoodieConfigError, match="may use only the partition columns"):
        call(spark, tables, "CALL run_clustering(table => 'cow', predicate => \"fruit = 'apple'\")")
    [planned] = call(spark, tables, "CALL run_clustering(table => 'cow', predicate => \"region = 'eu'\", "
                                    "op => 'schedule', show_involved_partition => true)")
    assert (planned.state, planned.involved_partitions) == ("REQUESTED", "eu")
    [done] = call(spark, tables, "CALL run_clustering(table => 'cow', op => 'execute')")
    assert (done.timestamp, done.state, done.involved_partitions) == (planned.timestamp, "COMPLETED", "*")
    assert HoodieTable.load(path).timeline.get(done.timestamp).action == REPLACE_COMMIT
    assert state(spark, path) == before
    latest = call(spark, tables, "CALL show_fsview_latest(table => 'cow')")
    assert sorted(r.partition for r in latest) == ["eu", "us", "us"]
    assert call(spark, tables, "CALL show_clustering(table => 'cow')") == [tuple(done)]


def test_archive_commits(spark, tables):
    path = tables["cow"]
    commits = [upsert(spark, path, [("jack", f"f{n}", "eu")], n, **NO_SERVICES) for n in range(1, 6)]
    assert call(spark, tables, "CALL archive_commits(table => 'cow', min_commits => 2, max_commits => 3, "
                               "retain_commits => 1)") == [(0,)]
    table = HoodieTable.load(path)
    assert [i.timestamp for i in table.timeline.completed_writes()] == commits[-2:]
    assert [i.timestamp for i in read_archived(table)] == commits[:3]   # the LSM history from version 8 on
    assert state(spark, path) == [("jack", "f5", "eu")]
    shown = call(spark, tables, f"CALL show_archived_commits(table => 'cow', start_ts => '{commits[1]}')")
    assert [(r.commit_time, r.action, r.total_records_written) for r in shown] == [
        (commits[2], "commit", 1), (commits[1], "commit", 1)]


def test_upgrade_and_downgrade_table(spark, tables):
    """Hudi's procedures take HoodieTableVersion names; a merge-on-read table's logs are compacted
    before it goes back to version 6."""
    path = tables["mor"]
    v6 = {"hoodie.write.table.version": "6"}
    upsert(spark, path, [("jack", "apple", "eu"), ("jill", "kiwi", "us")], 1, **MOR, **NO_SERVICES, **v6)
    upsert(spark, path, [("jack", "banana", "eu")], 2, **MOR, **NO_SERVICES, **v6)
    assert HoodieTable.load(path).version == 6
    before = state(spark, path)
    assert call(spark, tables, "CALL upgrade_table(table => 'mor', to_version => 'NINE')") == [(True,)]
    assert HoodieTable.load(path).version == 9 and state(spark, path) == before
    upsert(spark, path, [("jill", "lime", "us")], 3, **MOR, **NO_SERVICES)
    assert call(spark, tables, "CALL downgrade_table(table => 'mor', to_version => 'SIX')") == [(True,)]
    table = HoodieTable.load(path)
    assert table.version == 6 and all(not s.log_files for s in table.fs_view().latest_file_slices())
    assert state(spark, path) == [("jack", "banana", "eu"), ("jill", "lime", "us")]
    with pytest.raises(HoodieConfigError, match="to_version => 'SEVEN' is not a table version"):
        call(spark, tables, "CALL upgrade_table(table => 'mor', to_version => 'SEVEN')")
    with pytest.raises(HoodieConfigError, match="cannot upgrade .* from version 6 to 7"):
        call(spark, tables, "CALL upgrade_table(table => 'mor', to_version => 7)")


def test_hive_sync(spark, tables, metastore):
    three_commits(spark, write, tables["cow"])
    with pytest.raises(HoodieConfigError, match="mode=jdbc is not supported"):
        call(spark, tables, "CALL hive_sync(table => 'cow', use_jdbc => 'true')")
    assert call(spark, tables, f"CALL hive_sync(table => 'procdb.cow', metastore_uri => '{metastore.uri}')") == \
        [("hive sync success.",)]
    with thrift(metastore) as client:
        synced = client.get_table("procdb", "cow")
        partitions = sorted(tuple(p.values) for p in client.get_partitions("procdb", "cow", -1))
    assert synced.sd.location == f"file:{tables['cow']}" and partitions == [("eu",), ("us",)]
