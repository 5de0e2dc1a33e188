"""Constants of the Hudi log file format (HoodieLogFormat, HoodieLogBlock): every block starts with
the same magic so a reader can resynchronise after a torn write, and enums are stored as their
Java ordinals, so the order of members here is part of the format."""
from __future__ import annotations

from enum import IntEnum

MAGIC = b"#HUDI#"
# Layout version of a block's framing (HoodieLogFormat.CURRENT_VERSION); every Hudi since 0.5 writes 1.
LOG_FORMAT_VERSION = 1
# Version stamped at the start of Avro data and delete block contents (HoodieLogBlock.version);
# 3 since Hudi 0.13, when delete blocks moved from Kryo to Avro.
BLOCK_CONTENT_VERSION = 3
# Write token Hudi uses when it does not know the writing task (HoodieLogFormat.UNKNOWN_WRITE_TOKEN).
UNKNOWN_WRITE_TOKEN = "1-0-1"


class BlockType(IntEnum):
    """HoodieLogBlockType; stored as the ordinal."""
    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6


class HeaderKey(IntEnum):
    """HoodieLogBlock.HeaderMetadataType; keys of both the header and the (always empty) footer."""
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


class CommandType(IntEnum):
    """HoodieCommandBlock.HoodieCommandBlockTypeEnum; the header holds the ordinal as decimal text."""
    ROLLBACK_BLOCK = 0


def log_file_name(file_id: str, instant: str, version: int, write_token: str) -> str:
    """``.<fileId>_<instant>.log.<version>_<writeToken>`` (FSUtils.makeLogFileName). Table version 6
    puts the base file's instant here and counts versions up per file slice; 8+ puts the instant
    of the delta commit that writes the file, so each new log file there is version 1."""
    return f".{file_id}_{instant}.log.{version}_{write_token}"
