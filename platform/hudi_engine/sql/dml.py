"""INSERT INTO / OVERWRITE, UPDATE, DELETE and MERGE INTO on a Hudi table, each one write (one
commit) through the engine. Spark evaluates every expression and condition; the rows stay in
Spark (the driver holds none)."""
from __future__ import annotations

from typing import Callable

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_type

from .. import config as C
from ..api.writes import write
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieValidationError
from ..keygen import partition_field_names
from ..index.tagging import GLOBAL_INDEXES, index_type
from ..merge.keep_values import PARTIAL_UPDATE
from ..merge.partial import partial_update
from ..merge.record_merger import DELETE, OP_COLUMN, merge_mode
from ..read.plan import table_schema
from ..read.reader import read
from ..schema.avro import arrow_to_avro, to_json
from ..schema.meta_fields import without_meta_fields
from ..table.meta_client import HoodieTable
from .catalog import CatalogTable
from .statements import Delete, Insert, Merge, MergeClause, Update, equated_columns

SparkSql = Callable[[str], DataFrame]
_MATCHED, _CLAUSE = "__hudi_matched", "__hudi_clause"


class Target:
    """The table a statement writes: its data columns and types, and what identifies a record."""

    def __init__(self, entry: CatalogTable, options: dict[str, str]):
        self.entry, self.options = entry, options
        table = HoodieTable.load(entry.path)
        self.table = table
        self.schema: pa.Schema = without_meta_fields(table_schema(table))
        cfg = table.config
        self.keys = tuple(cfg.get_list(C.RECORDKEY_FIELDS))
        self.partitions = partition_field_names(cfg.get_list(C.PARTITION_FIELDS))
        self.columns = tuple(self.schema.names)

    def cast(self, name: str, value: Column) -> Column:
        return value.cast(from_arrow_type(self.schema.field(name).type)).alias(name)

    def write(self, rows: DataFrame, operation: str, options: dict[str, str] | None = None) -> str:
        return write(rows, self.entry.path, {**self.options, **(options or {}), C.OPERATION.key: operation})

    def rows(self, spark: SparkSession, alias: str | None) -> DataFrame:
        return read(spark, self.entry.path).select(*self.columns).alias(alias or self.entry.table)

    def check_column(self, name: str, statement: str) -> str:
        found = next((c for c in self.columns if c.lower() == name.lower()), None)
        if found is None:
            raise HoodieConfigError(f"{statement}: {self.entry.name} has no column {name!r} "
                                    f"(its columns: {', '.join(self.columns)})")
        return found

    def check_assigned(self, names: list[str], statement: str) -> None:
        """Hudi identifies a record by its key and partition: an update may not change them."""
        for name in names:
            if name in self.keys:
                raise HoodieConfigError(f"{statement} cannot change {name!r}, the record key of {self.entry.name}: "
                                        "DELETE the record and INSERT it with the new key instead")
            if name in self.partitions:
                raise HoodieConfigError(f"{statement} cannot change {name!r}, the partition field of "
                                        f"{self.entry.name}: DELETE the record and INSERT it into its new partition")


def insert(spark: SparkSession, stmt: Insert, target: Target, query: SparkSql) -> str:
    """Values go to the columns in the catalog's order: data columns, then partition columns (Spark
    moves those last), less the ones PARTITION (...) sets."""
    static = {target.check_column(k, "INSERT"): v for k, v in stmt.partition.items() if v is not None}
    source = query(stmt.query)
    ordered = [c for c in target.columns if c not in target.partitions] + [
        c for c in target.columns if c in target.partitions]
    columns = [c for c in ordered if c not in static]
    if stmt.columns is not None:
        named = [target.check_column(c, "INSERT") for c in stmt.columns]
        missing = [c for c in columns if c not in named]
        if missing or len(named) != len(source.columns):
            raise HoodieConfigError(f"INSERT INTO {target.entry.name} ({', '.join(stmt.columns)}): name every column "
                                    f"but static partitions ({', '.join(columns)}), one per selected value")
        values = dict(zip(named, (F.col(f"`{c}`") for c in source.columns)))
    else:
        if len(source.columns) != len(columns):
            raise HoodieConfigError(f"INSERT INTO {target.entry.name}: the query gives {len(source.columns)} columns, "
                                    f"the table takes {len(columns)} ({', '.join(columns)}) in that order")
        values = dict(zip(columns, (F.col(f"`{c}`") for c in source.columns)))
    values.update({k: F.lit(v) for k, v in static.items()})
    rows = source.select(*(target.cast(c, values[c]) for c in target.columns))
    if stmt.overwrite:
        dynamic = spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static").lower() == "dynamic"
        whole = not stmt.partition and not dynamic
        return target.write(rows, "insert_overwrite_table" if whole or not target.partitions else "insert_overwrite")
    return target.write(rows, HoodieConfig(target.options).get_str(C.SQL_INSERT_INTO_OPERATION).lower())



