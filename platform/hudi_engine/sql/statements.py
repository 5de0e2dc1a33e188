"""Hudi's SQL statements, parsed (sqlglot's Spark dialect) into plain values the executor runs.

Pure: no Spark here. Expressions stay Spark SQL text (``expr.sql("spark")``), so Spark evaluates
them with its own semantics; only the statement's shape is read here. ``parse`` returns None for
a statement that is not one of these (Spark runs it as it is).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from ..errors import HoodieConfigError

DIALECT = "spark"


@dataclass(frozen=True)
class Column:
    name: str
    type: str                   # Spark SQL type text
    comment: str | None = None


@dataclass(frozen=True)
class CreateTable:
    name: str
    columns: tuple[Column, ...]
    partitioned_by: tuple[str, ...] = ()
    properties: dict[str, str] = field(default_factory=dict)   # TBLPROPERTIES
    options: dict[str, str] = field(default_factory=dict)      # OPTIONS
    location: str | None = None
    query: str | None = None                                   # CTAS
    if_not_exists: bool = False
    comment: str | None = None


@dataclass(frozen=True)
class DropTable:
    name: str
    if_exists: bool = False
    purge: bool = False


@dataclass(frozen=True)
class AddColumns:
    name: str
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class Insert:
    name: str
    query: str
    overwrite: bool = False
    partition: dict[str, str | None] = field(default_factory=dict)   # static values; None: dynamic
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Update:
    name: str
    alias: str | None
    assignments: tuple[tuple[str, str], ...]     # (column, expression)
    where: str | None = None


@dataclass(frozen=True)
class Delete:
    name: str
    alias: str | None
    where: str | None = None


@dataclass(frozen=True)
class MergeClause:
    matched: bool
    action: str                                  # update | delete | insert
    condition: str | None = None
    assignments: tuple[tuple[str, str], ...] | None = None   # None: SET * / INSERT *


@dataclass(frozen=True)
class Merge:
    name: str
    alias: str | None
    source: str                                  # a query, or a table name
    source_alias: str | None
    on: str
    clauses: tuple[MergeClause, ...]


@dataclass(frozen=True)
class ShowCreateTable:
    name: str


@dataclass(frozen=True)
class Call:
    procedure: str
    args: dict[str, object]                      # named arguments, names lower-cased
    positional: tuple[object, ...] = ()


Statement = CreateTable | DropTable | AddColumns | Insert | Update | Delete | Merge | ShowCreateTable | Call

log = logging.getLogger(__name__)


class _QuietCommandFallback(logging.Filter):
    """sqlglot warns of every statement it reads only as a generic Command (SHOW TABLES, ...); such a
    statement is not Hudi's and goes to Spark unchanged, so the warning would only be noise in the
    user's session."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_QuietCommandFallback())


def parse_tree(text: str) -> exp.Expression | None:
    """sqlglot's tree of one statement, or None when it cannot read it (Spark then gets the text)."""
    try:
        trees = sqlglot.parse(text, read=DIALECT)
    except (ParseError, sqlglot.errors.TokenError) as e:
        log.debug("not parsed, left to Spark: %s", e)
        return None
    return trees[0] if len(trees) == 1 and trees[0] is not None else None


def parse(text: str) -> Statement | None:
    """The Hudi statement ``text`` holds, or None. A CREATE TABLE is Hudi's only with ``USING hudi``;
    the others name their table, and the executor checks that it is a Hudi table."""
    stripped = text.strip().rstrip(";").strip()
    if is_call(stripped):
        return _call(stripped[4:].strip())
    return statement(parse_tree(stripped))


def is_call(text: str) -> bool:
    return text.lstrip()[:5].upper() in ("CALL ", "CALL\t", "CALL\n")


