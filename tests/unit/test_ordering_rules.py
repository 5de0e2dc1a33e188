"""Hudi 1.x merge rules beyond one ordering field: several fields compared in order (Hudi 1.1's
ArrayComparable), and deletes that carry an ordering value losing to newer stored records."""
import pyarrow as pa
import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.file_group.log_file.deletes import delete_block, delete_block_keys
from hudi_engine.merge.record_merger import (MergeSpec, deduplicate, is_older, merge, merge_mode,
                                             operation_deletes_unordered, ordering_fields, ordering_struct)
from hudi_engine.read.log_merge import DATA, DELETES, LogPart, merge_slice

KEY = "_hoodie_record_key"
TWO = MergeSpec(("a", "b"), dedup=True, event_time=True)
ONE = MergeSpec(("a",), dedup=True, event_time=True)


def rows(items, op="U", deleted=None):
    table = pa.table({KEY: [r[0] for r in items], "v": [r[1] for r in items],
                      "a": pa.array([r[2] for r in items], pa.int64()),
                      "b": pa.array([r[3] for r in items], pa.string()), "_hoodie_op": [op] * len(items)})
    if deleted is not None:
        table = table.append_column("_hoodie_is_deleted", pa.array(deleted))
    return table


def stored(items):
    return rows(items).drop_columns(["_hoodie_op"])


def test_ordering_fields_are_comma_separated_under_either_key():
    assert ordering_fields(HoodieConfig({"hoodie.table.ordering.fields": "a, b"})) == ("a", "b")
    assert ordering_fields(HoodieConfig({"hoodie.datasource.write.precombine.field": "ts"})) == ("ts",)
    assert ordering_fields(HoodieConfig({})) == ()
    assert merge_mode(HoodieConfig({"hoodie.table.ordering.fields": "a,b"})) == "EVENT_TIME_ORDERING"


def test_is_older_compares_field_by_field_and_nulls_decide_nothing():
    left = [pa.array([1, 2, 2, 2, None]), pa.array(["z", "a", "b", "c", "z"])]
    right = [pa.array([2, 2, 2, 1, 1]), pa.array(["a", "b", "b", "z", "a"])]
    assert is_older(left, right).tolist() == [True, True, False, False, False]


def test_dedup_breaks_ties_on_the_first_field_by_the_second():
    got = deduplicate(rows([("k", "x", 5, "b"), ("k", "y", 5, "c"), ("k", "z", 5, "a"), ("j", "w", 1, "a")]), TWO)
    assert sorted(zip(got[KEY].to_pylist(), got["v"].to_pylist())) == [("j", "w"), ("k", "y")]
    # With only the first field the tie goes to the last arrival.
    got = deduplicate(rows([("k", "x", 5, "b"), ("k", "y", 5, "c"), ("k", "z", 5, "a")]), ONE)
    assert got["v"].to_pylist() == ["z"]


def test_update_loses_to_a_stored_record_larger_on_the_second_field():
    result = merge(stored([("k", "old", 5, "m"), ("j", "old", 5, "m")]),
                   rows([("k", "new", 5, "a"), ("j", "new", 5, "z")]), TWO)
    assert result.kept["v"].to_pylist() == ["old"] and result.kept[KEY].to_pylist() == ["k"]
    assert result.written[KEY].to_pylist() == ["j"] and result.num_updates == 1


def test_a_flagged_delete_with_an_older_ordering_value_leaves_the_stored_record():
    result = merge(stored([("k", "old", 5, "m"), ("j", "old", 5, "m")]),
                   rows([("k", "d", 4, "z"), ("j", "d", 5, "n")], deleted=[True, True]), TWO)
    assert result.kept[KEY].to_pylist() == ["k"]
    assert result.written.num_rows == 0 and result.num_deletes == 1


def test_a_delete_without_an_ordering_value_always_wins():
    incoming = operation_deletes_unordered(rows([("k", None, 1, "a")], op="D"), TWO)
    assert incoming["a"].to_pylist() == [None]
    result = merge(stored([("k", "old", 9, "z")]), incoming, TWO)
    assert result.kept.num_rows == 0 and result.num_deletes == 1


def test_commit_time_ordering_deletes_win_whatever_their_ordering_value():
    spec = MergeSpec(("a", "b"), dedup=True, event_time=False)
    result = merge(stored([("k", "old", 9, "z")]), rows([("k", "d", 1, "a")], deleted=[True]), spec)
    assert result.kept.num_rows == 0 and result.num_deletes == 1


def test_log_delete_with_ordering_value_loses_to_a_newer_base_row_in_a_slice():
    base = stored([("k", "base", 5, "m"), ("j", "base", 5, "m"), ("i", "base", 5, "m")])
    deletes = pa.table({KEY: ["k", "j", "i"], "a": pa.array([5, 6, None], pa.int64()),
                        "b": pa.array(["a", "a", None], pa.string())})
    got = merge_slice(base, [LogPart(DELETES, deletes)], TWO)
    assert got[KEY].to_pylist() == ["k"]      # j: newer delete; i: natural delete


def test_log_update_after_an_ordered_delete_of_the_same_key():
    base = stored([("k", "base", 1, "a")])
    parts = [LogPart(DELETES, pa.table({KEY: ["k"], "a": pa.array([3], pa.int64()), "b": ["a"]})),
             LogPart(DATA, rows([("k", "late", 2, "a")]).drop_columns(["_hoodie_op"]))]
    assert merge_slice(base, parts, TWO) .num_rows == 0       # the delete (3) beats the later update (2)
    parts[1] = LogPart(DATA, rows([("k", "late", 4, "a")]).drop_columns(["_hoodie_op"]))
    assert merge_slice(base, parts, TWO)["v"].to_pylist() == ["late"]


def test_delete_block_round_trips_several_ordering_values_as_an_array_wrapper():
    keys = rows([("k", None, 7, "x"), ("j", None, None, None), ("i", None, 0, "")])
    block = delete_block(pa.table({"record_key": keys[KEY], "partition_path": ["p"] * 3,
                                   "ordering_value": ordering_struct(keys, ("a", "b"))}), "20250101000000000")
    got = delete_block_keys(block)["ordering_value"]
    assert got.to_pylist() == [{"0": 7, "1": "x"}, None, {"0": 0, "1": ""}]


@pytest.mark.parametrize("value", [pa.array([3, None], pa.int64()), pa.array(["b", None])])
def test_delete_block_single_ordering_values_are_unchanged(value):
    block = delete_block({"record_key": ["k", "j"], "partition_path": ["p", "p"], "ordering_value": value}, "1")
    assert delete_block_keys(block)["ordering_value"].to_pylist() == value.to_pylist()
