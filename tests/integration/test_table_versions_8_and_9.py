"""Tables of version 8 (Hudi 1.0) and 9 (Hudi 1.1), written by this engine with
``hoodie.write.table.version`` and read back by our reader and hudi-rs (snapshot, time travel,
incremental, read-optimized): writes of every kind, compaction, clustering, cleaning and a failed
write's rollback on both table types; the timeline and ``hoodie.properties`` checked against what
real Hudi 1.0 and 1.1 wrote (the hudi-rs fixtures);
a real Hudi 1.0 table written on; and the refusals of what is not written yet."""
from __future__ import annotations

from pathlib import Path

import pytest

from hudi_engine import read, write
from hudi_engine.api import open_mdt
from hudi_engine.errors import HoodieConfigError
from hudi_engine.metadata_table.reader import MetadataReader
from hudi_engine.metadata_table.records import instant_to_epoch_millis
from hudi_engine.services.clean import run_clean
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.properties import read_properties_text
from hudi_engine.timeline.avro_models import decode_instant_avro
from hudi_engine.timeline.instant import DELTA_COMMIT, Instant, State
from tests.conftest import unzip_fixture
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.lost_driver import lose_the_driver_before_delta_commits

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region", "ts"]
V8 = {**FRUIT_OPTIONS, "hoodie.write.table.version": "8", "hoodie.parquet.small.file.limit": "0",
      "hoodie.clean.automatic": "false"}
# What every Hudi 1.0 table's hoodie.properties says, as the fixtures show (name-specific keys aside).
V8_PROPERTIES = {"hoodie.table.version": "8", "hoodie.table.initial.version": "8",
                 "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
                 "hoodie.timeline.history.path": "history", "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
                 "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
                 "hoodie.compaction.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
                 "hoodie.archivelog.folder": "archived"}
# Hudi 1.1's (version 9): ordering fields and the merge mode in place of the payload class and strategy.
V9_PROPERTIES = {**{k: v for k, v in V8_PROPERTIES.items() if k not in (
                    "hoodie.compaction.payload.class", "hoodie.record.merge.strategy.id")},
                 "hoodie.table.version": "9", "hoodie.table.initial.version": "9", "hoodie.table.format": "native"}
V9_ABSENT = ("hoodie.compaction.payload.class", "hoodie.record.merge.strategy.id", "hoodie.table.precombine.field")
PROPERTIES = {"8": V8_PROPERTIES, "9": V9_PROPERTIES}


def options(kind: str, operation: str = "upsert", **extra) -> dict:
    return {**V8, "hoodie.datasource.write.table.type": kind, "hoodie.datasource.write.operation": operation,
            **extra}


def put(spark, path, kind, batch, operation="upsert", **extra) -> str:
    return write(spark.createDataFrame(batch, FRUIT_SCHEMA), path, options(kind, operation, **extra))


def ours(spark, path, **opts) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in read(spark, path, opts).select(*COLS).collect())


def agree(spark, path) -> list[tuple]:
    found = ours(spark, path)
    assert found == rows(hudi_rs_read(path), COLS), "our reader and hudi-rs disagree"
    return found


def properties(path) -> dict[str, str]:
    return read_properties_text(HoodieTable.load(path).storage.read_text(".hoodie/hoodie.properties"))


def metadata_agrees(spark, path, keys: list[str]) -> None:
    """The metadata table is of the table's version too, lists the files a storage listing finds (of completed
    instants) and locates every key where the table holds it."""
    from hudi_engine.api import MetadataReader, open_mdt, table_view

    table = HoodieTable.load(path)
    mdt = open_mdt(table)
    assert mdt.version == table.version and mdt.layout_version == 2 and not mdt.timeline.pending()
    from_mdt = sorted(f.path for s in table_view(table).latest_file_slices()
                      for f in ([s.base_file] if s.base_file else []) + list(s.log_files))
    listed = sorted(f.path for s in table.fs_view().latest_file_slices()
                    for f in ([s.base_file] if s.base_file else []) + list(s.log_files))
    assert from_mdt == listed
    where = {r["name"]: (r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0])
             for r in read(spark, path).collect()}
    found = MetadataReader(table).record_locations(keys)
    assert {k: v for k, v in found.items()} == {k: where[k] for k in keys if k in where}


