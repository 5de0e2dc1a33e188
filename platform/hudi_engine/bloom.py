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

Hashing runs column-wise over numpy uint32 arrays: keys of equal byte length share
their Murmur rounds, so a million keys cost a few hundred array operations rather than
tens of millions of Python-level hash calls.
"""

from __future__ import annotations

import base64
import math
import struct
from typing import Iterable

import numpy as np
import pyarrow as pa

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


def _string_array(keys: Keys) -> pa.Array:
    """Arrow gives us one UTF-8 buffer plus offsets, which numpy can slice without copies."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if not isinstance(keys, pa.Array):
        keys = pa.array(keys if isinstance(keys, (list, tuple)) else list(keys), pa.string())
    if not (pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type)):
        keys = keys.cast(pa.large_string())
    if keys.null_count:
        raise HoodieValidationError("bloom filter keys cannot be null")
    return keys


def _positions(keys: pa.Array, num_hashes: int, vector_size: int) -> np.ndarray:
    """Bit positions, shape (num_hashes, len(keys)), of Hadoop's chained Murmur hashing."""
    offset_type = np.int64 if pa.types.is_large_string(keys.type) else np.int32
    _, offsets_buf, data_buf = keys.buffers()
    offsets = np.frombuffer(offsets_buf, offset_type)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    if len(lengths) and lengths.min() == 0:
        raise HoodieValidationError("bloom filter keys cannot be empty")  # Hadoop rejects them too

    out = np.empty((num_hashes, len(keys)), np.uint32)
    order = np.argsort(lengths, kind="stable")
    sizes, starts = np.unique(lengths[order], return_index=True)
    for size, lo, hi in zip(sizes, starts, [*starts[1:], len(order)]):
        idx = order[lo:hi]
        rows = data[offsets[idx, None] + np.arange(size)]
        out[:, idx] = _murmur_chain(rows, num_hashes, vector_size)
    return out


def _murmur_chain(rows: np.ndarray, num_hashes: int, vector_size: int) -> np.ndarray:
    """MurmurHash2 (Hadoop variant) of equal-length keys, each round seeded by the last.

    Only the seed changes between rounds, so the block mixing is done once per key.
    Tail bytes are sign-extended because Java bytes are signed; this matters for
    non-ASCII keys and is why the tail is not read as an unsigned integer.
    """
    n, length = rows.shape
    nblocks = length // 4
    blocks = np.ascontiguousarray(rows[:, : nblocks * 4]).view("<u4").T.copy()
    blocks *= _M
    blocks ^= blocks >> 24
    blocks *= _M
    tail = np.zeros(n, np.uint32)
    tail_cols = rows[:, nblocks * 4 :].T  # Hadoop folds these in reverse: last byte lowest
    for shift, col in zip(range(8 * (len(tail_cols) - 1), -1, -8), tail_cols):
        tail ^= (col.view(np.int8).astype(np.int32) << shift).view(np.uint32)

    out = np.empty((num_hashes, n), np.uint32)
    h = np.zeros(n, np.uint32)
    for i in range(num_hashes):
        h ^= np.uint32(length)  # seed ^ length, the seed being the previous round's hash
        for block in blocks:
            h *= _M
            h ^= block
        if length % 4:
            h ^= tail
            h *= _M
        h ^= h >> 13
        h *= _M
        h ^= h >> 15
        # Java: Math.abs(hash % bits) on a signed int; |INT_MIN| wraps to 2**31 as uint32.
        np.remainder(np.abs(h.view(np.int32)).view(np.uint32), np.uint32(vector_size), out=out[i])
    return out