def update(spark: SparkSession, stmt: Update, target: Target) -> str:
    assigned = {target.check_column(c, "UPDATE"): e for c, e in stmt.assignments}
    target.check_assigned(list(assigned), "UPDATE")
    rows = target.rows(spark, stmt.alias)
    if stmt.where:
        rows = rows.filter(F.expr(stmt.where))
    changed = rows.select(*(target.cast(c, F.expr(assigned[c])) if c in assigned else F.col(f"`{c}`")
                            for c in target.columns))
    return target.write(changed, "upsert")


def delete(spark: SparkSession, stmt: Delete, target: Target) -> str:
    rows = target.rows(spark, stmt.alias)
    if stmt.where:
        rows = rows.filter(F.expr(stmt.where))
    return target.write(rows.select(*(F.col(f"`{c}`") for c in target.columns)), "delete")


def merge(spark: SparkSession, stmt: Merge, target: Target, query: SparkSql) -> str:
    """One upsert: each source row takes the first clause whose condition holds (matched ones
    against the target row the ON condition pairs it with); deletes are marked in ``OP_COLUMN``.
    The usual MERGE (on the record key, UPDATE SET * and INSERT * with no conditions) is the
    upsert of the source's rows itself: the index finds the targets, no read of the table."""
    alias, source_alias = stmt.alias or target.entry.table, stmt.source_alias or "source"
    source = query(stmt.source).alias(source_alias)
    if _is_upsert(stmt, target, alias, source_alias):
        return _upsert(stmt, target, source, alias, source_alias)
    stored = target.rows(spark, None).withColumn(_MATCHED, F.lit(True)).alias(alias)
    joined = source.join(stored, F.expr(stmt.on), "left").persist()
    try:
        matched = F.col(f"`{alias}`.`{_MATCHED}`").isNotNull()
        keys = [F.col(f"`{alias}`.`{k}`").alias(k) for k in target.keys]
        _check_unique(joined.filter(matched), keys, target, f"source rows match the target record under ON {stmt.on}")
        which = F.lit(None).cast("int")
        for i, clause in reversed(list(enumerate(stmt.clauses))):
            holds = matched if clause.matched else ~matched
            if clause.condition:
                holds = holds & F.coalesce(F.expr(clause.condition), F.lit(False))
            which = F.when(holds, F.lit(i)).otherwise(which)
        chosen = joined.withColumn(_CLAUSE, which).filter(F.col(_CLAUSE).isNotNull())
        values = [_clause_values(c, alias, source_alias, source.columns, target) for c in stmt.clauses]
        out = []
        for column in target.columns:
            value = F.col(f"`{alias}`.`{column}`")
            for i, clause_values in reversed(list(enumerate(values))):
                value = F.when(F.col(_CLAUSE) == i, clause_values[column]).otherwise(value)
            out.append(target.cast(column, value))
        deletes = [i for i, c in enumerate(stmt.clauses) if c.action == "delete"]
        partial = _partial_update_schema(stmt, target)
        updates = [i for i, c in enumerate(stmt.clauses) if c.action == "update"] if partial else []
        op = F.lit("U")
        for marked, mark in ((deletes, DELETE), (updates, PARTIAL_UPDATE)):
            if marked:
                op = F.when(F.col(_CLAUSE).isin(marked), F.lit(mark)).otherwise(op)
        return target.write(chosen.select(*out, op.alias(OP_COLUMN)), "upsert",
                            {C.WRITE_PARTIAL_UPDATE_SCHEMA.key: partial} if partial else None)
    finally:
        joined.unpersist()


