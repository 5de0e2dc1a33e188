"""Merging records, in plain Arrow: the per-file-group work that Spark only schedules.

Incoming records carry ``_hoodie_record_key`` and an operation column (:data:`OP_COLUMN`,
``"D"`` for a delete); stored records are the rows of the file group's current base file.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..schema.meta_fields import META_FIELDS, RECORD_KEY
from .custom import run_merger
from .keep_values import PARTIAL_UPDATE, filled_from_stored
from .partial import PARTIAL_PAYLOAD_MERGE_MODES, partial_winners, with_stored_values

OP_COLUMN = "_hoodie_op"
IS_DELETED = "_hoodie_is_deleted"
DELETE = "D"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
# The payload classes whose merging an ordering mode says, as Hudi 1.x maps them to merge modes when it
# upgrades a table (the payloads with partial updates or delete markers of their own are not among them).
PAYLOAD_MERGE_MODES = {EVENT_TIME_PAYLOAD: "EVENT_TIME_ORDERING",
                       "org.apache.hudi.common.model.EventTimeAvroPayload": "EVENT_TIME_ORDERING",
                       C.PAYLOAD_CLASS.default: "COMMIT_TIME_ORDERING"}

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MergeSpec:
    ordering_fields: tuple[str, ...]    # compared in order (Hudi's ArrayComparable); () for none
    dedup: bool                 # combine incoming records that share a key
    event_time: bool            # a stored record with a larger ordering value survives an update
    partial: bool = False       # IGNORE_DEFAULTS: an update's null columns keep the previous values
    custom: str | None = None   # CUSTOM: the importable name of the Python merger (merge/custom.py)

    @property
    def ordered(self) -> bool:
        """Whether ordering values decide between versions (event-time merging with fields)."""
        return self.event_time and bool(self.ordering_fields)


@dataclass
class MergeResult:
    kept: pa.Table              # stored rows written back unchanged (meta columns kept)
    written: pa.Table           # incoming rows to write with this instant's meta columns
    num_updates: int
    num_inserts: int
    num_deletes: int
    inserted_keys: pa.Array | None = None     # keys of ``written`` the stored rows did not have


def ordering_fields(options: HoodieConfig) -> tuple[str, ...]:
    """The ordering fields, comma-separated as Hudi 1.1 takes them under either of its keys."""
    value = options.get_str(C.PRECOMBINE_FIELD) or ""
    return tuple(f.strip() for f in value.split(",") if f.strip())


def ordering_missing(table: pa.Table, fields: tuple[str, ...]) -> np.ndarray:
    """Rows with no ordering value: a field absent or null (Hudi's ``OrderingValues.isMissing``)."""
    missing = np.zeros(table.num_rows, dtype=bool)
    for name in fields:
        if name not in table.column_names:
            return np.ones(table.num_rows, dtype=bool)
        missing |= table[name].is_null().to_numpy(zero_copy_only=False)
    return missing


def ordering_struct(table: pa.Table, fields: tuple[str, ...]) -> pa.StructArray:
    """The ordering values of several fields as one struct per row, null where any is missing:
    how a delete block and Spark's struct comparison carry a compared-in-order value."""
    arrays = [table[name].combine_chunks() for name in fields]
    return pa.StructArray.from_arrays(arrays, list(fields),
                                      mask=pa.array(ordering_missing(table, fields)))


def is_older(left: list, right: list) -> np.ndarray:
    """Row by row, whether the ordering values ``left`` (one array per field) sort before ``right``,
    compared field by field; a null on either side decides nothing (not older)."""
    older = np.zeros(len(left[0]), dtype=bool)
    tied = np.ones(len(left[0]), dtype=bool)
    for a, b in zip(left, right):
        older |= tied & pc.fill_null(pc.less(a, b), False).to_numpy(zero_copy_only=False)
        tied &= pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)
    return older


def operation_deletes_unordered(incoming: pa.Table, spec: MergeSpec) -> pa.Table:
    """Deletes a write marks in ``OP_COLUMN`` (the delete operation, SQL's DELETE and MERGE's
    DELETE) carry no ordering value, as Hudi sends them as bare keys: they always win. Records
    flagged ``_hoodie_is_deleted`` keep theirs."""
    if not spec.ordered or OP_COLUMN not in incoming.column_names:
        return incoming
    marked = pc.fill_null(pc.equal(incoming[OP_COLUMN], DELETE), False)
    if not pc.any(marked).as_py():
        return incoming
    for name in spec.ordering_fields:
        if name in incoming.column_names:
            column = incoming[name]
            incoming = incoming.set_column(incoming.schema.get_field_index(name), name, pc.if_else(
                marked, pa.nulls(incoming.num_rows, column.type), column))
    return incoming


