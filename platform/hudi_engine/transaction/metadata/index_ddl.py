"""``CREATE INDEX`` and ``DROP INDEX`` of secondary and expression indexes (Hudi 1.x's ``HoodieSparkIndexClient``):
the definition in ``index.json``, the partition in the metadata table and its place in
``hoodie.table.metadata.partitions``, with Hudi's refusals."""
from __future__ import annotations

from ... import config as C
from ...config import HoodieConfig
from ...errors import HoodieConfigError
from ...expr.functions import EXPR, check
from ...metadata_table.index_defs import (
    IDENTITY,
    IndexDefinition,
    add_definition,
    expression_index_definition,
    expression_index_partition,
    read_definitions,
    remove_definition,
    secondary_index_definition,
    secondary_index_partition,
)
from ...metadata_table.layout import RECORD_INDEX, mdt_storage, set_table_partitions, table_partitions
from ...metadata_table.secondary_index import check_indexable
from ...read.plan import table_schema
from ...table.meta_client import HoodieTable
from .writer import build_expression_indexes, build_secondary_indexes


def create_index(spark, table: HoodieTable, user_name: str, column: str, cfg: HoodieConfig,
                 if_not_exists: bool = False) -> HoodieTable:
    """``CREATE INDEX <user_name> ON <table> (<column>)``: define the index, build its partition and
    list it in ``hoodie.table.metadata.partitions``. Refused as Hudi refuses it."""
    _check_creatable(table, user_name, column)
    definition = secondary_index_definition(user_name, column, table.version)
    return _create(table, definition, if_not_exists, lambda t: build_secondary_indexes(spark, t, [definition], cfg))


def create_expression_index(spark, table: HoodieTable, user_name: str, column: str, index_type: str,
                            index_options: dict[str, str], cfg: HoodieConfig, if_not_exists: bool = False) -> HoodieTable:
    """``CREATE INDEX <user_name> ON <table> USING column_stats|bloom_filters(<column>) OPTIONS(expr=...)``:
    define the expression index and build its ``expr_index_<user_name>`` partition."""
    _check_expression_creatable(table, column, index_type, index_options)
    if not table_partitions(table):
        raise HoodieConfigError(f"an expression index lives in the metadata table, which {table.name} does not have; "
                                f"write once with {C.METADATA_ENABLE.key}=true, then create index {user_name}")
    definition = expression_index_definition(user_name, column, index_type, index_options, table.version)
    return _create(table, definition, if_not_exists, lambda t: build_expression_indexes(spark, t, [definition], cfg))


def _create(table: HoodieTable, definition: IndexDefinition, if_not_exists: bool, build) -> HoodieTable:
    """Define, build and list an index; a failed build leaves neither its partition nor its definition."""
    partition, user_name = definition.name, definition.user_name
    if _taken(table, user_name):
        if if_not_exists:
            return table
        raise HoodieConfigError(f"index {user_name} already exists on {table.name}; drop it first "
                                f"(DROP INDEX {user_name} ON {table.name}) or pick another name")
    table = add_definition(table, definition)
    have = table_partitions(table)
    try:
        table = build(table)
    except BaseException:
        if mdt_storage(table).exists(partition):
            mdt_storage(table).delete_dir(partition)
        set_table_partitions(table, have)
        remove_definition(table.reload(), partition)
        raise
    return table


def _partitions_named(user_name: str) -> tuple[str, str]:
    return secondary_index_partition(user_name), expression_index_partition(user_name)


def _taken(table: HoodieTable, user_name: str) -> bool:
    defined, listed = read_definitions(table), table_partitions(table)
    return any(p in defined or p in listed for p in _partitions_named(user_name))


def _check_creatable(table: HoodieTable, user_name: str, column: str) -> None:
    typ = _column_type(table, column, "secondary")
    if RECORD_INDEX not in table_partitions(table):
        raise HoodieConfigError(
            f"a secondary index finds rows through the record index, which {table.name} does not have: write "
            f"once with {C.METADATA_RECORD_INDEX_ENABLE.key}=true, then create index {user_name}")
    check_indexable(column, typ)


def _check_expression_creatable(table: HoodieTable, column: str, index_type: str, options: dict[str, str]) -> None:
    """Hudi's refusals of ``CREATE INDEX ... USING column_stats|bloom_filters (...) [OPTIONS(expr=...)]``
    (no ``expr``: Hudi's ``identity``), and what the data would fail on."""
    check(options.get(EXPR, IDENTITY), options, column, _column_type(table, column, "expression"), index_type)


def _column_type(table: HoodieTable, column: str, kind: str):
    if table.version < 8:
        raise HoodieConfigError(f"{kind} indexes need table version 8 or later (Hudi 1.x); {table.name} is at "
                                f"version {table.version}: upgrade it first (hudictl table upgrade --to-version 9)")
    schema = table_schema(table)
    if column not in schema.names:
        data = [n for n in schema.names if not n.startswith("_hoodie_")]
        raise HoodieConfigError(f"cannot index column '{column}': {table.name} has no such column; "
                                f"its columns are {', '.join(data)}")
    return schema.field(column).type


def drop_index(table: HoodieTable, user_name: str, if_exists: bool = False) -> HoodieTable:
    """``DROP INDEX``: the partition leaves the listing, then its files and its definition go."""
    defined, have = read_definitions(table), table_partitions(table)
    partition = next((p for p in _partitions_named(user_name) if p in defined or p in have), None)
    if partition is None:
        if if_exists:
            return table
        raise HoodieConfigError(f"index {user_name} does not exist on {table.name}; "
                                f"SHOW INDEXES FROM {table.name} lists its indexes")
    table = set_table_partitions(table, [p for p in have if p != partition])
    storage = mdt_storage(table)
    if storage.exists(partition):
        storage.delete_dir(partition)
    return remove_definition(table, partition) if partition in defined else table
