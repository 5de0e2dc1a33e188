"""Hudi record-key bloom filters, bit-for-bit compatible with the Java writer.

Hudi stores a Base64 string under the parquet footer key ``org.apache.hudi.bloomfilter``
and names its flavour under ``hoodie_bloom_filter_type_code``. The index lookup of every
Hudi reader (Java, Rust, ours) re-hashes record keys against those bits, so the geometry,
the hash chain and the byte layout below must match Hadoop's ``util.bloom`` classes exactly.

Layout (big-endian, Hadoop ``Writable``):

* filter header: int32 version (-1), int32 hash count, int8 hash type (1 = murmur),
  int32 bit count; a SIMPLE filter is the header plus the bit vector, packed
  LSB-first, ceil(bits / 8) bytes.
* DYNAMIC_V0: header, int32 keys per row, int32 keys in the active row, int32 row count,
  then every row as a SIMPLE filter.

Hashing runs column-wise over numpy uint32 arrays read straight from the Arrow buffers:
keys of equal byte length share their Murmur rounds, so a million keys cost a few thousand
array operations rather than tens of millions of Python-level hash calls.
"""

from __future__ import annotations

import base64
import math
import struct
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import HoodieConfigError, HoodieError, HoodieValidationError

FOOTER_KEY = "org.apache.hudi.bloomfilter"
TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"

_VERSION = -1  # Hadoop writes a negative version so old (unversioned) readers stay distinct
_MURMUR = 1
_HEADER = struct.Struct(">iibi")
_DYNAMIC_HEADER = struct.Struct(">iii")
_M = np.uint32(0x5BD1E995)
_CHUNK = 1 << 16  # keeps per-chunk temporaries cache-sized and memory bounded

Keys = Iterable[str] | pa.Array | pa.ChunkedArray


def _geometry(num_entries: int, fpp: float) -> tuple[int, int]:
    """Bits and hash count exactly as Hudi derives them (same float evaluation order)."""
    if num_entries <= 0 or not 0.0 < fpp < 1.0:
        raise HoodieConfigError(f"need num_entries > 0 and 0 < fpp < 1, got {num_entries}, {fpp}")
    log2_squared = math.log(2) * math.log(2)
    bits = math.ceil(num_entries * (-math.log(fpp) / log2_squared))
    return bits, math.ceil(math.log(2) * bits / num_entries)


def _string_chunks(keys: Keys) -> list[pa.Array]:
    """The keys as Arrow string arrays, validated up front so a bad key adds nothing."""
    if isinstance(keys, pa.ChunkedArray):
        # One array: hashing costs per call, and a base file's keys arrive in many small chunks.
        chunks = [keys.combine_chunks()] if keys.num_chunks > 1 else keys.chunks
    elif isinstance(keys, pa.Array):
        chunks = [keys]
    else:
        chunks = [pa.array(keys if isinstance(keys, (list, tuple)) else list(keys), pa.string())]
    chunks = [c if pa.types.is_string(c.type) or pa.types.is_large_string(c.type)
              else c.cast(pa.large_string()) for c in chunks if len(c)]
    for chunk in chunks:
        if chunk.null_count:
            raise HoodieValidationError("bloom filter keys cannot be null")
        if pc.min(pc.binary_length(chunk)).as_py() == 0:  # Hadoop rejects them too
            raise HoodieValidationError("bloom filter keys cannot be empty")
    return chunks


def _batches(keys: Keys) -> Iterator[pa.Array]:
    """Slices of at most _CHUNK keys, in order; Arrow chunks are never combined (copied)."""
    for chunk in _string_chunks(keys):
        for start in range(0, len(chunk), _CHUNK):
            yield chunk.slice(start, _CHUNK)


def _offsets(keys: pa.Array) -> np.ndarray:
    """Byte offsets of each key (and the end of the last) into the Arrow data buffer."""
    dtype = np.int64 if pa.types.is_large_string(keys.type) else np.int32
    return np.frombuffer(keys.buffers()[1], dtype)[keys.offset : keys.offset + len(keys) + 1]


