"""Java's ``String.hashCode``: Hudi places keys in buckets, metadata file groups and HashMaps by it."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MASK32 = np.uint64(0xFFFFFFFF)


def java_string_hash(text: str) -> int:
    """``String.hashCode``: over UTF-16 code units, as a 32-bit unsigned value."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def java_string_hashes(values: pa.Array) -> np.ndarray:
    """Java's ``String.hashCode()`` of each string (UTF-16 code units), as uint32."""
    values = pc.cast(values, pa.large_string())
    if not pc.all(pc.string_is_ascii(values)).as_py():
        return np.array([java_string_hash(v) for v in values.to_pylist()], dtype=np.uint64)
    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], np.int64)[values.offset:values.offset + n + 1]
    data = (np.frombuffer(values.buffers()[2], np.uint8) if values.buffers()[2] is not None
            else np.zeros(1, np.uint8))
    starts, lengths = offsets[:-1], offsets[1:] - offsets[:-1]
    h = np.zeros(n, np.uint64)
    for j in range(int(lengths.max()) if n else 0):
        live = lengths > j
        h[live] = (h[live] * np.uint64(31) + data[starts[live] + j].astype(np.uint64)) & _MASK32
    return h
