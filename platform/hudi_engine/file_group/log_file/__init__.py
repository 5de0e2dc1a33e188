"""Hudi log files, byte for byte: block framing, the block kinds' contents, reading (torn writes
included) and writing with rollover. Laid out like hudi-rs's ``file_group/log_file``."""
from .avro_block import avro_block_records, avro_blocks_records, avro_data_block
from .block import LogBlock, encode_block
from .command_block import command_block_target, rollback_command_block
from .content import data_block_records
from .deletes import delete_block, delete_block_keys
from .format import (BLOCK_CONTENT_VERSION, LOG_FORMAT_VERSION, MAGIC, UNKNOWN_WRITE_TOKEN, BlockType,
                     CommandType, HeaderKey, log_file_name)
from .hfile_block import HFileBlockRecords, hfile_block_reader, hfile_block_records, hfile_data_block
from .parquet_block import parquet_block_records, parquet_data_block
from .reader import iter_log_blocks, read_log_file
from .writer import LogWriter, WrittenLogFile, next_log_version

__all__ = [
    "BLOCK_CONTENT_VERSION", "LOG_FORMAT_VERSION", "MAGIC", "UNKNOWN_WRITE_TOKEN", "BlockType",
    "CommandType", "HFileBlockRecords", "HeaderKey", "LogBlock", "LogWriter", "WrittenLogFile",
    "avro_block_records", "avro_blocks_records", "avro_data_block", "command_block_target", "data_block_records",
    "delete_block", "delete_block_keys", "encode_block", "hfile_block_reader", "hfile_block_records",
    "hfile_data_block", "iter_log_blocks", "log_file_name", "next_log_version",
    "parquet_block_records", "parquet_data_block", "read_log_file", "rollback_command_block",
]
