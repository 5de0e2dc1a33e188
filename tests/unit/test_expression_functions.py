"""Expression-index functions in Arrow (the values are Spark SQL's for the same inputs, checked
against Spark itself in tests/integration/test_expression_index.py), their refusals, and the
parsing of a query's function calls."""
import datetime as dt

import pyarrow as pa
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.expr.functions import (
    call_text,
    check,
    evaluate,
    exact,
    is_utc,
    parse_call,
    result_type,
    signature,
    strftime_pattern,
)

SECONDS = pa.array([1_695_159_649, 0, -1, None], pa.int64())
STAMPS = pa.array([dt.datetime(2024, 1, 15, 10, 30, 5, 999_999), dt.datetime(1969, 12, 31, 23, 59, 59, 500_000), None],
                  pa.timestamp("us", "UTC"))
TEXT = pa.array(["  Ab c ", "xyz", None, ""])


def test_date_and_time_functions_compute_in_utc():
    assert evaluate("from_unixtime", {"format": "yyyy-MM-dd"}, SECONDS).to_pylist() == [
        "2023-09-19", "1970-01-01", "1969-12-31", None]
    assert evaluate("from_unixtime", {}, SECONDS).to_pylist()[:3] == [
        "2023-09-19 21:40:49", "1970-01-01 00:00:00", "1969-12-31 23:59:59"]
    assert evaluate("date_format", {"format": "yyyy/MM/dd'T'HH"}, STAMPS).to_pylist() == [
        "2024/01/15T10", "1969/12/31T23", None]
    assert [evaluate(f, {}, STAMPS).to_pylist() for f in ("year", "month", "day", "hour")] == [
        [2024, 1969, None], [1, 12, None], [15, 31, None], [10, 23, None]]
    # Floored to the second, as Spark's: half a second before the epoch is -1.
    assert evaluate("unix_timestamp", {}, STAMPS).to_pylist() == [1_705_314_605, -1, None]
    assert evaluate("to_date", {}, STAMPS).to_pylist() == [dt.date(2024, 1, 15), dt.date(1969, 12, 31), None]
    parsed = pa.array(["2024-01-15 10:30:05", "not a time", None])
    assert evaluate("unix_timestamp", {}, parsed).to_pylist() == [1_705_314_605, None, None]
    assert evaluate("hour", {}, pa.array([dt.date(2024, 1, 15)], pa.date32())).to_pylist() == [0]


def test_string_functions_follow_spark():
    assert evaluate("lower", {}, TEXT).to_pylist() == ["  ab c ", "xyz", None, ""]
    assert evaluate("upper", {}, TEXT).to_pylist() == ["  AB C ", "XYZ", None, ""]
    assert evaluate("trim", {}, pa.array([" \ta \t ", None])).to_pylist() == ["\ta \t", None]   # spaces only
    assert evaluate("ltrim", {}, TEXT).to_pylist()[0] == "Ab c "
    assert evaluate("rtrim", {"trimString": " c"}, TEXT).to_pylist()[0] == "  Ab"
    assert evaluate("length", {}, TEXT).to_pylist() == [7, 3, None, 0]
    # substringSQL: 1-based, 0 as 1, negative from the end (a start before the string still counts length).
    assert evaluate("substring", {"pos": "2", "len": "2"}, TEXT).to_pylist() == [" A", "yz", None, ""]
    assert evaluate("substring", {"pos": "0", "len": "2"}, TEXT).to_pylist()[1] == "xy"
    assert evaluate("substring", {"pos": "-2", "len": "5"}, TEXT).to_pylist()[1] == "yz"
    assert evaluate("substring", {"pos": "-5", "len": "4"}, TEXT).to_pylist()[1] == "xy"
    assert evaluate("substring", {"pos": "1", "len": "-1"}, TEXT).to_pylist() == ["", "", None, ""]
    assert result_type("length", pa.string()) == pa.int32() and result_type("to_date", pa.string()) == pa.date32()


def test_refusals_name_what_to_do():
    with pytest.raises(HoodieConfigError, match="'soundex' is not supported; use one of .*from_unixtime"):
        check("soundex", {"expr": "soundex"}, "c", pa.string(), "column_stats")
    with pytest.raises(HoodieConfigError, match="needs option format"):
        check("date_format", {"expr": "date_format"}, "ts", pa.timestamp("us"), "column_stats")
    with pytest.raises(HoodieConfigError, match="takes a timestamp or date column; column 'name' is string"):
        check("year", {"expr": "year"}, "name", pa.string(), "column_stats")
    with pytest.raises(HoodieConfigError, match="options days are not valid for function lower"):
        check("lower", {"expr": "lower", "days": "1"}, "c", pa.string(), "column_stats")
    with pytest.raises(HoodieConfigError, match="pos='x' of substring must be an integer"):
        check("substring", {"expr": "substring", "pos": "x", "len": "1"}, "c", pa.string(), "column_stats")
    with pytest.raises(HoodieConfigError, match="'Q' is not supported"):
        strftime_pattern("yyyy-Q")
    check("lower", {"expr": "lower", "fpp": "0.01"}, "c", pa.string(), "bloom_filters")     # bloom options allowed
    with pytest.raises(HoodieConfigError, match="a bloom_filters index holds strings, integers or dates"):
        check("identity", {}, "fare", pa.float64(), "bloom_filters")
    check("identity", {}, "fare", pa.float64(), "column_stats")
    assert strftime_pattern("yyyy-MM-dd'T'HH:mm:ss 'at' a") == "%Y-%m-%dT%H:%M:%S at %p"


def test_calls_parse_and_match_an_index_by_signature():
    assert parse_call("FROM_UNIXTIME(t.ts, 'yyyy-MM-dd')") == ("from_unixtime", "ts", {"format": "yyyy-MM-dd"})
    assert parse_call("substring(`s`, -2, 3)") == ("substring", "s", {"pos": "-2", "len": "3"})
    assert parse_call("date_format(ts)") is None            # its format is required
    assert parse_call("lower(upper(s))") is None and parse_call("concat(a, b)") is None
    assert call_text("from_unixtime", "ts", {"expr": "from_unixtime", "format": "yyyy"}) == "from_unixtime(`ts`, 'yyyy')"
    # The default format is the one an index without the option uses; bloom and expr options do not count.
    assert signature("from_unixtime", {"expr": "from_unixtime"}) == signature("from_unixtime",
                                                                              {"format": "yyyy-MM-dd HH:mm:ss"})
    assert signature("lower", {"expr": "lower", "fpp": "0.1"}) == signature("lower", {})
    assert signature("from_unixtime", {"format": "yyyy"}) != signature("from_unixtime", {})


def test_only_a_utc_session_prunes_on_dates():
    assert all(is_utc(z) for z in ("UTC", "Etc/UTC", "GMT", "+00:00", "Z"))
    assert not is_utc("Europe/London") and not is_utc("America/New_York") and not is_utc("+01:00")
    assert not is_utc(None)


def test_formatting_is_exact_for_years_up_to_9999_only():
    assert exact("from_unixtime", pa.array([253_402_300_799, -62_167_219_200, None], pa.int64()))
    assert not exact("from_unixtime", pa.array([1_695_159_649_087], pa.int64()))     # millis taken as seconds
    assert not exact("date_format", pa.array([253_402_300_800 * 10**6], pa.int64()).cast(pa.timestamp("us")))
    assert exact("year", pa.array([1_695_159_649_087 * 1000], pa.timestamp("us"))) and exact("lower", TEXT)
