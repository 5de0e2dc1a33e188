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
    def exact_(name, values, options=None):
        return exact(name, values, evaluate(name, options or {}, values))

    assert exact_("from_unixtime", pa.array([253_402_300_799, -62_167_219_200, None], pa.int64()))
    assert not exact_("from_unixtime", pa.array([1_695_159_649_087], pa.int64()))     # millis taken as seconds
    assert not exact_("date_format", pa.array([253_402_300_800 * 10**6], pa.int64()).cast(pa.timestamp("us")),
                      {"format": "yyyy"})
    assert exact_("year", pa.array([1_695_159_649_087 * 1000], pa.timestamp("us"))) and exact_("lower", TEXT)
    # Text that did not parse might be read by Spark's parser: not exact (the file gets no record).
    assert exact_("to_timestamp", pa.array(["2024-01-15 10:30:05", "2024-01-15", None]))
    assert not exact_("to_timestamp", pa.array(["2024-01-15 10:30:05.123"]))
    assert not exact_("unix_timestamp", pa.array(["15/01/2024"]))


def test_dates_moved_by_days_and_text_read_as_timestamps():
    dates = pa.array([dt.date(2024, 2, 28), dt.date(1970, 1, 1), None], pa.date32())
    assert evaluate("date_add", {"days": "2"}, dates).to_pylist() == [dt.date(2024, 3, 1), dt.date(1970, 1, 3), None]
    assert evaluate("date_sub", {"days": "1"}, STAMPS).to_pylist() == [dt.date(2024, 1, 14), dt.date(1969, 12, 30), None]
    utc = dt.timezone.utc
    text = pa.array(["2024-01-15 10:30:05", "2024-01-15T10:30", "2024-01-15", "soon", None])
    assert evaluate("to_timestamp", {}, text).to_pylist() == [
        dt.datetime(2024, 1, 15, 10, 30, 5, tzinfo=utc), dt.datetime(2024, 1, 15, 10, 30, tzinfo=utc),
        dt.datetime(2024, 1, 15, tzinfo=utc), None, None]
    assert evaluate("to_timestamp", {"format": "dd/MM/yyyy"}, pa.array(["15/01/2024"])).to_pylist() == [
        dt.datetime(2024, 1, 15, tzinfo=utc)]
    assert evaluate("to_timestamp", {}, dates).to_pylist()[0] == dt.datetime(2024, 2, 28, tzinfo=utc)
    assert evaluate("to_timestamp", {}, STAMPS).to_pylist()[0] == dt.datetime(2024, 1, 15, 10, 30, 5, 999_999, tzinfo=utc)
    assert result_type("to_timestamp", pa.string()) == pa.timestamp("us", "UTC")


def test_regular_expressions_are_javas():
    words = pa.array(["Hello World", "ÉCOLE 42", "", None])
    assert evaluate("regexp_replace", {"pattern": r"(\w+) (\w+)", "replacement": "$2 $1"}, words).to_pylist() == [
        "World Hello", "É42 COLE", "", None]       # \w is ASCII, as Java's: the match starts after É
    assert evaluate("regexp_replace", {"pattern": "o", "replacement": r"\$0"}, words).to_pylist()[0] == "Hell$0 W$0rld"
    assert evaluate("regexp_replace", {"pattern": "x*", "replacement": "-"}, pa.array(["ab"])).to_pylist() == ["-a-b-"]
    named = {"pattern": r"(?<first>[A-Z])\w*(\d)?", "replacement": "${first}$2."}
    assert evaluate("regexp_replace", named, words).to_pylist()[:2] == ["H. W.", "ÉC. 42"]   # unmatched $2: nothing
    assert evaluate("regexp_replace", {"pattern": r"\Q.*\E", "replacement": "!"}, pa.array(["a.*b"])).to_pylist() == ["a!b"]
    assert evaluate("regexp_extract", {"pattern": r"(\d+)", "idx": "1"}, words).to_pylist() == ["", "42", "", None]
    assert evaluate("regexp_extract", {"pattern": "W(x)?", "idx": "1"}, words).to_pylist()[0] == ""   # group unset
    assert evaluate("regexp_extract", {"pattern": r"o\w", "idx": "0"}, words).to_pylist()[0] == "or"
    # Java's $ digits: $12 is group 1 then "2" when the pattern has fewer than 12 groups.
    assert evaluate("regexp_replace", {"pattern": "(l)", "replacement": "$12"}, pa.array(["al"])).to_pylist() == ["al2"]


def test_regular_expressions_and_other_refusals():
    def refused(name, options, match, typ=pa.string()):
        with pytest.raises(HoodieConfigError, match=match):
            check(name, {"expr": name, **options}, "c", typ, "column_stats")

    refused("regexp_replace", {"pattern": r"\p{L}+", "replacement": ""}, r"\\p \(a Unicode or POSIX class\)")
    refused("regexp_replace", {"pattern": "[a-z&&[^e]]", "replacement": ""}, "no nested classes")
    refused("regexp_replace", {"pattern": "(", "replacement": ""}, "cannot be used by an expression index")
    refused("regexp_replace", {"pattern": "a"}, "needs option replacement")
    refused("regexp_replace", {"pattern": "(a)", "replacement": "$2"}, "there is no group 2")
    refused("regexp_replace", {"pattern": "(a)", "replacement": "${x}"}, "no group named 'x'")
    refused("regexp_replace", {"pattern": "a", "replacement": "$"}, "a dollar sign at the end")
    refused("regexp_extract", {"pattern": "(a)", "idx": "2"}, "has 1 group\\(s\\); use 0 .* to 1")
    refused("date_add", {"days": "two"}, "days='two' of date_add must be an integer", pa.date32())
    refused("date_add", {}, "needs option days", pa.date32())
    refused("date_sub", {"days": "1"}, "takes a timestamp or date column", pa.string())
    with pytest.raises(HoodieConfigError, match="split gives an array"):
        check("split", {"expr": "split", "pattern": ","}, "c", pa.string(), "column_stats")


def test_calls_are_written_with_spark_sql_escapes_and_read_as_written():
    assert call_text("regexp_extract", "url", {"pattern": r"https?://([^/]+)\.com", "idx": "1"}) == (
        r"regexp_extract(`url`, 'https?://([^/]+)\\.com', 1)")
    assert parse_call("date_add(d, -3)") == ("date_add", "d", {"days": "-3"})
    assert parse_call("regexp_extract(url, '([a-z]+)', 1)") == ("regexp_extract", "url", {"pattern": "([a-z]+)", "idx": "1"})
    assert parse_call(r"regexp_extract(url, '(\d+)', 1)") == ("regexp_extract", "url", {"pattern": r"(\d+)", "idx": "1"})
