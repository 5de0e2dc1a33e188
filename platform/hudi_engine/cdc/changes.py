"""What changed in one file group, as a "change table": the shape both the CDC writer and the
CDC reader reduce their work to, in plain Arrow.

Columns: ``op`` (i/u/d), ``record_key``, and the ``before``/``after`` images: structs of the full
rows (meta columns included, see ``schema``), null where there is no image. The
writer turns it into CDC log records for its logging mode; the reader renders it as JSON.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema.meta_fields import RECORD_KEY as KEY_COLUMN
from .schema import AFTER, BEFORE, DELETE, INSERT, NOT_IMAGED, OP, RECORD_KEY, UPDATE


def images(rows: pa.Table, present: np.ndarray | None = None) -> pa.StructArray:
    """Each row as one struct; rows where ``present`` is False are null."""
    data = rows.select([c for c in rows.column_names if c not in NOT_IMAGED])
    mask = None if present is None else pa.array(~present)
    return pa.StructArray.from_arrays([c.combine_chunks() for c in data.columns],
                                      fields=list(data.schema), mask=mask)


def lookup(rows: pa.Table, keys: pa.Array) -> pa.StructArray:
    """The image of each key's row in ``rows``, null for keys it lacks (or null keys)."""
    at = pc.index_in(keys, value_set=rows[KEY_COLUMN])
    return images(rows.take(at), at.is_valid().to_numpy(zero_copy_only=False))


def change_table(op: pa.Array, keys: pa.Array, before: pa.Array, after: pa.Array) -> pa.Table:
    return pa.table({OP: op, RECORD_KEY: keys, BEFORE: before, AFTER: after})


def inserted(rows: pa.Table) -> pa.Table:
    """Every row is new (a base file a write created)."""
    n = rows.num_rows
    return change_table(_ops(INSERT, n), rows[KEY_COLUMN], _null_images(rows, n), images(rows))


def deleted(rows: pa.Table) -> pa.Table:
    """Every row is gone (a file group emptied or replaced)."""
    n = rows.num_rows
    return change_table(_ops(DELETE, n), rows[KEY_COLUMN], images(rows), _null_images(rows, n))


def written(stored: pa.Table | None, new: pa.Table, deleted_keys: pa.Array) -> pa.Table:
    """A merge's changes as its write handle logs them: ``new`` holds the versions it wrote
    (``u`` if ``stored`` had the key, else ``i``), ``deleted_keys`` the stored keys it dropped.
    Updates and deletes come in stored-row order, then inserts in written order."""
    stored = new.slice(0, 0) if stored is None else stored
    touched = pc.is_in(stored[KEY_COLUMN], value_set=_keys(new[KEY_COLUMN], deleted_keys)
                       ).to_numpy(zero_copy_only=False)
    old = stored.filter(pa.array(touched))
    gone = pc.is_in(old[KEY_COLUMN], value_set=deleted_keys).to_numpy(zero_copy_only=False)
    updates = change_table(pa.array(np.where(gone, DELETE, UPDATE), pa.string()), old[KEY_COLUMN],
                           images(old), lookup(new, old[KEY_COLUMN]))
    fresh = ~pc.is_in(new[KEY_COLUMN], value_set=stored[KEY_COLUMN]).to_numpy(zero_copy_only=False)
    return pa.concat_tables([updates, inserted(new.filter(pa.array(fresh)))])


def diff(before: pa.Table | None, after: pa.Table | None, keys: pa.Array | None = None) -> pa.Table:
    """Changes between two versions of a file group's rows, by record key: keys only in ``after``
    are ``i``, only in ``before`` ``d``, in both ``u`` when any column (meta columns included)
    differs; unchanged rows yield nothing. ``keys`` limits the comparison to the keys a log or a
    compaction touched. Order: ``before``'s rows, then inserts in ``after``'s order."""
    if before is None and after is None:
        raise ValueError("diff needs at least one version of the rows")
    before = after.slice(0, 0) if before is None else before
    after = before.slice(0, 0) if after is None else after
    old, new = _only(before, keys), _only(after, keys)
    at = pc.index_in(old[KEY_COLUMN], value_set=new[KEY_COLUMN])
    kept = at.is_valid().to_numpy(zero_copy_only=False)
    changed = ~kept | _differs(old, new.take(at))
    old = old.filter(pa.array(changed))
    kept = kept[changed]
    olds = change_table(pa.array(np.where(kept, UPDATE, DELETE), pa.string()), old[KEY_COLUMN],
                        images(old), lookup(new, old[KEY_COLUMN]))
    fresh = ~pc.is_in(new[KEY_COLUMN], value_set=before[KEY_COLUMN]).to_numpy(zero_copy_only=False)
    return pa.concat_tables([olds, inserted(new.filter(pa.array(fresh)))])


def _only(rows: pa.Table, keys: pa.Array | None) -> pa.Table:
    return rows if keys is None else rows.filter(pc.is_in(rows[KEY_COLUMN], value_set=keys))


def _differs(old: pa.Table, new: pa.Table) -> np.ndarray:
    """Row by row: does any column shared by both tables hold another value (nulls and NaNs
    equal themselves; a row missing from ``new`` is all nulls and counts as different)."""
    out = np.zeros(old.num_rows, dtype=bool)
    for name in old.column_names:
        if name not in new.column_names:
            continue
        a, b = old[name], new[name]
        if pa.types.is_nested(a.type) or a.type != b.type:
            out |= np.array([x != y for x, y in zip(a.to_pylist(), b.to_pylist())], dtype=bool)
            continue
        same = pc.fill_null(pc.equal(a, b), False)
        same = pc.or_(same, pc.and_(a.is_null(), b.is_null()))
        if pa.types.is_floating(a.type):
            same = pc.or_(same, pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False))
        out |= ~same.to_numpy(zero_copy_only=False)
    return out


def _ops(op: str, n: int) -> pa.Array:
    return pa.array([op] * n, pa.string())


def _null_images(rows: pa.Table, n: int) -> pa.Array:
    return pa.nulls(n, images(rows.slice(0, 0)).type)


def _keys(*arrays: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    chunks = [c for a in arrays for c in (a.chunks if isinstance(a, pa.ChunkedArray) else [a])]
    return pa.chunked_array(chunks, pa.string())
