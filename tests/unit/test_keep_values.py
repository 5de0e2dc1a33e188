"""Partial records (IS_PARTIAL) merged as Hudi's KEEP_VALUES partial merging does: the winner's
columns, the loser's where the winner lacks one; log versions folded in log order, then the base."""
import pyarrow as pa

from hudi_engine.merge.keep_values import ABSENT, with_absent
from hudi_engine.merge.record_merger import MergeSpec
from hudi_engine.read.log_merge import DATA, DELETES, LogPart, combine_log_records, merge_slice

KEY = "_hoodie_record_key"
SCHEMA = pa.schema([pa.field(KEY, pa.string()), ("ts", pa.int64()), ("x", pa.int64()), ("y", pa.string())])
BASE = pa.table({KEY: ["a", "b", "c"], "ts": [1, 1, 1], "x": [10, 20, 30], "y": ["p", "q", "r"]}, schema=SCHEMA)
EVENT_TIME = MergeSpec(("ts",), False, True)
COMMIT_TIME = MergeSpec(("ts",), False, False)


def part(rows: dict, absent: list[str]) -> LogPart:
    return LogPart(DATA, with_absent(pa.table(rows, schema=SCHEMA), absent))


def merged(parts, spec, base=BASE) -> list[tuple]:
    rows = merge_slice(base, parts, spec)
    assert ABSENT not in rows.column_names
    return sorted(tuple(r.values()) for r in rows.to_pylist())


def test_lacking_columns_keep_the_base_values_and_carried_nulls_are_values():
    updates = part({KEY: ["a", "b"], "ts": [2, 2], "x": [11, None], "y": [None, None]}, ["y"])
    assert merged([updates], EVENT_TIME) == [("a", 2, 11, "p"), ("b", 2, None, "q"), ("c", 1, 30, "r")]


def test_two_partial_versions_merge_into_the_union_of_their_columns():
    x = part({KEY: ["a"], "ts": [2], "x": [11], "y": [None]}, ["y"])
    y = part({KEY: ["a"], "ts": [3], "x": [None], "y": ["P"]}, ["x"])
    assert merged([x, y], EVENT_TIME)[0] == ("a", 3, 11, "P")
    log = combine_log_records([x, y], EVENT_TIME)
    assert log.num_rows == 1 and log[ABSENT][0].as_py() is None, "together they carry every column"


def test_an_older_ordering_value_loses_under_event_time_but_not_commit_time():
    late = part({KEY: ["c"], "ts": [0], "x": [None], "y": ["R"]}, ["x"])
    assert merged([late], EVENT_TIME)[2] == ("c", 1, 30, "r")
    assert merged([late], COMMIT_TIME)[2] == ("c", 0, 30, "R")


def test_versions_fold_in_log_order_as_hudis_record_buffer_merges_them():
    """v1 (ts 5, x) wins over v2 (ts 3, x and y), which fills y; v3 (ts 4, y) then loses to the
    merged record, so y is v2's, not v3's, though v3 orders after v2."""
    v1 = part({KEY: ["a"], "ts": [5], "x": [1], "y": [None]}, ["y"])
    v2 = part({KEY: ["a"], "ts": [3], "x": [2], "y": ["two"]}, [])
    v3 = part({KEY: ["a"], "ts": [4], "x": [None], "y": ["three"]}, ["x"])
    assert merged([v1, v2, v3], EVENT_TIME, BASE.slice(1))[0] == ("a", 5, 1, "two")


def test_a_delete_ends_partial_versions_and_a_key_without_base_keeps_nulls():
    update = part({KEY: ["a", "z"], "ts": [2, 2], "x": [11, 7], "y": [None, None]}, ["y"])
    delete = LogPart(DELETES, pa.table({KEY: ["a"]}))
    assert merged([update, delete], EVENT_TIME) == [("b", 1, 20, "q"), ("c", 1, 30, "r"), ("z", 2, 7, None)]