def is_delete(incoming: pa.Table) -> np.ndarray:
    mask = np.zeros(incoming.num_rows, dtype=bool)
    if OP_COLUMN in incoming.column_names:
        mask |= pc.fill_null(pc.equal(incoming[OP_COLUMN], DELETE), False).to_numpy(zero_copy_only=False)
    if IS_DELETED in incoming.column_names:
        mask |= pc.fill_null(incoming[IS_DELETED], False).to_numpy(zero_copy_only=False)
    return mask


def is_partial_update(incoming: pa.Table) -> np.ndarray:
    """The rows a write marks as updates carrying only some columns (``PARTIAL_UPDATE``)."""
    if OP_COLUMN not in incoming.column_names:
        return np.zeros(incoming.num_rows, dtype=bool)
    return pc.fill_null(pc.equal(incoming[OP_COLUMN], PARTIAL_UPDATE), False).to_numpy(zero_copy_only=False)


def deduplicate(incoming: pa.Table, spec: MergeSpec, by: tuple[str, ...] = (RECORD_KEY,)) -> pa.Table:
    """One record per key (the ``by`` columns): the largest ordering value, ties and commit-time
    mode to the last arrival; the winners keep their arrival order."""
    n = incoming.num_rows
    if n <= 1 or not spec.dedup:
        return incoming
    if spec.custom:
        return _folded_by_merger(incoming, by, spec.custom)
    order, same = _key_order(incoming, by, spec.ordering_fields)
    last_of_run = np.ones(n, dtype=bool)
    last_of_run[:-1] = ~same
    if last_of_run.all():
        return incoming
    if spec.partial:
        return partial_winners(incoming, order, last_of_run, same, _NOT_FILLED)
    winners = np.sort(order[last_of_run])
    return incoming.take(pa.array(winners))


