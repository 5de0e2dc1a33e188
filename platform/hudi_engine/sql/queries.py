"""Reads of Hudi tables inside any statement: a table name, ``TIMESTAMP AS OF`` / ``VERSION AS OF``
time travel, and Hudi's ``hudi_table_changes(table, 'latest_state' | 'cdc', begin[, end])``. Each
becomes a view over ``read()`` (the engine's reader, with its pruning and merged scans); this
module only plans which view stands where. Pure."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from sqlglot import exp

from .. import config as C
from ..errors import HoodieConfigError
from ..expr.functions import parse_call
from .statements import DIALECT

TABLE_CHANGES = "hudi_table_changes"
_FORMATS = ("latest_state", "cdc")


@dataclass(frozen=True)
class TableRead:
    """What one view reads; ``filters``: the WHERE's conditions on functions of its columns (what
    an expression index answers), as ``read`` takes them, for pruning (Spark still filters rows)."""
    path: str
    options: dict[str, str] = field(default_factory=dict)
    filters: tuple[tuple, ...] = ()


def plan_reads(tree: exp.Expression, locate: Callable[[str], str | None], view_prefix: str
               ) -> tuple[str, dict[str, TableRead]] | None:
    """The statement with each Hudi read replaced by a view, and what each view reads; None when the
    statement reads no Hudi table. ``locate`` gives a Hudi table's base path, None for other names."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    views: dict[str, TableRead] = {}
    for table in list(tree.find_all(exp.Table)):
        if table.find_ancestor(exp.Query) is None:      # a statement's target (DESCRIBE t, INSERT INTO t)
            continue
        found = _read_of(table, ctes, locate)
        if found is None:
            continue
        found = replace(found, filters=expression_filters(table))
        view = f"{view_prefix}{len(views)}"
        views[view] = found
        alias = table.alias or (table.name if not isinstance(table.this, exp.Anonymous) else TABLE_CHANGES)
        table.replace(exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return (tree.sql(DIALECT), views) if views else None


def _read_of(table: exp.Table, ctes: set[str], locate: Callable[[str], str | None]) -> TableRead | None:
    if isinstance(table.this, exp.Anonymous):
        return _table_changes(table.this, locate) if table.this.name.lower() == TABLE_CHANGES else None
    name = ".".join(p.name for p in table.parts)
    if not table.db and name.lower() in ctes:
        return None
    path = locate(name)
    version = table.args.get("version")
    if version is None:
        return None if path is None else TableRead(path)
    if path is None:
        raise HoodieConfigError(f"{version.sql(DIALECT)} on {name}: time travel reads Hudi tables only, "
                                f"and {name} is not one in this session's catalog")
    return TableRead(path, {C.AS_OF_INSTANT.key: _constant(version.expression, name)})


def _table_changes(call: exp.Anonymous, locate: Callable[[str], str | None]) -> TableRead:
    args = [_constant(a, TABLE_CHANGES) for a in call.expressions]
    usage = (f"{TABLE_CHANGES}('<table or path>', 'latest_state' | 'cdc', '<begin instant>' | 'earliest'"
             "[, '<end instant>'])")
    if len(args) not in (3, 4):
        raise HoodieConfigError(f"{TABLE_CHANGES} takes 3 or 4 arguments: {usage}")
    name, fmt, begin = args[:3]
    if fmt.lower() not in _FORMATS:
        raise HoodieConfigError(f"{TABLE_CHANGES}: format {fmt!r} is not one of {', '.join(_FORMATS)}: {usage}")
    path = locate(name) or (name if "/" in name else None)
    if path is None:
        raise HoodieConfigError(f"{TABLE_CHANGES}: {name!r} is neither a Hudi table in this session's catalog "
                                "nor a base path")
    options = {C.QUERY_TYPE.key: "incremental", C.INCREMENTAL_FORMAT.key: fmt.lower(),
               C.BEGIN_INSTANTTIME.key: "000" if begin.lower() == "earliest" else begin}
    if len(args) == 4:
        options[C.END_INSTANTTIME.key] = args[3]
    return TableRead(path, options)


def _constant(node: exp.Expression, where: str) -> str:
    if isinstance(node, exp.Literal):
        return node.this
    raise HoodieConfigError(f"{where}: {node.sql(DIALECT)!r} must be a literal")


_COMPARISONS = {exp.EQ: "=", exp.NEQ: "!=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
_FLIPPED = {"=": "=", "!=": "!=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}


def expression_filters(table: exp.Table) -> tuple[tuple, ...]:
    """``(function call, op, value)`` filters of the query block that reads ``table`` alone (no
    join): its WHERE's top-level AND terms comparing a supported function of one of the table's
    columns with literals. Anything else (OR, joins, nested functions, non-literal sides) is left
    to Spark alone."""
    select = table.find_ancestor(exp.Select)
    if select is None or select.args.get("joins") or select.args.get("where") is None:
        return ()
    source = select.args.get("from_") or select.args.get("from")
    if source is None or source.this is not table:
        return ()
    names = {"", table.alias_or_name.lower(), table.name.lower()}
    condition = select.args["where"].this
    terms = condition.flatten() if isinstance(condition, exp.And) else [condition]
    return tuple(f for f in (_filter_of(t, names) for t in terms) if f is not None)


def _call(node: exp.Expression, names: set[str]) -> str | None:
    columns = list(node.find_all(exp.Column))
    if isinstance(node, (exp.Column, exp.Literal)) or len(columns) != 1 or columns[0].table.lower() not in names:
        return None
    text = node.sql(DIALECT)
    # A backslash in a SQL literal is an escape Spark resolves; such calls are left to Spark alone.
    return text if parse_call(text) is not None and "\\" not in text else None


def _literal(node: exp.Expression):
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "-" + node.this.this
    return node.this if isinstance(node, exp.Literal) else None


def _filter_of(term: exp.Expression, names: set[str]) -> tuple | None:
    if isinstance(term, exp.In) and not term.args.get("query"):
        call = _call(term.this, names)
        values = [_literal(v) for v in term.expressions]
        return (call, "IN", tuple(values)) if call and values and None not in values else None
    op = _COMPARISONS.get(type(term))
    if op is None:
        return None
    left, right = term.this, term.expression
    if (call := _call(left, names)) is not None and (value := _literal(right)) is not None:
        return call, op, value
    if (call := _call(right, names)) is not None and (value := _literal(left)) is not None:
        return call, _FLIPPED[op], value
    return None