def _hash_groups(keys: pa.Array, num_hashes: int, vector_size: int
                 ) -> Iterator[tuple[slice | np.ndarray, Iterator[np.ndarray]]]:
    """Per run of equal-length keys: which keys of ``keys`` they are, and their bit positions.

    Keys of one length are hashed together straight off the Arrow buffer. Mixed lengths
    are first sorted by length with an Arrow ``take``, so every run is contiguous.
    """
    offsets = _offsets(keys)
    lengths = np.diff(offsets)
    order = None
    if lengths.min() != lengths.max():
        order = np.argsort(lengths, kind="stable")
        keys, lengths = keys.take(order), lengths[order]
        offsets = _offsets(keys)
    data = keys.buffers()[2]
    cuts = [0, *(np.flatnonzero(np.diff(lengths)) + 1), len(keys)]
    for lo, hi in zip(cuts, cuts[1:]):
        rounds = _murmur_rounds(data, int(offsets[lo]), hi - lo, int(lengths[lo]),
                                num_hashes, vector_size)
        yield (slice(lo, hi) if order is None else order[lo:hi]), rounds


def _murmur_rounds(data: pa.Buffer, first: int, n: int, length: int, num_hashes: int,
                   vector_size: int) -> Iterator[np.ndarray]:
    """Bit positions (intp) of n keys of ``length`` bytes stored back to back from ``first``,
    one array per round of Hadoop's chained MurmurHash2, each round seeded by the last.

    Only the seed changes between rounds, so the block mixing is done once per key.
    Tail bytes are sign-extended because Java bytes are signed; this matters for
    non-ASCII keys and is why the tail is not read as an unsigned integer.
    The yielded array is reused by the next round.
    """
    def column(dtype: str, at: int) -> np.ndarray:  # a view: the value at byte ``at`` of each key
        return np.ndarray(n, dtype, data, first + at, (length,))

    nblocks, ntail = divmod(length, 4)
    blocks = [column("<u4", 4 * j) * _M for j in range(nblocks)]  # contiguous copies
    for block in blocks:
        block ^= block >> 24
        block *= _M
    tail = np.zeros(n, np.uint32)
    for j in range(ntail):  # Hadoop folds the tail in reverse: last byte lowest
        signed = column("i1", 4 * nblocks + j).astype(np.int32)
        tail ^= (signed << 8 * (ntail - 1 - j)).view(np.uint32)

    size = np.uint32(vector_size)
    h, scratch, positions = np.zeros(n, np.uint32), np.empty(n, np.uint32), np.empty(n, np.intp)
    for _ in range(num_hashes):
        h ^= np.uint32(length)  # seed ^ length, the seed being the previous round's hash
        for block in blocks:
            h *= _M
            h ^= block
        if ntail:
            h ^= tail
            h *= _M
        h ^= np.right_shift(h, 13, out=scratch)
        h *= _M
        h ^= np.right_shift(h, 15, out=scratch)
        # Java: Math.abs(hash % bits) on a signed int; |INT_MIN| wraps to 2**31 as uint32.
        # a - a // bits * bits, since numpy divides by a scalar far faster than it takes remainders.
        magnitude = np.abs(h.view(np.int32)).view(np.uint32)
        np.multiply(np.floor_divide(magnitude, size, out=scratch), size, out=scratch)
        yield np.subtract(magnitude, scratch, out=positions)


