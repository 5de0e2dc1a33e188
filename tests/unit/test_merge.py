import pyarrow as pa

from hudi_engine.merge.record_merger import MergeSpec, deduplicate, merge, operation_deletes_unordered


def batch(rows, op="U"):
    return pa.table({"_hoodie_record_key": [r[0] for r in rows], "v": [r[1] for r in rows],
                     "ts": [r[2] for r in rows], "_hoodie_op": [op] * len(rows)})


EVENT = MergeSpec(("ts",), dedup=True, event_time=True)
COMMIT = MergeSpec(("ts",), dedup=True, event_time=False)


def test_dedup_keeps_largest_ordering_value_and_last_arrival_on_ties():
    got = deduplicate(batch([("a", "x", 2), ("a", "y", 5), ("b", "z", 1), ("a", "w", 5)]), EVENT)
    assert sorted(zip(got["_hoodie_record_key"].to_pylist(), got["v"].to_pylist())) == [("a", "w"), ("b", "z")]


def test_no_dedup_keeps_duplicates():
    got = deduplicate(batch([("a", "x", 1), ("a", "y", 2)]), MergeSpec(("ts",), False, True))
    assert got.num_rows == 2


def test_event_time_keeps_newer_stored_record():
    stored = batch([("a", "old", 10), ("b", "old", 1), ("c", "keep", 1)]).drop_columns(["_hoodie_op"])
    result = merge(stored, batch([("a", "late", 5), ("b", "new", 2), ("d", "ins", 1)]), EVENT)
    assert sorted(result.kept["v"].to_pylist()) == ["keep", "old"]
    assert sorted(result.written["v"].to_pylist()) == ["ins", "new"]
    assert (result.num_updates, result.num_inserts, result.num_deletes) == (1, 1, 0)


def test_commit_time_ordering_overwrites_whatever_is_stored():
    stored = batch([("a", "old", 10)]).drop_columns(["_hoodie_op"])
    result = merge(stored, batch([("a", "late", 5)]), COMMIT)
    assert result.kept.num_rows == 0 and result.written["v"].to_pylist() == ["late"]


def test_deletes_remove_stored_rows_and_ignore_unknown_keys():
    stored = batch([("a", "x", 1), ("b", "y", 1)]).drop_columns(["_hoodie_op"])
    # The delete operation's records are bare keys, whatever ordering value the input had.
    result = merge(stored, operation_deletes_unordered(batch([("a", None, 0), ("zz", None, 0)], op="D"), EVENT),
                   EVENT)
    assert result.kept["_hoodie_record_key"].to_pylist() == ["b"]
    assert result.written.num_rows == 0 and result.num_deletes == 1


def test_is_deleted_column_deletes_in_an_upsert():
    stored = batch([("a", "x", 1)]).drop_columns(["_hoodie_op"])
    incoming = batch([("a", "x", 2)]).append_column("_hoodie_is_deleted", pa.array([True]))
    result = merge(stored, incoming, EVENT)
    assert result.kept.num_rows == 0 and result.written.num_rows == 0
