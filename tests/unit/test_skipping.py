"""Data skipping and record-key pruning rules (pure): a file is skipped only when its statistics
prove no row can match."""
import datetime as dt
import decimal

import pyarrow as pa
import pytest

from hudi_engine.errors import HoodieValidationError
from hudi_engine.expr.skipping import ColumnRange, Predicate, file_may_match, key_lookup, may_match, predicates

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("price", pa.float64()), ("day", pa.date32()),
                    ("amount", pa.decimal128(10, 2)), ("ts", pa.timestamp("us", tz="UTC"))])
R = ColumnRange(10, 20, 0, 100)


@pytest.mark.parametrize("op,value,expected", [
    ("=", 10, True), ("=", 20, True), ("=", 9, False), ("=", 21, False),
    ("!=", 15, True), ("<", 10, False), ("<", 11, True), ("<=", 10, True), ("<=", 9, False),
    (">", 20, False), (">", 19, True), (">=", 20, True), (">=", 21, False),
    ("IN", (1, 2, 30), False), ("IN", (1, 15), True), ("NOT IN", (10, 20), True),
])
def test_ranges_rule_out_only_what_they_prove(op, value, expected):
    assert may_match(Predicate("id", op, value), R) is expected


def test_constant_file_and_not_equal():
    one = ColumnRange(5, 5, 0, 10)
    assert not may_match(Predicate("id", "!=", 5), one)
    assert not may_match(Predicate("id", "NOT IN", (5, 6)), one)
    assert may_match(Predicate("id", "!=", 6), one)


def test_nulls():
    only_nulls = ColumnRange(None, None, 10, 10)
    assert may_match(Predicate("id", "IS NULL"), only_nulls)
    assert not may_match(Predicate("id", "IS NOT NULL"), only_nulls)
    assert not may_match(Predicate("id", "=", 1), only_nulls)
    no_nulls = ColumnRange(1, 2, 0, 10)
    assert not may_match(Predicate("id", "IS NULL"), no_nulls)
    assert may_match(Predicate("id", "IS NOT NULL"), no_nulls)


def test_unknown_stats_and_type_mismatch_never_skip():
    assert may_match(Predicate("id", "=", 1), None)
    assert may_match(Predicate("name", "=", "x"), ColumnRange(1, 2, 0, 5))      # str vs int: keep
    assert file_may_match([Predicate("id", "=", 1)], None)
    assert file_may_match([Predicate("id", "=", 1)], {"other": R})


def test_all_filters_must_allow_a_file():
    stats = {"id": R, "price": ColumnRange(1.0, 2.0, 0, 100)}
    assert file_may_match([Predicate("id", "=", 15), Predicate("price", "<", 1.5)], stats)
    assert not file_may_match([Predicate("id", "=", 15), Predicate("price", ">", 2.5)], stats)


def test_values_are_parsed_to_the_column_type():
    preds = predicates([("id", "=", "15"), ("price", ">=", "1.5"), ("day", "<", "2024-01-02"),
                        ("amount", "=", "3.10"), ("ts", ">", "2024-01-01T00:00:00"), ("name", "in", "a,b"),
                        ("id", "is not null")], SCHEMA)
    assert preds[0] == Predicate("id", "=", 15)
    assert preds[1].value == 1.5
    assert preds[2].value == dt.date(2024, 1, 2)
    assert preds[3].value == decimal.Decimal("3.10")
    assert preds[4].value == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert preds[5] == Predicate("name", "IN", ("a", "b"))
    assert preds[6] == Predicate("id", "IS NOT NULL")


def test_bad_filters_name_the_problem():
    with pytest.raises(HoodieValidationError, match="'nope'"):
        predicates([("nope", "=", 1)], SCHEMA)
    with pytest.raises(HoodieValidationError, match="'id'.*not a int64"):
        predicates([("id", "=", "abc")], SCHEMA)
    with pytest.raises(HoodieValidationError, match="operator 'LIKE'"):
        predicates([("name", "like", "a%")], SCHEMA)


def test_key_lookup_takes_equalities_on_the_key_column():
    assert key_lookup([Predicate("id", "=", 5)], "id") == ("5",)
    assert key_lookup([Predicate("id", "IN", (5, 6)), Predicate("id", "IN", (6, 7))], "id") == ("6",)
    assert key_lookup([Predicate("id", ">", 5)], "id") is None
    assert key_lookup([Predicate("name", "=", "x")], "id") is None
