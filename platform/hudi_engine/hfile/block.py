"""One HFile block: framing (header, optionally compressed data, checksum bytes) both ways.

Hudi's writer stamps checksum type NULL and 16 KiB per checksum and appends the zeroed checksum
bytes those fields imply; HBase's writer stores CRC32C sums. Reading goes by the header's own
"on-disk data size with header", so either works (sums are not verified).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import HoodieCorruptFileError
from .compression import compress, decompress
from .format import (BYTES_PER_CHECKSUM, CHECKSUM_NULL, CHECKSUM_SIZE, HEADER, HEADER_SIZE,
                     BlockType, Codec)


def _checksum_bytes(size_with_header: int, bytes_per_checksum: int) -> int:
    if bytes_per_checksum <= 0:
        return 0
    return -(-size_with_header // bytes_per_checksum) * CHECKSUM_SIZE


def encode_block(block_type: BlockType, payload: bytes, codec: Codec, prev_offset: int = -1) -> bytes:
    """The block's bytes, header to checksums, as hudi-io's HFileBlock.serialize lays them out."""
    data = compress(codec, payload)
    with_header = HEADER_SIZE + len(data)
    checksums = _checksum_bytes(with_header, BYTES_PER_CHECKSUM)
    header = HEADER.pack(block_type.value, len(data) + checksums, len(payload), prev_offset,
                         CHECKSUM_NULL, BYTES_PER_CHECKSUM, with_header)
    return header + data + bytes(checksums)


@dataclass(frozen=True)
class Block:
    """A block read from a file: its type, where it is and its uncompressed data."""
    block_type: BlockType
    offset: int
    on_disk_size: int      # header included: the next block starts at offset + on_disk_size
    prev_offset: int
    payload: bytes


def read_block(data: bytes, offset: int, codec: Codec, where: str,
               expect: BlockType | tuple[BlockType, ...] | None = None, base: int = 0) -> Block:
    """The block at file offset ``offset`` of ``data``, which holds the file's bytes from ``base`` on
    (the whole file, or the part of it that was read); ``HoodieCorruptFileError`` naming ``where``
    and the offset if its magic, sizes or compressed data are wrong, or if it is not of type ``expect``."""
    def fail(why: str) -> HoodieCorruptFileError:
        return HoodieCorruptFileError(f"{where}: HFile block at offset {file_offset}: {why}")

    file_offset, offset = offset, offset - base

    if offset < 0 or offset + HEADER_SIZE > len(data):
        raise fail(f"header runs past the end of the file ({base + len(data)} bytes)")
    magic, on_disk, uncompressed, prev, _ck_type, _per_ck, with_header = HEADER.unpack_from(data, offset)
    try:
        block_type = BlockType(magic)
    except ValueError:
        raise fail(f"unknown block magic {magic!r}") from None
    if expect is not None:
        wanted = expect if isinstance(expect, tuple) else (expect,)
        if block_type not in wanted:
            raise fail(f"expected a {'/'.join(t.name for t in wanted)} block, found {block_type.name}")
    if on_disk < 0 or uncompressed < 0 or not HEADER_SIZE <= with_header <= HEADER_SIZE + on_disk:
        raise fail("inconsistent sizes in the block header")
    if offset + HEADER_SIZE + on_disk > len(data):
        raise fail(f"block of {HEADER_SIZE + on_disk} bytes runs past the end of the file ({base + len(data)} bytes)")
    try:
        payload = decompress(codec, data[offset + HEADER_SIZE:offset + with_header], uncompressed)
    except ValueError as e:
        raise fail(str(e)) from None
    return Block(block_type, file_offset, HEADER_SIZE + on_disk, prev, payload)


def block_size_in_header(data: bytes, offset: int = 0) -> int | None:
    """The on-disk size (header included) a block header at ``offset`` gives, None if ``data``
    does not hold a whole header there."""
    if offset < 0 or offset + HEADER_SIZE > len(data):
        return None
    return HEADER_SIZE + HEADER.unpack_from(data, offset)[1]
