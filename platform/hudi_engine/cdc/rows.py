"""A CDC split's output rows (CDCFileGroupIterator): ``op``, ``ts_ms``, ``before``, ``after``, the
same whatever the logging mode, which only decides how much of it comes from the CDC log file."""
from __future__ import annotations

import pyarrow as pa

from .changes import change_table, deleted, diff, inserted, lookup
from .extract import InferenceCase
from .json import to_json
from .schema import AFTER, BEFORE, OP, QUERY_SCHEMA, RECORD_KEY, LoggingMode


def change_rows(case: InferenceCase, instant: str, mode: LoggingMode, *, records: pa.Table | None = None,
                before: pa.Table | None = None, after: pa.Table | None = None,
                keys: pa.Array | None = None) -> pa.Table:
    """The changes of one split in ``QUERY_SCHEMA``.

    ``records``: the split's CDC log records (AS_IS), as ``data_block_records`` decodes them.
    ``before``/``after``: rows (meta columns and record key included) of the split's ``before``
    and ``after`` slices, each read merged and conformed to one schema. ``keys``: for LOG_FILE,
    the log file's record keys, so only they are compared (the result is the same without).
    """
    if case is InferenceCase.AS_IS:
        changes = as_is(records, mode, before, after)
    elif case is InferenceCase.BASE_FILE_INSERT:
        changes = inserted(after)
    elif case is InferenceCase.LOG_FILE:
        changes = diff(before, after, keys)
    else:   # BASE_FILE_DELETE, REPLACE_COMMIT
        changes = deleted(before)
    return render(changes, instant)


def as_is(records: pa.Table, mode: LoggingMode, before: pa.Table | None, after: pa.Table | None) -> pa.Table:
    """A change table from CDC log records, the images the mode left out looked up by key:
    a key's row in ``before`` (the previous base file) or ``after`` (the new one) is its image;
    an insert's key has no previous row and a delete's no new one."""
    if mode is LoggingMode.DATA_BEFORE_AFTER:
        keys = pa.nulls(records.num_rows, pa.string())
        return change_table(records[OP], keys, records[BEFORE], records[AFTER])
    keys = records[RECORD_KEY].combine_chunks()
    old = records[BEFORE] if mode is LoggingMode.DATA_BEFORE else lookup(before, keys)
    return change_table(records[OP], keys, old, lookup(after, keys))


def render(changes: pa.Table, instant: str) -> pa.Table:
    """Output rows: images as JSON text, ``ts_ms`` the commit's instant time."""
    ts = pa.array([instant] * changes.num_rows, pa.string())
    return pa.Table.from_arrays([changes[OP].combine_chunks(), ts, to_json(changes[BEFORE]),
                                 to_json(changes[AFTER])], schema=QUERY_SCHEMA)
