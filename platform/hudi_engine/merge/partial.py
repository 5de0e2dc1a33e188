"""Partial updates: an update's null (default) columns keep the previous version's values, Hudi
1.1's ``hoodie.table.partial.update.mode=IGNORE_DEFAULTS`` (``PartialUpdateAvroPayload`` on tables of
version 6 and 8). The rules :mod:`.record_merger` applies when a merge spec says ``partial``.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..schema.meta_fields import RECORD_KEY

# Payloads whose null (default) values keep the previous version's (Hudi 1.1 upgrades them to these
# merge modes with hoodie.table.partial.update.mode=IGNORE_DEFAULTS).
PARTIAL_PAYLOAD_MERGE_MODES = {"org.apache.hudi.common.model.PartialUpdateAvroPayload": "EVENT_TIME_ORDERING",
                               "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload":
                                   "COMMIT_TIME_ORDERING"}
IGNORE_DEFAULTS = "IGNORE_DEFAULTS"


def partial_update(options: HoodieConfig) -> bool:
    """Whether an update's null columns keep the previous version's values: Hudi 1.1's
    ``hoodie.table.partial.update.mode=IGNORE_DEFAULTS``, or a partial-update payload class (the
    spelling of tables of version 6 and 8)."""
    if options.contains(C.PARTIAL_UPDATE_MODE):
        mode = (options.get_str(C.PARTIAL_UPDATE_MODE) or "").upper()
        if mode != IGNORE_DEFAULTS:
            raise HoodieConfigError(
                f"{C.PARTIAL_UPDATE_MODE.key}={mode} is not supported by this engine; {IGNORE_DEFAULTS} is "
                "(null columns of an update keep the stored values)")
        return True
    payload = options.get_str(C.LEGACY_PAYLOAD_CLASS) or options.get_str(C.PAYLOAD_CLASS)
    return payload in PARTIAL_PAYLOAD_MERGE_MODES


def partial_payload_class(mode: str) -> str:
    """The partial-update payload a table of version 6 or 8 persists for a merge mode."""
    for payload, payload_mode in PARTIAL_PAYLOAD_MERGE_MODES.items():
        if payload_mode == mode:
            return payload
    raise HoodieConfigError(f"partial updates ({C.PARTIAL_UPDATE_MODE.key}) merge by EVENT_TIME_ORDERING or "
                            f"COMMIT_TIME_ORDERING, not {mode}: a CUSTOM merger decides columns itself")


def partial_winners(incoming: pa.Table, order: np.ndarray, last_of_run: np.ndarray, same: np.ndarray,
                    skip: frozenset[str]) -> pa.Table:
    """Each key's winner (``order`` sorts the versions, ``last_of_run`` marks each key's last, ``same``
    whether a sorted row has the next one's key) with its null columns taken from the newest earlier
    version that has a value (PartialUpdateAvroPayload's pre-combine, version after version);
    ``skip`` columns stay the winner's own."""
    n = len(order)
    ranked = incoming.take(pa.array(order))
    at = np.arange(n)
    run_start = np.maximum.accumulate(np.where(np.r_[True, ~same], at, 0))
    columns = []
    for name in ranked.column_names:
        column = ranked[name]
        if name not in skip and column.null_count:
            valid = column.is_valid().to_numpy(zero_copy_only=False)
            last_valid = np.maximum.accumulate(np.where(valid, at, -1))
            column = column.take(pa.array(np.where(last_valid >= run_start, last_valid, at)))
        columns.append(column.take(pa.array(np.nonzero(last_of_run)[0])))
    winners = pa.table(columns, schema=ranked.schema)
    return winners.take(pc.sort_indices(pa.array(order[last_of_run])))


def stored_positions(written: pa.Table, stored: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """For each written row, the position of the stored row with its key (0 where there is none),
    and whether there is one."""
    n = written.num_rows
    pairs = (pa.table({RECORD_KEY: written[RECORD_KEY], "__w": pa.array(np.arange(n))})
             .join(pa.table({RECORD_KEY: stored[RECORD_KEY], "__s": pa.array(np.arange(stored.num_rows))}),
                   RECORD_KEY, join_type="inner"))
    source = np.zeros(n, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    source[pairs["__w"].to_numpy()] = pairs["__s"].to_numpy()
    found[pairs["__w"].to_numpy()] = True
    return source, found


def with_stored_values(written: pa.Table, stored: pa.Table, skip: frozenset[str]) -> pa.Table:
    """Updates with the stored record's values in the columns they leave null or lack (Hudi 1.1's
    IGNORE_DEFAULTS); inserts keep their nulls, ``skip`` columns their own values."""
    n = written.num_rows
    source, has = stored_positions(written, stored)
    take, matched = pa.array(source), pa.array(has)
    for name in stored.column_names:
        if name in skip:
            continue
        previous = stored[name].take(take)
        if name not in written.column_names:
            written = written.append_column(stored.schema.field(name), pc.if_else(
                matched, previous, pa.nulls(n, previous.type)))
            continue
        current = written[name]
        if not current.null_count:
            continue
        try:
            previous = previous.cast(current.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue        # a type the batch changed: its own (null) value stands
        written = written.set_column(written.schema.get_field_index(name), name,
                                     pc.if_else(pc.and_(current.is_null(), matched), previous, current))
    return written