class BloomFilter:
    """Rows of equal-geometry bit vectors; a key is present if all its bits are set in any row.

    The rows live in one (capacity, vector_size) bool matrix, so the bits of keys bound for
    different rows are set by a single scatter into its flat view.
    """

    type_code: str

    def __init__(self, vector_size: int, num_hashes: int, rows: list[np.ndarray] | None = None):
        if vector_size <= 0 or num_hashes <= 0:
            raise HoodieConfigError("vector_size and num_hashes must be positive")
        self.vector_size = vector_size
        self.num_hashes = num_hashes
        self._bits = np.array(rows, np.bool_) if rows else np.zeros((1, vector_size), np.bool_)
        self._num_rows = len(self._bits)

    @property
    def _rows(self) -> np.ndarray:
        return self._bits[: self._num_rows]

    def _add_row(self) -> None:
        if self._num_rows == len(self._bits):  # double the capacity: growth stays amortized O(1)
            grown = np.zeros((2 * self._num_rows, self.vector_size), np.bool_)
            grown[: self._num_rows] = self._bits
            self._bits = grown
        self._num_rows += 1

    def _route(self, n: int) -> np.ndarray:
        """Row index for each of the next n keys, in insertion order."""
        raise NotImplementedError

    def add(self, key: str) -> None:
        self.add_keys([key])

    def might_contain(self, key: str) -> bool:
        return bool(self.might_contain_many([key])[0])

    def add_keys(self, keys: Keys) -> None:
        for batch in _batches(keys):
            starts = self._route(len(batch)) * self.vector_size  # each key's row in the flat view
            flat = self._bits.reshape(-1)
            for which, rounds in _hash_groups(batch, self.num_hashes, self.vector_size):
                group_starts = starts[which]
                for positions in rounds:
                    positions += group_starts
                    flat[positions] = True

    def might_contain_many(self, keys: Keys) -> np.ndarray:
        flat = self._bits.reshape(-1)
        row_starts = np.arange(self._num_rows)[:, None] * self.vector_size
        found = []
        for batch in _batches(keys):
            batch_found = np.zeros(len(batch), np.bool_)
            for which, rounds in _hash_groups(batch, self.num_hashes, self.vector_size):
                hit = np.ones((self._num_rows, 1), np.bool_)  # per row, per key
                for positions in rounds:
                    hit = hit & flat[positions + row_starts]
                    if not hit.any():
                        break  # later rounds cannot bring a key back
                batch_found[which] = hit.any(axis=0)
            found.append(batch_found)
        return np.concatenate(found) if found else np.zeros(0, np.bool_)

    def _header(self) -> bytes:
        return _HEADER.pack(_VERSION, self.num_hashes, _MURMUR, self.vector_size)

    def _rows_bytes(self) -> bytes:
        """Every row as a SIMPLE filter: header plus its bits packed LSB-first."""
        packed = np.packbits(self._rows, axis=1, bitorder="little")
        return b"".join(self._header() + row.tobytes() for row in packed)

    def _to_bytes(self) -> bytes:
        raise NotImplementedError

    def serialize(self) -> str:
        """The footer value: Base64 (standard alphabet, padded) of the Writable bytes."""
        return base64.b64encode(self._to_bytes()).decode("ascii")


class SimpleBloomFilter(BloomFilter):
    """One fixed-size vector; false-positive rate degrades past num_entries."""

    type_code = SIMPLE

    def _route(self, n: int) -> np.ndarray:
        return np.zeros(n, np.intp)

    def _to_bytes(self) -> bytes:
        return self._rows_bytes()


