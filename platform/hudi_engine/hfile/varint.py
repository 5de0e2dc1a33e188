"""The two variable-length integer encodings an HFile mixes: Protobuf varints (length prefixes of
the trailer and file info messages, and their fields) and Hadoop ``WritableUtils`` VInts (block
index key lengths, cell MVCC timestamps). They agree on 0..127 only."""
from __future__ import annotations


def encode_uvarint(value: int) -> bytes:
    """Protobuf base-128 varint of a non-negative integer (negative int64s take 10 bytes)."""
    if value < 0:
        value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_uvarint(data: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it; ``ValueError`` past ``end``."""
    end = len(data) if end is None else end
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("varint runs past its buffer")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def encode_hadoop_vint(value: int) -> bytes:
    """``WritableUtils.writeVLong``: one byte for -112..127, else a length/sign byte and the
    big-endian magnitude (ones' complement for negatives)."""
    if -112 <= value <= 127:
        return (value & 0xFF).to_bytes(1, "big")
    marker = -112
    if value < 0:
        value = ~value
        marker = -120
    size = (value.bit_length() + 7) // 8
    return ((marker - size) & 0xFF).to_bytes(1, "big") + value.to_bytes(size, "big")


def hadoop_vint_size(first: int) -> int:
    """Bytes the VInt starting with byte ``first`` takes."""
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return 1
    return -119 - signed if signed < -120 else -111 - signed


def decode_hadoop_vint(data: bytes, pos: int) -> tuple[int, int]:
    """``WritableUtils.readVLong`` at ``pos``: the value and the position after it."""
    first = data[pos]
    size = hadoop_vint_size(first)
    signed = first - 256 if first > 127 else first
    if size == 1:
        return signed, pos + 1
    if pos + size > len(data):
        raise ValueError("VInt runs past its buffer")
    value = int.from_bytes(data[pos + 1:pos + size], "big")
    return (~value if signed < -120 else value), pos + size
