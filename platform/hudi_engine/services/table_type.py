"""Changing a table's type, as Hudi's CLI does (``table change-table-type --target-type COW|MOR``).

Copy-on-write to merge-on-read only rewrites ``hoodie.table.type``: every copy-on-write file slice
(a base file) is a merge-on-read slice too. Merge-on-read to copy-on-write first compacts every file
group that has log files, because copy-on-write readers (and writers, which rewrite base files)
never read logs: pending compactions run first, then full compactions (every slice with log files,
whatever the strategy) until none is left. The type then changes under the table lock, once it is
checked that no write added log files meanwhile; a write or clustering still pending is named and
the change refused, since it was planned for the old type.
"""
from __future__ import annotations

import logging

from .. import config as C
from ..concurrency.locks import locked_table
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieError
from ..table.meta_client import PROPERTIES_FILE, HoodieTable
from ..table.properties import write_properties_text
from ..timeline.instant import CLUSTERING, LOG_COMPACTION, WRITE_ACTIONS, Instant
from .compaction import run_compactions, schedule_compaction
from .compaction_plan import UNBOUNDED

log = logging.getLogger(__name__)

COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"
_NAMES = {"COW": COPY_ON_WRITE, COPY_ON_WRITE: COPY_ON_WRITE, "MOR": MERGE_ON_READ, MERGE_ON_READ: MERGE_ON_READ}
# Pending actions planned for the table's current type: the change waits for them.
_BLOCKING = WRITE_ACTIONS + (CLUSTERING, LOG_COMPACTION)
# Full compactions in a row before giving up: each one compacts every slice with log files, so a
# second is needed only when writers keep adding logs.
MAX_FULL_COMPACTIONS = 3


def table_type_named(value: str) -> str:
    """``COW``/``MOR`` or the full names, any case."""
    name = _NAMES.get(str(value).strip().upper())
    if name is None:
        raise HoodieConfigError(f"table type {value!r} is not one of COW, MOR, {COPY_ON_WRITE}, {MERGE_ON_READ}")
    return name


def blocking(instants: tuple[Instant, ...] | list[Instant]) -> list[Instant]:
    """Pending writes and file-group rewrites other than compactions."""
    return [i for i in instants if not i.is_completed and i.action in _BLOCKING]


def slices_with_logs(table: HoodieTable) -> list[tuple[str, str]]:
    from ..metadata_table.reader import table_view

    return sorted((s.partition, s.file_id) for s in table_view(table).latest_file_slices() if s.log_files)


def change_table_type(spark, table: HoodieTable, target: str, options: dict | None = None) -> HoodieTable:
    """The table, now of type ``target``; merge-on-read to copy-on-write compacts first (with
    ``spark``; ``options`` are the compaction's writer settings)."""
    target = table_type_named(target)
    if table.table_type == target:
        log.info(f"{table.name} is already {target}")
        return table
    cfg = HoodieConfig({**(options or {}), **table.props})
    _refuse_pending(table, target)
    if target == COPY_ON_WRITE:
        table = _compact_all(spark, table, options or {})
    with locked_table(table, cfg, f"changing the table type to {target}") as table:
        _refuse_pending(table, target)
        if target == COPY_ON_WRITE and (left := slices_with_logs(table)):
            raise HoodieError(
                f"cannot change {table.name} to {COPY_ON_WRITE}: a write added log files to {len(left)} file "
                f"group(s) (e.g. {left[0][0] or '<no partition>'}/{left[0][1]}) after the compaction; stop its "
                "writers and run the change again")
        props = {**table.props, C.TABLE_TYPE.key: target}
        table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
    log.info(f"{table.name} is now {target}")
    return HoodieTable(table.storage, props)


def _refuse_pending(table: HoodieTable, target: str) -> None:
    pending = blocking(table.reload().timeline.instants)
    if pending:
        shown = ", ".join(f"{i.action} {i.timestamp}" for i in pending[:5])
        raise HoodieError(
            f"cannot change {table.name} to {target} while {shown} {'is' if len(pending) == 1 else 'are'} "
            f"pending: they were planned for {table.table_type}. Let them finish (a failed write is rolled "
            "back by the next write, a clustering by `hudictl cluster --mode execute`) and run the change again")


def _compact_all(spark, table: HoodieTable, options: dict) -> HoodieTable:
    if spark is None:
        raise HoodieConfigError(f"changing {table.name} to {COPY_ON_WRITE} compacts its log files: pass a SparkSession")
    full = {**options, C.COMPACTION_STRATEGY.key: UNBOUNDED}
    for instant in run_compactions(spark, table, options=options):
        log.info(f"{table.name}: ran pending compaction {instant}")
    for _ in range(MAX_FULL_COMPACTIONS):
        table = table.reload()
        if not slices_with_logs(table):
            return table
        planned = schedule_compaction(table, full, force=True)
        if planned is None:
            break
        log.info(f"{table.name}: full compaction {planned.timestamp} before changing to {COPY_ON_WRITE}")
        run_compactions(spark, table.reload(), planned.timestamp, options)
    table = table.reload()
    left = slices_with_logs(table)
    if left:
        raise HoodieError(
            f"cannot change {table.name} to {COPY_ON_WRITE}: {len(left)} file group(s) still have log files after "
            f"{MAX_FULL_COMPACTIONS} full compactions (e.g. {left[0][0] or '<no partition>'}/{left[0][1]}); stop "
            "its writers and run the change again")
    return table

