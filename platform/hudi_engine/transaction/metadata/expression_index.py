"""Expression indexes kept in the metadata table (``expr_index_<name>`` partitions, Hudi 1.x).

Each data file (a base file, or one log file over the data blocks that count) gets its record of the
expression's values (:mod:`hudi_engine.metadata_table.expression_index`), computed where the rows
are: one Spark task per file, or a thread per file for a write that ran in this process; the driver
sees only the per-file ranges or bloom filters. ``CREATE INDEX`` builds the partition from every file
of the latest file slices; each write, compaction and clustering then adds the records of the files
it wrote, and each clean tombstones the files it deleted, as column_stats does. Records of files
replaced by an action stay until the files are cleaned (a reader only asks about the files of the
slices it reads). A column_stats index's partition-level records are written at the build for every
data partition, and again for each partition an action touches, over its latest slices (the
values just computed for the files it wrote, the stored records for the others); cleans change no
latest slice and write none, as for partition stats.
"""
from __future__ import annotations

import pickle
import posixpath
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from ... import config as C
from ...config import HoodieConfig
from ...expr.functions import result_type
from ...file_group.base_file import parquet_file
from ...file_group.fs_view import FileSlice
from ...file_group.log_file import BlockType, data_block_records, read_log_file
from ...file_group.log_scanner import Visibility, valid_blocks
from ...file_group.naming import parse_base_file_name, parse_log_file_name
from ...metadata_table.expression_index import (BloomSettings, FileValues, file_records, file_tombstones, file_values,
                                                 partition_records)
from ...metadata_table.index_defs import IndexDefinition, expression_indexes, is_expression_index_partition
from ...metadata_table.reader import MetadataReader, table_view
from ...metadata_table.stats import ColumnRange
from ...read.plan import table_schema
from ...spark_files import received_indexes, task_indexes
from ...storage import Storage
from ...table.meta_client import HoodieTable
from .commit_view import CommitView

_DATA_BLOCKS = (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK)
_SCHEMA = pa.schema([("index", pa.int64()), ("values", pa.binary())])


def built_expression_indexes(table: HoodieTable, partitions: list[str]) -> list[IndexDefinition]:
    """The defined expression indexes among ``partitions`` (a table's complete metadata partitions)."""
    return [d for d in expression_indexes(table) if d.name in partitions]


def missing_expression_indexes(table: HoodieTable, have: list[str]) -> list[IndexDefinition]:
    """Defined expression indexes without a partition (after a restore dropped the metadata table)."""
    return [d for d in expression_indexes(table) if d.name not in have]


def kept_expression_partitions(have: list[str]) -> list[str]:
    """A write keeps every expression index partition (they go only by ``DROP INDEX``)."""
    return [p for p in have if is_expression_index_partition(p)]


def bloom_settings(cfg: HoodieConfig) -> BloomSettings:
    return BloomSettings(cfg.get_str(C.BLOOM_FILTER_TYPE), cfg.get(C.BLOOM_NUM_ENTRIES), cfg.get(C.BLOOM_FPP),
                         cfg.get(C.BLOOM_DYNAMIC_MAX_ENTRIES))


@dataclass(frozen=True)
class FileExpressions:
    """mapInArrow over indexes into ``files``: each file's values of every index (pickled
    FileValues, one list per file, in the order of ``indexes``)."""
    storage: Storage
    files: tuple[tuple[str, int], ...]             # (path, size)
    indexes: tuple[IndexDefinition, ...]
    source_types: tuple[pa.DataType, ...]
    visible: Visibility
    blooms: tuple[BloomSettings | None, ...]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for i in received_indexes(batches):
            found = self.values(self.files[i])
            yield pa.RecordBatch.from_pylist([{"index": i, "values": pickle.dumps(found)}], _SCHEMA)

    def _column(self, path: str, column: str, typ: pa.DataType) -> pa.Array:
        if parse_base_file_name(posixpath.basename(path)) is not None:
            with parquet_file(self.storage, path) as f:
                if column in f.schema_arrow.names:
                    return f.read(columns=[column]).column(column).combine_chunks().cast(typ)
                return pa.nulls(f.metadata.num_rows, typ)
        parts = []
        for block in valid_blocks(read_log_file(self.storage, path), self.visible):
            if block.block_type in _DATA_BLOCKS:
                rows = data_block_records(block)
                parts.append(rows.column(column).combine_chunks().cast(typ) if column in rows.column_names
                             else pa.nulls(rows.num_rows, typ))
        return pa.concat_arrays(parts) if parts else pa.array([], typ)

    def values(self, file: tuple[str, int]) -> list[FileValues]:
        path, size = file
        out = []
        for definition, typ, bloom in zip(self.indexes, self.source_types, self.blooms):
            out.append(file_values(definition, path, self._column(path, definition.source_fields[0], typ), size, bloom))
        return out


FoundValues = list[tuple[IndexDefinition, dict[str, FileValues]]]     # per index: data file path → values


def file_expressions(spark, table: HoodieTable, indexes: list[IndexDefinition], files: list[tuple[str, int]],
                     visible: Visibility, cfg: HoodieConfig, in_process: bool) -> FoundValues:
    """Each index's values of its expression in each data file of ``files``."""
    files = [f for f in files if _is_data_file(f[0])]
    if not indexes or not files:
        return []
    schema = table_schema(table)
    defaults = bloom_settings(cfg)
    task = FileExpressions(table.storage, tuple(files), tuple(indexes),
                           tuple(schema.field(d.source_fields[0]).type for d in indexes), visible,
                           tuple(BloomSettings.of(d.options, defaults) if d.index_type == "bloom_filters" else None
                                 for d in indexes))
    if spark is None or in_process:
        from ...threads import parallel_map

        found = parallel_map(task.values, files)
    else:
        rows = task_indexes(spark, len(files)).mapInArrow(task, "index long, values binary").collect()
        by_index = {r["index"]: pickle.loads(r["values"]) for r in rows}
        found = [by_index[i] for i in range(len(files))]
    return [(d, {path: per_file[n] for (path, _), per_file in zip(files, found)}) for n, d in enumerate(indexes)]


