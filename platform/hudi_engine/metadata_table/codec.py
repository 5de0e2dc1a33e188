"""How metadata records are stored: HFile entries (key → schemaless Avro value, key order) in base
files and in HFile data blocks, deleted keys in delete blocks, the writer schema in each block's
header and each HFile's file info. Reading honours the schema a file was written with, so tables
written by Hudi read the same way as ours.
"""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from ..file_group.log_file import (BlockType, LogBlock, delete_block, delete_block_keys, hfile_block_reader,
                                   hfile_data_block)
from ..hfile import HFileReader
from ..hfile.format import DEFAULT_BLOCK_SIZE, SCHEMA_KEY
from .merge import merge
from .records import Delete, decode, encode
from .schema import metadata_record_schema

SCHEMA_JSON = json.dumps(metadata_record_schema(meta_fields=True), separators=(",", ":"))


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


def log_blocks(items: list[tuple[bytes, bytes]], deletes: list[str], instant: str,
               block_size: int = DEFAULT_BLOCK_SIZE) -> list[LogBlock]:
    """A delta commit's blocks for one file group: its records (an HFile of ``block_size``
    blocks), then its deleted keys."""
    blocks = [hfile_data_block(items, SCHEMA_JSON, instant, block_size=block_size)] if items else []
    if deletes:
        blocks.append(delete_block({"record_key": deletes, "partition_path": [""] * len(deletes)}, instant))
    return blocks


def _entries(reader: HFileReader, keys: Iterable[str] | None, prefixes: Iterable[str] | None):
    if keys is not None:
        return reader.get_many(k.encode("utf-8") for k in keys)
    if prefixes is not None:
        return (e for p in prefixes for e in reader.scan_prefix(p.encode("utf-8")))
    return reader.items()


def base_values(data: bytes | HFileReader, path: str, keys: Iterable[str] | None = None,
                prefixes: Iterable[str] | None = None) -> Iterator[tuple[str, dict]]:
    """A base HFile's records (all, or the given keys / key prefixes), decoded with the writer
    schema in its file info; ``data`` is the whole file, or a reader of it."""
    reader = data if isinstance(data, HFileReader) else HFileReader(data, path=path)
    schema = reader.file_info.get(SCHEMA_KEY)
    for k, v in _entries(reader, keys, prefixes):
        key = k.decode("utf-8")
        yield key, decode(v, schema, key)


def raw_entries(source: HFileReader | LogBlock) -> Iterator[tuple[bytes, bytes | None]] | None:
    """A base HFile's or a log block's entries as stored (a deleted key with None), when written
    with this engine's schema: values then need no decoding to be carried over. None otherwise."""
    if isinstance(source, HFileReader):
        return source.items() if source.file_info.get(SCHEMA_KEY) == SCHEMA_JSON.encode() else None
    if source.block_type == BlockType.DELETE_BLOCK:
        return ((k.encode("utf-8"), None) for k in delete_block_keys(source).column("record_key").to_pylist())
    if source.block_type == BlockType.HFILE_DATA_BLOCK and source.schema == SCHEMA_JSON:
        return hfile_block_reader(source).items()
    return None


def block_values(block: LogBlock, keys: Iterable[str] | None = None,
                 prefixes: Iterable[str] | None = None,
                 reader: HFileReader | None = None) -> Iterator[tuple[str, dict | Delete]]:
    """The (key, value) pairs a log block holds: records of an HFile data block (only the given
    keys or key prefixes, found through the block's HFile index; ``reader``: the block's, if
    opened already), deletes of a delete block."""
    if block.block_type == BlockType.HFILE_DATA_BLOCK:
        for k, v in _entries(reader or hfile_block_reader(block), keys, prefixes):
            key = k.decode("utf-8")
            yield key, decode(v, block.schema, key)
    elif block.block_type == BlockType.DELETE_BLOCK:
        for key in delete_block_keys(block).column("record_key").to_pylist():
            yield key, Delete(key)
