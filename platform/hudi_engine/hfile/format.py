"""Constants of HFile version 3 as Hudi writes and reads it (hudi-io ``HFileBlock``,
``HFileBlockType``, ``HFileTrailer``, ``HFileInfo``); kept apart so reader and writer agree.

Every block but the trailer has a 33-byte header::

    magic (8) | on-disk size without header (int32, data + checksum bytes)
    | uncompressed size without header (int32) | previous block offset (int64)
    | checksum type (1) | bytes per checksum (int32) | on-disk data size with header (int32)

then the (compressed) data, then ``ceil(on-disk data size with header / bytes per checksum)``
4-byte checksums. The trailer is the file's last 4096 bytes.
"""
from __future__ import annotations

import struct
from enum import Enum

HEADER = struct.Struct(">8siiqBii")
HEADER_SIZE = HEADER.size          # 33
TRAILER_SIZE = 4096
HFILE_VERSION = 3
TRAILER_MAGIC = b'TRABLK"$'
FILE_INFO_PB_MAGIC = b"PBUF"
# Hudi's writer always claims 16 KiB per checksum and writes zeroed checksums of type NULL.
BYTES_PER_CHECKSUM = 16 * 1024
CHECKSUM_SIZE = 4
CHECKSUM_NULL = 0
# What Hudi's native writer records as comparator (HBase's writer records the same name).
COMPARATOR_CLASS_NAME = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

# Data block cell: the KeyValue key after the row is family length 0, no qualifier,
# timestamp Long.MAX_VALUE ("latest") and type Put (4).
KEY_SUFFIX = b"\x00" + struct.pack(">q", 2**63 - 1) + b"\x04"
# Default block size of metadata-table HFiles and of HFile log blocks (1 MiB).
DEFAULT_BLOCK_SIZE = 1024 * 1024


class BlockType(bytes, Enum):
    """Block magics (HFileBlockType). Hudi writes DATA, META, ROOT_INDEX and FILE_INFO; HBase's
    writer may also leave multi-level index blocks."""
    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    BLOOM_CHUNK = b"BLMFBLK2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
    TRAILER = TRAILER_MAGIC
    INDEX_V1 = b"IDXBLK)+"


class Codec(int, Enum):
    """Trailer ``compression_codec``: HBase's Compression.Algorithm ordinals."""
    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


def codec_named(name: str | Codec) -> Codec:
    """``hoodie.hfile.compression.algorithm`` values (case-insensitive; ``gzip`` too)."""
    if isinstance(name, Codec):
        return name
    key = name.strip().upper()
    key = {"GZIP": "GZ"}.get(key, key)
    try:
        return Codec[key]
    except KeyError:
        raise ValueError(f"unknown HFile compression {name!r}; use one of "
                         f"{', '.join(c.name for c in Codec)}") from None


# File info keys (HFileInfo): only some carry the reserved "hfile." prefix.
LAST_KEY = "hfile.LASTKEY"
AVG_KEY_LEN = "hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = "hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = "hfile.CREATE_TIME_TS"
KEY_VALUE_VERSION = "KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = "MAX_MEMSTORE_TS_KEY"
# KEY_VALUE_VERSION 1: every cell ends with its MVCC timestamp as a Hadoop VLong (Hudi: one 0 byte).
KEY_VALUE_VERSION_WITH_MVCC_TS = 1

# Hudi's own file info and meta block names (HoodieAvroHFileReaderImplBase / HoodieAvroHFileWriter).
SCHEMA_KEY = "schema"
MIN_RECORD_KEY = "minRecordKey"
MAX_RECORD_KEY = "maxRecordKey"
BLOOM_FILTER_TYPE_CODE = "bloomFilterTypeCode"
BLOOM_FILTER_META_BLOCK = "bloomFilter"