def statement(tree: exp.Expression | None) -> Statement | None:
    """The Hudi statement a parsed tree holds, or None (CALL is read from text: see ``parse``)."""
    if isinstance(tree, exp.Create) and tree.args.get("kind") == "TABLE":
        return _create(tree)
    if isinstance(tree, exp.Drop) and tree.args.get("kind") == "TABLE":
        return DropTable(_name(tree.this if tree.this is not None else tree.args["tables"][0]),
                         bool(tree.args.get("exists")), bool(tree.args.get("purge")))
    if isinstance(tree, exp.Alter) and tree.args.get("kind") == "TABLE":
        actions = tree.args.get("actions") or []
        if len(actions) == 1 and isinstance(actions[0], exp.Schema):
            return AddColumns(_name(tree.this), tuple(_column(c) for c in actions[0].expressions))
        return None
    if isinstance(tree, exp.Insert):
        return _insert(tree)
    if isinstance(tree, exp.Update):
        return Update(_name(tree.this), tree.this.alias or None,
                      tuple(_assignment(a) for a in tree.expressions), _where(tree))
    if isinstance(tree, exp.Delete):
        return Delete(_name(tree.this), tree.this.alias or None, _where(tree))
    if isinstance(tree, exp.Merge):
        return _merge(tree)
    if isinstance(tree, exp.Command) and tree.this.upper() == "SHOW":
        words = tree.expression.name.split()
        if len(words) == 3 and [w.upper() for w in words[:2]] == ["CREATE", "TABLE"]:
            return ShowCreateTable(words[2].replace("`", ""))
    return None


def _name(table: exp.Expression) -> str:
    if isinstance(table, exp.Schema):
        table = table.this
    if not isinstance(table, exp.Table):
        raise HoodieConfigError(f"expected a table name, got {table.sql(DIALECT)!r}")
    return ".".join(p.name for p in table.parts)


def _sql(node: exp.Expression | None) -> str | None:
    return None if node is None else node.sql(DIALECT)


def _where(tree: exp.Expression) -> str | None:
    where = tree.args.get("where")
    return _sql(where.this) if where is not None else None


def _column(node: exp.Expression) -> Column:
    if not isinstance(node, exp.ColumnDef) or node.args.get("kind") is None:
        raise HoodieConfigError(f"expected a column and its type, got {node.sql(DIALECT)!r}")
    comment = next((c.args["kind"].this.name for c in node.args.get("constraints") or []
                    if isinstance(c.args.get("kind"), exp.CommentColumnConstraint)), None)
    return Column(node.name, node.args["kind"].sql(DIALECT), comment)


def _literal(node: exp.Expression) -> str:
    return node.name if isinstance(node, (exp.Literal, exp.Var, exp.Identifier)) else node.sql(DIALECT)


def _create(tree: exp.Create) -> CreateTable | None:
    props = tree.args.get("properties")
    items = props.expressions if props is not None else []
    provider = next((p.this.name for p in items if isinstance(p, exp.FileFormatProperty)), None)
    if provider is None or provider.lower() != "hudi":
        return None
    schema = tree.this if isinstance(tree.this, exp.Schema) else None
    columns = tuple(_column(c) for c in schema.expressions) if schema is not None else ()
    properties: dict[str, str] = {}
    options: dict[str, str] = {}
    partitioned: tuple[str, ...] = ()
    location = comment = None
    for p in items:
        if isinstance(p, exp.OptionsProperty):
            options.update({_literal(o.this): _literal(o.args["value"]) for o in p.expressions})
        elif isinstance(p, exp.PartitionedByProperty):
            parts = p.this.expressions if isinstance(p.this, exp.Schema) else [p.this]
            partitioned = tuple(_partition_column(c) for c in parts)
        elif isinstance(p, exp.LocationProperty):
            location = _literal(p.this)
        elif isinstance(p, exp.SchemaCommentProperty):
            comment = _literal(p.this)
        elif type(p) is exp.Property:
            properties[_literal(p.this)] = _literal(p.args["value"])
        elif not isinstance(p, exp.FileFormatProperty):
            raise HoodieConfigError(f"CREATE TABLE ... USING hudi: {p.sql(DIALECT)!r} is not supported here; "
                                    "use PARTITIONED BY, LOCATION, TBLPROPERTIES, OPTIONS and COMMENT")
    query = tree.expression
    return CreateTable(_name(tree.this), columns, partitioned, properties, options, location,
                       _sql(query), bool(tree.args.get("exists")), comment)


def _partition_column(node: exp.Expression) -> str:
    if isinstance(node, exp.ColumnDef) and node.args.get("kind") is not None:
        raise HoodieConfigError(f"PARTITIONED BY ({node.sql(DIALECT)}): list the partition columns by name "
                                "and declare them with the other columns")
    return node.name


def _insert(tree: exp.Insert) -> Insert:
    target = tree.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = tuple(c.name for c in target.expressions)
        target = target.this
    partition: dict[str, str | None] = {}
    spec = target.args.get("partition") if isinstance(target, exp.Table) else None
    for item in spec.expressions if spec is not None else []:
        if isinstance(item, exp.EQ):
            partition[item.this.name] = _literal(item.expression)
        else:
            partition[item.name] = None
    return Insert(_name(target), _sql(tree.expression), bool(tree.args.get("overwrite")), partition, columns)


