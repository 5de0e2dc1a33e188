"""The functions an expression index applies to its column (Hudi 1.x's ``ExpressionIndexSparkFunctions``),
evaluated in Arrow with Spark SQL's results for the same inputs.

Names and options are Hudi's (``expr``, ``format``, ``pos``, ``len``, ``trimString``, ``days``,
``pattern``, ``replacement``, ``idx``; no ``expr`` is Hudi's ``identity``, the column itself): an index
``USING column_stats(ts) OPTIONS(expr='from_unixtime', format='yyyy-MM-dd')`` stores, per file, the
range of ``from_unixtime(ts, 'yyyy-MM-dd')``. Date and time functions compute in UTC (Spark's
``spark.sql.session.timeZone`` = UTC); readers whose session has another zone do not prune on them.
Datetime patterns take the letters ``y M d H h m s a D`` and quoted literals, the ones that have a
fixed-width form in Arrow's ``strftime``; anything else is refused when the index is created.
Regular expressions are Java's, run by ``java_regex``. Text that does not parse is null, as in
Spark without ANSI mode; a file where Spark might still read a value (:func:`exact`) is never
skipped. Pure: arrays in, arrays out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieConfigError
from .java_regex import compile_java, replacement

EXPR = "expr"
FORMAT = "format"
POSITION = "pos"
LENGTH = "len"
TRIM_STRING = "trimString"
DAYS = "days"
PATTERN = "pattern"
REPLACEMENT = "replacement"
GROUP_INDEX = "idx"
INTEGER_OPTIONS = (POSITION, LENGTH, DAYS, GROUP_INDEX)
BLOOM_OPTIONS = ("filtertype", "numentries", "fpp", "maxentries")   # Hudi's bloom_filters index options
DEFAULT_TIME_FORMAT = "yyyy-MM-dd HH:mm:ss"


@dataclass(frozen=True)
class Function:
    """One supported function: its options (``required`` among them), the input types it takes
    (a test on the Arrow type, named for the message) and its result type."""
    name: str
    options: tuple[str, ...]
    required: tuple[str, ...]
    accepts: Callable[[pa.DataType], bool]
    accepts_text: str
    result: Callable[[pa.DataType], pa.DataType]
    apply: Callable[[pa.Array, Mapping[str, str]], pa.Array]
    time_zone_dependent: bool = False
    arguments: tuple[str, ...] = ()             # the options a SQL call gives after the column, in order
    defaults: tuple[tuple[str, str], ...] = ()  # what an option left out means


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_temporal(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) or pa.types.is_date(t)


# --- datetime patterns -----------------------------------------------------------------------------
_PATTERN_LETTERS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "hh": "%I", "mm": "%M",
                    "ss": "%S", "a": "%p", "DDD": "%j"}
_TOKEN = re.compile(r"'[^']*'|([A-Za-z])\1*|[^A-Za-z']+")


def strftime_pattern(pattern: str) -> str:
    """A Spark datetime pattern as Arrow's ``strftime`` format; unsupported letters are refused."""
    out = []
    for m in _TOKEN.finditer(pattern):
        token = m.group(0)
        if token.startswith("'"):
            out.append(token[1:-1].replace("%", "%%") if token != "''" else "'")
        elif token[0].isalpha():
            if token not in _PATTERN_LETTERS:
                raise HoodieConfigError(
                    f"datetime pattern {pattern!r}: '{token}' is not supported by expression indexes; use "
                    f"{', '.join(_PATTERN_LETTERS)} and quoted literals (e.g. 'yyyy-MM-dd HH:mm:ss')")
            out.append(_PATTERN_LETTERS[token])
        else:
            out.append(token.replace("%", "%%"))
    return "".join(out)


def _utc_seconds(values: pa.Array) -> pa.Array:
    """Timestamps or dates as UTC wall-clock timestamps in whole seconds (floored, as Spark's)."""
    t = values.type
    if pa.types.is_date(t):
        return pc.cast(pc.cast(values, pa.date32()), pa.timestamp("s"))
    if t.tz is not None:
        values = pc.cast(values, pa.timestamp(t.unit, "UTC")).cast(pa.timestamp(t.unit))
    return pc.cast(pc.floor_temporal(values, unit="second"), pa.timestamp("s"))


