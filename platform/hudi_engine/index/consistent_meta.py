"""The consistent-hashing metadata files of a table, read and written as Hudi's
ConsistentBucketIndexUtils does.

Under ``.hoodie/.bucket_index/consistent_hashing_metadata/<partition>/``: ``<instant>.hashing_meta``
files (JSON) and, for each that is committed, an empty ``<instant>.commit`` marker. The initial
file (instant ``00000000000000``) is created by the first write to the partition and needs no
marker; a resize writes its file before its replacecommit completes and the marker after. Loading
takes the newest committed file; a newer file without a marker whose replacecommit did complete
(the marker was lost in a crash) gets its marker then and wins, as does one whose instant left
the active timeline but whose file groups are the partition's latest (Hudi's commit marker
recovery); one whose instant is still pending, or was rolled back, is ignored.
"""
from __future__ import annotations

import posixpath

from ..metadata_table.reader import table_view
from ..storage import Storage
from ..table.meta_client import HoodieTable
from ..timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from .consistent_hashing import (
    COMMIT_SUFFIX,
    INIT_INSTANT,
    METADATA_SUFFIX,
    HashingMetadata,
    initial_metadata,
    timestamp_of,
)

HASHING_METADATA_DIR = ".hoodie/.bucket_index/consistent_hashing_metadata"


def metadata_dir(partition: str) -> str:
    return posixpath.join(HASHING_METADATA_DIR, partition) if partition else HASHING_METADATA_DIR


def has_consistent_metadata(storage: Storage) -> bool:
    """Whether any partition of the table has consistent hashing metadata (the table was written
    with the consistent-hashing engine)."""
    return bool(storage.list(HASHING_METADATA_DIR, recursive=True))


def load_metadata(table: HoodieTable, partition: str) -> HashingMetadata | None:
    """The partition's latest committed metadata, or None when it has none."""
    storage = table.storage
    folder = metadata_dir(partition)
    names = [posixpath.basename(f.path) for f in storage.list(folder)]
    committed = sorted(timestamp_of(n) for n in names if n.endswith(COMMIT_SUFFIX))
    files = sorted(n for n in names if n.endswith(METADATA_SUFFIX))
    if not files:
        return None
    newest = files[-1]
    if timestamp_of(newest) == INIT_INSTANT or (committed and committed[-1] == timestamp_of(newest)):
        return _read(storage, folder, newest)
    completed = {i.timestamp for i in table.timeline.filter([COMMIT, DELTA_COMMIT, REPLACE_COMMIT], completed=True)}
    pending = {i.timestamp for i in table.timeline.pending()}
    chosen = next((n for n in files if committed and timestamp_of(n) == committed[-1]), None)
    for name in files:
        ts = timestamp_of(name)
        if committed and ts <= committed[-1]:
            continue
        if ts in completed or ts == INIT_INSTANT:
            if ts not in committed:
                commit_marker(storage, partition, ts)
            chosen = name
        elif ts not in pending and _is_latest_layout(table, partition, _read(storage, folder, name)):
            commit_marker(storage, partition, ts)
            chosen = name
    return _read(storage, folder, chosen) if chosen else None


def _is_latest_layout(table: HoodieTable, partition: str, metadata: HashingMetadata) -> bool:
    """Whether a latest base file of the partition belongs to one of the metadata's buckets."""
    prefixes = {n.file_id_prefix for n in metadata.nodes}
    return any(s.base_file is not None and s.file_id.rsplit("-", 1)[0] in prefixes
               for s in table_view(table).latest_file_slices(partitions={partition}))


def _read(storage: Storage, folder: str, name: str) -> HashingMetadata:
    return HashingMetadata.from_json(storage.read_bytes(posixpath.join(folder, name)))


def save_metadata(storage: Storage, metadata: HashingMetadata) -> None:
    """Write a metadata file (a resize re-run overwrites its own)."""
    storage.write_bytes(posixpath.join(metadata_dir(metadata.partition_path), metadata.filename),
                        metadata.to_bytes())


def commit_marker(storage: Storage, partition: str, instant: str) -> None:
    """The empty ``<instant>.commit`` file that marks a resize's metadata committed."""
    path = posixpath.join(metadata_dir(partition), instant + COMMIT_SUFFIX)
    if not storage.exists(path):
        storage.write_bytes(path, b"")


def load_or_create_metadata(table: HoodieTable, partition: str, num_buckets: int) -> HashingMetadata:
    """The partition's metadata; a partition seen for the first time gets the initial one, saved
    (its content depends only on the partition and the bucket count, so concurrent writers that
    both create it write the same file)."""
    found = load_metadata(table, partition)
    if found is not None:
        return found
    metadata = initial_metadata(partition, num_buckets)
    path = posixpath.join(metadata_dir(partition), metadata.filename)
    if not table.storage.exists(path):
        save_metadata(table.storage, metadata)
    return load_metadata(table, partition) or metadata
