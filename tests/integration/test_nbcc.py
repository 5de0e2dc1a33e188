"""Non-blocking concurrency control (Hudi 1.x) with real writer processes: two writers held in flight
together on the same buckets of a version 8 merge-on-read table both commit, each bucket keeps one
file group, named as Hudi's NBCC writers name it (the same file id in every partition), and every
key holds the version with the larger ordering value, in our reader and hudi-rs, before and after
compaction and after further writes on either plane. Tables NBCC cannot serve are refused by name."""
from __future__ import annotations

import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieConfigError
from hudi_engine.index.bucket import bucket_of, nbcc_bucket_file_id
from hudi_engine.services.clean import run_clean
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from tests.integration.test_multi_writer import COLUMNS, OCC, assert_no_leftovers, race, table_rows
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.storage import files

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
    # Hudi's fixed ids: bucket 0 and 1 of eu, and u1's bucket of us under the same id as eu's.
    us_bucket = bucket_of(file_groups(table_path)["us"][0])
    assert file_groups(table_path) == {"eu": [f"0000000{b}-0000-0000-0000-000000000000-0" for b in (0, 1)],
                                       "us": [nbcc_bucket_file_id(us_bucket)]}

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
    slices = HoodieTable.load(table_path).fs_view().latest_file_slices()
    assert all(s.base_file is not None and not s.log_files for s in slices)
    assert sorted(s.base_file.path.split("_")[0] for s in slices) == sorted(
        f"{s.partition}/{s.file_id}" for s in slices), "each partition's compacted base file in its own group"
    assert_no_leftovers(table_path)


@pytest.mark.usefixtures("write_plane")
def test_buckets_that_share_file_ids_across_partitions_are_written_compacted_cleaned_and_read(spark, table_path):
    """The same keys in two partitions: bucket N's file group of each is named N's fixed id, and
    each partition's records, logs, compacted base files and cleaned slices stay its own."""
    opts = {**FRUIT_OPTIONS, **NBCC, "hoodie.datasource.write.operation": "upsert"}

    def upsert(rows_, operation="upsert"):
        write(spark.createDataFrame(rows_, FRUIT_SCHEMA), table_path,
              {**opts, "hoodie.datasource.write.operation": operation})

    keys = [f"k{i}" for i in range(4)]      # k0, k2 in bucket 0; k1, k3 in bucket 1
    upsert([(k, f"{region}-{k}", region, 1) for k in keys for region in ("eu", "us")])
    hudi_ids = [nbcc_bucket_file_id(b) for b in (0, 1)]
    assert file_groups(table_path) == {"eu": hudi_ids, "us": hudi_ids}
    expected = sorted((k, f"{region}-{k}", region, 1) for k in keys for region in ("eu", "us"))
    assert ours(spark, table_path) == expected
    schedule_compaction(HoodieTable.load(table_path), NBCC, force=True)
    run_compactions(spark, HoodieTable.load(table_path), options=NBCC)
    assert both_readers(spark, table_path) == expected

    # k0 newer in eu, older (it loses) in us; k4 new in eu's bucket 0; k1 deleted from us only.
    upsert([("k0", "new-k0", "eu", 5), ("k0", "old-k0", "us", 0), ("k4", "eu-k4", "eu", 1)])
    upsert([("k1", "", "us", 9)], operation="delete")
    expected = sorted([r for r in expected if (r[0], r[2]) not in {("k0", "eu"), ("k1", "us")}]
                      + [("k0", "new-k0", "eu", 5), ("k4", "eu-k4", "eu", 1)])
    assert both_readers(spark, table_path) == expected
    schedule_compaction(HoodieTable.load(table_path), NBCC, force=True)
    run_compactions(spark, HoodieTable.load(table_path), options=NBCC)
    # Keeping the latest commit's slices and the ones before them: the first write's log-only
    # slices go, in both partitions.
    first = HoodieTable.load(table_path).timeline.completed_writes()[0].timestamp
    assert sorted(f.split("/")[0] for f in data_files(table_path) if first in f) == ["eu", "eu", "us", "us"]
    assert run_clean(HoodieTable.load(table_path), {**NBCC, "hoodie.cleaner.commits.retained": "1"}, spark)
    assert both_readers(spark, table_path) == expected
    assert file_groups(table_path) == {"eu": hudi_ids, "us": hudi_ids}
    assert not [f for f in data_files(table_path) if first in f], "the first (log-only) slices are cleaned"
    assert_no_leftovers(table_path)


def both_readers(spark, table_path) -> list[tuple]:
    """Our rows, which hudi-rs reads too (a key may be in both partitions here)."""
    rows_ = ours(spark, table_path)
    assert rows_ == rows(hudi_rs_read(table_path), COLUMNS), "our reader and hudi-rs disagree"
    return rows_


def data_files(table_path) -> list[str]:
    return [f for f in files(table_path) if not f.startswith(".hoodie") and "/.hoodie_partition" not in f]


def file_groups(table_path) -> dict[str, list[str]]:
    """The latest file slices' file ids, per partition."""
    out: dict[str, list[str]] = {}
    for s in HoodieTable.load(table_path).fs_view().latest_file_slices():
        out.setdefault(s.partition, []).append(s.file_id)
    return {p: sorted(ids) for p, ids in out.items()}


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
