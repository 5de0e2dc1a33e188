"""The bloom index's executor-side work, as Hudi's HoodieBloomIndex does it: each base file's
record-key range from its footer, then for the keys inside a file's range the footer's bloom filter,
then an exact check against the file's keys for those the filter lets through.

Only footers of every file, and the key column of candidate files, are read: an upsert whose keys
fall in few files' ranges (ordered keys, recent data) reads little, whatever the table's size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..bloom import FOOTER_KEY, TYPE_CODE_KEY, deserialize_bloom_filter
from ..file_group.base_file import parquet_file, read_footer
from ..schema.meta_fields import RECORD_KEY
from ..storage import Storage

RANGE_SCHEMA = pa.schema([("_p", pa.string()), ("_fid", pa.string()), ("_lo", pa.string()), ("_hi", pa.string())])
MATCH_SCHEMA = pa.schema([("_k", pa.string()), ("_p", pa.string()), ("_fid", pa.string())])
MIN_KEY, MAX_KEY = b"hoodie_min_record_key", b"hoodie_max_record_key"
BLOOM_KEY, BLOOM_TYPE = FOOTER_KEY.encode(), TYPE_CODE_KEY.encode()


@dataclass(frozen=True)
class BaseFileRef:
    partition: str
    file_id: str
    path: str          # relative to the table


def _footer(storage: Storage, path: str) -> dict[bytes, bytes]:
    return read_footer(storage, path).metadata or {}


@dataclass(frozen=True)
class KeyRanges:
    """(partition, file id, min key, max key) of each base file whose index a task receives; a
    file without a recorded range gets nulls and is a candidate for every key."""
    storage: Storage
    files: tuple[BaseFileRef, ...]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = {name: [] for name in RANGE_SCHEMA.names}
            for index in batch.column(0).to_pylist():
                ref = self.files[index]
                footer = _footer(self.storage, ref.path)
                lo, hi = footer.get(MIN_KEY), footer.get(MAX_KEY)
                for name, value in zip(RANGE_SCHEMA.names, (ref.partition, ref.file_id,
                                                            lo.decode() if lo else None, hi.decode() if hi else None)):
                    rows[name].append(value)
            yield pa.RecordBatch.from_pydict(rows, schema=RANGE_SCHEMA)


def existing_keys(storage: Storage, ref: BaseFileRef, candidates: pa.Array, by_range: bool = False) -> pa.Array:
    """Which candidate keys the file holds: ``by_range``, those within the footer's key range;
    the footer's bloom filter then, and its key column for the keys the filter lets through (none
    read when it lets none through)."""
    with parquet_file(storage, ref.path) as f:       # one open: footer, then keys if need be
        footer = f.metadata.metadata or {}
        lo, hi = footer.get(MIN_KEY), footer.get(MAX_KEY)
        if by_range and lo is not None and hi is not None:
            candidates = candidates.filter(pc.and_(pc.greater_equal(candidates, lo.decode()),
                                                   pc.less_equal(candidates, hi.decode())))
        if BLOOM_KEY in footer:
            bloom = deserialize_bloom_filter(footer[BLOOM_KEY], footer.get(BLOOM_TYPE, b""))
            candidates = candidates.filter(pa.array(bloom.might_contain_many(candidates)))
        if len(candidates) == 0:
            return candidates
        stored = f.read(columns=[RECORD_KEY])[RECORD_KEY]
    return candidates.filter(pc.is_in(candidates, value_set=stored.combine_chunks()))


@dataclass(frozen=True)
class CheckCandidates:
    """Grouped by file id: the candidate keys of one file, checked against it (``existing_keys``)."""
    storage: Storage
    files: dict[str, BaseFileRef]

    def __call__(self, key: tuple, group: pa.Table) -> pa.Table:
        ref = self.files[key[0].as_py() if hasattr(key[0], "as_py") else key[0]]
        found = existing_keys(self.storage, ref, pc.unique(group["_k"].combine_chunks()))
        n = len(found)
        return pa.table({"_k": found, "_p": pa.array([ref.partition] * n, pa.string()),
                         "_fid": pa.array([ref.file_id] * n, pa.string())}, schema=MATCH_SCHEMA)
