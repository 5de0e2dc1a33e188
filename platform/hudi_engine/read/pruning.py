"""Fewer file slices for a filtered query: partition pruning from partition values, record-index
lookups for record-key equality, and data skipping with partition_stats ranges (whole partitions)
then column_stats ranges (files) (Hudi's HoodieFileIndex). The decisions are :mod:`.skipping`'s; this module fetches what they need.
"""
from __future__ import annotations

import logging
import posixpath
from typing import Sequence

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..expr.skipping import Predicate, file_may_match, key_lookup, plain
from ..file_group.fs_view import FileSlice
from ..keygen import key_generator_from_config
from ..metadata_table.keys import partition_identifier
from ..metadata_table.layout import COLUMN_STATS, PARTITION_STATS, RECORD_INDEX
from ..metadata_table.reader import metadata_reader
from ..schema.meta_fields import RECORD_KEY
from ..table.meta_client import HoodieTable
from .expression_index import by_expression_index
from .secondary_index import by_secondary_index

log = logging.getLogger(__name__)



def prune(table: HoodieTable, slices: Sequence[FileSlice], preds: Sequence[Predicate], cfg: HoodieConfig,
          latest: bool) -> list[FileSlice]:
    """The slices a query with ``preds`` must read. Record-index lookups and partition stats
    answer for the latest state only (``latest``); time travel and incremental reads keep every
    slice of the window (column_stats still describes older files until they are cleaned)."""
    slices = list(slices)
    if not preds or not slices:
        return slices
    before = len(slices)
    every = list(preds)
    preds = plain(preds)
    slices = _by_partition(table, slices, preds)
    reader = metadata_reader(table) if cfg.get(C.METADATA_ENABLE) else None
    if reader is not None and cfg.get(C.ENABLE_DATA_SKIPPING):
        slices = by_expression_index(table, reader, slices, every)
    if not preds:               # only expressions: no lookup on a plain column is asked for
        reader = None
    if reader is not None and latest and reader.has(RECORD_INDEX):
        slices = by_secondary_index(table, reader, _by_record_index(table, reader, slices, preds), preds)
    if reader is not None and latest and cfg.get(C.ENABLE_DATA_SKIPPING) and reader.has(PARTITION_STATS):
        slices = _by_partition_stats(reader, slices, preds)
    if reader is not None and cfg.get(C.ENABLE_DATA_SKIPPING) and reader.has(COLUMN_STATS):
        slices = _by_column_stats(reader, slices, preds)
    if len(slices) < before:
        log.info(f"{table.name}: filters leave {len(slices)} of {before} file slices to read",
              )
    return slices


def _by_partition(table: HoodieTable, slices: list[FileSlice], preds: Sequence[Predicate]) -> list[FileSlice]:
    try:
        keygen = key_generator_from_config(table.config)
    except HoodieConfigError:
        return slices
    if keygen.kind not in ("SIMPLE", "COMPLEX") or keygen.url_encode_partitioning or not keygen.partition_fields:
        return slices
    fields = keygen.partition_fields
    wanted = {p.column: {str(p.value)} if p.op == "=" else {str(v) for v in p.value}
              for p in preds if p.column in fields and p.op in ("=", "IN")}
    if not wanted:
        return slices

    def keep(partition: str) -> bool:
        parts = partition.split("/")
        if len(parts) != len(fields):
            return True
        for field, part in zip(fields, parts):
            value = part.split("=", 1)[1] if keygen.hive_style_partitioning and "=" in part else part
            if field in wanted and value not in wanted[field]:
                return False
        return True
    return [s for s in slices if keep(s.partition)]


def _by_record_index(table: HoodieTable, reader, slices: list[FileSlice],
                     preds: Sequence[Predicate]) -> list[FileSlice]:
    keys = key_lookup(preds, RECORD_KEY)
    if keys is None:
        keygen = key_generator_from_config(table.config)
        if not keygen.composite_key:
            keys = key_lookup(preds, keygen.record_key_fields[0])
    if keys is None:
        return slices
    groups = set(reader.record_locations(keys).values())
    return [s for s in slices if (s.partition, s.file_id) in groups]


def _by_partition_stats(reader, slices: list[FileSlice], preds: Sequence[Predicate]) -> list[FileSlice]:
    """Whole partitions whose ranges (over every file of their latest slices, logs included) rule
    the filters out, before any file's own range is read (Hudi's PartitionStatsIndexSupport)."""
    partitions = sorted({s.partition for s in slices})
    ranges = reader.partition_ranges(sorted({p.column for p in preds}), partitions)
    kept = {p for p in partitions if file_may_match(preds, ranges.get(partition_identifier(p)))}
    if len(kept) < len(partitions):
        log.info(f"partition stats leave {len(kept)} of {len(partitions)} partitions to read")
    return [s for s in slices if s.partition in kept]


def _by_column_stats(reader, slices: list[FileSlice], preds: Sequence[Predicate]) -> list[FileSlice]:
    columns = sorted({p.column for p in preds})
    partitions = sorted({s.partition for s in slices})
    ranges = reader.column_ranges(columns, partitions)
    kept = []
    for s in slices:
        # A slice with log files holds rows no base-file range describes: always read.
        if s.log_files or s.base_file is None:
            kept.append(s)
        elif file_may_match(preds, ranges.get(posixpath.basename(s.base_file.path))):
            kept.append(s)
    return kept
