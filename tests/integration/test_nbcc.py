"""Non-blocking concurrency control (Hudi 1.x) with real writer processes: two writers held in flight
together on the same buckets of a version 8 merge-on-read table both commit, each bucket keeps one
file group, and every key holds the version with the larger ordering value, in our reader and
hudi-rs, before and after compaction. Tables NBCC cannot serve are refused by name."""
from __future__ import annotations

import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieConfigError
from hudi_engine.index.bucket import bucket_of, fixed_bucket_file_id
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from tests.integration.test_multi_writer import COLUMNS, OCC, assert_no_leftovers, race, table_rows
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read

pytestmark = pytest.mark.spark
NBCC = {**OCC, "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
        "hoodie.write.table.version": "8", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2", "hoodie.clean.automatic": "false"}


def ours(spark, path) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLUMNS) for r in read(spark, path).collect())


def both_commit(table_path, workdir, x: list[tuple], y: list[tuple]) -> None:
    """Writers x and y held in flight together, then let go: neither loses a conflict."""
    workdir.mkdir()
    results = race(table_path, workdir, {"x": x, "y": y}, options=NBCC)
    assert [code for code, _ in results.values()] == [0, 0], results


def test_two_writers_of_the_same_buckets_both_commit_and_the_ordering_field_decides(spark, table_path, tmp_path):
    # The table exists (partition us); both writers write every key of partition eu, new to the
    # table: their buckets' file groups do not exist yet either.
    write(spark.createDataFrame([("u1", "ugli", "us", 1)], FRUIT_SCHEMA), table_path,
          {**FRUIT_OPTIONS, **NBCC, "hoodie.datasource.write.operation": "upsert"})
    x = [(k, f"x-{k}", "eu", 10 if k in ("k1", "k3") else 1) for k in ("k1", "k2", "k3", "k4")]
    y = [(k, f"y-{k}", "eu", 10 if k in ("k2", "k4") else 1) for k in ("k1", "k2", "k3", "k4")]
    both_commit(table_path, tmp_path / "first", x, y)
    expected = [("k1", "x-k1", "eu", 10), ("k2", "y-k2", "eu", 10), ("k3", "x-k3", "eu", 10), ("k4", "y-k4", "eu", 10),
                ("u1", "ugli", "us", 1)]
    assert ours(spark, table_path) == expected
    table = HoodieTable.load(table_path)
    groups = {s.file_id for s in table.fs_view().latest_file_slices() if s.partition == "eu"}
    assert groups == {fixed_bucket_file_id("eu", b) for b in range(2)} and {bucket_of(g) for g in groups} == {0, 1}

    # Again on the now existing file groups, then a compaction: the same winners.
    x = [("k1", "x2-k1", "eu", 20), ("k2", "x2-k2", "eu", 5)]
    y = [("k1", "y2-k1", "eu", 15), ("k2", "y2-k2", "eu", 25)]
    both_commit(table_path, tmp_path / "second", x, y)
    expected = [("k1", "x2-k1", "eu", 20), ("k2", "y2-k2", "eu", 25), ("k3", "x-k3", "eu", 10), ("k4", "y-k4", "eu", 10),
                ("u1", "ugli", "us", 1)]
    assert ours(spark, table_path) == expected
    # hudi-rs 0.5 reads no file group that has log files but no base file yet (every one here, as
    # Hudi's own NBCC writers leave them): it sees the rows once compaction gave them base files.
    assert hudi_rs_read(table_path).num_rows == 0
    compaction = schedule_compaction(HoodieTable.load(table_path), NBCC, force=True)
    assert run_compactions(spark, HoodieTable.load(table_path), options=NBCC) == [compaction.timestamp]
    assert table_rows(spark, table_path) == expected
    assert all(s.base_file is not None and not s.log_files for s in HoodieTable.load(table_path).fs_view().latest_file_slices())
    assert_no_leftovers(table_path)


@pytest.mark.parametrize("change, unmet", [
    ({"hoodie.datasource.write.table.type": "COPY_ON_WRITE"}, "hoodie.table.type=MERGE_ON_READ"),
    ({"hoodie.index.type": "SIMPLE"}, "hoodie.index.type=BUCKET"),
    ({"hoodie.write.table.version": "6"}, "table version 8 or later"),
])
def test_tables_nbcc_cannot_serve_are_refused_by_name(spark, table_path, change, unmet):
    df = spark.createDataFrame([("k1", "fig", "eu", 1)], FRUIT_SCHEMA)
    with pytest.raises(HoodieConfigError, match=unmet.replace(".", r"\.")):
        write(df, table_path, {**FRUIT_OPTIONS, **NBCC, **change})
    assert not HoodieTable.load(table_path).timeline.instants
