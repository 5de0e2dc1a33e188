"""Upgrading a version 6 table to version 8 (Hudi 1.0) and 9 (Hudi 1.1) with real Spark: a
merge-on-read table with log files named by base instants, a compaction, a clean and a metadata table
reads the same in both readers after ``hudictl table upgrade`` (snapshot, read-optimized), then takes
version 8 and 9 writes and services; an upgrade killed before or after a switch is finished by running
it again; a write asking for a newer version (named, or the default 9) upgrades its table first unless
``hoodie.write.auto.upgrade=false``, which writes it at its own; downgrades go back the same steps."""
from __future__ import annotations

import pytest

from hudi_engine import config as C

from hudi_engine import read, write
from hudi_engine.api import downgrade_table, open_mdt, upgrade_table
from hudi_engine.errors import HoodieConfigError
from hudi_engine.services import table_version
from hudi_engine.services.clean import run_clean
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.instant import parse_instant_file_name
from hudictl.cli import main
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region", "ts"]
MOR = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.parquet.small.file.limit": "0",
       "hoodie.clean.automatic": "false"}


def put(spark, path, batch, **extra) -> str:
    """An upsert at the table's version (a new table: version 6) unless ``extra`` names another."""
    version = str(HoodieTable.load(path).version) if HoodieTable.exists(path) else "6"
    return write(spark.createDataFrame(batch, FRUIT_SCHEMA), path,
                 {**MOR, "hoodie.write.table.version": version, "hoodie.datasource.write.operation": "upsert", **extra})


def both(spark, path, **query) -> list[tuple]:
    ours = sorted(tuple(r[c] for c in COLS) for r in read(spark, path, query).select(*COLS).collect())
    theirs = rows(hudi_rs_read(path, as_of=query.get("as.of.instant"),
                               read_optimized=query.get("hoodie.datasource.query.type") == "read_optimized"), COLS)
    assert ours == theirs, "our reader and hudi-rs disagree"
    return ours


def layout_1_files(path) -> list[str]:
    return [f.path for f in Storage(path).list(".hoodie") if parse_instant_file_name(f.path.rsplit("/", 1)[-1])]


def kill(monkeypatch, dies: str, version: int) -> None:
    """The process dies as hoodie.properties switches to ``version``, or just after."""
    if dies == "before-the-switch":
        real = Storage.write_text

        def die_on_properties(self, rel, text):
            if rel.endswith("hoodie.properties") and f"hoodie.table.version={version}" in text:
                raise OSError("killed")
            return real(self, rel, text)
        monkeypatch.setattr(Storage, "write_text", die_on_properties)
        return
    switch = table_version._switch

    def die_after(table, props):
        switched = switch(table, props)
        if switched.version == version:
            raise OSError("killed")
        return switched
    monkeypatch.setattr(table_version, "_switch", die_after)


def version_6_table(spark, path) -> tuple[str, dict]:
    """Inserts, logs named by a base instant, a compaction, logs named by the compaction, a clean."""
    first = put(spark, path, [("a", "apple", "eu", 1), ("b", "banana", "us", 1), ("c", "cherry", "eu", 1)])
    put(spark, path, [("a", "apricot", "eu", 2)])
    schedule_compaction(HoodieTable.load(path), {}, force=True)
    run_compactions(spark, HoodieTable.load(path))
    put(spark, path, [("b", "blueberry", "us", 3), ("d", "date", "us", 3)])
    assert run_clean(HoodieTable.load(path), {"hoodie.cleaner.commits.retained": "1"}, force=True) is not None
    assert HoodieTable.load(path).version == 6 and open_mdt(HoodieTable.load(path)) is not None
    views = {"snapshot": {}, "read_optimized": {"hoodie.datasource.query.type": "read_optimized"}}
    return first, {name: both(spark, path, **q) for name, q in views.items()}


