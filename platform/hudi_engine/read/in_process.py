"""Hudi queries read in this process, as Arrow tables: no Spark at all, for tables (or the part
of one a query's filters leave) that fit one machine. The plan is the one ``read`` uses
(:mod:`.plan`); each file slice is read, and merged with its log files, by the same Arrow function
Spark's tasks run (:mod:`.file_slice`), a slice per thread."""
from __future__ import annotations

import pyarrow as pa

from ..config import report_unknown
from ..expr.skipping import filter_arrow, predicates
from ..storage.options import scoped
from ..table.meta_client import HoodieTable
from ..threads import parallel_map
from .cdc import QUERY_SCHEMA, plan_cdc, split_changes
from .file_slice import read_file_slice
from .plan import is_cdc_query, plan_read


def read_arrow(base_path: str, options: dict | None = None, filters=None,
               columns: list[str] | None = None) -> pa.Table:
    """``read``'s query (snapshot, read-optimized, time travel, incremental or CDC, by the same
    ``hoodie.*`` options) as an Arrow table. ``filters``: ``(column, op, value)`` triples, as
    ``read`` takes them; ``columns``: the columns to return (all when None)."""
    report_unknown(options)
    with scoped(options):
        table = HoodieTable.load(base_path)
        storage = table.storage
        if is_cdc_query(options):
            cdc = plan_cdc(table, options)
            parts = parallel_map(lambda group: [split_changes(storage, cdc, split) for split in group], cdc.groups)
            result = _concat([t for p in parts for t in p], QUERY_SCHEMA)
        else:
            plan = plan_read(table, options, filters)
            parts = parallel_map(lambda s: read_file_slice(storage, s, plan.schema, plan.commit_times, plan.merge),
                                 plan.slices)
            result = _concat(parts, plan.schema)
            for pred in predicates(filters, plan.schema):
                result = filter_arrow(result, pred)
    return result.select(columns) if columns is not None else result


def _concat(parts: list[pa.Table], schema: pa.Schema) -> pa.Table:
    return pa.concat_tables(parts) if parts else schema.empty_table()