def _key_order(table: pa.Table, by: tuple[str, ...], ordering: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """The rows sorted by key (the ``by`` columns), then ordering values (nulls first), then
    arrival; and for each neighbouring pair in that order whether they share a key."""
    n = table.num_rows
    columns = {f"__by{i}": table[name] for i, name in enumerate(by)}
    columns.update({f"__ordering{i}": table[name] for i, name in enumerate(ordering)})
    columns["__arrival"] = pa.array(np.arange(n, dtype=np.int64))
    order = pc.sort_indices(pa.table(columns), sort_keys=[(c, "ascending", "at_start") for c in columns])
    same = np.ones(max(n - 1, 0), dtype=bool)
    for name in by:
        keys = table[name].take(order).to_numpy(zero_copy_only=False)
        same &= keys[:-1] == keys[1:]
    return order.to_numpy(), same


def _folded_by_merger(incoming: pa.Table, by: tuple[str, ...], name: str) -> pa.Table:
    """CUSTOM mode: each key's versions merged in arrival order, neighbours in pairs (the 1st with
    the 2nd, the 3rd with the 4th, ...) and the results paired again, so a key with k versions takes
    about log2(k) merger calls over the batch, as Hudi's ``reduceByKey`` combines in a tree (a merger
    is expected to be associative). A delete ends the versions before it; the merger's deletes are
    marked in ``OP_COLUMN``."""
    if OP_COLUMN not in incoming.column_names:
        incoming = incoming.append_column(OP_COLUMN, pa.nulls(incoming.num_rows, pa.string()))
    if incoming.num_rows > 1:
        # A marked delete ends the versions before it: from the last one on, nothing earlier counts.
        order, run, rank, _ = _runs(incoming, by)
        deletes = is_delete(incoming)[order]
        last_delete = np.full(run[-1] + 1, -1)
        np.maximum.at(last_delete, run[deletes], rank[deletes])
        keep = np.ones(incoming.num_rows, dtype=bool)
        keep[order[rank < last_delete[run]]] = False
        incoming = incoming.filter(pa.array(keep)) if not keep.all() else incoming
    while incoming.num_rows > 1:
        n = incoming.num_rows
        order, _, rank, run_length = _runs(incoming, by)
        # Each version at an even place of its key's run that has a next one: a pair's older side.
        first = np.flatnonzero((rank % 2 == 0) & (rank + 1 < run_length))
        if not len(first):
            break
        older, newer = order[first], order[first + 1]
        deletes = is_delete(incoming)
        asked = ~deletes[older] & ~deletes[newer]
        replaced = incoming
        if asked.any():
            rows, deleted = run_merger(name, incoming.take(pa.array(older[asked])),
                                       incoming.take(pa.array(newer[asked])))
            ops = rows[OP_COLUMN]
            rows = rows.set_column(rows.schema.get_field_index(OP_COLUMN), OP_COLUMN,
                                   pc.if_else(pa.array(deleted), pa.scalar(DELETE, ops.type), ops))
            at = np.arange(n)
            at[newer[asked]] = n + np.arange(int(asked.sum()))
            replaced = pa.concat_tables([incoming, rows]).take(pa.array(at))
        keep = np.ones(n, dtype=bool)
        keep[older] = False
        incoming = replaced.filter(pa.array(keep))
    return incoming


def _runs(table: pa.Table, by: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows in (key, arrival) order, and per place in that order: its key's run, its rank in
    the run, the run's length."""
    n = table.num_rows
    order, same = _key_order(table, by)
    starts = np.r_[True, ~same]
    run_start = np.flatnonzero(starts)
    run = np.cumsum(starts) - 1
    return order, run, np.arange(n) - run_start[run], np.diff(np.r_[run_start, n])[run]


def merge(stored: pa.Table | None, incoming: pa.Table, spec: MergeSpec) -> MergeResult:
    """Merge incoming records into a file group's stored rows (``stored`` None for a new group)."""
    incoming = deduplicate(incoming, spec)
    deletes = is_delete(incoming)
    if stored is None or stored.num_rows == 0:
        written = filled_from_stored(incoming.filter(pa.array(~deletes)),
                                     incoming.slice(0, 0) if stored is None else stored)
        return MergeResult(stored.slice(0, 0) if stored is not None else pa.table({}),
                           written, 0, written.num_rows, 0, written[RECORD_KEY].combine_chunks())

    stored_keys = stored[RECORD_KEY]
    incoming_keys = incoming[RECORD_KEY]
    touched = pc.is_in(stored_keys, value_set=incoming_keys).to_numpy(zero_copy_only=False)
    # Only the stored keys an incoming one touches can match: a set of those, not of every stored key.
    matched = pc.is_in(incoming_keys, value_set=stored_keys.filter(pa.array(touched)).combine_chunks()
                       ).to_numpy(zero_copy_only=False)

    if spec.custom and (matched & ~deletes).any():
        incoming, merged_deletes = _merged_with_stored(stored.filter(pa.array(touched)), incoming,
                                                       matched & ~deletes, spec.custom)
        deletes = deletes | merged_deletes
    incoming_wins = np.ones(incoming.num_rows, dtype=bool)
    if spec.ordered and matched.any():
        # Only the stored rows an incoming key touches can win against it.
        candidates = stored.select([RECORD_KEY, *spec.ordering_fields]).filter(pa.array(touched))
        incoming_wins = _incoming_not_older(candidates, incoming, spec.ordering_fields, matched)
    # A delete with no ordering value of its own (Hudi's natural order) always wins; one that
    # carries its record's ordering value loses to a stored record with a larger one, as an
    # update would (Hudi 1.x's event-time mergers).
    incoming_wins |= deletes & ordering_missing(incoming, spec.ordering_fields)

    losing_keys = incoming_keys.filter(pa.array(matched & ~incoming_wins))
    keep_stored = ~touched
    if len(losing_keys):
        keep_stored |= pc.is_in(stored_keys, value_set=losing_keys).to_numpy(zero_copy_only=False)

    write_mask = incoming_wins & ~deletes
    written = incoming.filter(pa.array(write_mask))
    if spec.partial and (write_mask & matched).any():
        written = with_stored_values(written, stored.filter(pa.array(touched)), _NOT_FILLED)
    # Partial records (IS_PARTIAL) take the columns they lack from the stored record.
    written = filled_from_stored(written, stored.filter(pa.array(touched)))
    return MergeResult(
        kept=stored.filter(pa.array(keep_stored)),
        written=written,
        num_updates=int((write_mask & matched).sum()),
        num_inserts=int((write_mask & ~matched).sum()),
        num_deletes=int((deletes & matched & incoming_wins).sum()),
        inserted_keys=incoming_keys.filter(pa.array(write_mask & ~matched)).combine_chunks(),
    )


def _merged_with_stored(stored: pa.Table, incoming: pa.Table, asked: np.ndarray,
                        name: str) -> tuple[pa.Table, np.ndarray]:
    """CUSTOM mode: the ``asked`` incoming rows replaced by what the merger makes of them and their
    stored versions; which of them it turned into deletes."""
    n = incoming.num_rows
    idx = np.nonzero(asked)[0]
    pairs = (pa.table({RECORD_KEY: incoming[RECORD_KEY].take(pa.array(idx)), "__w": pa.array(idx)})
             .join(pa.table({RECORD_KEY: stored[RECORD_KEY], "__s": pa.array(np.arange(stored.num_rows))}),
                   RECORD_KEY, join_type="inner"))
    newer_at, older_at = pairs["__w"].to_numpy(), pairs["__s"].to_numpy()
    rows, deleted = run_merger(name, stored.take(pa.array(older_at)), incoming.take(pa.array(newer_at)))
    at = np.arange(n)
    at[newer_at] = n + np.arange(len(newer_at))
    flags = np.zeros(n, dtype=bool)
    flags[newer_at] = deleted
    return pa.concat_tables([incoming, rows]).take(pa.array(at)), flags


# Columns a partial update never takes from another version: the meta columns (each version's own,
# or stamped by this write) and the delete markers.
_NOT_FILLED = frozenset(META_FIELDS) | {OP_COLUMN, IS_DELETED}


def _incoming_not_older(stored: pa.Table, incoming: pa.Table, fields: tuple[str, ...],
                        matched: np.ndarray) -> np.ndarray:
    """For each incoming row: True unless the stored version has a larger ordering value."""
    idx = pa.array(np.nonzero(matched)[0])
    left = pa.table({RECORD_KEY: incoming[RECORD_KEY].take(idx), "__pos": idx,
                     **{f"__in{i}": incoming[name].take(idx) for i, name in enumerate(fields)}})
    right = pa.table({RECORD_KEY: stored[RECORD_KEY],
                      **{f"__st{i}": stored[name] for i, name in enumerate(fields)}})
    joined = left.join(right, RECORD_KEY, join_type="inner")
    older = is_older([joined[f"__in{i}"] for i in range(len(fields))],
                     [joined[f"__st{i}"] for i in range(len(fields))])
    wins = np.ones(incoming.num_rows, dtype=bool)
    wins[joined["__pos"].to_numpy()[older]] = False
    return wins


def merge_mode(options: HoodieConfig) -> str:
    """How an incoming record merges with the stored one: an explicit merge mode or payload class
    wins; otherwise EVENT_TIME_ORDERING when an ordering field exists (Hudi 1.x's default)."""
    if options.contains(C.RECORD_MERGE_MODE):
        return options.get_str(C.RECORD_MERGE_MODE).upper()
    if options.contains(C.PAYLOAD_CLASS):
        return payload_merge_mode(options.get_str(C.PAYLOAD_CLASS))
    return "EVENT_TIME_ORDERING" if ordering_fields(options) else "COMMIT_TIME_ORDERING"


def mode_payload_class(mode: str) -> str:
    """The payload class a table of version 6 or 8 persists for a merge mode, for engines that read it."""
    return EVENT_TIME_PAYLOAD if mode == "EVENT_TIME_ORDERING" else C.PAYLOAD_CLASS.default


@cache
def payload_merge_mode(payload_class: str) -> str:
    """The ordering a payload class merges by; a payload of its own logic merges by commit time here,
    said once."""
    if payload_class in PARTIAL_PAYLOAD_MERGE_MODES:
        return PARTIAL_PAYLOAD_MERGE_MODES[payload_class]
    if payload_class not in PAYLOAD_MERGE_MODES:
        log.warning(f"{C.PAYLOAD_CLASS.key}={payload_class}: this engine does not run payload classes; records "
                    f"merge by COMMIT_TIME_ORDERING. Set {C.RECORD_MERGE_MODE.key} to say how they merge")
    return PAYLOAD_MERGE_MODES.get(payload_class, "COMMIT_TIME_ORDERING")
