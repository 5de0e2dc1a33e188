"""How metadata records are stored: HFile entries (key → schemaless Avro value, key order) in base
files and in HFile data blocks, deleted keys in delete blocks, the writer schema in each block's
header and each HFile's file info. Reading honours the schema a file was written with, so tables
written by Hudi read the same way as ours.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import pyarrow as pa

from ..file_group.log_file import (BlockType, LogBlock, delete_block, delete_block_keys, hfile_block_records,
                                   hfile_data_block)
from ..hfile import HFileReader
from ..hfile.format import SCHEMA_KEY
from .merge import merge
from .records import Delete, decode, encode
from .schema import metadata_record_schema

SCHEMA_JSON = json.dumps(metadata_record_schema(meta_fields=True), separators=(",", ":"))


@dataclass(frozen=True)
class FileColumnStats:
    """One column of one data file, as footers give it."""
    min: Any
    max: Any
    null_count: int
    value_count: int
    total_size: int
    total_uncompressed_size: int
    arrow_type: pa.DataType


def combine_batch(records: Iterable[dict | Delete]) -> dict[str, dict | Delete]:
    """One value per key for one write: a key's values in the order they were made, merged."""
    by_key: dict[str, list] = {}
    for r in records:
        by_key.setdefault(r.key if isinstance(r, Delete) else r["key"], []).append(r)
    return {k: merge(values) for k, values in by_key.items()}


def split(values: dict[str, dict | Delete]) -> tuple[list[tuple[bytes, bytes]], list[str]]:
    """HFile entries (sorted) for the records, and the keys to delete."""
    items = sorted((k.encode("utf-8"), encode(v)) for k, v in values.items() if not isinstance(v, Delete))
    deletes = sorted(k for k, v in values.items() if isinstance(v, Delete))
    return items, deletes


def base_file_info(items: list[tuple[bytes, bytes]]) -> dict[str, bytes]:
    info = {SCHEMA_KEY: SCHEMA_JSON.encode()}
    if items:
        info["minRecordKey"], info["maxRecordKey"] = items[0][0], items[-1][0]
    return info


def log_blocks(items: list[tuple[bytes, bytes]], deletes: list[str], instant: str) -> list[LogBlock]:
    """A delta commit's blocks for one file group: its records, then its deleted keys."""
    blocks = [hfile_data_block(items, SCHEMA_JSON, instant)] if items else []
    if deletes:
        blocks.append(delete_block({"record_key": deletes, "partition_path": [""] * len(deletes)}, instant))
    return blocks


class BaseFile:
    """A base HFile's records, decoded with its own writer schema."""

    def __init__(self, data: bytes, path: str):
        self.reader = HFileReader(data, path=path)
        self.schema = self.reader.file_info.get(SCHEMA_KEY)

    def _decode(self, key: bytes, value: bytes) -> dict:
        return decode(value, self.schema, key.decode("utf-8"))

    def get(self, key: str) -> dict | None:
        value = self.reader.get(key.encode("utf-8"))
        return None if value is None else self._decode(key.encode("utf-8"), value)

    def scan(self, prefix: str | None = None) -> Iterator[tuple[str, dict]]:
        entries = self.reader.items() if prefix is None else self.reader.scan_prefix(prefix.encode("utf-8"))
        for k, v in entries:
            yield k.decode("utf-8"), self._decode(k, v)


def block_values(block: LogBlock) -> Iterator[tuple[str, dict | Delete]]:
    """The (key, value) pairs a log block holds: records of an HFile data block, deletes of a
    delete block."""
    if block.block_type == BlockType.HFILE_DATA_BLOCK:
        content = hfile_block_records(block)
        for k, v in content.records:
            key = k.decode("utf-8")
            yield key, decode(v, content.schema, key)
    elif block.block_type == BlockType.DELETE_BLOCK:
        for key in delete_block_keys(block).column("record_key").to_pylist():
            yield key, Delete(key)
