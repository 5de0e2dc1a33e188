"""HFile data blocks (HoodieHFileDataBlock): the metadata table's log blocks. The content is a
whole HFile (no content version prefix) written as ``HFileUtils.serializeRecordsToLogBlock`` does:
records keyed by record key in key order (a duplicate key is an error), each value the record's
Avro datum with its key field blanked to ``""``, 1 MiB blocks, codec
``hoodie.hfile.compression.algorithm`` (GZ), and the schema both in the block header and under
``schema`` in the HFile's file info.

Values stay Avro bytes here; decoding them is the metadata table reader's business.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

from ...config import HFILE_COMPRESSION
from ...errors import HoodieValidationError
from ...hfile import HFileReader, write_hfile
from ...hfile.format import DEFAULT_BLOCK_SIZE, SCHEMA_KEY
from .block import LogBlock
from .format import BlockType, HeaderKey


class HFileBlockRecords(NamedTuple):
    """What an HFile data block holds: the header's writer schema (JSON) and its records as
    (record key, Avro datum) pairs in key order."""
    schema: str | None
    records: list[tuple[bytes, bytes]]


def hfile_data_block(records: Iterable[tuple[str | bytes, bytes]], avro_schema_json: str, instant: str, *,
                     compression: str = HFILE_COMPRESSION.default, layout: str = "current",
                     create_time_ms: int | None = None, block_size: int = DEFAULT_BLOCK_SIZE) -> LogBlock:
    """A block of ``records`` ((record key, Avro datum of ``avro_schema_json``) in any order)
    written by the write at ``instant``, its HFile in data blocks of ``block_size``."""
    by_key: dict[bytes, bytes] = {}
    for key, datum in records:
        raw = key.encode() if isinstance(key, str) else bytes(key)
        if raw in by_key:
            raise HoodieValidationError(
                f"HFile data block: record key {raw.decode(errors='replace')!r} appears twice; "
                "the metadata table writes one record per key and block")
        by_key[raw] = bytes(datum)
    if not by_key:
        raise HoodieValidationError("HFile data block: no records (Hudi never writes an empty data block)")
    content = write_hfile(sorted(by_key.items()), block_size=block_size, compression=compression,
                          file_info={SCHEMA_KEY: avro_schema_json.encode()}, layout=layout,
                          create_time_ms=create_time_ms)
    return LogBlock(BlockType.HFILE_DATA_BLOCK,
                    {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: avro_schema_json},
                    content=content)


def hfile_block_reader(block: LogBlock, where: str = "HFile data block") -> HFileReader:
    """The block's content opened for point lookups and prefix scans."""
    if block.block_type != BlockType.HFILE_DATA_BLOCK:
        raise ValueError(f"{block.block_type.name} is not an HFile data block")
    if block.offset is not None:
        where = f"{where} at offset {block.offset}"
    return HFileReader(block.content, path=where)


def hfile_block_records(block: LogBlock) -> HFileBlockRecords:
    """Every record of the block, undecoded, with the header schema."""
    return HFileBlockRecords(block.schema, list(hfile_block_reader(block).items()))
