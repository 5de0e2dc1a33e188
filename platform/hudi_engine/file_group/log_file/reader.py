"""Reading the blocks of a log file the way HoodieLogFileReader does, torn writes included.

A block counts only if its length field, the reverse pointer at its end and the magic (or EOF)
right after it agree. Otherwise the bytes from after its magic to the next magic (or EOF) come
back as one ``CORRUPT_BLOCK`` and reading resumes at that magic: a writer killed mid-block leaves
such a tail, and on file systems with append the next writer's blocks follow it. Bytes that do not
start with the magic where a block should begin (Hudi raises there) are reported the same way.
"""
from __future__ import annotations

import struct
from typing import Iterator

from ...storage import Storage
from .block import LogBlock, read_metadata
from .format import LOG_FORMAT_VERSION, MAGIC, BlockType

_LONG = struct.Struct(">q")
_TWO_INTS = struct.Struct(">ii")
# version, type, empty header, content length, empty footer, reverse pointer
_SMALLEST_BLOCK = 4 + 4 + 4 + 8 + 4 + 8


def read_log_file(storage: Storage, path: str) -> list[LogBlock]:
    """Every block of the log file at ``path`` (relative to the storage's base path), in order."""
    return list(iter_log_blocks(storage.read_bytes(path)))


def iter_log_blocks(data: bytes) -> Iterator[LogBlock]:
    """Blocks of a whole log file held in memory."""
    pos, end = 0, len(data)
    # Fewer bytes than a magic at the end are ignored, as HoodieLogFileReader hits EOF there.
    while end - pos >= len(MAGIC):
        if data.startswith(MAGIC, pos):
            start = pos + len(MAGIC)
            block = _framed_block(data, pos)
        else:
            start, block = pos, None
        if block is None:
            stop = data.find(MAGIC, start)
            stop = end if stop < 0 else stop
            block = LogBlock(BlockType.CORRUPT_BLOCK, content=data[start:stop], offset=pos, size=stop - pos)
        yield block
        pos = block.offset + block.size


def _framed_block(data: bytes, offset: int) -> LogBlock | None:
    """The block whose magic is at ``offset``, or None when its framing does not hold."""
    body = offset + len(MAGIC) + 8
    if body > len(data):
        return None
    length = _LONG.unpack_from(data, body - 8)[0]
    block_end = body + length
    if length < _SMALLEST_BLOCK or block_end > len(data):
        return None
    if _LONG.unpack_from(data, block_end - 8)[0] - len(MAGIC) != length:
        return None
    if len(data) - block_end >= len(MAGIC) and not data.startswith(MAGIC, block_end):
        return None
    try:
        return _parse_block(data, offset, body, block_end)
    except ValueError:
        return None


def _parse_block(data: bytes, offset: int, pos: int, block_end: int) -> LogBlock:
    """Fields of a block whose framing holds; ``ValueError`` if they do not fill it exactly."""
    version, type_ordinal = _TWO_INTS.unpack_from(data, pos)
    if version < LOG_FORMAT_VERSION:
        raise ValueError(f"log format version {version} predates block headers")
    try:
        block_type = BlockType(type_ordinal)
    except ValueError:
        raise NotImplementedError(
            f"log block at byte {offset} has type ordinal {type_ordinal}, unknown to this reader "
            "(written by a newer Hudi?)") from None
    header, pos = read_metadata(data, pos + 8, block_end)
    if pos + 8 > block_end:
        raise ValueError("content length runs past the block")
    content_length = _LONG.unpack_from(data, pos)[0]
    pos += 8
    if content_length < 0 or pos + content_length > block_end:
        raise ValueError("content runs past the block")
    content = data[pos:pos + content_length]
    footer, pos = read_metadata(data, pos + content_length, block_end)
    if pos + 8 != block_end:
        raise ValueError("block fields do not fill the block")
    return LogBlock(block_type, header, footer, content, offset=offset, size=block_end - offset,
                    format_version=version)
