"""The hashes behind metadata-table keys, as Hudi's ``HashID`` computes them.

Column-stats and bloom-filter keys are Base64 strings of hashes of the column name, partition and
file name; any reader looks a file's entry up by recomputing them, so the bytes must be Java's:

* 32 and 64 bits: xxHash (XXH32 / XXH64) of the UTF-8 bytes with seed ``0xdabadaba``. Java hands the
  seed over as an ``int``, so XXH64 sees it sign-extended to a long (``0xffffffffdabadaba``).
  The hash is written big-endian (HBase ``Bytes.toBytes``).
* 128 bits: MD5 of the UTF-8 bytes.
* Base64: the standard alphabet with ``=`` padding (``java.util.Base64.getEncoder``).

xxHash is spelled out here because no xxhash package is a dependency; it is the reference
algorithm (github.com/Cyan4973/xxHash, XXH32/XXH64), checked in the tests against published
vectors and against keys Hudi wrote.
"""
from __future__ import annotations

import base64
import hashlib
import struct

HASH_SEED = 0xDABADABA  # Java int -625288518: XXH32 uses its 32 bits, XXH64 its sign extension
_M32, _M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF

_P32 = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1)
_P64 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
        0x27D4EB2F165667C5)


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of ``data`` as an unsigned 32-bit int."""
    p1, p2, p3, p4, p5 = _P32
    seed &= _M32
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + p1 + p2) & _M32, (seed + p2) & _M32, seed, (seed - p1) & _M32]
        while i + 16 <= n:
            lanes = struct.unpack_from("<4I", data, i)
            for k in range(4):
                v[k] = (_rotl32((v[k] + lanes[k] * p2) & _M32, 13) * p1) & _M32
            i += 16
        h = (_rotl32(v[0], 1) + _rotl32(v[1], 7) + _rotl32(v[2], 12) + _rotl32(v[3], 18)) & _M32
    else:
        h = (seed + p5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        h = (_rotl32((h + struct.unpack_from("<I", data, i)[0] * p3) & _M32, 17) * p4) & _M32
        i += 4
    while i < n:
        h = (_rotl32((h + data[i] * p5) & _M32, 11) * p1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * p2) & _M32
    h ^= h >> 13
    h = (h * p3) & _M32
    return h ^ (h >> 16)


def _round64(acc: int, lane: int) -> int:
    return (_rotl64((acc + lane * _P64[1]) & _M64, 31) * _P64[0]) & _M64


def _merge64(h: int, v: int) -> int:
    return ((h ^ _round64(0, v)) * _P64[0] + _P64[3]) & _M64


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` as an unsigned 64-bit int."""
    p1, p2, p3, p4, p5 = _P64
    seed &= _M64
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + p1 + p2) & _M64, (seed + p2) & _M64, seed, (seed - p1) & _M64]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            for k in range(4):
                v[k] = _round64(v[k], lanes[k])
            i += 32
        h = (_rotl64(v[0], 1) + _rotl64(v[1], 7) + _rotl64(v[2], 12) + _rotl64(v[3], 18)) & _M64
        for k in range(4):
            h = _merge64(h, v[k])
    else:
        h = (seed + p5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h ^= _round64(0, struct.unpack_from("<Q", data, i)[0])
        h = (_rotl64(h, 27) * p1 + p4) & _M64
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from("<I", data, i)[0] * p1) & _M64
        h = (_rotl64(h, 23) * p2 + p3) & _M64
        i += 4
    while i < n:
        h ^= (data[i] * p5) & _M64
        h = (_rotl64(h, 11) * p1) & _M64
        i += 1
    h ^= h >> 33
    h = (h * p2) & _M64
    h ^= h >> 29
    h = (h * p3) & _M64
    return h ^ (h >> 32)


def hash_id(message: str, bits: int) -> bytes:
    """``HashID.hash(message, Size.BITS_<bits>)``: the raw hash bytes."""
    data = message.encode("utf-8")
    if bits == 32:
        return struct.pack(">I", xxh32(data, HASH_SEED))
    if bits == 64:
        sign_extended = HASH_SEED - (1 << 32) if HASH_SEED & 0x80000000 else HASH_SEED
        return struct.pack(">Q", xxh64(data, sign_extended))
    if bits == 128:
        return hashlib.md5(data).digest()
    raise ValueError(f"unsupported hash size: {bits} bits")


def base64_id(message: str, bits: int) -> str:
    """``asBase64EncodedString()`` of a Hudi index id: padded standard Base64 of :func:`hash_id`."""
    return base64.b64encode(hash_id(message, bits)).decode("ascii")


def column_index_id(column: str) -> str:
    """``ColumnIndexID``: 64-bit xxHash of the column name (12 Base64 characters)."""
    return base64_id(column, 64)


def partition_index_id(partition_identifier: str) -> str:
    """``PartitionIndexID``: 64-bit xxHash of the partition identifier (12 characters)."""
    return base64_id(partition_identifier, 64)


def file_index_id(file_name: str) -> str:
    """``FileIndexID``: MD5 of the file name (24 characters)."""
    return base64_id(file_name, 128)
