"""Parquet data blocks (HoodieParquetDataBlock, ``hoodie.logfile.data.block.format=parquet``): the
content is a whole Parquet file of the block's records, meta columns included.

Hudi writes it with its Avro Parquet writer (Spark-record writes use Spark's writer instead and
leave Spark's row metadata in the footer): no bloom filter, the writer schema under
``parquet.avro.schema``, codec ``hoodie.parquet.compression.codec``.
"""
from __future__ import annotations

from typing import Collection

import pyarrow as pa
import pyarrow.parquet as pq

from ...config import PARQUET_COMPRESSION
from ...schema.arrow import conform, parquet_codec
from ...schema.avro import avro_to_arrow
from .avro_block import data_block_header
from .block import LogBlock
from .format import BlockType


def parquet_data_block(table: pa.Table, avro_schema_json: str, instant: str,
                       compression: str = PARQUET_COMPRESSION.default, partial: bool = False) -> LogBlock:
    """A block of ``table``'s rows in the Arrow shape of ``avro_schema_json`` (the writer schema,
    meta fields included), written by the write at ``instant``; ``partial`` as for Avro blocks."""
    table = conform(table, avro_to_arrow(avro_schema_json))
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, compression=parquet_codec(compression), store_schema=False) as writer:
        writer.write_table(table, row_group_size=max(table.num_rows, 1))
        writer.add_key_value_metadata({"parquet.avro.schema": avro_schema_json, "writer.model.name": "avro"})
    return LogBlock(BlockType.PARQUET_DATA_BLOCK, data_block_header(instant, avro_schema_json, partial),
                    content=sink.getvalue().to_pybytes())


def parquet_block_records(block: LogBlock, columns: Collection[str] | None = None) -> pa.Table:
    """The block's records as the Parquet file types them; with ``columns``, only those it has."""
    f = pq.ParquetFile(pa.BufferReader(block.content))
    if columns is not None:
        wanted = set(columns)
        columns = [n for n in f.schema_arrow.names if n in wanted]
    return f.read(columns=columns)
