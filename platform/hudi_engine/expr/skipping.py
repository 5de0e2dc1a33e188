"""Which file slices a query's filters can skip, from what the metadata table knows about files
(column ranges, record-key locations) and from partition values. No I/O: the caller brings the
statistics, so the rules are tested alone.

Filters are conjunctive ``(column, op, value)`` triples, the form hudi-rs takes (``op`` one of
``= != < <= > >= IN NOT IN IS NULL IS NOT NULL``); the column may be an expression index's function
of one column, as Spark SQL writes it (``("from_unixtime(ts, 'yyyy-MM-dd')", "=", "2024-01-01")``). A slice is skipped only when its statistics
prove no row can match; a slice without statistics for a filtered column is always read.
"""
from __future__ import annotations

import datetime as _dt
import decimal
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import pyarrow as pa

from ..errors import HoodieConfigError, HoodieValidationError
from .functions import FUNCTIONS, call_text, check, evaluate, parse_call, result_type

OPS = ("=", "!=", "<", "<=", ">", ">=", "IN", "NOT IN", "IS NULL", "IS NOT NULL")


@dataclass(frozen=True)
class Predicate:
    """``column op value``, or ``function(column, options) op value`` (``function`` set)."""
    column: str
    op: str
    value: Any = None
    function: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if self.op not in OPS:
            raise HoodieValidationError(
                f"filter on '{self.column}' has operator {self.op!r}; use one of {', '.join(OPS)}")

    @property
    def signature(self):
        """The function and its value options (:func:`.functions.signature`); None on a plain column."""
        from .functions import signature

        return None if self.function is None else signature(self.function, dict(self.options))


def lenient_predicates(filters: Iterable[Sequence] | None, schema: pa.Schema) -> list[Predicate]:
    """The filters :func:`predicates` takes, the others dropped: conditions a query's own text
    carries, which only prune (Spark evaluates the text itself)."""
    out = []
    for f in filters or ():
        try:
            out += predicates([f], schema)
        except HoodieValidationError:
            continue
    return out


def time_zone_safe(preds: Sequence[Predicate], session_time_zone: str | None) -> list[Predicate]:
    """The predicates an index may answer for a Spark session in ``session_time_zone``: all, in UTC
    (the zone expression indexes compute dates in), else those not on a date or time function."""
    from .functions import function, is_utc

    if is_utc(session_time_zone):
        return list(preds)
    return [p for p in preds if p.function is None or not function(p.function).time_zone_dependent]


def plain(preds: Sequence[Predicate]) -> list[Predicate]:
    """The predicates on columns themselves (what partition values and column ranges answer)."""
    return [p for p in preds if p.function is None]


@dataclass(frozen=True)
class ColumnRange:
    """One column of one file, as the column_stats partition stores it."""
    min: Any
    max: Any
    null_count: int
    value_count: int


def predicates(filters: Iterable[Sequence] | None, schema: pa.Schema) -> list[Predicate]:
    """Parse ``(column, op, value)`` triples, turning values to the column's type (hudi-rs takes
    them as strings, so both strings and typed values are accepted)."""
    out = []
    for f in filters or ():
        if isinstance(f, Predicate):
            out.append(f)
            continue
        if len(f) not in (2, 3):
            raise HoodieValidationError(f"a filter is (column, op, value); got {f!r}")
        column, op = f[0], str(f[1]).strip().upper()
        function, options = None, {}
        if column not in schema.names:
            call = parse_call(column)
            if call is None:
                raise HoodieValidationError(
                    f"filter names column '{column}', which the table does not have; columns are "
                    f"{schema.names} (or a function of one: {', '.join(sorted(FUNCTIONS))})")
            function, column, options = call
            if column not in schema.names:
                raise HoodieValidationError(f"filter {f[0]!r} names column '{column}', which the table does not have; "
                                            f"columns are {schema.names}")
        value = f[2] if len(f) == 3 else None
        typ = schema.field(column).type
        if function is not None:
            try:
                check(function, options, column, typ, "column_stats")
            except HoodieConfigError as exc:
                raise HoodieValidationError(f"filter {f[0]!r}: {exc}") from None
            typ = result_type(function, typ)
        if op in ("IN", "NOT IN"):
            values = value.split(",") if isinstance(value, str) else list(value)
            value = tuple(coerce(v, typ, column) for v in values)
        elif op not in ("IS NULL", "IS NOT NULL"):
            value = coerce(value, typ, column)
        out.append(Predicate(column, op, value, function, tuple(sorted(options.items()))))
    return out