class DynamicBloomFilter(BloomFilter):
    """Hudi's bounded dynamic filter: a new row per num_entries keys until max_entries.

    Once the bound is hit, further keys are spread round-robin over existing rows, so
    the false-positive rate is no longer guaranteed but the footer stops growing.
    ``max_entries`` is not serialized: a deserialized filter behaves as Java's does
    (bound 0), i.e. it stops adding rows once the active row is full.
    """

    type_code = DYNAMIC_V0

    def __init__(self, vector_size: int, num_hashes: int, num_entries: int, max_entries: int,
                 rows: list[np.ndarray] | None = None, active_count: int = 0):
        super().__init__(vector_size, num_hashes, rows)
        self.num_entries = num_entries
        self.max_entries = max_entries
        self._active_count = active_count
        self._reached_max = False
        self._cursor = 0

    def _route(self, n: int) -> np.ndarray:
        routes = np.empty(n, np.intp)
        done = 0
        while done < n:
            if self._reached_max:
                take = n - done
                routes[done:] = (self._cursor + np.arange(take)) % self._num_rows
                self._cursor += take
            elif self._active_count >= self.num_entries:
                if self._num_rows * self.num_entries < self.max_entries:
                    self._add_row()
                    self._active_count = 0
                    continue
                # Java hands this first overflow key to row 0 without advancing the cursor.
                self._reached_max = True
                take = 1
                routes[done] = 0
            else:
                take = min(self.num_entries - self._active_count, n - done)
                routes[done : done + take] = self._num_rows - 1
            self._active_count += take
            done += take
        return routes

    def _to_bytes(self) -> bytes:
        head = self._header() + _DYNAMIC_HEADER.pack(
            self.num_entries, self._active_count, self._num_rows)
        return head + self._rows_bytes()


def create_bloom_filter(num_entries: int, fpp: float, filter_type: str = DYNAMIC_V0,
                        max_entries: int = 100000) -> BloomFilter:
    """Hudi's defaults are 60000 entries, fpp 1e-9, DYNAMIC_V0 bounded at 100000."""
    vector_size, num_hashes = _geometry(num_entries, fpp)
    code = filter_type.upper()
    if code == SIMPLE:
        return SimpleBloomFilter(vector_size, num_hashes)
    if code == DYNAMIC_V0:
        return DynamicBloomFilter(vector_size, num_hashes, num_entries, max_entries)
    raise HoodieConfigError(f"unknown bloom filter type code {filter_type!r}")


def _continues(code: str, vector_size: int, num_hashes: int, per_row: int, num_entries: int, fpp: float,
               filter_type: str) -> bool:
    """Whether a stored filter of this type and geometry is the one a new filter would be."""
    want = filter_type.upper()
    if want not in (SIMPLE, DYNAMIC_V0):
        raise HoodieConfigError(f"unknown bloom filter type code {filter_type!r}")
    return (code == want and (vector_size, num_hashes) == _geometry(num_entries, fpp)
            and (code == SIMPLE or per_row == num_entries))


def _read_header(raw: memoryview, at: int) -> tuple[int, int, int]:
    version, num_hashes, hash_type, vector_size = _HEADER.unpack_from(raw, at)
    if version != _VERSION or hash_type != _MURMUR:
        # Unversioned or Jenkins-hashed filters predate Hudi; nothing writes them today.
        raise HoodieError(f"unsupported bloom filter (version {version}, hash type {hash_type})")
    return vector_size, num_hashes, at + _HEADER.size


def _row_at(raw: memoryview, at: int) -> tuple[int, int, int]:
    """(vector size, hash count, offset of its bits) of the SIMPLE filter at ``at``."""
    vector_size, num_hashes, at = _read_header(raw, at)
    if at + (vector_size + 7) // 8 > len(raw):
        raise HoodieError("truncated bloom filter")
    return vector_size, num_hashes, at


