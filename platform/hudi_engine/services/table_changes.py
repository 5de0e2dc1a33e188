"""What changing a whole table (its type, its version) needs first: no write or file-group rewrite
planned for the table as it is, and, where readers of the new form would not read log files the
same way, no log file left in the latest slices."""
from __future__ import annotations

import logging

from .. import config as C
from ..errors import HoodieConfigError, HoodieError
from ..table.meta_client import HoodieTable
from ..timeline.instant import CLUSTERING, LOG_COMPACTION, WRITE_ACTIONS, Instant
from .compaction import run_compactions, schedule_compaction
from .compaction_plan import UNBOUNDED

log = logging.getLogger(__name__)

# Pending actions planned for the table as it is: a change waits for them.
_BLOCKING = WRITE_ACTIONS + (CLUSTERING, LOG_COMPACTION)
# Full compactions in a row before giving up: each one compacts every slice with log files, so a
# second is needed only when writers keep adding logs.
MAX_FULL_COMPACTIONS = 3


def blocking(instants: tuple[Instant, ...] | list[Instant]) -> list[Instant]:
    """Pending writes and file-group rewrites other than compactions."""
    return [i for i in instants if not i.is_completed and i.action in _BLOCKING]


def refuse_pending(table: HoodieTable, change: str) -> None:
    pending = blocking(table.reload().timeline.instants)
    if pending:
        shown = ", ".join(f"{i.action} {i.timestamp}" for i in pending[:5])
        raise HoodieError(
            f"cannot {change} of {table.name} while {shown} {'is' if len(pending) == 1 else 'are'} pending: "
            "they were planned for the table as it is. Let them finish (a failed write is rolled back by the "
            "next write, a clustering by `hudictl cluster --mode execute`) and run it again")


def slices_with_logs(table: HoodieTable) -> list[tuple[str, str]]:
    from ..metadata_table.reader import table_view

    return sorted((s.partition, s.file_id) for s in table_view(table).latest_file_slices() if s.log_files)


def refuse_logs(table: HoodieTable, change: str) -> None:
    left = slices_with_logs(table)
    if left:
        raise HoodieError(
            f"cannot {change} of {table.name}: {len(left)} file group(s) have log files (e.g. "
            f"{left[0][0] or '<no partition>'}/{left[0][1]}) after compacting: a write added them meanwhile. "
            "Stop its writers and run it again")


def compact_every_log(spark, table: HoodieTable, options: dict, change: str) -> HoodieTable:
    """Pending compactions, then full compactions until no latest slice has log files."""
    if spark is None:
        raise HoodieConfigError(f"to {change} of {table.name} its log files are compacted first: pass a SparkSession")
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
        log.info(f"{table.name}: full compaction {planned.timestamp}, to {change}")
        run_compactions(spark, table.reload(), planned.timestamp, options)
    table = table.reload()
    refuse_logs(table, change)
    return table