def coerce(value: Any, typ: pa.DataType, column: str) -> Any:
    """A filter value as the Python type the column's statistics come in."""
    if value is None:
        return None
    try:
        if pa.types.is_integer(typ):
            return int(value)
        if pa.types.is_floating(typ):
            return float(value)
        if pa.types.is_decimal(typ):
            return decimal.Decimal(str(value))
        if pa.types.is_boolean(typ):
            return value if isinstance(value, bool) else str(value).lower() == "true"
        if pa.types.is_date(typ):
            return value if isinstance(value, _dt.date) else _dt.date.fromisoformat(str(value))
        if pa.types.is_timestamp(typ):
            if isinstance(value, _dt.datetime):
                ts = value
            else:
                ts = _dt.datetime.fromisoformat(str(value))
            if typ.tz is not None and ts.tzinfo is None:
                ts = ts.replace(tzinfo=_dt.timezone.utc)
            return ts
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):
            return str(value)
    except (ValueError, TypeError, decimal.InvalidOperation) as exc:
        raise HoodieValidationError(
            f"filter value {value!r} for column '{column}' is not a {typ}: {exc}") from None
    return value


def may_match(pred: Predicate, stats: ColumnRange | None) -> bool:
    """False only when the file's range proves no row satisfies ``pred``."""
    if stats is None:
        return True
    non_null = stats.value_count - stats.null_count
    if pred.op == "IS NULL":
        return stats.null_count > 0
    if pred.op == "IS NOT NULL":
        return non_null > 0
    if non_null <= 0:
        return False          # only nulls: no comparison is true
    lo, hi = stats.min, stats.max
    if lo is None or hi is None:
        return True
    try:
        return _compare(pred, lo, hi)
    except TypeError:
        return True           # a range of another type than the filter: never skip on doubt


def _compare(pred: Predicate, lo: Any, hi: Any) -> bool:
    v, op = pred.value, pred.op
    if op == "=":
        return lo <= v <= hi
    if op == "!=":
        return not (lo == hi == v)
    if op == "<":
        return lo < v
    if op == "<=":
        return lo <= v
    if op == ">":
        return hi > v
    if op == ">=":
        return hi >= v
    if op == "IN":
        return any(lo <= x <= hi for x in v)
    if op == "NOT IN":
        return not (lo == hi and lo in v)
    return True


def file_may_match(preds: Sequence[Predicate], columns: dict[str, ColumnRange] | None) -> bool:
    if columns is None:
        return True
    return all(may_match(p, columns.get(p.column)) for p in preds)


def key_lookup(preds: Sequence[Predicate], key_column: str | None) -> tuple[str, ...] | None:
    """The record keys an equality/IN filter on the record key pins the query to (None: no such
    filter, every file group stays)."""
    keys: set[str] | None = None
    for p in preds:
        if key_column is None or p.column != key_column or p.op not in ("=", "IN"):
            continue
        these = {str(p.value)} if p.op == "=" else {str(v) for v in p.value}
        keys = these if keys is None else keys & these
    return None if keys is None else tuple(sorted(keys))


def to_expression(pred: Predicate):
    """The same predicate as a Spark column expression, so rows are filtered as files were."""
    from pyspark.sql import functions as F

    v = pred.value
    col = F.col(f"`{pred.column}`") if pred.function is None else F.expr(
        call_text(pred.function, pred.column, dict(pred.options)))
    if pred.op == "IN":
        return col.isin(list(v))
    if pred.op == "NOT IN":
        return ~col.isin(list(v))
    if pred.op in ("IS NULL", "IS NOT NULL"):
        return col.isNull() if pred.op == "IS NULL" else col.isNotNull()
    return {"=": col.__eq__, "!=": col.__ne__, "<": col.__lt__, "<=": col.__le__,
            ">": col.__gt__, ">=": col.__ge__}[pred.op](v)


def to_arrow_expression(pred: Predicate):
    """The same predicate as an Arrow expression, with Spark's null semantics (a comparison with
    null keeps no row, NOT IN included)."""
    import pyarrow.compute as pc

    col, v = pc.field(pred.column), pred.value
    if pred.function is not None:
        raise ValueError("an expression's predicate filters a table (filter_arrow), not an Arrow expression")
    if pred.op == "IN":
        return col.isin(list(v))
    if pred.op == "NOT IN":
        return col.is_valid() & ~col.isin(list(v))
    if pred.op in ("IS NULL", "IS NOT NULL"):
        return col.is_null() if pred.op == "IS NULL" else col.is_valid()
    return {"=": col.__eq__, "!=": col.__ne__, "<": col.__lt__, "<=": col.__le__,
            ">": col.__gt__, ">=": col.__ge__}[pred.op](v)


def filter_arrow(table: pa.Table, pred: Predicate) -> pa.Table:
    """``table``'s rows that satisfy ``pred`` (an expression's evaluated as its index computes it)."""
    if pred.function is None:
        return table.filter(to_arrow_expression(pred))
    values = evaluate(pred.function, dict(pred.options), table.column(pred.column))
    rows = pa.table({"v": values, "i": pa.array(range(table.num_rows), pa.int64())})
    return table.take(rows.filter(to_arrow_expression(Predicate("v", pred.op, pred.value))).column("i"))
