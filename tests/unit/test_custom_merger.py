"""CUSTOM merge mode's pure rules: a Python merger named by hoodie.record.merge.custom.implementation.classes
merges aligned versions of the same keys (stored vs incoming, a batch's or a log's versions in
arrival order), may turn them into deletes, and is refused clearly when it cannot be used."""
import pyarrow as pa
import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieValidationError
from hudi_engine.merge.custom import custom_merger_name
from hudi_engine.merge.record_merger import MergeSpec, deduplicate, merge
from hudi_engine.read.log_merge import DATA, DELETES, LogPart, merge_slice
from tests.support.mergers import RUNNING_TOTAL_ID

KEY = "_hoodie_record_key"
NAME = "tests.support.mergers:RunningTotal"
SPEC = MergeSpec(("ts",), dedup=True, event_time=False, custom=NAME)


def rows(items, op="U"):
    return pa.table({KEY: [r[0] for r in items], "ts": pa.array([r[1] for r in items], pa.int64()),
                     "total": pa.array([r[2] for r in items], pa.int64()), "_hoodie_op": [op] * len(items)})


def custom(**extra):
    return HoodieConfig({"hoodie.record.merge.mode": "CUSTOM", **extra})


def test_the_merger_is_found_by_name_and_strategy_id():
    classes = "tests.support.mergers.NoStrategy, tests.support.mergers:RunningTotal"
    assert custom_merger_name(custom(**{"hoodie.record.merge.custom.implementation.classes": classes,
                                        "hoodie.record.merge.strategy.id": RUNNING_TOTAL_ID})) == NAME
    assert custom_merger_name(HoodieConfig({"hoodie.record.merge.mode": "EVENT_TIME_ORDERING"})) is None


@pytest.mark.parametrize("extra,message", [
    ({}, "needs a merger"),
    ({"hoodie.record.merge.custom.implementation.classes": "no_such_pkg.mod:Merger"}, "cannot import module 'no_such_pkg.mod'"),
    ({"hoodie.record.merge.custom.implementation.classes": "tests.support.mergers:Missing"}, "has no 'Missing'"),
    ({"hoodie.record.merge.custom.implementation.classes": NAME, "hoodie.record.merge.strategy.id": "other"},
     "has strategy_id 'other'"),
])
def test_unusable_mergers_are_refused_with_what_to_do(extra, message):
    with pytest.raises(HoodieConfigError, match=message):
        custom_merger_name(custom(**extra))


def test_a_batch_s_versions_fold_in_arrival_order():
    got = deduplicate(rows([("k", 1, 5), ("j", 1, 1), ("k", 2, 10), ("k", 3, 100)]), SPEC)
    assert sorted(zip(got[KEY].to_pylist(), got["total"].to_pylist(), got["ts"].to_pylist())) == [
        ("j", 1, 1), ("k", 115, 3)]


def test_a_key_with_many_versions_folds_in_few_merger_calls(monkeypatch):
    """Versions meet in pairs, then the pairs' results: 9 versions of a key take 4 rounds, not 8,
    and a delete among them still ends the versions before it."""
    from hudi_engine.merge import record_merger

    calls = []
    real = record_merger.run_merger
    monkeypatch.setattr(record_merger, "run_merger", lambda *a: calls.append(a[1].num_rows) or real(*a))
    batch = rows([("k", t, t) for t in range(1, 10)] + [("j", 1, 1)])
    got = deduplicate(batch, SPEC)
    assert sorted(zip(got[KEY].to_pylist(), got["total"].to_pylist(), got["ts"].to_pylist())) == [
        ("j", 1, 1), ("k", 45, 9)]
    assert len(calls) == 4
    ops = ["U"] * 4 + ["D"] + ["U"] * 4
    batch = pa.table({KEY: ["k"] * 9, "ts": pa.array(range(1, 10), pa.int64()), "total": pa.array(range(1, 10), pa.int64()),
                      "_hoodie_op": ops})
    got = deduplicate(batch, SPEC)
    assert (got["total"].to_pylist(), got["_hoodie_op"].to_pylist()) == ([6 + 7 + 8 + 9], ["U"])


def test_merge_with_stored_rows_and_a_merger_made_delete():
    stored = rows([("k", 1, 5), ("j", 1, 5), ("i", 1, 5)]).drop_columns(["_hoodie_op"])
    result = merge(stored, rows([("k", 2, 10), ("j", 2, -9), ("new", 2, 7)]), SPEC)
    assert sorted(zip(result.written[KEY].to_pylist(), result.written["total"].to_pylist())) == [("k", 15), ("new", 7)]
    assert result.kept[KEY].to_pylist() == ["i"]
    assert (result.num_updates, result.num_inserts, result.num_deletes) == (1, 1, 1)


def test_marked_deletes_are_not_offered_to_the_merger():
    stored = rows([("k", 1, 5)]).drop_columns(["_hoodie_op"])
    result = merge(stored, rows([("k", 2, 50)], op="D"), SPEC)
    assert result.kept.num_rows == 0 and result.written.num_rows == 0 and result.num_deletes == 1


def test_a_slice_folds_its_log_onto_the_base_rows():
    base = rows([("k", 1, 5), ("j", 1, 5)]).drop_columns(["_hoodie_op"])
    parts = [LogPart(DATA, rows([("k", 2, 1)]).drop_columns(["_hoodie_op"])),
             LogPart(DELETES, pa.table({KEY: ["j"]})),
             LogPart(DATA, rows([("k", 3, 2), ("i", 3, 4)]).drop_columns(["_hoodie_op"]))]
    got = merge_slice(base, parts, MergeSpec((), True, False, custom=NAME))
    assert sorted(zip(got[KEY].to_pylist(), got["total"].to_pylist())) == [("i", 4), ("k", 8)]


def test_a_merger_returning_the_wrong_shape_is_refused():
    spec = MergeSpec((), True, False, custom="tests.support.mergers:WrongShape")
    with pytest.raises(HoodieValidationError, match="one row per pair"):
        merge(rows([("k", 1, 1)]).drop_columns(["_hoodie_op"]), rows([("k", 2, 2)]), spec)
