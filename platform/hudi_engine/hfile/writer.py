"""Writing an HFile the way Hudi's native writer (hudi-io ``HFileWriterImpl``) does: data blocks
of KeyValue cells, the meta blocks Hudi keeps its bloom filter in, a single-level root data index,
the meta index, the file info block and the 4096-byte protobuf trailer.

Two layouts differ only in the block index and block headers:

- ``"1.1"``: what Hudi 1.1.x wrote (the metadata tables of the fixtures): index entries hold the
  bare row key ``[int16 len][row]`` with a Protobuf varint length, and each data block after the
  first records its own offset as "previous block offset". For first keys of 126+ bytes that
  varint is unreadable by Hudi's own reader, so such files are refused.
- ``"current"`` (default): Hudi after the 2026 fixes (apache/hudi#18465, #19071, #19083): index
  entries hold the full KeyValue key with a Hadoop VInt length, and previous-block offsets point at
  the previous data block. Every reader (Hudi 1.x, HBase, hudi-rs) reads these.

A data block is closed before the cell that would take it past ``block_size``, counting each cell
as key + value + 9 bytes as Hudi's writer does (the cell really takes 21 more than key + value).
The trailer's ``uncompressed_data_index_size`` is the data blocks' real uncompressed size: that is
what Hudi 1.1's files hold (the fixtures have single-block files only, so the splitting rule is
taken from Hudi's source, not checked against its files).
"""
from __future__ import annotations

import struct
import time
from typing import Iterable, Mapping

from ..errors import HoodieValidationError
from .block import encode_block
from .format import (AVG_KEY_LEN, AVG_VALUE_LEN, COMPARATOR_CLASS_NAME, CREATE_TIME_TS,
                     DEFAULT_BLOCK_SIZE, FILE_INFO_PB_MAGIC, HFILE_VERSION, KEY_SUFFIX,
                     KEY_VALUE_VERSION, KEY_VALUE_VERSION_WITH_MVCC_TS, LAST_KEY, MAX_MEMSTORE_TS_KEY,
                     TRAILER_MAGIC, TRAILER_SIZE, BlockType, Codec, codec_named)
from .java_hashmap import hashmap_order
from .proto import Trailer, encode_file_info_message, encode_trailer_message
from .varint import encode_hadoop_vint, encode_uvarint

LAYOUTS = ("current", "1.1")
_CELL_HEAD = struct.Struct(">iiH")
# What Hudi's writer adds to key + value when filling a block: the key and value lengths and the
# MVCC byte (not the row length, family length, timestamp and type).
_COUNTED_OVERHEAD = 9


def cell_bytes(key: bytes, value: bytes) -> bytes:
    """One data block cell: int32 key length | int32 value length | int16 row length | row
    | family length 0 | timestamp MAX | type Put | value | MVCC timestamp 0 (one VLong byte)."""
    return _CELL_HEAD.pack(len(key) + 2 + len(KEY_SUFFIX), len(value), len(key)) + key + KEY_SUFFIX + value + b"\x00"


