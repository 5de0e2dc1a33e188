"""Reading an HFile held in memory: the trailer, the load-on-open section (data index, walked down
every level HBase-written files may have; meta index; file info), then data blocks on demand.

Keys compare as unsigned bytes of the row (what Hudi writes as key); the rest of a KeyValue key
(family, qualifier, timestamp, type) is skipped. Index entries may hold a full KeyValue key
(HBase, Hudi after 2026) or the bare ``[int16 len][row]`` (Hudi 1.1), and HBase may store a
shortened "fake" first key: either way the entry's row is <= the block's first row, which is all
seeking needs. Keys are taken to be unique, as in every file Hudi writes (in an HBase file with a
key repeated across a block boundary, ``get`` may miss its first copy).
"""
from __future__ import annotations

import bisect
import struct
from typing import Iterable, Iterator

from ..errors import HoodieCorruptFileError
from .block import Block, read_block
from .format import (FILE_INFO_PB_MAGIC, KEY_VALUE_VERSION, KEY_VALUE_VERSION_WITH_MVCC_TS,
                     MAX_MEMSTORE_TS_KEY, TRAILER_MAGIC, TRAILER_SIZE, BlockType, Codec)
from .proto import Trailer, decode_file_info_message, decode_trailer_message
from .varint import decode_hadoop_vint, decode_uvarint, hadoop_vint_size

_CELL_HEAD = struct.Struct(">ii")
_ENTRY_HEAD = struct.Struct(">qi")


def read_trailer(data: bytes, where: str = "HFile") -> Trailer:
    """The trailer of a whole HFile (``HoodieCorruptFileError`` if there is none)."""
    start = len(data) - TRAILER_SIZE
    if start < 0:
        raise HoodieCorruptFileError(
            f"{where}: {len(data)} bytes is shorter than an HFile trailer ({TRAILER_SIZE}); truncated?")
    if data[start:start + 8] != TRAILER_MAGIC:
        raise HoodieCorruptFileError(
            f"{where}: no HFile trailer magic at offset {start} (found {data[start:start + 8]!r}); "
            "not an HFile, or truncated")
    (version,) = struct.unpack_from(">I", data, len(data) - 4)
    try:
        size, pos = decode_uvarint(data, start + 8, len(data) - 4)
        trailer = decode_trailer_message(data, pos, pos + size)
    except (ValueError, IndexError) as e:
        raise HoodieCorruptFileError(f"{where}: unreadable HFile trailer at offset {start}: {e}") from None
    trailer.version, trailer.minor_version = version & 0xFFFFFF, version >> 24
    if trailer.version != 3:
        raise HoodieCorruptFileError(f"{where}: HFile major version {trailer.version} is not supported (only 3)")
    return trailer


