"""``CREATE INDEX`` and ``DROP INDEX`` of secondary and expression indexes (Hudi 1.x's ``HoodieSparkIndexClient``):
the definition in ``index.json``, the partition in the metadata table and its place in
``hoodie.table.metadata.partitions``, with Hudi's refusals."""
from __future__ import annotations

import logging

from ... import config as C
from ...config import HoodieConfig
from ...errors import HoodieConfigError, HoodieTimelineError
from ...expr.functions import EXPR, check
from ...metadata_table.index_defs import (
    IDENTITY,
    IndexDefinition,
    add_definition,
    expression_index_definition,
    expression_index_partition,
    expression_indexes,
    is_secondary_index_partition,
    read_definitions,
    remove_definition,
    secondary_index_definition,
    secondary_index_partition,
    secondary_indexes,
)
from ...metadata_table.layout import (
    BLOOM_FILTERS,
    COLUMN_STATS,
    FILES,
    PARTITION_STATS,
    RECORD_INDEX,
    mdt_storage,
    open_mdt,
    set_table_partitions,
    table_partitions,
    wanted_partitions,
)
from ...metadata_table.secondary_index import check_indexable
from ...read.plan import table_schema
from ...table.meta_client import HoodieTable
from ...timeline.index_plan import pending_indexing, plan_of, planned_paths
from ...timeline.instant import Instant
from .writer import build_expression_indexes, build_secondary_indexes

log = logging.getLogger(__name__)


def create_index(spark, table: HoodieTable, user_name: str, column: str, cfg: HoodieConfig,
                 if_not_exists: bool = False) -> HoodieTable:
    """``CREATE INDEX <user_name> ON <table> (<column>)``: define the index, build its partition and
    list it in ``hoodie.table.metadata.partitions``. Refused as Hudi refuses it."""
    definition = secondary_index(table, user_name, column)
    return _create(table, definition, if_not_exists, lambda t: build_secondary_indexes(spark, t, [definition], cfg))


def create_expression_index(spark, table: HoodieTable, user_name: str, column: str, index_type: str,
                            index_options: dict[str, str], cfg: HoodieConfig, if_not_exists: bool = False) -> HoodieTable:
    """``CREATE INDEX <user_name> ON <table> USING column_stats|bloom_filters(<column>) OPTIONS(expr=...)``:
    define the expression index and build its ``expr_index_<user_name>`` partition."""
    definition = expression_index(table, user_name, column, index_type, index_options)
    return _create(table, definition, if_not_exists, lambda t: build_expression_indexes(spark, t, [definition], cfg))


def secondary_index(table: HoodieTable, user_name: str, column: str) -> IndexDefinition:
    """The definition ``CREATE INDEX <user_name> ON <table> (<column>)`` writes; refused as Hudi refuses it."""
    _check_creatable(table, user_name, column)
    return secondary_index_definition(user_name, column, table.version)


def expression_index(table: HoodieTable, user_name: str, column: str, index_type: str,
                     index_options: dict[str, str]) -> IndexDefinition:
    """The definition of an expression index; refused as Hudi refuses it."""
    _check_expression_creatable(table, column, index_type, index_options)
    if not table_partitions(table):
        raise HoodieConfigError(f"an expression index lives in the metadata table, which {table.name} does not have; "
                                f"write once with {C.METADATA_ENABLE.key}=true, then create index {user_name}")
    return expression_index_definition(user_name, column, index_type, index_options, table.version)


def define(table: HoodieTable, definition: IndexDefinition, if_not_exists: bool) -> HoodieTable | None:
    """Write the definition to index.json (what the indexer builds from); None when the name is
    taken and ``if_not_exists``."""
    if _taken(table, definition.user_name):
        if if_not_exists:
            return None
        raise HoodieConfigError(f"index {definition.user_name} already exists on {table.name}; drop it first "
                                f"(DROP INDEX {definition.user_name} ON {table.name}) or pick another name")
    return add_definition(table, definition)


def _create(table: HoodieTable, definition: IndexDefinition, if_not_exists: bool, build) -> HoodieTable:
    """Define, build and list an index; a failed build leaves neither its partition nor its definition."""
    partition = definition.name
    defined = define(table, definition, if_not_exists)
    if defined is None:
        return table
    table = defined
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


def define_from_options(table: HoodieTable, cfg: HoodieConfig) -> HoodieTable | None:
    """Hudi 1.0.1+'s indexes named by writer options: ``hoodie.metadata.index.secondary.column``
    (with the record index) and ``hoodie.metadata.index.expression.enable`` with its column and
    options define an index, named by ``hoodie.index.name`` or after the column, unless the table
    has one on that column already (for an expression index: with the same function). The write
    then builds it as it builds any defined index. Refused as CREATE INDEX refuses it. None when
    the options define nothing new."""
    have, defined = table_partitions(table), False
    column, expression_column = _option_columns(cfg)
    if column and RECORD_INDEX in have and not any(d.source_fields == (column,) for d in secondary_indexes(table)):
        table, defined = _define_new(table, secondary_index(table, _option_name(cfg, column), column)), True
    column = expression_column
    options = option_pairs(cfg.get_str(C.METADATA_EXPRESSION_INDEX_OPTIONS) or "")
    if column and options and not any(
            d.source_fields == (column,) and d.function == options.get(EXPR) for d in expression_indexes(table)):
        if EXPR not in options:
            raise HoodieConfigError(f"{C.METADATA_EXPRESSION_INDEX_OPTIONS.key} must name the function "
                                    f"(expr=...), e.g. expr=from_unixtime,format=yyyy-MM-dd")
        index_type = cfg.get_str(C.EXPRESSION_INDEX_TYPE).lower()
        table = _define_new(table, expression_index(table, _option_name(cfg, column), column, index_type, options))
        defined = True
    return table if defined else None


