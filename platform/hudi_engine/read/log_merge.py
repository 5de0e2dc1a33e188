"""Merging a file slice's log records onto its base rows, in plain Arrow (no I/O, no Spark).

The same functions serve snapshot reads, incremental reads and compaction, so a compacted base
file always holds exactly what a snapshot read showed before.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..merge.keep_values import ABSENT, fold_versions, has_absent
from ..merge.record_merger import (DELETE, OP_COLUMN, MergeSpec, deduplicate, is_delete, is_older, merge,
                                   ordering_missing)
from ..schema.meta_fields import RECORD_KEY

DATA, DELETES = "data", "delete"


@dataclass(frozen=True)
class LogPart:
    """The records of one valid log block, in log order: upserts (``DATA``) or deleted keys
    (``DELETES``; a table with the record key column and, when known, the ordering field)."""
    kind: str
    records: pa.Table


def combine_log_records(parts: list[LogPart], spec: MergeSpec) -> pa.Table | None:
    """One record per key from the whole log: later blocks supersede earlier ones, by ordering
    value under event-time merging. Deleted keys stay as rows marked ``OP_COLUMN == "D"`` so they
    can still remove the base file's row."""
    tables = []
    for part in parts:
        op = DELETE if part.kind == DELETES else "U"
        tables.append(part.records.append_column(
            OP_COLUMN, pa.array(np.full(part.records.num_rows, op, dtype=object), pa.string()))
            if OP_COLUMN not in part.records.column_names else part.records)
    if not tables:
        return None
    log = pa.concat_tables(tables, promote_options="permissive")
    if log.num_rows == 0:
        return log
    log = _drop_superseded_by_deletes(log, spec)
    if has_absent(log):
        return fold_versions(log, lambda older, newer: _older_wins(older, newer, spec), is_delete)
    # Commit-time merging: the last write wins whatever its ordering value (Hudi's overwrite payload).
    return deduplicate(log, replace(spec, ordering_fields=spec.ordering_fields if spec.event_time else (),
                                    dedup=True))


def _older_wins(older: pa.Table, newer: pa.Table, spec: MergeSpec) -> np.ndarray:
    """Where the earlier version of a key survives the later one: a larger ordering value under
    event-time merging; never by commit time."""
    if not spec.ordered:
        return np.zeros(older.num_rows, dtype=bool)
    return is_older([newer[f] for f in spec.ordering_fields], [older[f] for f in spec.ordering_fields])


def _drop_superseded_by_deletes(log: pa.Table, spec: MergeSpec) -> pa.Table:
    """A delete with no ordering value of its own (or any delete under commit-time merging) ends
    every earlier version of its key; versions written after it live on."""
    deletes = pc.fill_null(pc.equal(log[OP_COLUMN], DELETE), False).to_numpy(zero_copy_only=False)
    if spec.ordered:
        deletes &= ordering_missing(log, spec.ordering_fields)
    if not deletes.any():
        return log
    n = log.num_rows
    pos = pa.array(np.arange(n, dtype=np.int64))
    mask = pa.array(deletes)
    cut = (pa.table({RECORD_KEY: log[RECORD_KEY].filter(mask), "__cut": pos.filter(mask)})
           .group_by(RECORD_KEY).aggregate([("__cut", "max")]))
    last = pa.table({RECORD_KEY: log[RECORD_KEY], "__p": pos}).group_by(RECORD_KEY).aggregate([("__p", "max")])
    rows = (pa.table({RECORD_KEY: log[RECORD_KEY], "__pos": pos})
            .join(cut, RECORD_KEY, join_type="left outer").join(last, RECORD_KEY, join_type="inner")
            .sort_by("__pos"))
    at = rows["__pos"].to_numpy()
    cutoff = pc.fill_null(rows["__cut_max"], -1).to_numpy()
    final = rows["__p_max"].to_numpy()
    # Keep rows at or after their key's last hard delete; that delete goes if a version follows it.
    keep = (at > cutoff) | ((at == cutoff) & (final == cutoff))
    return log.filter(pa.array(keep))


def merge_slice(base: pa.Table | None, parts: list[LogPart], spec: MergeSpec) -> pa.Table | None:
    """The slice's rows as of its last valid log block: base rows, updated and deleted by the log."""
    combined = combine_log_records(parts, spec)
    if combined is None or combined.num_rows == 0:
        return base
    result = merge(base, combined, replace(spec, dedup=False))
    written = result.written.drop_columns([OP_COLUMN])
    if base is None:
        return written
    return pa.concat_tables([result.kept, written], promote_options="permissive")


def unmerged_slice(base: pa.Table | None, parts: list[LogPart]) -> pa.Table | None:
    """``skip_merge``: base rows and every logged record as found; deletes are not applied."""
    tables = ([base] if base is not None else []) + [
        p.records.drop_columns([ABSENT]) if ABSENT in p.records.column_names else p.records
        for p in parts if p.kind == DATA]
    if not tables:
        return None
    return pa.concat_tables(tables, promote_options="permissive")
