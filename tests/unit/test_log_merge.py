"""Merging a slice's log records onto its base rows (pure Arrow), and which log blocks count."""
import pyarrow as pa

from hudi_engine.file_group.log_file import BlockType, LogBlock, avro_data_block, rollback_command_block
from hudi_engine.file_group.log_file.format import HeaderKey
from hudi_engine.file_group.log_scanner import Visibility, valid_blocks
from hudi_engine.merge.record_merger import MergeSpec
from hudi_engine.read.log_merge import DATA, DELETES, LogPart, combine_log_records, merge_slice, unmerged_slice

EVENT = MergeSpec(("ts",), True, True)
COMMIT_TIME = MergeSpec(("ts",), True, False)


def rows(**columns):
    return pa.table({"_hoodie_record_key": columns.pop("key"), **columns})


def upserts(keys, fruits, ts):
    return LogPart(DATA, rows(key=keys, fruit=fruits, ts=pa.array(ts, pa.int64())))


def deletes(keys, ts=None):
    return LogPart(DELETES, rows(key=keys, ts=pa.array(ts or [None] * len(keys), pa.int64())))


def as_dict(table):
    return {r["_hoodie_record_key"]: r["fruit"] for r in table.to_pylist()}


BASE = rows(key=["a", "b", "c"], fruit=["apple", "banana", "cherry"], ts=pa.array([5, 5, 5], pa.int64()))


def test_updates_inserts_and_deletes_apply_in_log_order():
    parts = [upserts(["a", "d"], ["avocado", "date"], [6, 6]), deletes(["b"]),
             upserts(["a"], ["apricot"], [7])]
    assert as_dict(merge_slice(BASE, parts, EVENT)) == {
        "a": "apricot", "c": "cherry", "d": "date"}


def test_event_time_keeps_the_larger_ordering_value_commit_time_the_last_write():
    parts = [upserts(["a"], ["late"], [9]), upserts(["a"], ["early"], [6]), upserts(["c"], ["old"], [1])]
    assert as_dict(merge_slice(BASE, parts, EVENT)) == {"a": "late", "b": "banana", "c": "cherry"}
    assert as_dict(merge_slice(BASE, parts, COMMIT_TIME)) == {"a": "early", "b": "banana", "c": "old"}


def test_a_delete_then_a_new_version_brings_the_key_back():
    parts = [deletes(["a"]), upserts(["a"], ["again"], [6])]
    assert as_dict(merge_slice(BASE, parts, EVENT))["a"] == "again"
    # As in Hudi, the version after the delete still merges with the base row by ordering value.
    parts = [deletes(["a"]), upserts(["a"], ["again"], [1])]
    assert as_dict(merge_slice(BASE, parts, EVENT))["a"] == "apple"
    parts = [upserts(["a"], ["again"], [8]), deletes(["a"])]
    assert "a" not in as_dict(merge_slice(BASE, parts, EVENT))


def test_a_delete_carrying_an_older_ordering_value_loses_to_a_newer_logged_version():
    parts = [upserts(["a"], ["newer"], [9]), deletes(["a"], ts=[7])]
    assert as_dict(merge_slice(BASE, parts, EVENT))["a"] == "newer"


def test_log_only_slice_and_skip_merge():
    parts = [upserts(["x"], ["xigua"], [1]), upserts(["x"], ["xigua2"], [2]), deletes(["x"])]
    assert merge_slice(None, parts, EVENT).num_rows == 0
    skipped = unmerged_slice(BASE, parts)
    assert sorted(skipped["fruit"].to_pylist()) == ["apple", "banana", "cherry", "xigua", "xigua2"]
    assert combine_log_records([], EVENT) is None


def block(instant, kind=BlockType.AVRO_DATA_BLOCK):
    return LogBlock(kind, {HeaderKey.INSTANT_TIME: instant})


def test_only_committed_blocks_count_and_a_rollback_block_voids_its_target():
    visible = Visibility(frozenset({"002", "004"}), timeline_start="002", as_of=None)
    blocks = [block("001"), block("002"), block("003"), rollback_command_block("003", "005"),
              block("004"), block("009"), LogBlock(BlockType.CORRUPT_BLOCK)]
    # 001 predates the active timeline (archived, so committed); 003 never completed; 009 is pending.
    assert [b.instant_time for b in valid_blocks(blocks, visible)] == ["001", "002", "004"]
    # A rollback of a completed-looking instant still voids the blocks before it.
    blocks = [block("002"), rollback_command_block("002", "003"), block("004")]
    assert [b.instant_time for b in valid_blocks(blocks, visible)] == ["004"]
    as_of = Visibility(frozenset({"002", "004"}), "002", as_of="003")
    assert [b.instant_time for b in valid_blocks([block("002"), block("004")], as_of)] == ["002"]


def test_written_block_round_trips_through_the_merge():
    schema = '{"type":"record","name":"r","fields":[{"name":"_hoodie_record_key","type":"string"},' \
             '{"name":"fruit","type":["null","string"]},{"name":"ts","type":["null","long"]}]}'
    written = avro_data_block(upserts(["a"], ["apricot"], [9]).records, schema, "002")
    from hudi_engine.file_group.log_file import data_block_records
    parts = [LogPart(DATA, data_block_records(written).select(["_hoodie_record_key", "fruit", "ts"]))]
    assert as_dict(merge_slice(BASE, parts, EVENT))["a"] == "apricot"
