"""Pruning with expression indexes (Hudi 1.x's ``ExpressionIndexSupport``): a filter on the same
function of the same column, with the same options, as an index's (on the column itself for an
``identity`` index) is answered per file from the
index's records: column_stats ranges (any comparison, IN, null tests) or bloom filters (``=`` and
``IN``). A file slice is read when any of its files (the base file, each log file) may hold a
matching value, or has no record: a row's latest version lives in one file, whose values its
record covers.
"""
from __future__ import annotations

import logging
import posixpath
from typing import Sequence

import pyarrow as pa

from ..bloom import deserialize_bloom_filter
from ..expr.functions import signature
from ..expr.skipping import ColumnRange, Predicate, file_may_match
from ..file_group.fs_view import FileSlice
from ..metadata_table.expression_index import BLOOM_FILTERS, java_strings
from ..metadata_table.index_defs import IDENTITY, IndexDefinition, expression_indexes
from ..metadata_table.reader import MetadataReader
from ..table.meta_client import HoodieTable

log = logging.getLogger(__name__)


def _files(s: FileSlice) -> list[str]:
    return ([s.base_file.path] if s.base_file is not None else []) + [f.path for f in s.log_files]


def matching(definition: IndexDefinition, preds: Sequence[Predicate]) -> list[Predicate]:
    """The predicates an index answers: on its column, through its function and value options."""
    column = definition.source_fields[0]
    if definition.function == IDENTITY:
        return [p for p in preds if p.function is None and p.column == column]
    wanted = signature(definition.function, definition.options)
    return [p for p in preds if p.function is not None and p.column == column and p.signature == wanted]


def by_expression_index(table: HoodieTable, reader: MetadataReader, slices: list[FileSlice],
                        preds: Sequence[Predicate]) -> list[FileSlice]:
    for definition in expression_indexes(table):
        mine = matching(definition, preds)
        if not mine or not reader.has(definition.name):
            continue
        before = len(slices)
        if definition.index_type == BLOOM_FILTERS:
            slices = _by_bloom_filters(reader, definition, slices, mine)
        else:
            slices = _by_ranges(reader, definition, slices, mine)
        log.info(f"expression index {definition.user_name} leaves {len(slices)} of {before} file slices to read")
    return slices


def _by_ranges(reader: MetadataReader, definition: IndexDefinition, slices: list[FileSlice],
               preds: list[Predicate]) -> list[FileSlice]:
    column = definition.source_fields[0]
    ranges = reader.column_ranges([column], sorted({s.partition for s in slices}), definition.name)
    as_column = [Predicate(column, p.op, p.value) for p in preds]

    def may_match(path: str) -> bool:
        found: dict[str, ColumnRange] | None = ranges.get(posixpath.basename(path))
        return found is None or column not in found or file_may_match(as_column, found)
    return [s for s in slices if any(may_match(p) for p in _files(s)) or not _files(s)]


def _by_bloom_filters(reader: MetadataReader, definition: IndexDefinition, slices: list[FileSlice],
                      preds: list[Predicate]) -> list[FileSlice]:
    wanted: set[str] | None = None
    for p in preds:
        if p.op in ("=", "IN"):
            these = set(java_strings(pa.array([p.value] if p.op == "=" else list(p.value))))
            wanted = these if wanted is None else wanted & these
    if wanted is None:
        return slices
    files = [(s.partition, posixpath.basename(p)) for s in slices for p in _files(s)]
    blooms = reader.bloom_filters(definition.name, files)
    decoded = {key: deserialize_bloom_filter(info.serialized, info.type) for key, info in blooms.items()}

    def may_match(partition: str, path: str) -> bool:
        bloom = decoded.get((partition, posixpath.basename(path)))
        return bloom is None or any(bloom.might_contain(v) for v in wanted)
    return [s for s in slices if any(may_match(s.partition, p) for p in _files(s)) or not _files(s)]