def _partial_update_schema(stmt: Merge, target: Target) -> str | None:
    """The Avro schema of what the UPDATE clauses assign, when MERGE INTO logs partial updates as
    Hudi's does: a merge-on-read table of version 8+, fewer than all columns assigned,
    ``hoodie.spark.sql.merge.into.partial.updates`` on, no global index, no CUSTOM merger or
    partial update mode of the table's own. Matched rows are logged with those columns (and what
    identifies and orders a record); inserted ones whole."""
    table = target.table
    cfg = HoodieConfig({**table.config.raw(), **target.options})
    updates = [c for c in stmt.clauses if c.action == "update"]
    if (table.table_type != "MERGE_ON_READ" or table.version < 8 or not updates
            or any(c.assignments is None for c in updates) or not cfg.get(C.MERGE_INTO_PARTIAL_UPDATES)
            or index_type(cfg) in GLOBAL_INDEXES or merge_mode(cfg) == "CUSTOM" or partial_update(cfg)):
        return None
    assigned = {target.check_column(name, "MERGE INTO ... UPDATE") for c in updates for name, _ in c.assignments or ()}
    if set(target.columns) <= assigned:
        return None
    return to_json(arrow_to_avro(pa.schema([f for f in target.schema if f.name in assigned]), target.entry.table))


def _is_upsert(stmt: Merge, target: Target, alias: str, source_alias: str) -> bool:
    shapes = {(c.matched, c.action, c.condition, c.assignments) for c in stmt.clauses}
    return (len(stmt.clauses) == 2 and shapes == {(True, "update", None, None), (False, "insert", None, None)}
            and equated_columns(stmt.on, alias, source_alias) == set(target.keys))


def _upsert(stmt: Merge, target: Target, source: DataFrame, alias: str, source_alias: str) -> str:
    star = _clause_values(stmt.clauses[0], alias, source_alias, source.columns, target)
    keys = [F.col(f"`{source_alias}`.`{k}`").alias(k) for k in target.keys]
    _check_unique(source, keys, target, "source rows share the record key")
    return target.write(source.select(*(target.cast(c, star[c]) for c in target.columns)), "upsert")


def _clause_values(clause: MergeClause, alias: str, source_alias: str, source_columns: list[str],
                   target: Target) -> dict[str, Column]:
    stored = {c: F.col(f"`{alias}`.`{c}`") for c in target.columns}
    if clause.action == "delete":
        return stored
    what = "MERGE INTO ... UPDATE" if clause.action == "update" else "MERGE INTO ... INSERT"
    if clause.assignments is None:
        by_name = {c.lower(): c for c in source_columns}
        missing = [c for c in target.columns if c.lower() not in by_name]
        if missing:
            raise HoodieConfigError(f"{what} *: the source has no column(s) {', '.join(missing)} of "
                                    f"{target.entry.name}; name the assignments instead")
        return {c: F.col(f"`{source_alias}`.`{by_name[c.lower()]}`") for c in target.columns}
    assigned = {target.check_column(c, what): F.expr(e) for c, e in clause.assignments}
    if clause.action == "update":
        target.check_assigned(list(assigned), what)
        return {**stored, **assigned}
    missing_keys = [k for k in target.keys if k not in assigned]
    if missing_keys:
        raise HoodieConfigError(f"{what} must give the record key {', '.join(missing_keys)} of {target.entry.name}")
    return {c: assigned.get(c, F.lit(None)) for c in target.columns}


def _check_unique(rows: DataFrame, keys: list[Column], target: Target, what: str) -> None:
    """Hudi (and SQL) refuse a MERGE where several source rows match one target record: which of
    them wins would be arbitrary."""
    duplicate = rows.groupBy(*keys).count().filter(F.col("count") > 1).limit(1).collect()
    if duplicate:
        row = duplicate[0].asDict()
        key = {k: row[k] for k in target.keys}
        raise HoodieValidationError(f"MERGE INTO {target.entry.name}: {row['count']} {what} {key}; deduplicate the "
                                    "source so each target record is matched at most once")