@pytest.mark.parametrize("version", ["8", "9"])
@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_and_table_services_of_a_version_8_or_9_table(spark, table_path, kind, version):
    rli = {"hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX",
           "hoodie.metadata.compact.max.delta.commits": "2", "hoodie.write.table.version": version}
    c1 = put(spark, table_path, kind, [("a", "apple", "eu", 1), ("b", "banana", "us", 1), ("c", "cherry", "eu", 1)],
             "insert", **rli)
    c2 = put(spark, table_path, kind, [("a", "apricot", "eu", 2), ("d", "date", "us", 2)], **rli)
    c3 = put(spark, table_path, kind, [("b", "banana", "us", 9)], "delete", **rli)
    expected = [("a", "apricot", "eu", 2), ("c", "cherry", "eu", 1), ("d", "date", "us", 2)]
    assert agree(spark, table_path) == expected
    metadata_agrees(spark, table_path, ["a", "b", "c", "d"])
    expected_props = PROPERTIES[version]
    assert {k: properties(table_path).get(k) for k in expected_props} == expected_props
    assert properties(table_path)["hoodie.table.type"] == kind
    if version == "9":
        assert properties(table_path)["hoodie.table.ordering.fields"] == "ts"
        assert not set(V9_ABSENT) & set(properties(table_path))
    assert open_mdt(HoodieTable.load(table_path)).version == int(version)

    # Time travel and incremental reads, in both readers.
    at_c1 = [("a", "apple", "eu", 1), ("b", "banana", "us", 1), ("c", "cherry", "eu", 1)]
    assert ours(spark, table_path, **{"as.of.instant": c1}) == at_c1
    assert rows(hudi_rs_read(table_path, as_of=c1), COLS) == at_c1
    # From version 8 on an incremental query's range is in completion times (Hudi 1.x).
    timeline = HoodieTable.load(table_path).timeline
    after_c1 = timeline.get(c1).completion_time
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": after_c1}
    assert ours(spark, table_path, **incremental) == [("a", "apricot", "eu", 2), ("d", "date", "us", 2)]
    assert rows(hudi_rs_read(table_path, begin=after_c1), COLS) == [("a", "apricot", "eu", 2), ("d", "date", "us", 2)]

    action = "commit" if kind == "COPY_ON_WRITE" else "deltacommit"
    assert [(i.timestamp, i.action) for i in timeline.instants] == [(c, action) for c in (c1, c2, c3)]
    for instant in timeline.instants:
        assert instant.timestamp < instant.completion_time
    if kind == "MERGE_ON_READ":
        logs = [f for s in HoodieTable.load(table_path).fs_view().latest_file_slices() for f in s.log_files]
        assert logs and {f.instant for f in logs} <= {c2, c3} and {f.version for f in logs} == {1}
        assert rows(hudi_rs_read(table_path, read_optimized=True), COLS) == ours(
            spark, table_path, **{"hoodie.datasource.query.type": "read_optimized"}) == at_c1 + [("d", "date", "us", 2)]
        compaction = schedule_compaction(HoodieTable.load(table_path), {}, force=True)
        assert run_compactions(spark, HoodieTable.load(table_path)) == [compaction.timestamp]
        assert agree(spark, table_path) == expected
        assert all(not s.log_files for s in HoodieTable.load(table_path).fs_view().latest_file_slices())

    # Clustering plans as Hudi 1.x's own action, completing as a replacecommit.
    clustering = schedule_clustering(HoodieTable.load(table_path), {}, force=True)
    assert clustering is not None and clustering.action == "clustering"
    assert HoodieTable.load(table_path).storage.exists(f".hoodie/timeline/{clustering.timestamp}.clustering.requested")
    assert run_clusterings(spark, HoodieTable.load(table_path)) == [clustering.timestamp]
    done = HoodieTable.load(table_path).timeline.get(clustering.timestamp)
    assert done.action == "replacecommit" and done.is_completed
    assert agree(spark, table_path) == expected
    put(spark, table_path, kind, [("c", "clementine", "eu", 3)], **rli)
    expected = [("a", "apricot", "eu", 2), ("c", "clementine", "eu", 3), ("d", "date", "us", 2)]
    assert agree(spark, table_path) == expected
    metadata_agrees(spark, table_path, ["a", "b", "c", "d"])
    mdt_timeline = open_mdt(HoodieTable.load(table_path)).timeline
    assert mdt_timeline.filter(["commit"], completed=True), "the metadata table was never compacted"

    cleaned = run_clean(HoodieTable.load(table_path), {"hoodie.cleaner.commits.retained": "1"}, force=True)
    assert cleaned is not None
    assert agree(spark, table_path) == expected
    metadata_agrees(spark, table_path, ["a", "c", "d"])
    assert not HoodieTable.load(table_path).timeline.pending()


