"""Row order inside clustered files: linear (the sort columns in turn) or a space-filling curve
(z-order, hilbert) over them, so that files hold narrow ranges of every sort column at once.

Pure Arrow/numpy. Each value becomes an order-preserving 64-bit coordinate (Hudi's "direct" curve
build: numbers by their bits with the sign flipped, strings by their first 8 bytes); a row's curve
key is a fixed-size binary whose byte order is the curve order, so Spark can range-partition and
sort on it like any column.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieConfigError

LINEAR, ZORDER, HILBERT = "linear", "z-order", "hilbert"
STRATEGIES = (LINEAR, ZORDER, HILBERT)
CURVE_KEY = "_hoodie_curve_key"
_SIGN = np.uint64(1 << 63)
_BITS = 64


def layout_strategy(value: str) -> str:
    name = (value or LINEAR).strip().lower()
    aliases = {"zorder": ZORDER, "z_order": ZORDER}
    name = aliases.get(name, name)
    if name not in STRATEGIES:
        raise HoodieConfigError(f"hoodie.layout.optimize.strategy={value!r} is not valid; "
                                f"use one of {', '.join(STRATEGIES)}")
    return name


def coordinates(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """The column as uint64 values whose unsigned order is the column's order (nulls first)."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.cast(t.value_type)
        t = arr.type
    if pa.types.is_boolean(t):
        out = pc.cast(arr, pa.uint64()).to_numpy(zero_copy_only=False) << np.uint64(63)
    elif pa.types.is_unsigned_integer(t):
        out = pc.cast(arr.fill_null(0), pa.uint64()).to_numpy()
    elif (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)
          or pa.types.is_time(t) or pa.types.is_duration(t)):
        ints = pc.cast(arr.fill_null(0).view(_int_of(t)) if not pa.types.is_integer(t) else arr.fill_null(0),
                       pa.int64()).to_numpy()
        out = ints.view(np.uint64) ^ _SIGN
    elif pa.types.is_floating(t) or pa.types.is_decimal(t):
        floats = pc.cast(arr, pa.float64()).fill_null(0.0).to_numpy()
        bits = np.where(floats == 0.0, 0.0, floats).view(np.uint64)   # -0.0 sorts as 0.0
        out = np.where(bits & _SIGN, ~bits, bits | _SIGN)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t):
        out = _prefix_bytes(arr)
    else:
        raise HoodieConfigError(f"a sort column of type {t} cannot be ordered by a curve; "
                                "use numbers, strings, dates or timestamps")
    if arr.null_count:
        out = np.where(arr.is_null().to_numpy(zero_copy_only=False), np.uint64(0), out)
    return out.astype(np.uint64, copy=False)


def _int_of(t: pa.DataType) -> pa.DataType:
    return pa.int32() if t.bit_width == 32 else pa.int64()


def _prefix_bytes(arr: pa.Array) -> np.ndarray:
    """The first 8 bytes of each string, big-endian, zero padded."""
    b = pc.cast(arr.fill_null(""), pa.large_binary())
    n = len(b)
    offsets = np.frombuffer(b.buffers()[1], np.int64)[b.offset:b.offset + n + 1]
    data = np.frombuffer(b.buffers()[2], np.uint8) if b.buffers()[2] is not None else np.zeros(1, np.uint8)
    starts, lengths = offsets[:-1], offsets[1:] - offsets[:-1]
    out = np.zeros(n, np.uint64)
    for j in range(8):
        has = lengths > j
        byte = np.zeros(n, np.uint64)
        byte[has] = data[starts[has] + j]
        out |= byte << np.uint64(56 - 8 * j)
    return out


def interleave(coords: list[np.ndarray]) -> np.ndarray:
    """Bits of k coordinates interleaved, most significant first: an (n, 8k) uint8 array (z-order)."""
    k = len(coords)
    n = len(coords[0]) if coords else 0
    words = np.zeros((k, n), dtype=np.uint64)
    for bit in range(_BITS - 1, -1, -1):
        for d, c in enumerate(coords):
            pos = (_BITS - 1 - bit) * k + d           # position in the output, 0 = most significant
            word, shift = divmod(pos, _BITS)
            words[word] |= ((c >> np.uint64(bit)) & np.uint64(1)) << np.uint64(_BITS - 1 - shift)
    return np.ascontiguousarray(words.T).astype(">u8").view(np.uint8).reshape(n, 8 * k)


def hilbert_transpose(coords: list[np.ndarray]) -> list[np.ndarray]:
    """Skilling's transform: coordinates to the transposed Hilbert index, which interleaved gives
    the position along the k-dimensional Hilbert curve."""
    x = [c.copy() for c in coords]
    k = len(x)
    q = np.uint64(1) << np.uint64(_BITS - 1)
    while q > 1:
        p = q - np.uint64(1)
        for i in range(k):
            high = (x[i] & q) != 0
            t = (x[0] ^ x[i]) & p
            x[0] = np.where(high, x[0] ^ p, x[0] ^ t)
            if i:
                x[i] = np.where(high, x[i], x[i] ^ t)
        q >>= np.uint64(1)
    for i in range(1, k):
        x[i] ^= x[i - 1]
    t = np.zeros_like(x[0])
    q = np.uint64(1) << np.uint64(_BITS - 1)
    while q > 1:
        t = np.where((x[k - 1] & q) != 0, t ^ (q - np.uint64(1)), t)
        q >>= np.uint64(1)
    return [xi ^ t for xi in x]


def curve_key(table: pa.Table | pa.RecordBatch, columns: list[str], strategy: str) -> pa.Array:
    """Each row's position on the z-order or hilbert curve of ``columns``, as fixed-size binary."""
    missing = [c for c in columns if c not in table.schema.names]
    if missing:
        raise HoodieConfigError(f"sort column(s) {missing} of hoodie.clustering.plan.strategy.sort.columns "
                                f"are not in the table; its columns are {table.schema.names}")
    coords = [coordinates(table.column(c)) for c in columns]
    if strategy == HILBERT:
        coords = hilbert_transpose(coords)
    keys = interleave(coords)
    width = keys.shape[1]
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(keys),
                                                 [None, pa.py_buffer(np.ascontiguousarray(keys).tobytes())])
    return fixed.cast(pa.binary())