def drop_from_options(table: HoodieTable, cfg: HoodieConfig) -> HoodieTable:
    """Hudi 1.0.1+'s ``hoodie.metadata.index.drop``: each named index goes as ``DROP INDEX`` drops
    it, before the write defines or builds anything. A name the table has no index for is passed
    over with a warning (a job repeats its options every batch). Refused: an index the same
    write's options keep or define (it would be built again at once)."""
    names = [n.strip() for n in (cfg.get_str(C.METADATA_INDEX_DROP) or "").split(",") if n.strip()]
    if not names:
        return table
    kept = {*wanted_partitions(cfg, table.version), *_option_defined_partitions(cfg)}
    for name in names:
        partition = _existing_partition(table, name)
        if partition is None:
            log.warning(f"{C.METADATA_INDEX_DROP.key}: {table.name} has no index {name}; nothing dropped "
                        f"(SHOW INDEXES FROM {table.name} lists its indexes)")
            continue
        if partition in kept and partition != FILES:     # files: drop_partitions says how to delete it
            raise HoodieConfigError(f"{C.METADATA_INDEX_DROP.key}={name} drops {partition}, which this write's "
                                    f"options keep or define, so it would be built again: {_keeping_key(partition)}")
        log.info(f"dropping index {partition} of {table.name} ({C.METADATA_INDEX_DROP.key})")
        table = drop_partitions(table, [partition])
    return table


def _existing_partition(table: HoodieTable, name: str) -> str | None:
    """The metadata partition ``name`` means: itself (``column_stats``, ``expr_index_idx``...) or
    the partition of the secondary or expression index of that user name; None when the table
    neither has, builds nor defines it."""
    known = _known_partitions(table)
    return next((p for p in (name, *_partitions_named(name)) if p in known), None)


def _known_partitions(table: HoodieTable) -> set[str]:
    """The metadata partitions the table has built, is building (pending indexing) or defines."""
    return {*read_definitions(table), *table_partitions(table),
            *(p for i in pending_indexing(table.timeline) for p in planned_paths(table.timeline, i))}


def _option_columns(cfg: HoodieConfig) -> tuple[str | None, str | None]:
    """The columns of the secondary and the expression index the write's options ask for (None
    where an option is unset or its index not enabled)."""
    secondary = cfg.get_str(C.METADATA_SECONDARY_INDEX_COLUMN)
    expression = cfg.get_str(C.METADATA_EXPRESSION_INDEX_COLUMN)
    return (secondary if secondary and cfg.get(C.METADATA_SECONDARY_INDEX_ENABLE) else None,
            expression if expression and cfg.get(C.METADATA_EXPRESSION_INDEX_ENABLE) else None)


def _option_defined_partitions(cfg: HoodieConfig) -> list[str]:
    """The partitions of the indexes :func:`define_from_options` may define from ``cfg``."""
    secondary, expression = _option_columns(cfg)
    return ([secondary_index_partition(_option_name(cfg, secondary))] if secondary else []) + (
        [expression_index_partition(_option_name(cfg, expression))] if expression else [])


def _keeping_key(partition: str) -> str:
    keys = {COLUMN_STATS: f"set {C.METADATA_COLUMN_STATS_ENABLE.key}=false (which drops it by itself)",
            BLOOM_FILTERS: f"set {C.METADATA_BLOOM_FILTER_ENABLE.key}=false (which drops it by itself)",
            RECORD_INDEX: f"set {C.METADATA_RECORD_INDEX_ENABLE.key}=false and use another {C.INDEX_TYPE.key} "
                          "(which drops it by itself)",
            PARTITION_STATS: f"set {C.METADATA_PARTITION_STATS_ENABLE.key}=false (which drops it by itself)"}
    return keys.get(partition, f"leave out {C.METADATA_SECONDARY_INDEX_COLUMN.key} / "
                               f"{C.METADATA_EXPRESSION_INDEX_ENABLE.key} for it")