def test_a_failed_delta_commit_of_a_version_8_table_is_rolled_back_by_deleting_its_logs(
        spark, table_path, monkeypatch):
    """A log file of version 8 is the write's own: the rollback deletes it (no command block)."""
    kind = "MERGE_ON_READ"
    put(spark, table_path, kind, [("a", "apple", "eu", 1)], "insert")
    lose_the_driver_before_delta_commits(monkeypatch)
    with pytest.raises(RuntimeError, match="driver lost"):
        put(spark, table_path, kind, [("a", "avocado", "eu", 2)])
    monkeypatch.undo()
    [failed] = HoodieTable.load(table_path).timeline.pending()
    storage = HoodieTable.load(table_path).storage
    failed_logs = [f.path for f in storage.list("eu") if f"_{failed.timestamp}.log." in f.path]
    assert len(failed_logs) == 1
    assert agree(spark, table_path) == [("a", "apple", "eu", 1)]          # readers skip it already

    put(spark, table_path, kind, [("b", "banana", "eu", 3)])               # rolls the failed write back
    assert not storage.exists(failed_logs[0])
    assert [f.path for f in storage.list("eu") if ".log." in f.path and ".log.2" in f.path] == []
    rollback = HoodieTable.load(table_path).timeline.filter(["rollback"], completed=True)
    assert len(rollback) == 1
    meta = decode_instant_avro(HoodieTable.load(table_path).timeline.read_details(rollback[0]))
    assert meta["commitsRollback"] == [failed.timestamp]
    assert agree(spark, table_path) == [("a", "apple", "eu", 1), ("b", "banana", "eu", 3)]


def test_timeline_files_decode_like_real_hudi_1_0s(spark, tmp_path, table_path):
    """Names, contents and properties against the hudi-rs fixtures written by Hudi 1.0."""
    fixture = unzip_fixture("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", tmp_path / "fixture")
    real = HoodieTable.load(str(fixture))
    put(spark, table_path, "MERGE_ON_READ", [("a", "apple", "eu", 1)], "insert")
    put(spark, table_path, "MERGE_ON_READ", [("a", "apricot", "eu", 2)])
    table = HoodieTable.load(table_path)
    ours_instant, theirs = table.timeline.instants[-1], real.timeline.filter(["deltacommit"])[-1]
    # The requested file is empty; the inflight one is Avro commit metadata (the workload profile).
    for state in (State.REQUESTED, State.INFLIGHT):
        mine = table.timeline.read_details(Instant(ours_instant.timestamp, DELTA_COMMIT, state))
        real_bytes = real.timeline.read_details(Instant(theirs.timestamp, DELTA_COMMIT, state))
        assert (mine == b"") == (real_bytes == b"")
        if mine:
            assert decode_instant_avro(mine).keys() == decode_instant_avro(real_bytes).keys()
    mine = decode_instant_avro(table.timeline.read_details(ours_instant))
    real_meta = decode_instant_avro(real.timeline.read_details(theirs))
    assert mine.keys() == real_meta.keys()
    [(partition, [stat])] = mine["partitionToWriteStats"].items()
    real_stat = next(s for group in real_meta["partitionToWriteStats"].values() for s in group)
    assert stat.keys() == real_stat.keys()
    # A log write stat names the delta commit itself and only its own log file, as Hudi 1.0's do.
    assert stat["prevCommit"] == ours_instant.timestamp and stat["baseFile"] == ""
    assert stat["logFiles"] == [stat["path"].rsplit("/", 1)[-1]]
    assert stat["path"].rsplit("/", 1)[-1].startswith(f".{stat['fileId']}_{ours_instant.timestamp}.log.1_")
    names = sorted(f.path.rsplit("/", 1)[-1] for f in table.storage.list(".hoodie/timeline"))
    assert all(n.count("_") == 1 for n in names if not n.endswith((".requested", ".inflight")))
    assert (Path(table_path) / ".hoodie" / "timeline" / "history").is_dir()
    real_props = read_properties_text(real.storage.read_text(".hoodie/hoodie.properties"))
    assert {k: real_props[k] for k in V8_PROPERTIES} == V8_PROPERTIES
    v9 = read_properties_text(HoodieTable.load(str(unzip_fixture("sample_table/cow/v9_txns_simple_meta.zip",
                                                                  tmp_path / "v9"))).storage.read_text(
        ".hoodie/hoodie.properties"))
    assert {k: v9[k] for k in V9_PROPERTIES} == V9_PROPERTIES and not set(V9_ABSENT) & set(v9)


