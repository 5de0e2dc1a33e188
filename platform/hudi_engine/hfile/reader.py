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
from typing import Callable, Iterable, Iterator

from ..errors import HoodieCorruptFileError
from .block import Block, block_size_in_header, read_block
from .format import (FILE_INFO_PB_MAGIC, HEADER_SIZE, KEY_VALUE_VERSION, KEY_VALUE_VERSION_WITH_MVCC_TS,
                     MAX_MEMSTORE_TS_KEY, TRAILER_MAGIC, TRAILER_SIZE, BlockType, Codec)
from .proto import Trailer, decode_file_info_message, decode_trailer_message
from .varint import decode_hadoop_vint, decode_uvarint, hadoop_vint_size

_CELL_HEAD = struct.Struct(">ii")
_TAIL_GUESS = 16 * 1024         # bytes read before the trailer at open: the load-on-open section of most files
_ENTRY_HEAD = struct.Struct(">qi")


def read_trailer(data: bytes, where: str = "HFile", file_size: int | None = None) -> Trailer:
    """The trailer of an HFile, from its bytes (the whole file, or its last bytes when ``file_size``
    gives the whole file's size; ``HoodieCorruptFileError`` if there is none)."""
    start = len(data) - TRAILER_SIZE
    file_size = len(data) if file_size is None else file_size
    at = file_size - TRAILER_SIZE
    if start < 0:
        raise HoodieCorruptFileError(
            f"{where}: {file_size} bytes is shorter than an HFile trailer ({TRAILER_SIZE}); truncated?")
    if data[start:start + 8] != TRAILER_MAGIC:
        raise HoodieCorruptFileError(
            f"{where}: no HFile trailer magic at offset {at} (found {data[start:start + 8]!r}); "
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
    """Point lookups, prefix scans and full scans of one HFile: held in memory (``data`` = the whole
    file), or read by ranges (:meth:`open`: the trailer and load-on-open section once, then only the
    data blocks a lookup needs). ``blocks_read`` and ``bytes_read`` count the data blocks decoded
    and the bytes taken from storage."""

    def __init__(self, data: bytes | None = None, *, path: str = "<HFile>",
                 read_range: Callable[[int, int], bytes] | None = None, size: int | None = None):
        self.path = path
        self._handle = None        # the open file of a reader made by ``open``
        if data is not None:
            self.data: bytes | None = bytes(data)
            self._read_range = lambda offset, length: self.data[offset:offset + length]
            self.size = len(self.data)
        elif read_range is None or size is None:
            raise ValueError("an HFileReader needs the file's bytes, or a range reader and the file's size")
        else:
            self.data, self._read_range, self.size = None, read_range, size
        self.blocks_read = 0
        self.bytes_read = 0 if data is None else self.size
        if data is not None:
            self.trailer = trailer = read_trailer(self.data, path)
        else:
            # The trailer and, in one read with it for most files, the load-on-open section before it.
            tail_from = max(0, size - TRAILER_SIZE - _TAIL_GUESS)
            tail = self._read(tail_from, size - tail_from)
            self.trailer = trailer = read_trailer(tail, path, size)
        try:
            self.codec = Codec(Codec.NONE if trailer.compression_codec is None else trailer.compression_codec)
        except ValueError:
            raise HoodieCorruptFileError(
                f"{path}: unknown HFile compression codec {trailer.compression_codec}") from None
        if trailer.load_on_open_data_offset is None:
            raise HoodieCorruptFileError(f"{path}: HFile trailer has no load-on-open offset")
        # The root index, meta index and file info (and, for multi-level indexes, the intermediate
        # and leaf index blocks, which HBase writes before it) are read from one held range.
        self._held_from = 0 if self.data is not None else min(trailer.load_on_open_data_offset, size)
        if self.data is not None:
            self._held = self.data
        elif self._held_from >= tail_from:
            self._held = tail[self._held_from - tail_from:]
        else:
            self._held = self._read(self._held_from, size - self._held_from)
        root = self._block(trailer.load_on_open_data_offset, BlockType.ROOT_INDEX)
        entries = self._root_entries(root, trailer.data_index_count or 0, full_key=True)
        for _ in range((trailer.num_data_index_levels or 1) - 1):
            entries = [e for _, off, size in entries
                       for e in self._non_root_entries(self._block(off, (BlockType.INTERMEDIATE_INDEX,
                                                                         BlockType.LEAF_INDEX), size))]
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

    @classmethod
    def open(cls, storage, path: str) -> "HFileReader":
        """A reader of the HFile ``path`` of ``storage`` (a ``hudi_engine.storage.Storage``) that
        reads only the ranges it needs: the trailer, the load-on-open section, and data blocks on
        demand. The file stays open until ``close`` (or the end of a ``with`` block)."""
        handle = storage.open_input_file(path)
        try:
            reader = cls(path=path, read_range=lambda offset, length: handle.read_at(length, offset),
                         size=handle.size())
        except BaseException:
            handle.close()
            raise
        reader._handle = handle
        return reader

    def close(self) -> None:
        """Close the file an opened reader reads by range (nothing for one given the bytes)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()

    def __enter__(self) -> "HFileReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- metadata -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self.trailer.entry_count or 0

    @property
    def block_count(self) -> int:
        """Number of data blocks."""
        return len(self._blocks)

    def block_types(self) -> list[BlockType]:
        """Types of every block from the file's start to the trailer, in file order."""
        types, pos, end = [], 0, self.size - TRAILER_SIZE
        while pos < end:
            block = self._block(pos)
            types.append(block.block_type)
            pos += block.on_disk_size
        return types

    def meta_block(self, name: str) -> bytes | None:
        """Content of the meta block ``name`` (Hudi: ``bloomFilter``), if the file has one."""
        where = self.meta_index.get(name)
        return None if where is None else self._block(where[0], BlockType.META, where[1]).payload

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
        may hold one is read once, however many of the keys it may hold, and its keys are found by
        binary search over its cells rather than decoded one by one."""
        wanted = sorted(set(bytes(k) for k in keys))
        blocks: dict[int, list[bytes]] = {}
        for key in wanted:
            i = self._block_for(key)
            if i >= 0:
                blocks.setdefault(i, []).append(key)
        for i in sorted(blocks):
            yield from self._find(i, blocks[i])

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

    def _read(self, offset: int, length: int) -> bytes:
        data = self._read_range(offset, length)
        if self.data is None:
            self.bytes_read += len(data)
        return data

    def _block(self, offset: int, expect=None, size: int | None = None) -> Block:
        """The block at ``offset``: from the held bytes when they hold it, else read by range
        (``size``, the index's on-disk size, saves a second read of its header)."""
        if offset >= self._held_from:
            return read_block(self._held, offset, self.codec, self.path, expect, base=self._held_from)
        data = self._read(offset, size if size and size > 0 else HEADER_SIZE)
        whole = block_size_in_header(data)
        if whole is not None and whole > len(data):
            data += self._read(offset + len(data), min(whole, self.size - offset) - len(data))
        return read_block(data, offset, self.codec, self.path, expect, base=offset)

    def _data_block(self, i: int) -> Block:
        offset, size = self._blocks[i]
        self.blocks_read += 1
        return self._block(offset, BlockType.DATA, size)

    def _cells(self, i: int) -> Iterator[tuple[bytes, bytes]]:
        block = self._data_block(i)
        offset = block.offset
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

    def _find(self, i: int, keys: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) of the sorted ``keys`` that data block ``i`` holds."""
        block = self._data_block(i)
        data, starts = block.payload, self._cell_starts(block)
        row_len = struct.Struct(">H").unpack_from

        def row(start: int) -> bytes:
            return data[start + 10:start + 10 + row_len(data, start + 8)[0]]

        lo = 0
        for key in keys:
            j = bisect.bisect_left(starts, key, lo, key=row)
            if j < len(starts) and row(starts[j]) == key:
                key_len, value_len = _CELL_HEAD.unpack_from(data, starts[j])
                if key_len < 2 + row_len(data, starts[j] + 8)[0]:
                    raise self._corrupt(block.offset, f"cell at {starts[j]} of the data block has a short key")
                value_at = starts[j] + 8 + key_len
                yield key, data[value_at:value_at + value_len]
            lo = j

    def _cell_starts(self, block: Block) -> list[int]:
        """Where each cell of a data block starts (a walk over the cells' two lengths only)."""
        data, end, pos = block.payload, len(block.payload), 0
        starts: list[int] = []
        append, unpack, mvcc = starts.append, _CELL_HEAD.unpack_from, self._mvcc
        try:
            while pos < end:
                append(pos)
                key_len, value_len = unpack(data, pos)
                if key_len < 2 or value_len < 0:
                    raise self._corrupt(block.offset, f"cell at {pos} of the data block has negative lengths")
                pos += 8 + key_len + value_len
                if mvcc:       # a one-byte Hadoop VLong unless its first byte is 0x80-0x8f
                    first = data[pos]
                    pos += hadoop_vint_size(first) if 0x80 <= first < 0x90 else 1
        except (struct.error, IndexError):
            raise self._corrupt(block.offset, f"cell at {starts[-1]} of the data block runs past it") from None
        if pos != end:
            raise self._corrupt(block.offset, f"cell at {starts[-1]} of the data block runs past it")
        return starts

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
