"""One log block: its type, header and footer metadata and raw content, and its exact framing bytes.

Framing (HoodieLogFormatWriter), all integers big-endian::

    magic "#HUDI#" | int64 block length (everything after this field) | int32 log format version
    | int32 block type | header | int64 content length | content | footer
    | int64 reverse pointer (= block length + len(magic): the bytes from the magic up to this field)

Header and footer are ``int32 count`` then per entry ``int32 key ordinal | int32 length | bytes``.
Hudi builds them from a Java HashMap whose order varies between runs, so a block keeps the order
it was read in, which makes re-encoding a read block give back the same bytes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .format import LOG_FORMAT_VERSION, MAGIC, BlockType, CommandType, HeaderKey

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
# Header values are Java Strings turned to bytes; anything undecodable survives a round trip.
_TEXT = ("utf-8", "surrogateescape")


@dataclass
class LogBlock:
    """A block as stored; ``offset``/``size`` (magic included) are set for blocks read from a file.

    A ``CORRUPT_BLOCK`` is what a reader found where a block should be but whose framing did not
    hold (a writer killed mid-block): its content is the bytes up to the next magic or EOF.
    """
    block_type: BlockType
    header: dict[HeaderKey, str] = field(default_factory=dict)
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    content: bytes = b""
    offset: int | None = None
    size: int | None = None
    format_version: int = LOG_FORMAT_VERSION

    @property
    def is_corrupt(self) -> bool:
        return self.block_type == BlockType.CORRUPT_BLOCK

    @property
    def instant_time(self) -> str | None:
        """The instant that wrote the block (for a rollback command block: the rollback's)."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """Avro writer schema (JSON) of data and delete blocks."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def is_partial(self) -> bool:
        """Whether the block's records carry only the columns of its header schema, the others
        keeping earlier versions' values (Hudi 1.1's IS_PARTIAL)."""
        return self.header.get(HeaderKey.IS_PARTIAL, "").strip().lower() == "true"

    @property
    def command_type(self) -> CommandType | None:
        raw = self.header.get(HeaderKey.COMMAND_BLOCK_TYPE)
        return None if raw is None else CommandType(int(raw))


def _metadata_bytes(entries: dict[HeaderKey, str]) -> bytes:
    out = [_INT.pack(len(entries))]
    for key, value in entries.items():
        raw = value.encode(*_TEXT)
        out += [_INT.pack(key), _INT.pack(len(raw)), raw]
    return b"".join(out)


def read_metadata(data: bytes, pos: int, end: int) -> tuple[dict[HeaderKey, str], int]:
    """Entries starting at ``pos`` and the position after them; ``ValueError`` if they overrun
    ``end``, ``NotImplementedError`` for a key ordinal this reader does not know."""
    count, pos = _int(data, pos, end)
    entries: dict[HeaderKey, str] = {}
    for _ in range(count):
        key, pos = _int(data, pos, end)
        length, pos = _int(data, pos, end)
        if length < 0 or pos + length > end:
            raise ValueError("metadata entry runs past the block")
        entries[_header_key(key)] = data[pos:pos + length].decode(*_TEXT)
        pos += length
    return entries, pos


def _header_key(ordinal: int) -> HeaderKey:
    try:
        return HeaderKey(ordinal)
    except ValueError:
        raise NotImplementedError(
            f"log block metadata key ordinal {ordinal} is unknown to this reader (written by a newer Hudi?)"
        ) from None


def _int(data: bytes, pos: int, end: int) -> tuple[int, int]:
    if pos + 4 > end:
        raise ValueError("metadata runs past the block")
    return _INT.unpack_from(data, pos)[0], pos + 4


def encode_block(block: LogBlock) -> bytes:
    """The bytes HoodieLogFormatWriter appends for ``block``, magic to reverse pointer."""
    if block.is_corrupt:
        raise ValueError("a corrupt block is a reading artefact and cannot be written")
    header, footer = _metadata_bytes(block.header), _metadata_bytes(block.footer)
    # version + type + header + content length + content + footer + reverse pointer
    length = 4 + 4 + len(header) + 8 + len(block.content) + len(footer) + 8
    return b"".join([
        MAGIC, _LONG.pack(length), _INT.pack(block.format_version), _INT.pack(block.block_type),
        header, _LONG.pack(len(block.content)), block.content, footer,
        _LONG.pack(length + len(MAGIC)),
    ])