def records_of(table: HoodieTable, found: FoundValues, instant: str, cfg: HoodieConfig) -> dict[str, list[dict]]:
    """index partition → the file records of what :func:`file_expressions` found."""
    defaults = bloom_settings(cfg)
    out: dict[str, list[dict]] = {}
    for definition, values in found:
        filter_type = (BloomSettings.of(definition.options, defaults).filter_type
                       if definition.index_type == "bloom_filters" else "DYNAMIC_V0")
        out[definition.name] = [r for v in values.values()
                                for r in file_records(definition, v, instant, table.version, filter_type)]
    return out


def build_records(spark, table: HoodieTable, definition: IndexDefinition, files: list[tuple[str, int]],
                  visible: Visibility, instant: str, cfg: HoodieConfig) -> list[dict]:
    """A build's records: each of ``files``' (one Spark task per file), and each data partition's
    over the latest slices."""
    found = file_expressions(spark, table, [definition], files, visible, cfg, in_process=False)
    slices = table_view(table).latest_file_slices()
    computed = found[0][1] if found else {}
    return (records_of(table, found, instant, cfg).get(definition.name, [])
            + partition_level_records(table, definition, slices, {s.partition for s in slices}, computed, {}))


def commit_records(spark, table: HoodieTable, indexes: list[IndexDefinition], meta: dict, visible: Visibility,
                   instant: str, cfg: HoodieConfig, in_process: bool, reader: MetadataReader,
                   view: CommitView) -> dict[str, list[dict]]:
    """A write, compaction or clustering: the records of the files it wrote, and those of the data
    partitions it touched over their slices once it completes."""
    found = file_expressions(spark, table, indexes, written_files(meta), visible, cfg, in_process)
    out = records_of(table, found, instant, cfg)
    computed = {d.name: values for d, values in found}
    touched = set(view.touched)
    for definition in indexes:
        if definition.index_type == "column_stats" and touched:
            slices, mine = view.after_slices(), computed.get(definition.name, {})
            others = [p for s in slices if s.partition in touched for p in _slice_paths(s)
                      if _is_data_file(p) and p not in mine]
            stored = stored_ranges(reader, table, definition, others)
            out.setdefault(definition.name, []).extend(partition_level_records(
                table, definition, slices, touched, mine, stored))
    return out


def partition_level_records(table: HoodieTable, definition: IndexDefinition, slices: list[FileSlice],
                            partitions: set[str], computed: dict[str, FileValues],
                            stored: dict[str, ColumnRange | None]) -> list[dict]:
    """The records of ``partitions`` (data partitions an action touched, or every one at a build)
    over the files of their latest ``slices``: the values just ``computed`` for some files, the
    index's ``stored`` ranges for the others."""
    by_partition: dict[str, list[FileSlice]] = {}
    for s in slices:
        by_partition.setdefault(s.partition, []).append(s)
    out = []
    for partition in sorted(partitions):
        ranges = [computed[path].range if path in computed else stored.get(path)
                  for s in by_partition.get(partition, []) for path in _slice_paths(s) if _is_data_file(path)]
        out += partition_records(definition, partition, ranges, table.version)
    return out


def stored_ranges(reader: MetadataReader, table: HoodieTable, definition: IndexDefinition,
                  files: list[str]) -> dict[str, ColumnRange | None]:
    """data file path → its range in a column_stats expression index, for ``files``: looked up by
    key (a partition's prefix holds every file version the cleaner has not removed yet, as
    partition stats' commit records look theirs up)."""
    if definition.index_type != "column_stats" or not files:
        return {}
    column = definition.source_fields[0]
    typ = result_type(definition.function, table_schema(table).field(column).type)
    out: dict[str, ColumnRange | None] = {}
    for path, stats in reader.files_column_stats([column], files, definition.name).items():
        for s in stats:
            out[path] = ColumnRange(column, typ, s.min_value, s.max_value, s.null_count or 0, s.value_count or 0,
                                    s.total_size or 0, s.total_uncompressed_size or 0)
    return out


def _slice_paths(file_slice: FileSlice) -> list[str]:
    base = [file_slice.base_file.path] if file_slice.base_file is not None else []
    return base + [f.path for f in file_slice.log_files]


def _is_data_file(path: str) -> bool:
    name = posixpath.basename(path)
    if parse_base_file_name(name) is not None:
        return True
    log = parse_log_file_name(name)
    return log is not None and not log.is_cdc


def written_files(meta: dict) -> list[tuple[str, int]]:
    """The data files an action wrote (path, size), from its write stats."""
    return [(stat["path"], int(stat.get("fileSizeInBytes") or 0))
            for stats in (meta.get("partitionToWriteStats") or {}).values() for stat in stats if stat.get("path")]


def clean_tombstones(indexes: list[IndexDefinition], clean_meta: dict, instant: str,
                     table_version: int) -> dict[str, list[dict]]:
    """index partition → tombstones of the data files a clean deleted."""
    deleted = [posixpath.join(partition, posixpath.basename(f)) if partition else posixpath.basename(f)
               for partition, pm in (clean_meta.get("partitionMetadata") or {}).items()
               for f in pm.get("successDeleteFiles") or []]
    deleted = [p for p in deleted if _is_data_file(p)]
    return {d.name: [r for p in deleted for r in file_tombstones(d, p, instant, table_version)]
            for d in indexes if deleted}