def test_hudictl_upgrades_a_version_6_table_that_then_takes_version_8_writes(spark, table_path, capsys):
    first, before = version_6_table(spark, table_path)
    instants = [(i.timestamp, i.action) for i in HoodieTable.load(table_path).timeline.instants]

    assert main(["table", "upgrade", "--base-path", table_path, "--to-version", "8"]) == 0
    assert "is at version 8 (was 6)" in capsys.readouterr().out
    table = HoodieTable.load(table_path)
    assert (table.version, table.layout_version) == (8, 2)
    assert table.props["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert [(i.timestamp, i.action) for i in table.timeline.instants] == instants
    assert all(i.completion_time >= i.timestamp for i in table.timeline.instants)
    assert layout_1_files(table_path) == []
    assert open_mdt(table) is None                       # rebuilt at version 8 by the next write
    assert both(spark, table_path) == before["snapshot"]
    assert both(spark, table_path, **{"hoodie.datasource.query.type": "read_optimized"}) == before["read_optimized"]

    put(spark, table_path, [("c", "clementine", "eu", 4)])
    expected = sorted(before["snapshot"][:2] + [("c", "clementine", "eu", 4), ("d", "date", "us", 3)])
    assert both(spark, table_path) == expected
    table = HoodieTable.load(table_path)
    assert open_mdt(table).version == 8
    newest = table.timeline.instants[-1].timestamp
    assert any(f"_{newest}.log.1_" in f.path for s in table.fs_view().latest_file_slices() for f in s.log_files)
    compaction = schedule_compaction(table, {}, force=True)
    assert run_compactions(spark, HoodieTable.load(table_path)) == [compaction.timestamp]
    assert both(spark, table_path) == expected

    # 8 to 9: hoodie.properties alone.
    assert main(["table", "upgrade", "--base-path", table_path]) == 0
    assert "is at version 9 (was 8)" in capsys.readouterr().out
    table = HoodieTable.load(table_path)
    assert (table.version, table.props["hoodie.table.ordering.fields"], table.props[
        "hoodie.table.legacy.payload.class"]) == (9, "ts", "org.apache.hudi.common.model.DefaultHoodieRecordPayload")
    assert not {"hoodie.table.precombine.field", "hoodie.compaction.payload.class",
                "hoodie.record.merge.strategy.id"} & set(table.props)
    assert both(spark, table_path) == expected
    put(spark, table_path, [("c", "cantaloupe", "eu", 3)])          # older: event time keeps the stored row
    put(spark, table_path, [("d", "durian", "us", 5)])
    expected = [r if r[0] != "d" else ("d", "durian", "us", 5) for r in expected]
    assert both(spark, table_path) == expected
    assert open_mdt(HoodieTable.load(table_path)).version == 9
    assert main(["table", "upgrade", "--base-path", table_path]) == 0
    assert "at version 9 already" in capsys.readouterr().out


@pytest.mark.parametrize("dies,at", [("before-the-switch", 8), ("after-the-switch", 8), ("before-the-switch", 9)])
def test_a_killed_upgrade_is_finished_by_running_it_again(spark, table_path, monkeypatch, dies, at):
    _, before = version_6_table(spark, table_path)
    kill(monkeypatch, dies, at)
    with pytest.raises(OSError, match="killed"):
        upgrade_table(HoodieTable.load(table_path), 9)
    monkeypatch.undo()
    assert HoodieTable.load(table_path).version == (at if dies == "after-the-switch" else {8: 6, 9: 8}[at])
    assert bool(layout_1_files(table_path)) == (at == 8)     # the old timeline is still there
    assert both(spark, table_path) == before["snapshot"]   # and the table reads as before, either way
    assert upgrade_table(HoodieTable.load(table_path), 9).version == 9
    assert layout_1_files(table_path) == []
    assert both(spark, table_path) == before["snapshot"]


def test_a_write_asking_for_a_newer_version_upgrades_its_table_first(spark, table_path):
    put(spark, table_path, [("a", "apple", "eu", 1)])
    with pytest.raises(HoodieConfigError, match="Upgrade it first"):
        put(spark, table_path, [("a", "apricot", "eu", 2)],
            **{"hoodie.write.table.version": "8", "hoodie.write.auto.upgrade": "false"})
    assert HoodieTable.load(table_path).version == 6
    # Naming no version with auto-upgrade off: the table is written at its own version.
    plain = {**MOR, "hoodie.datasource.write.operation": "upsert"}
    write(spark.createDataFrame([("b", "banana", "us", 1)], FRUIT_SCHEMA), table_path,
          {**plain, "hoodie.write.auto.upgrade": "false"})
    assert HoodieTable.load(table_path).layout_version == 1 and HoodieTable.load(table_path).version == 6
    put(spark, table_path, [("a", "apricot", "eu", 2)], **{"hoodie.write.table.version": "8"})
    assert HoodieTable.load(table_path).version == 8
    assert both(spark, table_path) == [("a", "apricot", "eu", 2), ("b", "banana", "us", 1)]
    # Naming none with auto-upgrade on: the default version, or the table's own when it is newer.
    default = int(C.WRITE_TABLE_VERSION.default)
    write(spark.createDataFrame([("b", "blueberry", "us", 2)], FRUIT_SCHEMA), table_path, plain)
    assert HoodieTable.load(table_path).version == max(default, 8)
    put(spark, table_path, [("b", "blueberry", "us", 2)], **{"hoodie.write.table.version": "9"})
    table = HoodieTable.load(table_path)
    assert (table.version, table.props["hoodie.table.ordering.fields"]) == (9, "ts")
    assert both(spark, table_path) == [("a", "apricot", "eu", 2), ("b", "blueberry", "us", 2)]


def table_with_logs(spark, path, version: int = 8) -> list[tuple]:
    version_6_table(spark, path)
    put(spark, path, [("a", "avocado", "eu", 5)], **{"hoodie.write.table.version": str(version)})    # upgrades
    put(spark, path, [("e", "elderberry", "us", 5)])
    table = HoodieTable.load(path)
    assert table.version == version and any(s.log_files for s in table.fs_view().latest_file_slices())
    return both(spark, path)


def test_a_version_9_table_downgrades_back_to_6_compacting_its_logs(spark, table_path):
    expected = table_with_logs(spark, table_path, 9)
    completed = [i.timestamp for i in HoodieTable.load(table_path).timeline.filter(completed=True)]

    assert downgrade_table(HoodieTable.load(table_path), 6, spark=spark).version == 6
    table = HoodieTable.load(table_path)
    assert (table.version, table.layout_version) == (6, 1)
    assert not {"hoodie.record.merge.mode", "hoodie.timeline.history.path", "hoodie.table.initial.version",
                "hoodie.table.ordering.fields", "hoodie.table.legacy.payload.class"} & set(table.props)
    assert table.props["hoodie.table.precombine.field"] == "ts"
    assert not Storage(table_path).exists(".hoodie/timeline")
    timeline = table.timeline
    assert set(completed) < {i.timestamp for i in timeline.filter(completed=True)}     # plus the compaction
    assert all(not s.log_files for s in table.fs_view().latest_file_slices())
    assert both(spark, table_path) == expected
    # A version 6 write appends a log named by its slice's base instant again.
    put(spark, table_path, [("e", "eggplant", "us", 6)])
    slices = HoodieTable.load(table_path).fs_view().latest_file_slices()
    assert any(f.instant == s.base_instant for s in slices for f in s.log_files)
    assert both(spark, table_path) == sorted([r for r in expected if r[0] != "e"] + [("e", "eggplant", "us", 6)])
    assert open_mdt(HoodieTable.load(table_path)).version == 6


@pytest.mark.parametrize("dies", ["before-the-switch", "after-the-switch"])
def test_a_killed_downgrade_is_finished_by_running_it_again(spark, table_path, monkeypatch, dies):
    expected = table_with_logs(spark, table_path)
    kill(monkeypatch, dies, 6)
    with pytest.raises(OSError, match="killed"):
        downgrade_table(HoodieTable.load(table_path), spark=spark)
    monkeypatch.undo()
    assert HoodieTable.load(table_path).version == (8 if dies == "before-the-switch" else 6)
    assert Storage(table_path).exists(".hoodie/timeline")
    assert both(spark, table_path) == expected
    assert downgrade_table(HoodieTable.load(table_path), spark=spark).version == 6
    assert not Storage(table_path).exists(".hoodie/timeline")
    assert both(spark, table_path) == expected


def test_hudictl_downgrades_a_copy_on_write_table(spark, table_path, capsys):
    """No log files to compact: the command needs no Spark of its own (a merge-on-read table's
    downgrade starts a local session, which a test process must not share)."""
    batch = spark.createDataFrame([("a", "apple", "eu", 1)], FRUIT_SCHEMA)
    write(batch, table_path, {**FRUIT_OPTIONS, "hoodie.write.table.version": "9"})
    write(batch, table_path, {**FRUIT_OPTIONS})
    assert main(["table", "downgrade", "--base-path", table_path, "--to-version", "8"]) == 0
    assert "is at version 8 (was 9)" in capsys.readouterr().out
    assert HoodieTable.load(table_path).props["hoodie.compaction.payload.class"] == (
        "org.apache.hudi.common.model.DefaultHoodieRecordPayload")
    assert both(spark, table_path) == [("a", "apple", "eu", 1)]
    assert main(["table", "downgrade", "--base-path", table_path]) == 0
    assert "is at version 6 (was 8)" in capsys.readouterr().out
    assert [i.action for i in HoodieTable.load(table_path).timeline.instants] == ["commit", "commit"]
    assert both(spark, table_path) == [("a", "apple", "eu", 1)]
    assert main(["table", "downgrade", "--base-path", table_path]) == 0
    assert "at version 6 already" in capsys.readouterr().out
