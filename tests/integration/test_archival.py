"""Archival of a version 6 table with real Spark (test_lsm_timeline has versions 8 and 9): old
instants move to ``.hoodie/archived`` in Hudi 0.x's layout, and both our reader and hudi-rs still
read the table (file groups last written by archived commits included); an incremental query over
archived commits fails clearly, one over the active timeline works."""
import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieTimelineError
from hudi_engine.table.archived_timeline import archived_instants, read_archived_entries
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.storage import files

pytestmark = pytest.mark.spark
COLS = ["name", "fruit"]
SERVICES = {"hoodie.write.table.version": "6", "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
       "hoodie.compact.inline.max.delta.commits": "2"}


def upsert(spark, path, people, ts, extra):
    df = spark.createDataFrame([(n, f, r, ts) for n, f, r in people], FRUIT_SCHEMA)
    return write(df, path, {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "upsert", **SERVICES, **extra})


@pytest.mark.parametrize("base_path, extra", [
    pytest.param("local", {}, id="local-cow"), pytest.param("s3", {}, id="s3-cow"),
    pytest.param("local", MOR, id="local-mor", marks=pytest.mark.slow)], indirect=["base_path"])
def test_archived_tables_still_read_the_same(spark, base_path, extra):
    table_path = base_path
    first = upsert(spark, table_path, [("sarah", "kiwi", "us"), ("jack", "apple", "eu")], 0, extra)
    fruits = ["banana", "cherry", "date", "fig", "grape", "lime", "mango"]
    last = [upsert(spark, table_path, [("jack", fruit, "eu")], n, extra) for n, fruit in enumerate(fruits, 1)][-1]
    table = HoodieTable.load(table_path)
    archived = archived_instants(table.storage, ".hoodie/archived")
    assert first in [i.timestamp for i in archived]
    active = table.timeline
    assert not {i.timestamp for i in archived if i.action != "clean"} & {i.timestamp for i in active.instants}
    assert not files(table_path, f".hoodie/{first}.*")
    states = {e["actionState"] for e in read_archived_entries(table.storage, ".hoodie/archived")}
    assert states >= {"REQUESTED", "COMPLETED"}
    # sarah's file group was last written by an archived commit: still read by both readers
    expected = [("jack", "mango"), ("sarah", "kiwi")]
    assert sorted((r["name"], r["fruit"]) for r in read(spark, table_path).select(*COLS).collect()) == expected
    assert rows(hudi_rs_read(table_path), COLS) == expected
    with pytest.raises(HoodieTimelineError, match="archived"):
        read(spark, table_path, {"hoodie.datasource.query.type": "incremental",
                                 "hoodie.datasource.read.begin.instanttime": "0"}).collect()
    before_last = [i.timestamp for i in active.completed_writes() if i.timestamp < last][-1]
    incr = read(spark, table_path, {"hoodie.datasource.query.type": "incremental",
                                    "hoodie.datasource.read.begin.instanttime": before_last})
    assert [(r["name"], r["fruit"]) for r in incr.select(*COLS).collect()] == [("jack", "mango")]