def _row_bits(raw: memoryview, at: int, vector_size: int) -> np.ndarray:
    packed = np.frombuffer(raw[at : at + (vector_size + 7) // 8], np.uint8)
    return np.unpackbits(packed, count=vector_size, bitorder="little").view(np.bool_)


@dataclass(frozen=True)
class _Layout:
    """Where a serialized filter's parts are: its geometry, and the offset of each row's bits."""
    code: str
    vector_size: int
    num_hashes: int
    num_entries: int            # DYNAMIC_V0's keys per row; 0 for SIMPLE
    active: int                 # DYNAMIC_V0's keys in the active row
    rows: tuple[int, ...]
    raw: memoryview

    def decode(self) -> BloomFilter:
        bits = [_row_bits(self.raw, at, self.vector_size) for at in self.rows]
        if self.code == SIMPLE:
            return SimpleBloomFilter(self.vector_size, self.num_hashes, bits)
        return DynamicBloomFilter(self.vector_size, self.num_hashes, self.num_entries, 0, bits, self.active)


def _layout(value: str | bytes, type_code: str | bytes) -> _Layout:
    """A footer value checked as the Writable layout (Base64, headers, sizes), its bits not unpacked."""
    if isinstance(type_code, bytes):
        type_code = type_code.decode("ascii")
    code = type_code.upper()
    if code not in (SIMPLE, DYNAMIC_V0):
        raise HoodieError(f"unknown bloom filter type code {type_code!r}")
    try:
        raw = memoryview(base64.b64decode(value, validate=True))
        if code == SIMPLE:
            vector_size, num_hashes, at = _row_at(raw, 0)
            rows, nr, active, end = [at], 0, 0, at + (vector_size + 7) // 8
        else:
            vector_size, num_hashes, end = _read_header(raw, 0)
            nr, active, count = _DYNAMIC_HEADER.unpack_from(raw, end)
            end += _DYNAMIC_HEADER.size
            rows = []
            for _ in range(count):
                row_size, row_hashes, at = _row_at(raw, end)
                if (row_size, row_hashes) != (vector_size, num_hashes):
                    raise HoodieError("bloom filter rows disagree on geometry")
                rows.append(at)
                end = at + (row_size + 7) // 8
    except (ValueError, struct.error) as exc:  # bad Base64 or short buffer
        raise HoodieError(f"corrupt bloom filter: {exc}") from exc
    if end != len(raw):
        raise HoodieError("trailing bytes after bloom filter")
    return _Layout(code, vector_size, num_hashes, nr, active, tuple(rows), raw)


def deserialize_bloom_filter(value: str | bytes, type_code: str | bytes) -> BloomFilter:
    """Accepts footer values as pyarrow returns them (bytes) or as text."""
    return _layout(value, type_code).decode()


class StoredBloomFilter:
    """A base file's filter to continue in its rewrite, its bits unpacked only once a key is added:
    a rewrite that inserts no key (updates, deletes) writes the stored value back as it was, which
    is what decoding and encoding it again would give."""

    def __init__(self, value: str | bytes, layout: _Layout, max_entries: int):
        self._value = value.decode("ascii") if isinstance(value, bytes) else value
        self._layout, self._max_entries = layout, max_entries
        self._decoded: BloomFilter | None = None
        self.type_code = layout.code

    def add_keys(self, keys: Keys) -> None:
        if isinstance(keys, (pa.Array, pa.ChunkedArray)) and len(keys) == 0:
            return
        self.decoded().add_keys(keys)

    def decoded(self) -> BloomFilter:
        if self._decoded is None:
            self._decoded = self._layout.decode()
            if isinstance(self._decoded, DynamicBloomFilter):
                self._decoded.max_entries = self._max_entries   # not serialized: the writer's bound again
        return self._decoded

    def serialize(self) -> str:
        return self._value if self._decoded is None else self._decoded.serialize()


def continued_stored_filter(value: str | bytes, type_code: str | bytes, num_entries: int, fpp: float,
                            filter_type: str = DYNAMIC_V0, max_entries: int = 100000) -> StoredBloomFilter | None:
    """A base file's filter (its footer value) to add a rewrite's new keys to, when it has the type
    and geometry a new filter would have; None otherwise. A file group rewritten by a merge keeps
    its keys but for the inserted and the deleted ones: the first are added, the second only cost a
    false positive, and hashing the kept keys again is saved. Left encoded until a key is added;
    raises ``HoodieError`` for a value that is not a filter."""
    layout = _layout(value, type_code)
    if not _continues(layout.code, layout.vector_size, layout.num_hashes, layout.num_entries, num_entries, fpp,
                      filter_type):
        return None
    return StoredBloomFilter(value, layout, max_entries)
