"""CUSTOM merge mode: records of one key merged by a Python merger the user names.

Hudi 1.x runs a ``HoodieRecordMerger`` Java class (``hoodie.record.merge.mode=CUSTOM``, the class in
``hoodie.record.merge.custom.implementation.classes``, picked by ``hoodie.record.merge.strategy.id``).
Here the implementation is a Python class, named ``package.module:Class`` (or ``package.module.Class``),
that Spark's executors import by the same name (ship it with ``--py-files`` or install it on the
image). It works on columns, not records, so one call merges a whole file group's pairs::

    class LargestAmount:
        strategy_id = "9d3c2b7e-..."            # the table's hoodie.record.merge.strategy.id

        def merge(self, older: pa.Table, newer: pa.Table) -> MergedRows:
            keep_older = pc.greater(older["amount"], newer["amount"])
            rows = pa.table({n: pc.if_else(keep_older, older[n], newer[n]) for n in newer.column_names})
            return MergedRows(rows, pa.array([False] * newer.num_rows))

Row ``i`` of ``older`` and of ``newer`` are two versions of one key, ``older`` the stored (or
earlier) one; ``newer`` has the columns of the incoming batch or log, ``older`` those of the stored
rows. The answer holds one row per pair with ``newer``'s columns (a column it leaves out is taken
from ``newer``) and, per row, whether the merged record is a delete. Deletes the write or the log
marks (the delete operation, ``_hoodie_is_deleted``, delete blocks) are not offered to the merger:
they win, as bare keys do in Hudi. A batch's versions of one key meet in arrival order when the
write runs in this process, neighbours in pairs and then the pairs' results (as Hudi's
``reduceByKey`` combines in a tree), so a merger should be associative; after Spark's shuffle the
arrival order is not defined either, so it should not depend on it. Logged versions meet in log
order.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np
import pyarrow as pa

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieValidationError

CUSTOM = "CUSTOM"
# Hudi's strategy id of payload-class merging (the metadata table's): no Python merger behind it.
PAYLOAD_STRATEGY = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class MergedRows:
    rows: pa.Table              # one merged row per pair, in ``newer``'s columns
    deleted: pa.Array | np.ndarray   # per row: the merged record is a delete


@runtime_checkable
class RecordMerger(Protocol):
    """What ``hoodie.record.merge.custom.implementation.classes`` names: a class whose instances
    merge aligned versions of the same keys."""
    strategy_id: str

    def merge(self, older: pa.Table, newer: pa.Table) -> MergedRows: ...


def custom_merger_name(options: HoodieConfig) -> str | None:
    """The importable name of the table's merger under the CUSTOM merge mode, else None."""
    if (options.get_str(C.RECORD_MERGE_MODE) or "").upper() != CUSTOM:
        return None
    if options.get_str(C.RECORD_MERGE_STRATEGY_ID) == PAYLOAD_STRATEGY:
        return None
    names = [n.strip() for n in (options.get_str(C.RECORD_MERGE_CUSTOM_CLASSES) or "").split(",") if n.strip()]
    if not names:
        raise HoodieConfigError(
            f"{C.RECORD_MERGE_MODE.key}=CUSTOM needs a merger: set {C.RECORD_MERGE_CUSTOM_CLASSES.key} to the "
            "importable name of a Python class with a strategy_id and merge(older, newer) "
            "(e.g. 'my_pkg.mergers:LargestAmount'; see hudi_engine.api.RecordMerger)")
    wanted = options.get_str(C.RECORD_MERGE_STRATEGY_ID)
    for name in names:
        load_merger(name)           # refused here, on the driver, before any task runs
        if wanted is None or getattr(_load_class(name), "strategy_id", None) == wanted:
            return name
    raise HoodieConfigError(
        f"none of {C.RECORD_MERGE_CUSTOM_CLASSES.key}={','.join(names)} has strategy_id '{wanted}' "
        f"({C.RECORD_MERGE_STRATEGY_ID.key}); give the merger of that strategy, or the table's strategy id")


def strategy_id_of(name: str) -> str:
    """The strategy id a merger class declares (what a new table of version 8+ persists)."""
    sid = getattr(_load_class(name), "strategy_id", None)
    if not isinstance(sid, str) or not sid:
        raise HoodieConfigError(f"merger {name} has no strategy_id (a string, e.g. a UUID); give the class one")
    return sid


@cache
def load_merger(name: str) -> RecordMerger:
    """One instance per process of the merger class ``name`` (the executors import it too)."""
    merger = _load_class(name)()
    if not callable(getattr(merger, "merge", None)):
        raise HoodieConfigError(f"merger {name} has no merge(older, newer) method")
    return merger


def _load_class(name: str) -> type:
    module_name, _, attr = name.partition(":") if ":" in name else name.rpartition(".")
    if not module_name or not attr:
        raise HoodieConfigError(f"merger name '{name}' is not importable: write it as 'package.module:Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise HoodieConfigError(
            f"cannot import module '{module_name}' of merger {name} ({e}); it must be importable in the "
            "driver and on Spark's executors (install it, or ship it with --py-files / spark.submit.pyFiles)") from e
    try:
        return getattr(module, attr)
    except AttributeError:
        raise HoodieConfigError(f"module '{module_name}' has no '{attr}' (merger {name})") from None


def run_merger(name: str, older: pa.Table, newer: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """The merger's rows in ``newer``'s schema and its delete flags, checked for shape."""
    out = load_merger(name).merge(older, newer)
    rows, deleted = (out.rows, out.deleted) if isinstance(out, MergedRows) else (None, None)
    n = newer.num_rows
    if rows is None or not isinstance(rows, pa.Table) or rows.num_rows != n:
        raise HoodieValidationError(
            f"merger {name} must return MergedRows(rows, deleted) with one row per pair ({n}); it returned {out!r:.200}")
    flags = np.asarray(deleted.to_numpy(zero_copy_only=False) if isinstance(deleted, (pa.Array, pa.ChunkedArray))
                       else deleted, dtype=bool)
    if flags.shape != (n,):
        raise HoodieValidationError(f"merger {name} returned {flags.shape} delete flags for {n} pairs")
    columns = []
    for field in newer.schema:
        column = rows[field.name] if field.name in rows.column_names else newer[field.name]
        try:
            columns.append(column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise HoodieValidationError(
                f"merger {name} returned column '{field.name}' as {column.type}, which does not cast to the "
                f"record's {field.type}: {e}") from e
    return pa.table(columns, schema=newer.schema), flags
