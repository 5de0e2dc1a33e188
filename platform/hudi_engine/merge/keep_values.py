"""Partial records (Hudi 1.1's ``IS_PARTIAL`` log blocks): a version that carries only some
columns, written by MERGE INTO on merge-on-read tables when an update sets only those. The columns
it lacks keep the values of the version it merges with (Hudi's KEEP_VALUES partial merging), so a
null it carries is a value, unlike ``IGNORE_DEFAULTS`` (:mod:`.partial`).

A row says what its version lacks in :data:`ABSENT`; merging two versions of a key takes the
winner's columns (by the merge mode's ordering) and, where the winner lacks one, the loser's
(Hudi's ``mergePartialRecords``): log versions fold in log order, then the base row under them.
"""
from __future__ import annotations

import json
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..schema.meta_fields import META_FIELDS, RECORD_KEY
from .partial import stored_positions

# The columns a row's version lacks, joined by _SEP; null (or absent column) when it has them all.
ABSENT = "_hoodie_absent_columns"
# OP_COLUMN's mark of an update that carries only the columns of hoodie.write.partial.update.schema.
PARTIAL_UPDATE = "P"
_SEP = "\x1f"


def updated_columns(options: HoodieConfig) -> tuple[str, ...] | None:
    """The columns a partial-update write carries (``hoodie.write.partial.update.schema``, an Avro
    record schema, as Hudi's MERGE INTO sets it); None for full-record writes."""
    text = options.get_str(C.WRITE_PARTIAL_UPDATE_SCHEMA)
    if not text:
        return None
    try:
        schema = json.loads(text)
        names = tuple(f["name"] for f in schema["fields"])
    except (ValueError, KeyError, TypeError) as exc:
        raise HoodieConfigError(f"{C.WRITE_PARTIAL_UPDATE_SCHEMA.key} must be an Avro record schema of the "
                                f"updated fields ({exc})") from None
    return tuple(n for n in names if n not in META_FIELDS)


def with_absent(table: pa.Table, absent: Iterable[str], rows: np.ndarray | None = None) -> pa.Table:
    """``table`` with :data:`ABSENT` naming ``absent`` on ``rows`` (all rows when None); other
    rows keep what they said."""
    names = sorted(set(absent))
    if not names:
        return table
    value = pa.scalar(_SEP.join(names), pa.string())
    n = table.num_rows
    current = table[ABSENT] if ABSENT in table.column_names else pa.nulls(n, pa.string())
    column = (pa.array(np.full(n, value.as_py(), dtype=object), pa.string()) if rows is None
              else pc.if_else(pa.array(rows), value, current))
    if ABSENT in table.column_names:
        return table.set_column(table.schema.get_field_index(ABSENT), ABSENT, column)
    return table.append_column(ABSENT, column)


def has_absent(table: pa.Table) -> bool:
    return ABSENT in table.column_names and table[ABSENT].null_count < table.num_rows


def absent_masks(table: pa.Table) -> dict[str, np.ndarray]:
    """For each column some row lacks: which rows lack it."""
    if not has_absent(table):
        return {}
    codes, sets = _codes(table)
    masks: dict[str, np.ndarray] = {}
    for code, names in enumerate(sets):
        rows = codes == code
        for name in names:
            masks[name] = masks.get(name, np.zeros(table.num_rows, dtype=bool)) | rows
    return masks


def overlay(winner: pa.Table, loser: pa.Table) -> pa.Table:
    """Row by row (both tables aligned, one schema): the winner's values, the loser's in the
    columns the winner lacks; the result lacks what both lack."""
    masks = absent_masks(winner)
    if not masks:
        return winner
    out = winner
    for name, lacks in masks.items():
        if name in out.column_names:
            at = out.schema.get_field_index(name)
            out = out.set_column(at, out.schema.field(at),
                                 pc.if_else(pa.array(lacks), loser[name], winner[name]))
    return _set_absent(out, _lacked_by_both(winner, loser))