class BloomFilter:
    """Rows of equal-geometry bit vectors; a key is present if all its bits are set in any row."""

    type_code: str

    def __init__(self, vector_size: int, num_hashes: int, rows: list[np.ndarray] | None = None):
        if vector_size <= 0 or num_hashes <= 0:
            raise HoodieConfigError("vector_size and num_hashes must be positive")
        self.vector_size = vector_size
        self.num_hashes = num_hashes
        self._rows = rows if rows is not None else [self._new_row()]

    def _new_row(self) -> np.ndarray:
        return np.zeros(self.vector_size, np.bool_)

    def _route(self, n: int) -> np.ndarray:
        """Row index for each of the next n keys, in insertion order."""
        raise NotImplementedError

    def add(self, key: str) -> None:
        self.add_keys([key])

    def might_contain(self, key: str) -> bool:
        return bool(self.might_contain_many([key])[0])

    def add_keys(self, keys: Keys) -> None:
        keys = _string_array(keys)
        for start in range(0, len(keys), _CHUNK):
            chunk = keys.slice(start, _CHUNK)
            pos = _positions(chunk, self.num_hashes, self.vector_size)
            routes = self._route(len(chunk))
            for row in np.unique(routes):
                self._rows[row][pos[:, routes == row].ravel()] = True

    def might_contain_many(self, keys: Keys) -> np.ndarray:
        keys = _string_array(keys)
        found = np.zeros(len(keys), np.bool_)
        for start in range(0, len(keys), _CHUNK):
            chunk = keys.slice(start, _CHUNK)
            pos = _positions(chunk, self.num_hashes, self.vector_size)
            for bits in self._rows:
                found[start : start + len(chunk)] |= bits[pos].all(axis=0)
        return found

    def _header(self) -> bytes:
        return _HEADER.pack(_VERSION, self.num_hashes, _MURMUR, self.vector_size)

    def _row_bytes(self, bits: np.ndarray) -> bytes:
        return self._header() + np.packbits(bits, bitorder="little").tobytes()

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
        return self._row_bytes(self._rows[0])


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
                routes[done:] = (self._cursor + np.arange(take)) % len(self._rows)
                self._cursor += take
            elif self._active_count >= self.num_entries:
                if len(self._rows) * self.num_entries < self.max_entries:
                    self._rows.append(self._new_row())
                    self._active_count = 0
                    continue
                # Java hands this first overflow key to row 0 without advancing the cursor.
                self._reached_max = True
                take = 1
                routes[done] = 0
            else:
                take = min(self.num_entries - self._active_count, n - done)
                routes[done : done + take] = len(self._rows) - 1
            self._active_count += take
            done += take
        return routes

    def _to_bytes(self) -> bytes:
        head = self._header() + _DYNAMIC_HEADER.pack(
            self.num_entries, self._active_count, len(self._rows))
        return head + b"".join(self._row_bytes(bits) for bits in self._rows)


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


def _read_header(raw: memoryview, at: int) -> tuple[int, int, int]:
    version, num_hashes, hash_type, vector_size = _HEADER.unpack_from(raw, at)
    if version != _VERSION or hash_type != _MURMUR:
        # Unversioned or Jenkins-hashed filters predate Hudi; nothing writes them today.
        raise HoodieError(f"unsupported bloom filter (version {version}, hash type {hash_type})")
    return vector_size, num_hashes, at + _HEADER.size


def _read_row(raw: memoryview, at: int) -> tuple[int, int, np.ndarray, int]:
    vector_size, num_hashes, at = _read_header(raw, at)
    nbytes = (vector_size + 7) // 8
    packed = np.frombuffer(raw[at : at + nbytes], np.uint8)
    if len(packed) != nbytes:
        raise HoodieError("truncated bloom filter")
    bits = np.unpackbits(packed, count=vector_size, bitorder="little").view(np.bool_)
    return vector_size, num_hashes, bits, at + nbytes


def deserialize_bloom_filter(value: str | bytes, type_code: str | bytes) -> BloomFilter:
    """Accepts footer values as pyarrow returns them (bytes) or as text."""
    if isinstance(type_code, bytes):
        type_code = type_code.decode("ascii")
    code = type_code.upper()
    if code not in (SIMPLE, DYNAMIC_V0):
        raise HoodieError(f"unknown bloom filter type code {type_code!r}")
    try:
        raw = memoryview(base64.b64decode(value, validate=True))
        if code == SIMPLE:
            vector_size, num_hashes, bits, end = _read_row(raw, 0)
            result: BloomFilter = SimpleBloomFilter(vector_size, num_hashes, [bits])
        else:
            vector_size, num_hashes, end = _read_header(raw, 0)
            nr, active, count = _DYNAMIC_HEADER.unpack_from(raw, end)
            end += _DYNAMIC_HEADER.size
            rows = []
            for _ in range(count):
                row_size, row_hashes, bits, end = _read_row(raw, end)
                if (row_size, row_hashes) != (vector_size, num_hashes):
                    raise HoodieError("bloom filter rows disagree on geometry")
                rows.append(bits)
            result = DynamicBloomFilter(vector_size, num_hashes, nr, 0, rows, active)
    except (ValueError, struct.error) as exc:  # bad Base64 or short buffer
        raise HoodieError(f"corrupt bloom filter: {exc}") from exc
    if end != len(raw):
        raise HoodieError("trailing bytes after bloom filter")
    return result