def _assignment(node: exp.Expression) -> tuple[str, str]:
    if not isinstance(node, exp.EQ) or not isinstance(node.this, exp.Column):
        raise HoodieConfigError(f"expected column = expression, got {node.sql(DIALECT)!r}")
    return node.this.name, _sql(node.expression)


def _merge(tree: exp.Merge) -> Merge:
    target, using = tree.this, tree.args["using"]
    if isinstance(using, exp.Subquery):
        source, source_alias = _sql(using.this), using.alias or None
    else:
        source_alias = using.alias or using.name
        source = f"SELECT * FROM {_name(using)}"
    whens = tree.args.get("whens")
    clauses = []
    for when in whens.expressions if whens is not None else []:
        if when.args.get("source"):
            raise HoodieConfigError("MERGE INTO a Hudi table: WHEN NOT MATCHED BY SOURCE is not supported "
                                    "(Hudi merges the source's rows); delete those rows with DELETE FROM")
        then, condition = when.args["then"], _sql(when.args.get("condition"))
        if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
            clauses.append(MergeClause(bool(when.args["matched"]), "delete", condition))
        elif isinstance(then, exp.Update):
            star = not then.expressions or isinstance(then.expressions[0], exp.Star)
            clauses.append(MergeClause(True, "update", condition,
                                       None if star else tuple(_assignment(a) for a in then.expressions)))
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star):
                clauses.append(MergeClause(False, "insert", condition))
            else:
                names = [c.name for c in then.this.expressions]
                values = [_sql(v) for v in then.expression.expressions]
                if len(names) != len(values):
                    raise HoodieConfigError(f"MERGE INTO ... INSERT ({', '.join(names)}) has {len(values)} values "
                                            f"for {len(names)} columns")
                clauses.append(MergeClause(False, "insert", condition, tuple(zip(names, values))))
        else:
            raise HoodieConfigError(f"MERGE INTO: unsupported action {then.sql(DIALECT)!r}")
    return Merge(_name(target), target.alias or None, source, source_alias, _sql(tree.args["on"]), tuple(clauses))


def equated_columns(condition: str, left: str, right: str) -> set[str] | None:
    """The columns ``condition`` equates between the two aliases when it is only that (``l.a = r.a
    AND l.b = r.b``), else None: a MERGE on the record key alone is an upsert."""
    tree = parse_tree(f"SELECT 1 WHERE {condition}")
    where = tree.args.get("where") if tree is not None else None
    if where is None:
        return None
    names = set()
    for eq in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        if not isinstance(eq, exp.EQ) or not all(isinstance(side, exp.Column) for side in (eq.this, eq.expression)):
            return None
        if {eq.this.table, eq.expression.table} != {left, right} or eq.this.name != eq.expression.name:
            return None
        names.add(eq.this.name)
    return names


def _call(rest: str) -> Call:
    """``CALL name(arg => value, ...)`` or positional values, as Hudi's procedures take them."""
    try:
        tree = sqlglot.parse_one(f"SELECT {rest}", read=DIALECT)
    except (ParseError, sqlglot.errors.TokenError) as e:
        raise HoodieConfigError(f"CALL {rest}: cannot read the call ({e}); write CALL name(arg => value, ...)")
    func = tree.expressions[0] if isinstance(tree, exp.Select) and len(tree.expressions) == 1 else None
    while isinstance(func, exp.Dot):     # catalog.namespace.procedure (Spark's CALL): Hudi's names are flat
        func = func.expression
    if not isinstance(func, (exp.Anonymous, exp.Func)):
        raise HoodieConfigError(f"CALL {rest}: write CALL name(arg => value, ...)")
    name = func.name if isinstance(func, exp.Anonymous) else func.sql_name()
    args: dict[str, object] = {}
    positional = []
    for arg in func.args.get("expressions") or [v for v in func.args.values() if isinstance(v, exp.Expression)]:
        if isinstance(arg, exp.Kwarg):
            args[arg.this.name.lower()] = _value(arg.expression)
        elif args:
            raise HoodieConfigError(f"CALL {name}: positional argument {arg.sql(DIALECT)} after named ones")
        else:
            positional.append(_value(arg))
    return Call(name.lower(), args, tuple(positional))


def _value(node: exp.Expression) -> object:
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return -_value(node.this)  # type: ignore[operator]
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        return float(text) if any(c in text for c in ".eE") else int(text)
    return node.sql(DIALECT)
