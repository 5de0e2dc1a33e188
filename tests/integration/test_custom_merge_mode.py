"""CUSTOM merge mode with real Spark: a Python merger (``tests.support.mergers:RunningTotal``, named
by ``hoodie.record.merge.custom.implementation.classes``) runs in the writer on both planes (so it
is imported on Spark's executors), in merge-on-read snapshot reads and in compaction, on tables of
version 8 and 9; copy-on-write base files (and merge-on-read ones once compacted) are read by
hudi-rs too, which does not run mergers of its own."""
import pytest

from hudi_engine import write
from hudi_engine.errors import HoodieConfigError
from hudi_engine.table.meta_client import HoodieTable
from tests.support.merge_checks import check_rows
from tests.support.mergers import RUNNING_TOTAL_ID

pytestmark = pytest.mark.spark
COLS = ["id", "ts", "total"]
SCHEMA = "id string, ts long, total long"
MERGER = "tests.support.mergers:RunningTotal"


def options(kind: str, version: str, **extra) -> dict:
    return {"hoodie.table.name": "custom", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "", "hoodie.table.ordering.fields": "ts",
            "hoodie.datasource.write.table.type": kind, "hoodie.write.table.version": version,
            "hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline": "false",
            "hoodie.record.merge.mode": "CUSTOM", "hoodie.record.merge.custom.implementation.classes": MERGER,
            **extra}


@pytest.mark.parametrize("write_plane,kind,version", [("in-process", "MERGE_ON_READ", "9"),
                                                      ("in-process", "COPY_ON_WRITE", "8"),
                                                      ("spark-stages", "COPY_ON_WRITE", "8")], indirect=["write_plane"])
def test_a_python_merger_decides_writes_reads_and_compaction(spark, table_path, write_plane, kind, version):
    opts = options(kind, version)
    put = lambda batch: write(spark.createDataFrame(batch, SCHEMA), table_path, opts)  # noqa: E731
    put([("a", 1, 10), ("b", 1, 10), ("c", 1, 10)])
    props = HoodieTable.load(table_path).props
    assert (props["hoodie.record.merge.mode"], props["hoodie.record.merge.strategy.id"]) == ("CUSTOM", RUNNING_TOTAL_ID)
    put([("a", 2, 5), ("a", 3, 1), ("b", 0, -20), ("d", 2, 7)])     # a: 10+5+1; b: below zero, deleted
    put([("c", 2, 3)])
    check_rows(spark, table_path, COLS, [("a", 3, 16), ("c", 2, 13), ("d", 2, 7)], kind == "MERGE_ON_READ")


def test_custom_needs_a_version_8_or_9_table_and_an_importable_merger(spark, table_path):
    df = spark.createDataFrame([("a", 1, 1)], SCHEMA)
    with pytest.raises(HoodieConfigError, match="needs table version 8 or 9"):
        write(df, table_path, options("COPY_ON_WRITE", "6"))
    with pytest.raises(HoodieConfigError, match="cannot import module 'nowhere'"):
        write(df, table_path, options("COPY_ON_WRITE", "9",
                                      **{"hoodie.record.merge.custom.implementation.classes": "nowhere:Merger"}))
    assert not HoodieTable.exists(table_path)
