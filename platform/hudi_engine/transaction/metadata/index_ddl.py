"""``CREATE INDEX`` and ``DROP INDEX`` of secondary indexes (Hudi 1.x's ``HoodieSparkIndexClient``):
the definition in ``index.json``, the partition in the metadata table and its place in
``hoodie.table.metadata.partitions``, with Hudi's refusals."""
from __future__ import annotations

from ... import config as C
from ...config import HoodieConfig
from ...errors import HoodieConfigError
from ...metadata_table.index_defs import (
    add_definition,
    remove_definition,
    secondary_index_definition,
    secondary_index_partition,
    secondary_indexes,
)
from ...metadata_table.layout import RECORD_INDEX, mdt_storage, set_table_partitions, table_partitions
from ...metadata_table.secondary_index import check_indexable
from ...read.plan import table_schema
from ...table.meta_client import HoodieTable
from .writer import build_secondary_indexes


def create_index(spark, table: HoodieTable, user_name: str, column: str, cfg: HoodieConfig,
                 if_not_exists: bool = False) -> HoodieTable:
    """``CREATE INDEX <user_name> ON <table> (<column>)``: define the index, build its partition and
    list it in ``hoodie.table.metadata.partitions``. Refused as Hudi refuses it."""
    partition = secondary_index_partition(user_name)
    _check_creatable(table, user_name, column)
    if any(d.name == partition for d in secondary_indexes(table)) or partition in table_partitions(table):
        if if_not_exists:
            return table
        raise HoodieConfigError(f"index {user_name} already exists on {table.name}; drop it first "
                                f"(DROP INDEX {user_name} ON {table.name}) or pick another name")
    definition = secondary_index_definition(user_name, column, table.version)
    table = add_definition(table, definition)
    have = table_partitions(table)
    try:
        table = build_secondary_indexes(spark, table, [definition], cfg)
    except BaseException:
        if mdt_storage(table).exists(partition):
            mdt_storage(table).delete_dir(partition)
        set_table_partitions(table, have)
        remove_definition(table.reload(), partition)
        raise
    return table


def _check_creatable(table: HoodieTable, user_name: str, column: str) -> None:
    if table.version < 8:
        raise HoodieConfigError(f"secondary indexes need table version 8 or later (Hudi 1.x); {table.name} is at "
                                f"version {table.version}: upgrade it first (hudictl table upgrade --to-version 9)")
    if RECORD_INDEX not in table_partitions(table):
        raise HoodieConfigError(
            f"a secondary index finds rows through the record index, which {table.name} does not have: write "
            f"once with {C.METADATA_RECORD_INDEX_ENABLE.key}=true, then create index {user_name}")
    schema = table_schema(table)
    if column not in schema.names:
        data = [n for n in schema.names if not n.startswith("_hoodie_")]
        raise HoodieConfigError(f"cannot index column '{column}': {table.name} has no such column; "
                                f"its columns are {', '.join(data)}")
    check_indexable(column, schema.field(column).type)


def drop_index(table: HoodieTable, user_name: str, if_exists: bool = False) -> HoodieTable:
    """``DROP INDEX``: the partition leaves the listing, then its files and its definition go."""
    partition = secondary_index_partition(user_name)
    defined = any(d.name == partition for d in secondary_indexes(table))
    have = table_partitions(table)
    if not defined and partition not in have:
        if if_exists:
            return table
        raise HoodieConfigError(f"index {user_name} does not exist on {table.name}; "
                                f"SHOW INDEXES FROM {table.name} lists its indexes")
    table = set_table_partitions(table, [p for p in have if p != partition])
    storage = mdt_storage(table)
    if storage.exists(partition):
        storage.delete_dir(partition)
    return remove_definition(table, partition) if defined else table
