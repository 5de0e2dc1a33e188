"""Changing a table's type as Hudi's CLI does (``table change-table-type``), with real Spark: a
merge-on-read table with log files and a pending compaction plan becomes copy-on-write with every log
compacted, reads the same in both readers, and takes copy-on-write writes; a copy-on-write table
becomes merge-on-read and takes log writes; a pending clustering stops the change before anything
is done. ``hudictl table change-type`` is run as users run it."""
import pytest

from hudi_engine import read, write
from hudi_engine.api import change_table_type, table_type_named
from hudi_engine.errors import HoodieConfigError, HoodieError
from hudi_engine.services.clustering import schedule_clustering
from hudi_engine.services.compaction import schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.properties import read_properties_text
from hudictl.cli import main
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit", "region", "ts"]
# Updates go to log files, never into a rewrite of a small base file.
MOR = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.parquet.small.file.limit": "0"}


def upsert(spark, path, batch, options):
    write(spark.createDataFrame(batch, FRUIT_SCHEMA), path, {**options, "hoodie.datasource.write.operation": "upsert"})


def ours(spark, path) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in read(spark, path).select(*COLS).collect())


def agree(spark, path) -> list[tuple]:
    found = ours(spark, path)
    assert found == rows(hudi_rs_read(path), COLS), "our reader and hudi-rs disagree"
    return found


def log_files(path) -> list[str]:
    table = HoodieTable.load(path)
    return [f.path for s in table.fs_view().latest_file_slices() for f in s.log_files]


def table_type_on_disk(path) -> str:
    return read_properties_text((HoodieTable.load(path).storage.read_bytes(".hoodie/hoodie.properties"))
                                .decode())["hoodie.table.type"]


def test_type_names_as_hudis_cli_takes_them():
    assert [table_type_named(v) for v in ("cow", "MOR", "copy_on_write", " Merge_On_Read ")] == [
        "COPY_ON_WRITE", "MERGE_ON_READ", "COPY_ON_WRITE", "MERGE_ON_READ"]
    with pytest.raises(HoodieConfigError, match="'MOW' is not one of COW, MOR"):
        table_type_named("MOW")


def test_merge_on_read_becomes_copy_on_write_with_every_log_compacted(spark, table_path):
    upsert(spark, table_path, [("a", "apple", "eu", 1), ("b", "banana", "us", 1), ("c", "cherry", "eu", 1)], MOR)
    upsert(spark, table_path, [("a", "apricot", "eu", 2)], MOR)
    # A compaction planned but not run, then logs it does not cover: one in its file group, one in another.
    assert schedule_compaction(HoodieTable.load(table_path), {}, force=True) is not None
    upsert(spark, table_path, [("a", "avocado", "eu", 3), ("b", "blueberry", "us", 2), ("d", "date", "us", 2)], MOR)
    # hudi-rs 0.5 leaves out a log named after a pending compaction (test_mor_compaction): ours only.
    before = ours(spark, table_path)
    assert ("a", "avocado", "eu", 3) in before and log_files(table_path)

    changed = change_table_type(spark, HoodieTable.load(table_path), "COW")

    assert changed.table_type == "COPY_ON_WRITE" and table_type_on_disk(table_path) == "COPY_ON_WRITE"
    assert log_files(table_path) == []
    timeline = HoodieTable.load(table_path).timeline
    assert not timeline.pending()
    assert [i.action for i in timeline.instants].count("commit") == 2       # the pending plan, then a full one
    assert agree(spark, table_path) == before
    cow = {**FRUIT_OPTIONS}
    upsert(spark, table_path, [("c", "clementine", "eu", 3)], cow)
    assert HoodieTable.load(table_path).timeline.instants[-1].action == "commit"
    assert log_files(table_path) == []
    assert agree(spark, table_path) == sorted([("a", "avocado", "eu", 3), ("b", "blueberry", "us", 2),
                                               ("c", "clementine", "eu", 3), ("d", "date", "us", 2)])
    # A writer still configured for the old type is refused, not silently switched.
    with pytest.raises(HoodieConfigError, match="MERGE_ON_READ"):
        upsert(spark, table_path, [("c", "coconut", "eu", 4)], MOR)


def test_copy_on_write_becomes_merge_on_read_and_takes_log_writes(spark, table_path, capsys):
    upsert(spark, table_path, [("a", "apple", "eu", 1), ("b", "banana", "us", 1)], FRUIT_OPTIONS)
    assert main(["table", "change-type", "--base-path", table_path, "--to", "MOR"]) == 0
    assert "is now MERGE_ON_READ" in capsys.readouterr().out
    assert table_type_on_disk(table_path) == "MERGE_ON_READ"
    assert [i.action for i in HoodieTable.load(table_path).timeline.instants] == ["commit"]   # nothing rewritten
    upsert(spark, table_path, [("a", "avocado", "eu", 2)], MOR)
    assert HoodieTable.load(table_path).timeline.instants[-1].action == "deltacommit"
    assert log_files(table_path)
    assert agree(spark, table_path) == [("a", "avocado", "eu", 2), ("b", "banana", "us", 1)]
    assert main(["table", "change-type", "--base-path", table_path, "--to", "MERGE_ON_READ"]) == 0
    assert "already MERGE_ON_READ" in capsys.readouterr().out


def test_a_pending_clustering_stops_the_change_before_anything_is_done(spark, table_path):
    for n in range(3):
        upsert(spark, table_path, [(f"k{n}", "fig", "eu", n)], MOR)
    upsert(spark, table_path, [("k0", "grape", "eu", 9)], MOR)
    clustering = schedule_clustering(HoodieTable.load(table_path), {}, force=True)
    assert clustering is not None
    instants = HoodieTable.load(table_path).timeline.instants
    with pytest.raises(HoodieError, match=f"{clustering.action} {clustering.timestamp} is pending"):
        change_table_type(spark, HoodieTable.load(table_path), "COW")
    assert table_type_on_disk(table_path) == "MERGE_ON_READ"
    assert HoodieTable.load(table_path).timeline.instants == instants       # no compaction ran