def test_a_real_hudi_1_0_table_is_written_on(spark, tmp_path):
    base = str(unzip_fixture("sample_table/cow/v8_nonpartitioned.zip", tmp_path))
    before = read(spark, base).collect()
    keys = sorted(r["id"] for r in before)
    row = next(r for r in before if r["id"] == keys[0]).asDict()
    data = {k: v for k, v in row.items() if not k.startswith("_hoodie_")}
    data["name"] = "written by this engine"
    data["longField"] = (data["longField"] or 0) + 1
    df = spark.createDataFrame([data], read(spark, base).drop(*[c for c in row if c.startswith("_hoodie_")]).schema)
    # As a Hudi 1.0 writer would: the default (9) would upgrade the table first.
    instant = write(df, base, {"hoodie.datasource.write.operation": "upsert", "hoodie.write.table.version": "8"})
    table = HoodieTable.load(base)
    assert table.version == 8 and table.timeline.instants[-1].timestamp == instant
    assert open_mdt(table).version == 8 and "files" in table.props["hoodie.table.metadata.partitions"]
    after = {r["id"]: r["name"] for r in read(spark, base).collect()}
    theirs = {r["id"]: r["name"] for r in hudi_rs_read(base).to_pylist()}
    assert after == theirs and after[keys[0]] == "written by this engine" and len(after) == len(keys)


def test_what_is_not_written_yet_is_refused_by_name(spark, table_path, tmp_path):
    df = spark.createDataFrame([("a", "apple", "eu", 1)], FRUIT_SCHEMA)
    with pytest.raises(HoodieConfigError, match="'10' is not valid; use one of 6, 8, 9"):
        write(df, str(tmp_path / "v10"), {**options("COPY_ON_WRITE", "insert"), "hoodie.write.table.version": "10"})
    v9 = str(tmp_path / "v9")
    write(df, v9, options("COPY_ON_WRITE", "insert", **{"hoodie.write.table.version": "9"}))
    with pytest.raises(HoodieConfigError, match="Upgrade it first"):
        write(df, v9, {**FRUIT_OPTIONS, "hoodie.write.table.version": "8"})
    v8 = str(tmp_path / "v8")
    write(df, v8, options("COPY_ON_WRITE", "insert"))
    with pytest.raises(HoodieConfigError, match="downgrade it \\(hudictl table downgrade"):
        write(df, v8, {**FRUIT_OPTIONS, "hoodie.write.table.version": "6"})
    assert HoodieTable.load(v8).version == 8


def test_the_record_index_is_built_on_a_version_9_table_that_has_data(spark, table_path):
    """Turned on after the table has rows: the build's metadata instant is the zero time plus a
    number (no time at all), so the entries name the table's last commit, as Hudi names a data instant."""
    v9 = {**V8, "hoodie.write.table.version": "9"}
    write(spark.createDataFrame([("a", "x", "eu", 1), ("b", "y", "us", 1)], FRUIT_SCHEMA), table_path,
          {**v9, "hoodie.datasource.write.operation": "insert"})
    indexed = {**v9, "hoodie.metadata.record.index.enable": "true"}
    write(spark.createDataFrame([("c", "z", "eu", 2)], FRUIT_SCHEMA), table_path,
          {**indexed, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable.load(table_path)
    first, second = [i.timestamp for i in table.timeline.completed_writes()]
    reader = MetadataReader(table)
    groups = {s.file_id: s.partition for s in table.fs_view().latest_file_slices()}
    located = reader.record_locations(["a", "b", "c"])
    assert {k: (p, groups[f]) for k, (p, f) in located.items()} == {"a": ("eu", "eu"), "b": ("us", "us"),
                                                                   "c": ("eu", "eu")}
    since = {k: r["recordIndexMetadata"]["instantTime"] for k, r in reader.records("record_index").items()}
    assert since["a"] == since["b"] == instant_to_epoch_millis(first)
    assert since["c"] == instant_to_epoch_millis(second)
    assert sorted(r["name"] for r in read(spark, table_path, filters=[("name", "=", "b")]).collect()) == ["b"]
