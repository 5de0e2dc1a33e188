"""The records of a data block, whatever its format (hudi-rs: ``log_file/content.rs``)."""
from __future__ import annotations

from typing import Collection

import pyarrow as pa

from .avro_block import avro_block_records
from .block import LogBlock
from .format import BlockType
from .parquet_block import parquet_block_records


def data_block_records(block: LogBlock, columns: Collection[str] | None = None) -> pa.Table:
    """Records of an Avro, CDC or Parquet data block; with ``columns``, only those of its fields
    (a column the block lacks stays absent). HFile blocks (metadata table) hold Avro datums keyed
    in an HFile: ``hfile_block_records`` gives them undecoded."""
    if block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.CDC_DATA_BLOCK):
        return avro_block_records(block, columns)
    if block.block_type == BlockType.PARQUET_DATA_BLOCK:
        return parquet_block_records(block, columns)
    if block.block_type == BlockType.HFILE_DATA_BLOCK:
        raise NotImplementedError("HFile data blocks are not decoded into a table; "
                                  "hfile_block_records gives their (key, Avro datum) pairs and schema")
    raise ValueError(f"{block.block_type.name} is not a data block")
