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
from ..schema.meta_fields import RECORD_KEY

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


def deduplicate(incoming: pa.Table, spec: MergeSpec, by: tuple[str, ...] = (RECORD_KEY,)) -> pa.Table:
    """One record per key (the ``by`` columns): the largest ordering value, ties and commit-time
    mode to the last arrival; the winners keep their arrival order."""
    n = incoming.num_rows
    if n <= 1 or not spec.dedup:
        return incoming
    arrival = pa.array(np.arange(n, dtype=np.int64))
    columns = {f"__by{i}": incoming[name] for i, name in enumerate(by)}
    sort_keys = [(name, "ascending", "at_start") for name in columns]
    columns["__arrival"] = arrival
    for i, name in enumerate(spec.ordering_fields):
        columns[f"__ordering{i}"] = incoming[name]
        sort_keys.append((f"__ordering{i}", "ascending", "at_start"))
    sort_keys.append(("__arrival", "ascending", "at_start"))
    order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys)
    last_of_run = np.ones(n, dtype=bool)
    same = np.ones(n - 1, dtype=bool)
    for name in by:
        keys = incoming[name].take(order).to_numpy(zero_copy_only=False)
        same &= keys[:-1] == keys[1:]
    last_of_run[:-1] = ~same
    if last_of_run.all():
        return incoming
    winners = np.sort(order.to_numpy()[last_of_run])
    return incoming.take(pa.array(winners))


def merge(stored: pa.Table | None, incoming: pa.Table, spec: MergeSpec) -> MergeResult:
    """Merge incoming records into a file group's stored rows (``stored`` None for a new group)."""
    incoming = deduplicate(incoming, spec)
    deletes = is_delete(incoming)
    if stored is None or stored.num_rows == 0:
        written = incoming.filter(pa.array(~deletes))
        return MergeResult(stored.slice(0, 0) if stored is not None else pa.table({}),
                           written, 0, written.num_rows, 0, written[RECORD_KEY].combine_chunks())

    stored_keys = stored[RECORD_KEY]
    incoming_keys = incoming[RECORD_KEY]
    touched = pc.is_in(stored_keys, value_set=incoming_keys).to_numpy(zero_copy_only=False)
    # Only the stored keys an incoming one touches can match: a set of those, not of every stored key.
    matched = pc.is_in(incoming_keys, value_set=stored_keys.filter(pa.array(touched)).combine_chunks()
                       ).to_numpy(zero_copy_only=False)

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
    return MergeResult(
        kept=stored.filter(pa.array(keep_stored)),
        written=written,
        num_updates=int((write_mask & matched).sum()),
        num_inserts=int((write_mask & ~matched).sum()),
        num_deletes=int((deletes & matched & incoming_wins).sum()),
        inserted_keys=incoming_keys.filter(pa.array(write_mask & ~matched)).combine_chunks(),
    )


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
    if payload_class not in PAYLOAD_MERGE_MODES:
        log.warning(f"{C.PAYLOAD_CLASS.key}={payload_class}: this engine does not run payload classes; records "
                    f"merge by COMMIT_TIME_ORDERING. Set {C.RECORD_MERGE_MODE.key} to say how they merge")
    return PAYLOAD_MERGE_MODES.get(payload_class, "COMMIT_TIME_ORDERING")
