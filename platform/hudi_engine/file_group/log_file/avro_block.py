"""Avro data blocks (HoodieAvroDataBlock; CDC blocks share the layout): the records one write
appended to a file group, as Avro datums of the writer schema that the block header carries.

Content: int32 content version (1-3, same layout; Hudi 0.13+ writes 3) | int32 record count |
per record int32 length | datum.
"""
from __future__ import annotations

import struct
from typing import Collection, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .avro_decode import decode_records
from .avro_encode import concatenated, encode_records, fixed_width, join
from .block import LogBlock
from .format import BLOCK_CONTENT_VERSION, BlockType, HeaderKey

_INT = struct.Struct(">i")
_HEAD = struct.Struct(">ii")


def avro_data_block(table: pa.Table, avro_schema_json: str, instant: str, partial: bool = False) -> LogBlock:
    """A block of ``table``'s rows written with ``avro_schema_json`` (the writer schema, meta
    fields included, exactly the text the header should carry) by the write at ``instant``;
    ``partial``: the schema holds only the columns the records update (IS_PARTIAL)."""
    datums = encode_records(table, avro_schema_json)
    lengths = pc.binary_length(datums).to_numpy(zero_copy_only=False).astype(">i4")
    framed = join(fixed_width(lengths.view(np.uint8).reshape(-1, 4)), datums)
    content = _HEAD.pack(BLOCK_CONTENT_VERSION, table.num_rows) + concatenated(framed)
    return LogBlock(BlockType.AVRO_DATA_BLOCK, data_block_header(instant, avro_schema_json, partial),
                    content=content)


def data_block_header(instant: str, avro_schema_json: str, partial: bool) -> dict[HeaderKey, str]:
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: avro_schema_json}
    if partial:
        header[HeaderKey.IS_PARTIAL] = "true"
    return header


def avro_block_records(block: LogBlock, columns: Collection[str] | None = None) -> pa.Table:
    """The block's records, typed by the header schema (see ``schema.avro.avro_to_arrow``); with
    ``columns``, only those of its fields (the others are stepped over)."""
    return avro_blocks_records([block], columns)


def avro_blocks_records(blocks: Sequence[LogBlock], columns: Collection[str] | None = None) -> pa.Table:
    """The records of several Avro data blocks written with one schema, in block order, decoded in
    one pass: the decoder's work per field is paid once for them all, not once per block (a
    file group's log is often many small blocks)."""
    if len({b.schema for b in blocks}) != 1:
        raise ValueError("Avro data blocks decoded together must share their writer schema")
    contents, starts, lengths, offset = [], [], [], 0
    for block in blocks:
        at, length = _datum_spans(block.content)
        contents.append(block.content)
        starts.append(at + offset)
        lengths.append(length)
        offset += len(block.content)
    data = contents[0] if len(contents) == 1 else b"".join(contents)
    return decode_records(data, np.concatenate(starts), np.concatenate(lengths), blocks[0].schema, columns)


def _datum_spans(content: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Where each datum of a block's content starts, and its length."""
    version, count = _HEAD.unpack_from(content)
    if not 1 <= version <= BLOCK_CONTENT_VERSION:
        raise NotImplementedError(f"Avro data block content version {version} is not supported")
    starts, lengths = np.empty(count, np.int64), np.empty(count, np.int64)
    pos = _HEAD.size
    for i in range(count):   # each datum's length prefix leads to the next one
        (lengths[i],) = _INT.unpack_from(content, pos)
        starts[i] = pos = pos + 4
        pos += lengths[i]
    if pos > len(content):
        raise ValueError("Avro data block records run past its content")
    return starts, lengths
