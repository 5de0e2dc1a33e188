"""Partial updates (Hudi 1.1's IGNORE_DEFAULTS, PartialUpdateAvroPayload on older tables): an
update's null or absent columns keep the previous version's values; inserts keep their nulls."""
import pyarrow as pa
import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.merge.partial import partial_update
from hudi_engine.merge.record_merger import MergeSpec, deduplicate, merge, merge_mode
from hudi_engine.read.log_merge import DATA, LogPart, merge_slice

KEY = "_hoodie_record_key"
PARTIAL = MergeSpec(("ts",), dedup=True, event_time=True, partial=True)


def table(items, **extra):
    return pa.table({KEY: [r[0] for r in items], "ts": pa.array([r[1] for r in items], pa.int64()),
                     "x": pa.array([r[2] for r in items], pa.string()),
                     "y": pa.array([r[3] for r in items], pa.int64()), **extra})


def test_the_setting_under_each_table_version():
    assert partial_update(HoodieConfig({"hoodie.table.partial.update.mode": "ignore_defaults"}))
    payload = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
    assert partial_update(HoodieConfig({"hoodie.datasource.write.payload.class": payload}))
    assert partial_update(HoodieConfig({"hoodie.table.legacy.payload.class": payload}))
    assert merge_mode(HoodieConfig({"hoodie.compaction.payload.class": payload})) == "EVENT_TIME_ORDERING"
    assert not partial_update(HoodieConfig({}))
    with pytest.raises(HoodieConfigError, match="FILL_UNAVAILABLE is not supported"):
        partial_update(HoodieConfig({"hoodie.table.partial.update.mode": "FILL_UNAVAILABLE"}))


def test_null_and_absent_columns_of_an_update_keep_the_stored_values():
    stored = table([("k", 1, "old-x", 10), ("j", 1, "old-x", 20)], z=pa.array(["z1", "z2"]))
    incoming = table([("k", 2, None, 11), ("i", 2, None, 5)]).append_column("_hoodie_op", pa.array(["U", "U"]))
    result = merge(stored, incoming, PARTIAL)
    got = {r[KEY]: r for r in result.written.to_pylist()}
    assert got["k"]["x"] == "old-x" and got["k"]["y"] == 11 and got["k"]["z"] == "z1"
    assert got["i"]["x"] is None and got["i"]["z"] is None           # an insert: nothing to keep
    assert result.kept[KEY].to_pylist() == ["j"]


def test_without_the_setting_nulls_overwrite():
    stored = table([("k", 1, "old-x", 10)])
    result = merge(stored, table([("k", 2, None, 11)]), MergeSpec(("ts",), True, True))
    assert result.written["x"].to_pylist() == [None]


def test_an_older_partial_update_loses_whole():
    result = merge(table([("k", 5, "stored", 10)]), table([("k", 2, "late", None)]), PARTIAL)
    assert result.kept["x"].to_pylist() == ["stored"] and result.written.num_rows == 0


def test_versions_of_one_batch_or_log_combine_column_by_column():
    got = deduplicate(table([("k", 3, None, 3), ("k", 1, "first", 1), ("k", 2, "second", None), ("j", 1, "j", None)]),
                      PARTIAL)
    assert got.to_pylist() == [{KEY: "k", "ts": 3, "x": "second", "y": 3}, {KEY: "j", "ts": 1, "x": "j", "y": None}]


def test_a_slice_merges_partial_log_records_onto_its_base_rows():
    base = table([("k", 1, "base-x", 1), ("j", 1, "base-x", 1)])
    parts = [LogPart(DATA, table([("k", 2, "log-x", None)])), LogPart(DATA, table([("k", 3, None, 3)]))]
    got = {r[KEY]: (r["x"], r["y"]) for r in merge_slice(base, parts, PARTIAL).to_pylist()}
    assert got == {"k": ("log-x", 3), "j": ("base-x", 1)}
