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
from ..errors import HoodieConfigError
from ..table.meta_client import PROPERTIES_FILE, HoodieTable
from ..table.properties import write_properties_text
from .table_changes import compact_every_log, refuse_logs, refuse_pending

log = logging.getLogger(__name__)

COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"
_NAMES = {"COW": COPY_ON_WRITE, COPY_ON_WRITE: COPY_ON_WRITE, "MOR": MERGE_ON_READ, MERGE_ON_READ: MERGE_ON_READ}


def table_type_named(value: str) -> str:
    """``COW``/``MOR`` or the full names, any case."""
    name = _NAMES.get(str(value).strip().upper())
    if name is None:
        raise HoodieConfigError(f"table type {value!r} is not one of COW, MOR, {COPY_ON_WRITE}, {MERGE_ON_READ}")
    return name


def change_table_type(spark, table: HoodieTable, target: str, options: dict | None = None) -> HoodieTable:
    """The table, now of type ``target``; merge-on-read to copy-on-write compacts first (with
    ``spark``; ``options`` are the compaction's writer settings)."""
    target = table_type_named(target)
    if table.table_type == target:
        log.info(f"{table.name} is already {target}")
        return table
    change = f"change the type to {target}"
    cfg = HoodieConfig({**(options or {}), **table.props})
    refuse_pending(table, change)
    if target == COPY_ON_WRITE:
        table = compact_every_log(spark, table, options or {}, change)
    with locked_table(table, cfg, f"changing the table type to {target}") as table:
        refuse_pending(table, change)
        if target == COPY_ON_WRITE:
            refuse_logs(table, change)
        props = {**table.props, C.TABLE_TYPE.key: target}
        table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
    log.info(f"{table.name} is now {target}")
    return HoodieTable(table.storage, props)
