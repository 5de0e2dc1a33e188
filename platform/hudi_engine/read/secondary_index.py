"""Pruning with secondary indexes (Hudi 1.x's ``SecondaryIndexSupport``): an equality or IN filter
on an indexed column gives, from the index, the record keys holding those values; the record index
gives their file groups; only those file slices are read. Latest snapshots only, as with the
record index (the index says nothing of older states).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from ..expr.skipping import Predicate
from ..file_group.fs_view import FileSlice
from ..metadata_table.index_defs import secondary_indexes
from ..metadata_table.keys import secondary_index_file_group, split_secondary_index_key
from ..metadata_table.merge import is_live
from ..metadata_table.reader import MetadataReader
from ..metadata_table.secondary_index import lookup_prefixes
from ..table.meta_client import HoodieTable


def values_wanted(preds: Sequence[Predicate], column: str) -> tuple | None:
    """The values equality/IN filters on ``column`` allow (None: no such filter)."""
    wanted: set | None = None
    for p in preds:
        if p.column == column and p.op in ("=", "IN"):
            these = {p.value} if p.op == "=" else set(p.value)
            wanted = these if wanted is None else wanted & these
    return None if wanted is None else tuple(v for v in wanted if v is not None)


def record_keys(reader: MetadataReader, partition: str, values: Sequence, index_version: int) -> set[str]:
    """The record keys whose indexed value is one of ``values``: version 2 reads the one file group
    each value hashes to, version 1 every file group, each only at the values' key prefixes."""
    slices = reader.file_slices(partition)
    if not slices or not values:
        return set()
    prefixes = lookup_prefixes(values)
    by_group: dict[int, list[str]] = defaultdict(list)
    for prefix in prefixes:
        groups = [secondary_index_file_group(prefix, len(slices), 2)] if index_version >= 2 else range(len(slices))
        for g in groups:
            by_group[g].append(prefix)
    keys: set[str] = set()
    for g, group_prefixes in sorted(by_group.items()):
        for k, value in reader.slice_reader.read(slices[g], prefixes=group_prefixes).items():
            if is_live(value):
                keys.add(split_secondary_index_key(k)[1])
    return keys


def by_secondary_index(table: HoodieTable, reader: MetadataReader, slices: list[FileSlice],
                       preds: Sequence[Predicate]) -> list[FileSlice]:
    """The slices holding rows an indexed column's equality/IN filters can match."""
    keys: set[str] | None = None
    for definition in secondary_indexes(table):
        if not reader.has(definition.name):
            continue
        values = values_wanted(preds, definition.source_fields[0])
        if values is None:
            continue
        found = record_keys(reader, definition.name, values, definition.index_version)
        keys = found if keys is None else keys & found
    if keys is None:
        return slices
    groups = set(reader.record_locations(keys).values()) if keys else set()
    return [s for s in slices if (s.partition, s.file_id) in groups]