def write_hfile(items: Iterable[tuple[bytes, bytes]], *, block_size: int = DEFAULT_BLOCK_SIZE,
                compression: str | Codec = "GZ", file_info: Mapping[str, bytes] | None = None,
                meta_blocks: Mapping[str, bytes] | None = None, create_time_ms: int | None = None,
                layout: str = "current") -> bytes:
    """An HFile of ``items``: (key, value) byte pairs in strictly increasing key order.

    ``file_info`` entries (Hudi's ``schema``, ``minRecordKey``, ``maxRecordKey``,
    ``bloomFilterTypeCode``) go in the file info block beside the writer's own (``hfile.LASTKEY``,
    average lengths, ``hfile.CREATE_TIME_TS`` = ``create_time_ms`` or now, ``KEY_VALUE_VERSION``,
    ``MAX_MEMSTORE_TS_KEY``); ``meta_blocks`` (Hudi's ``bloomFilter``) become one meta block each.
    ``compression`` is ``GZ`` (Hudi's default) or ``NONE``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown HFile layout {layout!r}; use one of {LAYOUTS}")
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    codec = codec_named(compression)
    if codec not in (Codec.GZ, Codec.NONE):
        raise NotImplementedError(f"writing HFile compression {codec.name} is not supported (only NONE and GZ)")
    legacy = layout == "1.1"

    out: list[bytes] = []
    offset = 0
    index: list[tuple[bytes, int, int]] = []     # (first key, offset, on-disk size) per data block
    cells: list[bytes] = []
    block_first: bytes | None = None
    block_bytes = 0
    prev_key: bytes | None = None
    count = key_total = value_total = uncompressed_total = 0
    prev_block_offset = -1

    def flush() -> None:
        nonlocal offset, cells, block_first, block_bytes, prev_block_offset, uncompressed_total
        if not cells:
            return
        payload = b"".join(cells)
        raw = encode_block(BlockType.DATA, payload, codec, prev_block_offset)
        if legacy and block_first is not None and len(block_first) + 2 >= 128:
            raise HoodieValidationError(
                f"key {block_first!r} starts a data block and is too long for the Hudi 1.1 layout "
                "(its index entry would be unreadable); write with layout='current'")
        index.append((block_first, offset, len(raw)))
        out.append(raw)
        uncompressed_total += len(payload)
        # Hudi 1.1 passed the new block's own offset here; the fix passes the block just written.
        prev_block_offset = offset + len(raw) if legacy else offset
        offset += len(raw)
        cells, block_first, block_bytes = [], None, 0

    for key, value in items:
        key, value = bytes(key), bytes(value)
        if prev_key is not None and key <= prev_key:
            what = "repeats" if key == prev_key else "is smaller than"
            raise HoodieValidationError(
                f"HFile keys must be strictly increasing: key {key!r} {what} the previous key {prev_key!r}")
        if len(key) > 0x7FFF:
            raise HoodieValidationError(f"HFile key {key[:40]!r}... is {len(key)} bytes; the most is 32767")
        size = len(key) + len(value) + _COUNTED_OVERHEAD
        if cells and block_bytes + size > block_size:
            flush()
        if not cells:
            block_first = key
        cells.append(cell_bytes(key, value))
        block_bytes += size
        prev_key = key
        count += 1
        key_total += len(key)
        value_total += len(value)
    flush()
    first_data_offset = index[0][1] if index else -1
    last_data_offset = index[-1][1] if index else 0

    meta_index: list[tuple[bytes, int, int]] = []
    for name, value in hashmap_order((meta_blocks or {}).items()):
        if legacy and len(name.encode()) >= 128:
            raise HoodieValidationError(f"meta block name {name[:40]!r}... is too long for the Hudi 1.1 layout")
        raw = encode_block(BlockType.META, bytes(value), codec)
        meta_index.append((name.encode(), offset, len(raw)))
        out.append(raw)
        offset += len(raw)

    load_on_open = offset
    data_index = b"".join(_index_entry(key, o, s, legacy) for key, o, s in index)
    out.append(encode_block(BlockType.ROOT_INDEX, data_index, codec))
    meta_index_payload = b"".join(
        struct.pack(">qi", o, s) + (encode_uvarint if legacy else encode_hadoop_vint)(len(name)) + name
        for name, o, s in meta_index)
    out.append(encode_block(BlockType.ROOT_INDEX, meta_index_payload, codec))
    file_info_offset = load_on_open + len(out[-2]) + len(out[-1])

    created = int(time.time() * 1000) if create_time_ms is None else create_time_ms
    info = [(MAX_MEMSTORE_TS_KEY, struct.pack(">q", 0))]
    info += [(k, bytes(v)) for k, v in (file_info or {}).items()]
    info += [
        (LAST_KEY, struct.pack(">H", len(prev_key)) + prev_key if prev_key else b""),
        (AVG_KEY_LEN, struct.pack(">i", key_total // count if count else 0)),
        (CREATE_TIME_TS, struct.pack(">q", created)),
        (AVG_VALUE_LEN, struct.pack(">i", value_total // count if count else 0)),
    ]
    if not any(k == KEY_VALUE_VERSION for k, _ in info):
        info.append((KEY_VALUE_VERSION, struct.pack(">i", KEY_VALUE_VERSION_WITH_MVCC_TS)))
    message = encode_file_info_message([(k.encode(), v) for k, v in hashmap_order(info)])
    out.append(encode_block(BlockType.FILE_INFO, FILE_INFO_PB_MAGIC + encode_uvarint(len(message)) + message, codec))

    trailer = Trailer(
        file_info_offset=file_info_offset, load_on_open_data_offset=load_on_open,
        uncompressed_data_index_size=uncompressed_total, data_index_count=len(index),
        meta_index_count=len(meta_index), entry_count=count, num_data_index_levels=1,
        first_data_block_offset=first_data_offset, last_data_block_offset=last_data_offset,
        comparator_class_name=COMPARATOR_CLASS_NAME, compression_codec=int(codec))
    out.append(encode_trailer(trailer))
    return b"".join(out)


def _index_entry(key: bytes, offset: int, size: int, legacy: bool) -> bytes:
    if legacy:
        stored = struct.pack(">H", len(key)) + key
        return struct.pack(">qi", offset, size) + encode_uvarint(len(stored)) + stored
    stored = struct.pack(">H", len(key)) + key + KEY_SUFFIX
    return struct.pack(">qi", offset, size) + encode_hadoop_vint(len(stored)) + stored


def encode_trailer(trailer: Trailer) -> bytes:
    """The fixed-size trailer: magic, delimited TrailerProto, zero padding, version int."""
    message = encode_trailer_message(trailer)
    body = TRAILER_MAGIC + encode_uvarint(len(message)) + message
    if len(body) > TRAILER_SIZE - 4:
        raise ValueError("HFile trailer message does not fit in the trailer")
    version = (trailer.minor_version << 24) | (trailer.version or HFILE_VERSION)
    return body + bytes(TRAILER_SIZE - 4 - len(body)) + struct.pack(">I", version)
