"""Secondary and expression indexes through the API: ``create_index``, ``drop_index`` and
``show_indexes``, what Spark SQL's ``CREATE INDEX``, ``DROP INDEX`` and ``SHOW INDEXES`` and
``hudictl table index`` run."""
from __future__ import annotations

from .. import config as C
from ..concurrency.locks import locked_table
from ..config import HoodieConfig
from ..metadata_table.index_defs import EXPRESSION_INDEX_TYPES, SECONDARY_INDEX_TYPE, index_listing
from ..errors import HoodieConfigError
from ..table.meta_client import HoodieTable
from ..transaction.metadata import index_ddl
from .indexer import build_index

INDEX_TYPES = (SECONDARY_INDEX_TYPE, *EXPRESSION_INDEX_TYPES)


def _table(table: HoodieTable | str) -> HoodieTable:
    return table if isinstance(table, HoodieTable) else HoodieTable.load(table)


def create_index(spark, table: HoodieTable | str, name: str, columns: list[str] | str,
                 index_type: str = SECONDARY_INDEX_TYPE, options: dict | None = None,
                 if_not_exists: bool = False, index_options: dict | None = None) -> HoodieTable:
    """Create index ``name`` on one column and build it from the table's latest file slices
    (Spark's executors read them): a secondary index, or with ``index_type`` ``column_stats`` or
    ``bloom_filters`` an expression index whose ``index_options`` name the function (``expr``) and
    its options (``format``, ``pos``, ``len``, ``trimString``; bloom ``fpp``...), as SQL's
    ``OPTIONS(...)``. ``options``: the writer's ``hoodie.*`` options; with
    ``hoodie.metadata.index.async=true`` (and the table lock) the index is built by the
    asynchronous indexer's indexing action, as Hudi builds every ``CREATE INDEX``, without holding
    the lock during the build."""
    loaded = _table(table)
    columns = [columns] if isinstance(columns, str) else list(columns)
    kind = (index_type or SECONDARY_INDEX_TYPE).lower()
    if kind not in INDEX_TYPES:
        raise HoodieConfigError(f"index type {index_type!r} is not supported here; use "
                                f"{', '.join(INDEX_TYPES)} (CREATE INDEX {name} ON {loaded.name} ({', '.join(columns)}))")
    if len(columns) != 1:
        raise HoodieConfigError(f"a {kind} index covers exactly one column, {len(columns)} given "
                                f"({', '.join(columns)}); create one index per column")
    cfg = HoodieConfig({**(options or {}), **loaded.props})
    if cfg.get(C.METADATA_INDEX_ASYNC):
        return _create_through_indexer(spark, loaded, name, columns[0], kind, dict(index_options or {}), cfg,
                                       options or {}, if_not_exists)
    # Under the table's lock (with several writers): no write commits between the snapshot the
    # index is built from and the partition being listed (Hudi's indexer catches up instead).
    with locked_table(loaded, cfg, f"creating index {name}") as locked:
        if kind == SECONDARY_INDEX_TYPE:
            return index_ddl.create_index(spark, locked, name, columns[0], cfg, if_not_exists)
        return index_ddl.create_expression_index(spark, locked, name, columns[0], kind, dict(index_options or {}),
                                                 cfg, if_not_exists)


def _create_through_indexer(spark, table: HoodieTable, name: str, column: str, kind: str, index_options: dict,
                            cfg: HoodieConfig, options: dict, if_not_exists: bool) -> HoodieTable:
    """As Hudi's ``HoodieSparkIndexClient``: the definition into index.json, then the indexing
    action (scheduled and executed here; the lock is held to define, schedule and finish only, so
    writers keep writing), and the index dropped again if that fails."""
    with locked_table(table, cfg, f"defining index {name}") as locked:
        if kind == SECONDARY_INDEX_TYPE:
            definition = index_ddl.secondary_index(locked, name, column)
        else:
            definition = index_ddl.expression_index(locked, name, column, kind, index_options)
        if index_ddl.define(locked, definition, if_not_exists) is None:
            return locked
    try:
        build_index(spark, table.reload(), [definition.name], "scheduleAndExecute", options)
    except BaseException:
        with locked_table(table.reload(), cfg, f"dropping index {name} after its failed build") as locked:
            index_ddl.drop_partitions(locked, [definition.name])
        raise
    return table.reload()


def drop_index(table: HoodieTable | str, name: str, if_exists: bool = False,
               options: dict | None = None) -> HoodieTable:
    """Drop index ``name`` (secondary or expression): its metadata partition and its definition (under the table's
    lock when ``options`` configure one)."""
    loaded = _table(table)
    with locked_table(loaded, HoodieConfig({**(options or {}), **loaded.props}), f"dropping index {name}") as locked:
        return index_ddl.drop_index(locked, name, if_exists)


def show_indexes(table: HoodieTable | str) -> list[dict[str, str]]:
    """The table's indexes (``SHOW INDEXES``): index_name, col_name, index_type."""
    return index_listing(_table(table))
