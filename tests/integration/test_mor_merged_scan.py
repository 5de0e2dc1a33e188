"""Merge-on-read snapshots merged by Spark (base files through Spark's parquet reader, logs from
Python) against the same slices merged in Arrow (``read_arrow``) and by hudi-rs: event-time and
commit-time merging, a late update that loses to the base row, deletes, inserts into logs, a
column the base files lack, column selection, filters and incremental windows."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine import read, write
from hudi_engine.api import read_arrow
from hudi_engine.read.merged_scan import merges_in_spark
from hudi_engine.read.plan import plan_read
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import window_ends
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark


@pytest.fixture
def table_path(tmp_path):
    """On local disk: Spark's own parquet reader opens it (on an object store its Hadoop layer has
    no connector for, slices are merged in Arrow as ``read_arrow`` does)."""
    return str(tmp_path / "table")

KEYS = {"hoodie.table.name": "scan", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COLS = ["id", "ts", "value", "part"]


def frame(spark, records, extra: str = ""):
    schema = "id string, ts long, value string, part string" + extra
    return spark.createDataFrame(records, schema)


def ours(spark, path, columns=COLS, filters=None, **opts):
    df = read(spark, str(path), opts, filters=filters).select(*columns)
    return sorted(tuple(r) for r in df.collect())


def in_arrow(path, columns=COLS, filters=None, **opts):
    return rows(read_arrow(str(path), opts, filters=filters), columns)


def build(spark, path, options, bucket: bool = False):
    """Three commits: a base, updates and deletes in logs (one update older than its base row),
    then a new column and more updates on top."""
    if bucket:
        options = {**options, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    write(frame(spark, [(f"k{i}", 10, f"v{i}", "p1" if i % 2 else "p2") for i in range(8)]), str(path),
          {**options, "hoodie.datasource.write.operation": "bulk_insert" if not bucket else "upsert"})
    write(frame(spark, [("k1", 20, "newer", "p1"), ("k2", 5, "older", "p2"), ("k9", 1, "inserted", "p1")]),
          str(path), {**options, "hoodie.datasource.write.operation": "upsert"})
    write(frame(spark, [("k3", 30, None, "p1"), ("k4", 30, None, "p2")]), str(path),
          {**options, "hoodie.datasource.write.operation": "delete"})
    write(frame(spark, [("k5", 40, "with-note", "p1", "a note"), ("k6", 40, "again", "p2", None)],
                extra=", note string"), str(path),
          {**options, "hoodie.datasource.write.operation": "upsert",
           "hoodie.schema.on.write.enable": "true"})


@pytest.mark.parametrize("bucket", [False, True], ids=["simple", "bucket"])
def test_event_time_snapshot_agrees_with_arrow_and_hudi_rs(spark, table_path, bucket):
    build(spark, table_path, KEYS, bucket)
    table = HoodieTable.load(str(table_path))
    plan = plan_read(table, {})
    assert plan.merged_slices and merges_in_spark(spark, table, plan)

    snapshot = ours(spark, table_path)
    assert snapshot == in_arrow(table_path) == rows(hudi_rs_read(table_path), COLS)
    by_id = {r[0]: r for r in snapshot}
    assert by_id["k1"] == ("k1", 20, "newer", "p1")
    assert by_id["k2"] == ("k2", 10, "v2", "p2")          # the older update loses to the base row
    assert "k3" not in by_id and "k4" not in by_id       # deleted
    assert by_id["k9"] == ("k9", 1, "inserted", "p1")
    assert len(snapshot) == 7

    # The column added later: null on rows whose base files predate it, set where logged.
    notes = dict(ours(spark, table_path, ["id", "note"]))
    assert notes["k5"] == "a note" and notes["k0"] is None and notes["k6"] is None
    assert notes == dict(in_arrow(table_path, ["id", "note"]))

    # Column selection, a count and filters reach the same rows.
    assert read(spark, str(table_path)).count() == 7
    assert ours(spark, table_path, ["id"], filters=[("part", "=", "p2")]) == in_arrow(
        table_path, ["id"], filters=[("part", "=", "p2")]) == [("k0",), ("k2",), ("k6",)]
    assert ours(spark, table_path, ["id", "ts"], filters=[("ts", ">=", 20)]) == [("k1", 20), ("k5", 40), ("k6", 40)]


def test_commit_time_ordering_lets_the_last_write_win(spark, table_path):
    build(spark, table_path, {**KEYS, "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"})
    snapshot = ours(spark, table_path)
    assert snapshot == in_arrow(table_path)
    assert dict((r[0], r[2]) for r in snapshot)["k2"] == "older"


@pytest.mark.parametrize("payload,k2", [("EventTimeAvroPayload", "v2"), ("OverwriteWithLatestAvroPayload", "older")])
def test_a_payload_class_merges_as_hudi_1x_maps_it_to_a_merge_mode(spark, table_path, payload, k2):
    """The payload class a version 6 table persists says how its logs merge: the late update to k2
    loses to the base row by event time, and wins by commit time."""
    payload = f"org.apache.hudi.common.model.{payload}"
    build(spark, table_path, {**KEYS, "hoodie.datasource.write.payload.class": payload,
                              "hoodie.write.table.version": "6"})
    assert HoodieTable.load(table_path).props["hoodie.compaction.payload.class"] == payload
    snapshot = ours(spark, table_path)
    assert snapshot == in_arrow(table_path)
    assert dict((r[0], r[2]) for r in snapshot)["k2"] == k2


def test_time_travel_and_incremental_windows_agree(spark, table_path):
    build(spark, table_path, KEYS)
    instants = [i.timestamp for i in HoodieTable.load(str(table_path)).timeline.completed_writes()]
    for instant in instants:
        opts = {"as.of.instant": instant}
        assert ours(spark, table_path, **opts) == in_arrow(table_path, **opts)
        assert ours(spark, table_path, **opts) == rows(hudi_rs_read(table_path, as_of=instant), COLS)
    begin, end = window_ends(table_path, *instants[:2])      # completion times from version 8 on
    window = {"hoodie.datasource.query.type": "incremental",
              "hoodie.datasource.read.begin.instanttime": begin, "hoodie.datasource.read.end.instanttime": end}
    assert ours(spark, table_path, **window) == in_arrow(table_path, **window) == [
        ("k1", 20, "newer", "p1"), ("k9", 1, "inserted", "p1")]


def test_arrow_input_tables_merge_the_same(spark, table_path):
    """A table written with no Spark at all reads the same through Spark's merge."""
    options = {**KEYS, "hoodie.datasource.write.operation": "upsert"}
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("value", pa.string()), ("part", pa.string())])
    write(pa.table({"id": ["a", "b"], "ts": [1, 1], "value": ["x", "y"], "part": ["p", "p"]}, schema=schema),
          str(table_path), {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    write(pa.table({"id": ["a", "c"], "ts": [2, 2], "value": ["x2", "z"], "part": ["p", "p"]}, schema=schema),
          str(table_path), options)
    assert ours(spark, table_path) == in_arrow(table_path) == [
        ("a", 2, "x2", "p"), ("b", 1, "y", "p"), ("c", 2, "z", "p")]


def test_replaced_rows_are_found_by_row_number_when_filters_skip_row_groups(spark, table_path):
    """Spark leaves the base rows a log replaces out of its scan by their number in the base file:
    with a base file of several row groups (as a large one has) and filters that let Spark skip
    some, the numbers still point at the right rows (updates in two groups, a late update that
    loses, a delete)."""
    write(frame(spark, [(f"k{i:02d}", i, f"v{i}", "p") for i in range(40)]), table_path,
          {**KEYS, "hoodie.datasource.write.operation": "bulk_insert"})
    table = HoodieTable.load(table_path)
    [base] = [s.base_file for s in table.fs_view().latest_file_slices()]
    # The same rows and footer (bloom filter, key range) in row groups of 10 rows.
    stored = pq.ParquetFile(table.storage.full(base.path), filesystem=table.storage.fs)
    rows, footer = stored.read(), stored.metadata.metadata
    pq.write_table(rows.replace_schema_metadata(footer), table.storage.full(base.path), row_group_size=10,
                   filesystem=table.storage.fs)
    write(frame(spark, [("k05", 100, "new5", "p"), ("k20", 100, "new20", "p"), ("k35", 1, "older", "p")]),
          table_path, {**KEYS, "hoodie.datasource.write.operation": "upsert"})
    write(frame(spark, [("k30", 30, None, "p")]), table_path, {**KEYS, "hoodie.datasource.write.operation": "delete"})
    table = HoodieTable.load(table_path)
    assert merges_in_spark(spark, table, plan_read(table, {}))
    assert pq.ParquetFile(table.storage.full(base.path), filesystem=table.storage.fs).num_row_groups == 4
    for filters in (None, [("ts", ">=", 20)], [("ts", "<", 8)], [("id", "=", "k20")]):
        assert ours(spark, table_path, filters=filters) == in_arrow(table_path, filters=filters), filters
    by_id = {r[0]: r for r in ours(spark, table_path)}
    assert by_id["k05"][1:3] == (100, "new5") and by_id["k20"][1:3] == (100, "new20")
    assert by_id["k35"][1:3] == (35, "v35") and "k30" not in by_id and len(by_id) == 39
    assert ours(spark, table_path, filters=[("ts", ">=", 20)]) == sorted(r for r in by_id.values() if r[1] >= 20)