def _lacked_by_both(a: pa.Table, b: pa.Table) -> pa.Array:
    """Per row, the columns both ``a`` and ``b`` lack, as :data:`ABSENT` values (worked out once
    per distinct pair: a log holds few partial schemas)."""
    left, left_sets = _codes(a)
    right, right_sets = _codes(b)
    width = len(right_sets)
    pairs, at = np.unique(left * width + right, return_inverse=True)
    joined = [_SEP.join(sorted(left_sets[p // width] & right_sets[p % width])) or None for p in pairs]
    return pa.array(joined, pa.string()).take(pa.array(at.reshape(-1)))


def _codes(table: pa.Table) -> tuple[np.ndarray, list[frozenset[str]]]:
    """Each row's :data:`ABSENT` as a code into the list of distinct sets (the last one empty)."""
    if ABSENT not in table.column_names:
        return np.zeros(table.num_rows, dtype=np.int64), [frozenset()]
    encoded = pc.dictionary_encode(table[ABSENT]).combine_chunks()
    sets = [frozenset(v.split(_SEP)) if v else frozenset() for v in encoded.dictionary.to_pylist()]
    codes = pc.fill_null(encoded.indices, len(sets)).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, sets + [frozenset()]


def _set_absent(table: pa.Table, column: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(ABSENT), ABSENT, column)


def filled_from_stored(written: pa.Table, stored: pa.Table) -> pa.Table:
    """Written rows with the stored row of their key in the columns they lack (a stored row is a
    whole record); rows with no stored row keep their own values there (nulls where the input
    lacked the column). :data:`ABSENT` is dropped."""
    masks = absent_masks(written)
    if masks:
        source, found = stored_positions(written, stored)
        for name, lacks in masks.items():
            if name not in written.column_names or name not in stored.column_names:
                continue
            current = written[name]
            previous = stored[name].take(pa.array(source))
            try:
                previous = previous.cast(current.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue        # a type the write changed: its own (null) value stands
            at = written.schema.get_field_index(name)
            written = written.set_column(at, written.schema.field(at),
                                         pc.if_else(pa.array(lacks & found), previous, current))
    return written.drop_columns([ABSENT]) if ABSENT in written.column_names else written


def fold_versions(log: pa.Table, older_wins, deleted) -> pa.Table:
    """One record per key from its versions in arrival order, merged pair by pair as Hudi's record
    buffer does (each new version with what the earlier ones made): ``older_wins(older, newer)``
    says row by row where the earlier side wins (event-time ordering), ``deleted(table)`` which
    rows are deletes. A delete on the winning side (or either side) gives the winner unmerged.
    The results keep the arrival order of their keys' last versions."""
    n = log.num_rows
    if n <= 1:
        return log
    arrival = np.arange(n, dtype=np.int64)
    order = pc.sort_indices(pa.table({"k": log[RECORD_KEY], "a": pa.array(arrival)}),
                            sort_keys=[("k", "ascending"), ("a", "ascending")]).to_numpy()
    keys = log[RECORD_KEY].take(pa.array(order)).to_numpy(zero_copy_only=False)
    starts = np.r_[True, keys[1:] != keys[:-1]]
    run = np.cumsum(starts) - 1
    rank = arrival - np.flatnonzero(starts)[run]
    acc = log.take(pa.array(order[rank == 0]))
    last = order[rank == 0].copy()
    for r in range(1, int(rank.max()) + 1):
        at = rank == r
        runs, newer_idx = run[at], order[at]
        older, newer = acc.take(pa.array(runs)), log.take(pa.array(newer_idx))
        keep_older = older_wins(older, newer)
        winner = _pick(keep_older, older, newer)
        loser = _pick(keep_older, newer, older)
        plain = deleted(older) | deleted(newer)
        merged = _pick(plain, winner, overlay(winner, loser)) if not plain.all() else winner
        position = np.arange(acc.num_rows)
        position[runs] = acc.num_rows + np.arange(len(runs))
        acc = pa.concat_tables([acc, merged]).take(pa.array(position))
        last[runs] = newer_idx
    return acc.take(pa.array(np.argsort(last, kind="stable")))


def _pick(first: np.ndarray, a: pa.Table, b: pa.Table) -> pa.Table:
    """Row by row, ``a``'s row where ``first`` holds, else ``b``'s."""
    if first.all():
        return a
    if not first.any():
        return b
    mask = pa.array(first)
    return pa.table([pc.if_else(mask, a[name], b[name]) for name in a.column_names], schema=a.schema)
