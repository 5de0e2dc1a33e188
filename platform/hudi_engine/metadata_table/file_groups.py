"""Writing the metadata table's file groups: each holds the records whose key hashes to it, as a
base HFile (initialization, compaction) plus one log file per delta commit holding one HFile data
block, keys sorted. The same functions run on the driver and in Spark tasks.
"""
from __future__ import annotations

import posixpath

from ..file_group.base_file import ensure_partition_metadata, write_stat
from ..file_group.log_file import LogWriter, next_log_version
from ..file_group.markers import marker_path
from ..file_group.naming import base_file_name
from ..hfile import write_hfile
from ..storage import Storage
from ..hfile.format import DEFAULT_BLOCK_SIZE
from .codec import base_file_info, log_blocks
from .index_defs import is_secondary_index_partition
from .layout import RECORD_INDEX

# The record index and secondary indexes are looked up a few keys at a time: in 64 KiB blocks
# (HBase's default) a key costs one small block to read and search, not one of Hudi's 1 MiB. Every
# HFile reader (Hudi's, HBase's, hudi-rs) reads any block size through the file's block index.
KEYED_BLOCK_SIZE = 64 * 1024


def block_size(partition: str) -> int:
    """Data block size of a metadata partition's HFiles: base files and log blocks."""
    return KEYED_BLOCK_SIZE if partition == RECORD_INDEX or is_secondary_index_partition(partition) else DEFAULT_BLOCK_SIZE


def _mark(storage: Storage, instant: str, partition: str, name: str) -> None:
    storage.write_bytes(marker_path(instant, partition, name, "CREATE"), b"")


def write_base(storage: Storage, partition: str, file_id: str, instant: str, token: str,
               items: list[tuple[bytes, bytes]], prev_commit: str | None = None) -> dict:
    ensure_partition_metadata(storage, partition, instant)
    name = base_file_name(file_id, token, instant, ".hfile")
    path = posixpath.join(partition, name)
    _mark(storage, instant, partition, name)
    data = write_hfile(items, block_size=block_size(partition), file_info=base_file_info(items))
    storage.write_bytes(path, data)
    return write_stat(file_id, path, partition, prev_commit, num_writes=len(items), num_inserts=len(items),
                      num_updates=0, num_deletes=0, size=len(data))


def write_log(storage: Storage, partition: str, file_id: str, base_instant: str, instant: str,
              token: str, items: list[tuple[bytes, bytes]], deletes: list[str]) -> dict:
    writer = LogWriter(storage, partition, file_id, base_instant, write_token=token,
                       version=next_log_version(storage, partition, file_id, base_instant))
    _mark(storage, instant, partition, posixpath.basename(writer.path))
    for block in log_blocks(items, deletes, instant, block_size(partition)):
        writer.append(block)
    written = writer.close()[-1]
    stat = write_stat(file_id, written.path, partition, base_instant, num_writes=len(items), num_inserts=0,
                      num_updates=len(items), num_deletes=len(deletes), size=written.size)
    stat.update({"baseFile": "", "logFiles": [posixpath.basename(written.path)], "logVersion": written.version,
                 "logOffset": 0, "totalLogBlocks": 1})
    return stat