def _format(values: pa.Array, pattern: str) -> pa.Array:
    return pc.strftime(_utc_seconds(values), format=strftime_pattern(pattern))


def _from_unixtime(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    seconds = pc.cast(pc.cast(values, pa.int64()), pa.timestamp("s"))
    return pc.strftime(seconds, format=strftime_pattern(options.get(FORMAT, DEFAULT_TIME_FORMAT)))


def _date_format(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    return _format(values, options[FORMAT])


def _parse(values: pa.Array, pattern: str) -> pa.Array:
    """Strings read with ``pattern`` (unparsable: null) as UTC timestamps in seconds."""
    return pc.strptime(values, format=strftime_pattern(pattern), unit="s", error_is_null=True)


def _unix_timestamp(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    if _is_string(values.type):
        stamps = _parse(values, options.get(FORMAT, DEFAULT_TIME_FORMAT))
    else:
        stamps = _utc_seconds(values)
    return pc.cast(stamps, pa.int64())


def _to_date(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    if _is_string(values.type):
        stamps = _parse(values, options.get(FORMAT, "yyyy-MM-dd"))
    else:
        stamps = _utc_seconds(values)
    return pc.cast(pc.cast(stamps, pa.int64()).cast(pa.timestamp("s")), pa.date32())


def _field(extract: Callable[[pa.Array], pa.Array]) -> Callable[[pa.Array, Mapping[str, str]], pa.Array]:
    return lambda values, options: pc.cast(extract(_utc_seconds(values)), pa.int32())


def _trim(kind: str) -> Callable[[pa.Array, Mapping[str, str]], pa.Array]:
    fn = {"trim": pc.utf8_trim, "ltrim": pc.utf8_ltrim, "rtrim": pc.utf8_rtrim}[kind]
    # Spark trims the space character only (not tabs or newlines), or the given characters.
    return lambda values, options: fn(values.cast(pa.string()), characters=options.get(TRIM_STRING, " "))


def _substring(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    """``substring(s, pos, len)`` as Spark's ``UTF8String.substringSQL``: 1-based, 0 as 1, a negative
    position counted from the end."""
    pos, length = int(options[POSITION]), int(options[LENGTH])
    values = values.cast(pa.string())
    if length <= 0:
        return pc.if_else(pc.is_null(values), pa.scalar(None, pa.string()), "")
    if pos > 0:
        return pc.utf8_slice_codeunits(values, start=pos - 1, stop=pos - 1 + length)
    if pos == 0:
        return pc.utf8_slice_codeunits(values, start=0, stop=length)
    end = pos + length
    return pc.utf8_slice_codeunits(values, start=pos, stop=end if end < 0 else 2**62)


def _to_timestamp(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    """Spark's ``to_timestamp``: text read with ``format``, or without one in the ISO forms Spark's
    cast reads most often (others are null here, and :func:`exact` says so); dates at midnight."""
    if _is_string(values.type):
        if FORMAT in options:
            stamps = _parse(values, options[FORMAT])
        else:
            stamps = pc.coalesce(*[pc.strptime(values, format=f, unit="s", error_is_null=True) for f in _ISO_FORMS])
        return pc.cast(pc.cast(stamps, pa.timestamp("us")), _UTC_MICROS)
    if pa.types.is_date(values.type):
        return pc.cast(pc.cast(_utc_seconds(values), pa.timestamp("us")), _UTC_MICROS)
    return pc.cast(pc.cast(values, pa.timestamp("us", values.type.tz)), _UTC_MICROS)


_UTC_MICROS = pa.timestamp("us", "UTC")
_ISO_FORMS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d")


def _days(sign: int) -> Callable[[pa.Array, Mapping[str, str]], pa.Array]:
    """``date_add`` / ``date_sub``: the date (a timestamp's in UTC) moved by ``days``."""
    def shift(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
        dates = pc.cast(values, pa.date32()) if pa.types.is_date(values.type) else _to_date(values, {})
        moved = pc.add_checked(pc.cast(dates, pa.int32()), pa.scalar(sign * int(options[DAYS]), pa.int32()))
        return pc.cast(moved, pa.date32())
    return shift


def _per_value(values: pa.Array, fn: Callable[[str], str]) -> pa.Array:
    """``fn`` over the distinct strings of ``values`` (nulls stay null)."""
    encoded = pc.dictionary_encode(values.cast(pa.string()))
    mapped = pa.array([fn(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.take(mapped, encoded.indices)


def _regexp_replace(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    pattern = compile_java(options[PATTERN])
    expand = replacement(options[PATTERN], options[REPLACEMENT])
    return _per_value(values, lambda s: pattern.sub(expand, s))


def _regexp_extract(values: pa.Array, options: Mapping[str, str]) -> pa.Array:
    """Spark's ``regexp_extract``: the group of the first match, "" without a match or when the
    group took no part in it."""
    pattern, group = compile_java(options[PATTERN]), int(options[GROUP_INDEX])

    def extract(s: str) -> str:
        m = pattern.search(s)
        return (m.group(group) or "") if m is not None else ""
    return _per_value(values, extract)


def _string_result(_: pa.DataType) -> pa.DataType:
    return pa.string()


def _int_result(_: pa.DataType) -> pa.DataType:
    return pa.int32()


_TIME = "timestamp or date"
_STR = "string"
_FUNCTIONS = [
    Function("from_unixtime", (EXPR, FORMAT), (), pa.types.is_integer, "integer (seconds since the epoch)",
             _string_result, _from_unixtime, True, (FORMAT,), ((FORMAT, DEFAULT_TIME_FORMAT),)),
    Function("date_format", (EXPR, FORMAT), (FORMAT,), _is_temporal, _TIME, _string_result, _date_format, True,
             (FORMAT,)),
    Function("unix_timestamp", (EXPR, FORMAT), (), lambda t: _is_temporal(t) or _is_string(t), f"{_TIME} or string",
             lambda _: pa.int64(), _unix_timestamp, True, (FORMAT,), ((FORMAT, DEFAULT_TIME_FORMAT),)),
    Function("to_date", (EXPR, FORMAT), (), lambda t: _is_temporal(t) or _is_string(t), f"{_TIME} or string",
             lambda _: pa.date32(), _to_date, True, (FORMAT,), ((FORMAT, "yyyy-MM-dd"),)),
    Function("year", (EXPR,), (), _is_temporal, _TIME, _int_result, _field(pc.year), True),
    Function("month", (EXPR,), (), _is_temporal, _TIME, _int_result, _field(pc.month), True),
    Function("day", (EXPR,), (), _is_temporal, _TIME, _int_result, _field(pc.day), True),
    Function("hour", (EXPR,), (), _is_temporal, _TIME, _int_result, _field(pc.hour), True),
    Function("identity", (EXPR,), (), lambda t: not pa.types.is_nested(t), "primitive", lambda t: t,
             lambda values, options: values),
    Function("lower", (EXPR,), (), _is_string, _STR, _string_result,
             lambda values, options: pc.utf8_lower(values.cast(pa.string()))),
    Function("upper", (EXPR,), (), _is_string, _STR, _string_result,
             lambda values, options: pc.utf8_upper(values.cast(pa.string()))),
    Function("trim", (EXPR, TRIM_STRING), (), _is_string, _STR, _string_result, _trim("trim"),
             defaults=((TRIM_STRING, " "),)),
    Function("ltrim", (EXPR, TRIM_STRING), (), _is_string, _STR, _string_result, _trim("ltrim"),
             defaults=((TRIM_STRING, " "),)),
    Function("rtrim", (EXPR, TRIM_STRING), (), _is_string, _STR, _string_result, _trim("rtrim"),
             defaults=((TRIM_STRING, " "),)),
    Function("substring", (EXPR, POSITION, LENGTH), (POSITION, LENGTH), _is_string, _STR, _string_result, _substring,
             arguments=(POSITION, LENGTH)),
    Function("length", (EXPR,), (), _is_string, _STR, _int_result,
             lambda values, options: pc.cast(pc.utf8_length(values.cast(pa.string())), pa.int32())),
    Function("to_timestamp", (EXPR, FORMAT), (), lambda t: _is_temporal(t) or _is_string(t), f"{_TIME} or string",
             lambda _: _UTC_MICROS, _to_timestamp, True, (FORMAT,)),
    Function("date_add", (EXPR, DAYS), (DAYS,), _is_temporal, _TIME, lambda _: pa.date32(), _days(1), True, (DAYS,)),
    Function("date_sub", (EXPR, DAYS), (DAYS,), _is_temporal, _TIME, lambda _: pa.date32(), _days(-1), True, (DAYS,)),
    Function("regexp_replace", (EXPR, PATTERN, REPLACEMENT), (PATTERN, REPLACEMENT), _is_string, _STR,
             _string_result, _regexp_replace, arguments=(PATTERN, REPLACEMENT)),
    Function("regexp_extract", (EXPR, PATTERN, GROUP_INDEX), (PATTERN, GROUP_INDEX), _is_string, _STR, _string_result,
             _regexp_extract, arguments=(PATTERN, GROUP_INDEX)),
]
FUNCTIONS = {f.name: f for f in _FUNCTIONS}
# Hudi's functions that have no single value per row to index here.
_NOT_INDEXABLE = {"split": "split gives an array, and column_stats and bloom_filters hold single values; index "
                           "regexp_extract(column, pattern, idx) of the part you filter on instead"}


def function(name: str) -> Function:
    found = FUNCTIONS.get((name or "").lower())
    if found is None and (name or "").lower() in _NOT_INDEXABLE:
        raise HoodieConfigError(f"expression index function {name}: {_NOT_INDEXABLE[name.lower()]}")
    if found is None:
        raise HoodieConfigError(f"expression index function {name!r} is not supported; use one of "
                                f"{', '.join(sorted(FUNCTIONS))} (OPTIONS(expr='<function>', ...))")
    return found


def check(name: str, options: Mapping[str, str], column: str, typ: pa.DataType, index_type: str) -> Function:
    """Refuse what Hudi refuses (an unknown function or option) and what would fail on the data (a
    missing option, a column of a type the function does not take, a bad pattern or number)."""
    fn = function(name)
    valid = set(fn.options) | (set(BLOOM_OPTIONS) if index_type == "bloom_filters" else set())
    unknown = sorted(set(options) - valid)
    if unknown:
        raise HoodieConfigError(f"options {', '.join(unknown)} are not valid for function {fn.name}; it takes "
                                f"{', '.join(sorted(valid))}")
    missing = [o for o in fn.required if options.get(o) is None]
    if missing:
        raise HoodieConfigError(f"function {fn.name} needs option {', '.join(missing)} "
                                f"(e.g. OPTIONS(expr='{fn.name}', {missing[0]}='...'))")
    if not fn.accepts(typ):
        raise HoodieConfigError(f"function {fn.name} takes a {fn.accepts_text} column; column '{column}' is {typ}: "
                                "index another column or use another function")
    result = fn.result(typ)
    if index_type == "bloom_filters" and not (_is_string(result) or pa.types.is_integer(result)
                                              or pa.types.is_date(result)):
        raise HoodieConfigError(f"a bloom_filters index holds strings, integers or dates; {fn.name}({column}) is "
                                f"{result}: use column_stats, or a function giving one of those")
    for option in INTEGER_OPTIONS:
        if option in options:
            try:
                int(options[option])
            except ValueError:
                raise HoodieConfigError(f"option {option}={options[option]!r} of {fn.name} must be an integer") from None
    if FORMAT in options:
        strftime_pattern(options[FORMAT])
    if PATTERN in options:
        groups = compile_java(options[PATTERN]).groups
        if fn.name == "regexp_replace":
            replacement(options[PATTERN], options[REPLACEMENT])
        if fn.name == "regexp_extract" and not 0 <= int(options[GROUP_INDEX]) <= groups:
            raise HoodieConfigError(f"option idx={options[GROUP_INDEX]} of regexp_extract: pattern "
                                    f"{options[PATTERN]!r} has {groups} group(s); use 0 (the whole match) to {groups}")
    return fn


def evaluate(name: str, options: Mapping[str, str], values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The function over ``values`` (nulls stay null)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return function(name).apply(values, options)


def result_type(name: str, input_type: pa.DataType) -> pa.DataType:
    return function(name).result(input_type)


def signature(name: str, options: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What decides the values: the function and its value options, defaults filled in. A query's
    expression and an index's match when their signatures do."""
    fn = function(name)
    effective = {**dict(fn.defaults), **{k: str(v) for k, v in options.items() if k not in (EXPR, *BLOOM_OPTIONS)}}
    return fn.name, tuple(sorted(effective.items()))


_CALL = re.compile(r"^\s*(\w+)\s*\(\s*`?([\w.]+?)`?\s*((?:,\s*(?:'(?:[^']|'')*'|-?\d+)\s*)*)\)\s*$")
_ARG = re.compile(r"'((?:[^']|'')*)'|(-?\d+)")


def parse_call(text: str) -> tuple[str, str, dict[str, str]] | None:
    """``from_unixtime(ts, 'yyyy-MM-dd')`` → (function, column, options); None for anything that is
    not a supported function of one column with literal arguments. A quoted argument is taken as
    written (``''`` for a quote; a backslash is itself, unlike in Spark SQL)."""
    m = _CALL.match(text)
    if m is None or m.group(1).lower() not in FUNCTIONS:
        return None
    fn = FUNCTIONS[m.group(1).lower()]
    args = [number or quoted.replace("''", "'") for quoted, number in _ARG.findall(m.group(3))]
    if len(args) > len(fn.arguments) or any(o not in dict(zip(fn.arguments, args)) for o in fn.required):
        return None
    return fn.name, m.group(2).rsplit(".", 1)[-1], dict(zip(fn.arguments, args))


def call_text(name: str, column: str, options: Mapping[str, str]) -> str:
    """The Spark SQL call of a function, its string arguments escaped as Spark SQL reads them."""
    fn = function(name)
    args = [f"`{column}`"]
    for option in fn.arguments:
        if option in options:
            v = str(options[option])
            args.append(v if option in INTEGER_OPTIONS else "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'")
    return f"{fn.name}({', '.join(args)})"


def is_utc(zone: str | None) -> bool:
    """Whether a session time zone (``spark.sql.session.timeZone``) is UTC all year, the zone the
    date and time functions compute in."""
    import datetime as dt
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not zone:
        return False
    if re.fullmatch(r"(?:UTC|GMT|Z)?[+-]?0?0(?::?00)?|UTC|GMT|Z", zone.strip(), re.IGNORECASE):
        return True
    try:
        info = ZoneInfo(zone.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return all(info.utcoffset(dt.datetime(2024, month, 1)) == dt.timedelta(0) for month in (1, 7))


_FIRST, _LAST = -62_167_219_200, 253_402_300_799      # 0000-01-01 and 9999-12-31 23:59:59, in epoch seconds
_FORMATTED = ("from_unixtime", "date_format")
_PARSING = ("unix_timestamp", "to_date", "to_timestamp")


def exact(name: str, source: pa.Array | pa.ChunkedArray, result: pa.Array) -> bool:
    """Whether ``result`` (:func:`evaluate` over ``source``) is Spark's: formatting functions only for
    years 0 to 9999 (Spark writes ``+10000``, Arrow's ``strftime`` wraps around); functions reading
    text only when every text parsed (one Spark's parser might read is null here)."""
    fn = function(name).name
    if isinstance(source, pa.ChunkedArray):
        source = source.combine_chunks()
    if fn in _PARSING and _is_string(source.type):
        return result.null_count == source.null_count
    if fn not in _FORMATTED or len(source) == source.null_count:
        return True
    seconds = pc.cast(source, pa.int64()) if pa.types.is_integer(source.type) else pc.cast(_utc_seconds(source), pa.int64())
    bounds = pc.min_max(seconds)
    return _FIRST <= bounds["min"].as_py() and bounds["max"].as_py() <= _LAST