class HFileReader:
    """Point lookups, prefix scans and full scans of one HFile (``data`` = the whole file)."""

    def __init__(self, data: bytes, *, path: str = "<HFile>"):
        self.data, self.path = bytes(data), path
        self.trailer = trailer = read_trailer(self.data, path)
        try:
            self.codec = Codec(Codec.NONE if trailer.compression_codec is None else trailer.compression_codec)
        except ValueError:
            raise HoodieCorruptFileError(
                f"{path}: unknown HFile compression codec {trailer.compression_codec}") from None
        if trailer.load_on_open_data_offset is None:
            raise HoodieCorruptFileError(f"{path}: HFile trailer has no load-on-open offset")
        root = self._block(trailer.load_on_open_data_offset, BlockType.ROOT_INDEX)
        entries = self._root_entries(root, trailer.data_index_count or 0, full_key=True)
        for _ in range((trailer.num_data_index_levels or 1) - 1):
            entries = [e for _, off, size in entries
                       for e in self._non_root_entries(self._block(off, (BlockType.INTERMEDIATE_INDEX,
                                                                         BlockType.LEAF_INDEX)))]
        self._first_keys = [k for k, _, _ in entries]
        self._blocks = [(off, size) for _, off, size in entries]
        meta = self._block(root.offset + root.on_disk_size, BlockType.ROOT_INDEX)
        self.meta_index = {k.decode("utf-8", "replace"): (off, size) for k, off, size in
                           self._root_entries(meta, trailer.meta_index_count or 0, full_key=False)}
        info = self._block(meta.offset + meta.on_disk_size, BlockType.FILE_INFO)
        self.file_info = self._file_info(info)
        # KEY_VALUE_VERSION 1: each cell ends with its MVCC timestamp (a VLong; Hudi's are all 0).
        version = self.file_info.get(KEY_VALUE_VERSION, b"")
        self._mvcc = int.from_bytes(version[:4], "big") == KEY_VALUE_VERSION_WITH_MVCC_TS
        if self._mvcc and int.from_bytes(self.file_info.get(MAX_MEMSTORE_TS_KEY, b""), "big", signed=True) > 0:
            raise HoodieCorruptFileError(f"{path}: HFile cells carry MVCC timestamps, which Hudi never writes")

    # --- metadata -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self.trailer.entry_count or 0

    @property
    def block_count(self) -> int:
        """Number of data blocks."""
        return len(self._blocks)

    def block_types(self) -> list[BlockType]:
        """Types of every block from the file's start to the trailer, in file order."""
        types, pos, end = [], 0, len(self.data) - TRAILER_SIZE
        while pos < end:
            block = self._block(pos)
            types.append(block.block_type)
            pos += block.on_disk_size
        return types

    def meta_block(self, name: str) -> bytes | None:
        """Content of the meta block ``name`` (Hudi: ``bloomFilter``), if the file has one."""
        where = self.meta_index.get(name)
        return None if where is None else self._block(where[0], BlockType.META).payload

    # --- data -----------------------------------------------------------------------------------
    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) in key order."""
        for i in range(len(self._blocks)):
            yield from self._cells(i)

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key``, reading at most the one data block the index points to."""
        key = bytes(key)
        i = self._block_for(key)
        if i < 0:
            return None
        for k, v in self._cells(i):
            if k == key:
                return v
            if k > key:
                return None
        return None

    def get_many(self, keys: Iterable[bytes]) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) of those of ``keys`` the file holds, in key order: each data block that
        may hold one is read once, however many of the keys it may hold (a seek per block, not per key)."""
        wanted = sorted(set(bytes(k) for k in keys))
        blocks: dict[int, set[bytes]] = {}
        for key in wanted:
            i = self._block_for(key)
            if i >= 0:
                blocks.setdefault(i, set()).add(key)
        for i in sorted(blocks):
            mine = blocks[i]
            last = max(mine)
            for k, v in self._cells(i):
                if k in mine:
                    yield k, v
                if k >= last:
                    break

    def scan_prefix(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) of the keys starting with ``prefix``, in order, from the first block that
        can hold one."""
        prefix = bytes(prefix)
        for i in range(max(self._block_for(prefix), 0), len(self._blocks)):
            for k, v in self._cells(i):
                if k.startswith(prefix):
                    yield k, v
                elif k > prefix:
                    return

    # --- internals ------------------------------------------------------------------------------
    def _block_for(self, key: bytes) -> int:
        """Index of the last data block whose first key is <= ``key`` (-1: before them all)."""
        return bisect.bisect_right(self._first_keys, key) - 1

    def _block(self, offset: int, expect=None) -> Block:
        return read_block(self.data, offset, self.codec, self.path, expect)

    def _cells(self, i: int) -> Iterator[tuple[bytes, bytes]]:
        offset, _size = self._blocks[i]
        block = self._block(offset, BlockType.DATA)
        data, pos, end = block.payload, 0, len(block.payload)
        while pos < end:
            if pos + 10 > end:
                raise self._corrupt(offset, "cell header runs past the data block")
            key_len, value_len = _CELL_HEAD.unpack_from(data, pos)
            key_at = pos + 8
            (row_len,) = struct.unpack_from(">H", data, key_at)
            value_at = key_at + key_len
            pos = value_at + value_len
            if key_len < 2 + row_len or value_len < 0 or pos > end:
                raise self._corrupt(offset, f"cell at {key_at - 8} of the data block runs past it")
            if self._mvcc:
                if pos >= end:
                    raise self._corrupt(offset, "cell MVCC timestamp runs past the data block")
                pos += hadoop_vint_size(data[pos])
            yield data[key_at + 2:key_at + 2 + row_len], data[value_at:value_at + value_len]

    def _root_entries(self, block: Block, count: int, full_key: bool) -> list[tuple[bytes, int, int]]:
        """(key, offset, on-disk size) of a root-format index block; data index keys are reduced
        to their row."""
        data, pos, entries = block.payload, 0, []
        try:
            for _ in range(count):
                offset, size = _ENTRY_HEAD.unpack_from(data, pos)
                pos += 12
                key, pos = (_index_key(data, pos) if full_key else _meta_key(data, pos))
                entries.append((key, offset, size))
        except (ValueError, IndexError, struct.error) as e:
            raise self._corrupt(block.offset, f"unreadable index entry: {e}") from None
        return entries

    def _non_root_entries(self, block: Block) -> list[tuple[bytes, int, int]]:
        """Entries of a leaf/intermediate index block: int32 count, count + 1 int32 entry offsets
        (relative to the first entry), then per entry offset | size | key."""
        data = block.payload
        try:
            (count,) = struct.unpack_from(">i", data, 0)
            rel = struct.unpack_from(f">{count + 1}i", data, 4)
            base = 4 + 4 * (count + 1)
            entries = []
            for i in range(count):
                at = base + rel[i]
                offset, size = _ENTRY_HEAD.unpack_from(data, at)
                key = data[at + 12:base + rel[i + 1]]
                (row_len,) = struct.unpack_from(">H", key, 0)
                entries.append((key[2:2 + row_len], offset, size))
        except (ValueError, IndexError, struct.error) as e:
            raise self._corrupt(block.offset, f"unreadable index entry: {e}") from None
        return entries

    def _file_info(self, block: Block) -> dict[str, bytes]:
        data = block.payload
        if not data.startswith(FILE_INFO_PB_MAGIC):
            raise self._corrupt(block.offset, f"file info does not start with {FILE_INFO_PB_MAGIC!r}")
        try:
            size, pos = decode_uvarint(data, len(FILE_INFO_PB_MAGIC))
            pairs = decode_file_info_message(data, pos, pos + size)
        except ValueError as e:
            raise self._corrupt(block.offset, f"unreadable file info: {e}") from None
        return {k.decode("utf-8", "surrogateescape"): v for k, v in pairs}

    def _corrupt(self, offset: int, why: str) -> HoodieCorruptFileError:
        return HoodieCorruptFileError(f"{self.path}: HFile block at offset {offset}: {why}")


def _index_key(data: bytes, pos: int) -> tuple[bytes, int]:
    """The row of a data index entry's key and the position after it. The length is a Hadoop VInt;
    Hudi 1.1 wrote a Protobuf varint instead, which differs from 128 on: the stored key starts with
    its row length, so whichever reading makes that consistent is the right one."""
    for decode in (decode_hadoop_vint, decode_uvarint):
        try:
            length, at = decode(data, pos)
        except (ValueError, IndexError):
            continue
        if length < 2 or at + length > len(data):
            continue
        (row_len,) = struct.unpack_from(">H", data, at)
        if row_len + 2 == length or row_len + 12 <= length:
            return data[at + 2:at + 2 + row_len], at + length
    raise ValueError(f"bad key length at {pos}")


def _meta_key(data: bytes, pos: int) -> tuple[bytes, int]:
    length, at = decode_hadoop_vint(data, pos)
    if length < 0 or at + length > len(data):
        raise ValueError(f"bad key length at {pos}")
    return data[at:at + length], at + length
