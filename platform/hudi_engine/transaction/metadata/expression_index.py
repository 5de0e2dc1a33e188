"""Expression indexes kept in the metadata table (``expr_index_<name>`` partitions, Hudi 1.x).

Each data file (a base file, or one log file over the data blocks that count) gets its record of the
expression's values (:mod:`hudi_engine.metadata_table.expression_index`), computed where the rows
are: one Spark task per file, or a thread per file for a write that ran in this process; the driver
sees only the per-file ranges or bloom filters. ``CREATE INDEX`` builds the partition from every file
of the latest file slices; each write, compaction and clustering then adds the records of the files
it wrote, and each clean tombstones the files it deleted, as column_stats does. Records of files
replaced by an action stay until the files are cleaned (a reader only asks about the files of the
slices it reads).
"""
from __future__ import annotations

import pickle
import posixpath
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from ... import config as C
from ...config import HoodieConfig
from ...file_group.base_file import parquet_file
from ...file_group.log_file import BlockType, data_block_records, read_log_file
from ...file_group.log_scanner import Visibility, valid_blocks
from ...file_group.naming import parse_base_file_name, parse_log_file_name
from ...metadata_table.expression_index import BloomSettings, FileValues, file_records, file_tombstones, file_values
from ...metadata_table.index_defs import IndexDefinition, expression_indexes, is_expression_index_partition
from ...read.plan import table_schema
from ...spark_files import received_indexes, task_indexes
from ...storage import Storage
from ...table.meta_client import HoodieTable

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


def index_records(spark, table: HoodieTable, indexes: list[IndexDefinition], files: list[tuple[str, int]],
                  visible: Visibility, instant: str, cfg: HoodieConfig, in_process: bool) -> dict[str, list[dict]]:
    """index partition → the records of ``files`` (data files, with their sizes): by one Spark task
    per file, or here, a file per thread."""
    files = [f for f in files if _is_data_file(f[0])]
    if not indexes or not files:
        return {}
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
    out: dict[str, list[dict]] = {d.name: [] for d in indexes}
    for per_file in found:
        for definition, bloom, values in zip(indexes, task.blooms, per_file):
            out[definition.name] += file_records(definition, values, instant, table.version,
                                                 bloom.filter_type if bloom is not None else "DYNAMIC_V0")
    return out


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

