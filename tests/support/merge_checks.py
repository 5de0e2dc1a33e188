"""Reading a merge-rule test's table back: our Spark reader, ``read_arrow``, compaction and hudi-rs."""
from hudi_engine import read
from hudi_engine.api import read_arrow
from hudi_engine.read.merged_scan import merges_in_spark
from hudi_engine.read.plan import plan_read
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from tests.support.hudi_rs import hudi_rs_read, rows


def snapshot(spark, path, columns) -> list[tuple]:
    return sorted(tuple(r) for r in read(spark, path).select(*columns).collect())


def spark_merges(spark, path) -> bool:
    """Whether a snapshot of the table merges its slices in Spark (not per slice in Arrow)."""
    table = HoodieTable.load(path)
    return merges_in_spark(spark, table, plan_read(table, {}))


def compact(spark, path) -> None:
    compaction = schedule_compaction(HoodieTable.load(path), {}, force=True)
    assert run_compactions(spark, HoodieTable.load(path)) == [compaction.timestamp]


def check_rows(spark, path, columns, expected, merge_on_read: bool, hudi_rs: bool = True) -> None:
    """Both our readers give ``expected``, and again after compacting a merge-on-read table; then
    hudi-rs (over base files only, for merge-on-read)."""
    assert snapshot(spark, path, columns) == rows(read_arrow(path), columns) == expected
    if merge_on_read:
        compact(spark, path)
        assert snapshot(spark, path, columns) == rows(read_arrow(path), columns) == expected
    if hudi_rs:
        assert rows(hudi_rs_read(path), columns) == expected