def option_pairs(text: str) -> dict[str, str]:
    """``key=value`` pairs separated by commas (Hudi's ``getExpressionIndexOptions``); a value's
    enclosing quotes are dropped, as CREATE INDEX's OPTIONS write them."""
    pairs = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        if not sep:
            raise HoodieConfigError(f"{C.METADATA_EXPRESSION_INDEX_OPTIONS.key}: {pair!r} is not key=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        pairs[key.strip().strip("'\"")] = value
    return pairs


def _option_name(cfg: HoodieConfig, column: str) -> str:
    return cfg.get_str(C.INDEX_NAME) or column


def _define_new(table: HoodieTable, definition: IndexDefinition) -> HoodieTable:
    log.info(f"defining index {definition.name} of {table.name} from the write's options")
    return define(table, definition, if_not_exists=False)


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
    """``DROP INDEX``: the partition leaves the listing, then its files and its definition go (an
    index the indexer is building: its indexing instant is rolled back)."""
    known = _known_partitions(table)
    partition = next((p for p in _partitions_named(user_name) if p in known), None)
    if partition is None:
        if if_exists:
            return table
        raise HoodieConfigError(f"index {user_name} does not exist on {table.name}; "
                                f"SHOW INDEXES FROM {table.name} lists its indexes")
    return drop_partitions(table, [partition])


def drop_partitions(table: HoodieTable, partitions: list[str]) -> HoodieTable:
    """Drop metadata partitions (Hudi's ``dropIndex``), under the caller's table lock: pending
    indexing instants building them are rolled back (all their partitions must be among
    ``partitions``), built ones leave ``hoodie.table.metadata.partitions`` before their files go,
    and secondary and expression indexes lose their definition in index.json."""
    pending = {i.timestamp: planned_paths(table.timeline, i) for i in pending_indexing(table.timeline)}
    have = table_partitions(table)
    for_pending, built = drop_plan(partitions, have, pending, [d for d in read_definitions(table)])
    for instant in for_pending:
        table = drop_pending_indexing(table, next(i for i in pending_indexing(table.timeline) if i.timestamp == instant))
    if built:
        table = set_table_partitions(table, [p for p in have if p not in built])
    storage = mdt_storage(table)
    for partition in partitions:       # built ones, and what a failed build left of defined ones
        if storage.exists(partition):
            storage.delete_dir(partition)
    defined = read_definitions(table)
    for partition in partitions:
        if partition in defined:
            table = remove_definition(table, partition)
    return table


def drop_plan(asked: list[str], built: list[str], pending: dict[str, list[str]],
              defined: list[str]) -> tuple[list[str], list[str]]:
    """What dropping ``asked`` does: the pending indexing instants to roll back and the built
    partitions to delete. Refused: ``files`` (the metadata table itself: turn it off instead), a
    partition that is neither built, being built nor defined, a pending instant that also builds
    partitions not asked for, and an index others need that stays (the record index under
    secondary indexes, column stats under partition stats)."""
    known = set(built) | {p for ps in pending.values() for p in ps} | set(defined)
    for partition in asked:
        if partition == FILES:
            raise HoodieConfigError(f"the {FILES} partition is the metadata table itself: write with "
                                    f"{C.METADATA_ENABLE.key}=false to delete it, not drop it as an index")
        if partition not in known:
            raise HoodieConfigError(f"metadata partition {partition} is not built, being built or defined; the table "
                                    f"has {', '.join(sorted(known)) or 'none'}")
    instants = [t for t, ps in sorted(pending.items()) if set(ps) & set(asked)]
    for t in instants:
        others = [p for p in pending[t] if p not in asked]
        if others:
            raise HoodieConfigError(f"indexing {t} builds {', '.join(pending[t])}: drop them all together, or roll it "
                                    f"back (hudictl table index build --mode rollback --instant {t})")
    staying = (known - set(asked)) - {FILES}
    needs = {RECORD_INDEX: [p for p in staying if is_secondary_index_partition(p)],
             COLUMN_STATS: [p for p in staying if p == PARTITION_STATS]}
    for partition, dependents in needs.items():
        if partition in asked and dependents:
            raise HoodieConfigError(f"{', '.join(sorted(dependents))} need{'s' if len(dependents) == 1 else ''} "
                                    f"{partition}: drop {'it' if len(dependents) == 1 else 'them'} with it, or first")
    return instants, [p for p in dict.fromkeys(asked) if p in built]


def drop_pending_indexing(table: HoodieTable, pending: Instant) -> HoodieTable:
    """Roll a pending indexing instant back, under the caller's table lock: its partitions' files
    and build instants go from the metadata table, then the plan (until then its partitions stay
    inflight, never read), and the inflight list is written again without them."""
    try:
        builds = [p.build_instant for p in plan_of(table.timeline, pending)]
    except HoodieTimelineError:         # another indexer's plan: its builds are not known here
        builds = []
    mdt = open_mdt(table)
    storage = mdt_storage(table)
    for partition in planned_paths(table.timeline, pending):
        if storage.exists(partition):
            storage.delete_dir(partition)
    for build in builds if mdt is not None else []:
        found = mdt.timeline.get(build)
        if found is not None:
            for f in mdt.timeline.files_of(found):
                mdt.storage.delete(mdt.timeline.path_of(f))
    table.timeline.delete_pending_files(pending)
    reloaded = table.reload()
    return set_table_partitions(reloaded, table_partitions(reloaded))
