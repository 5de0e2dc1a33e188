"""Writing one base file the way Hudi's write handles do: marker first, meta columns, and the footer
(bloom filter, min/max record key, Avro schema) that Hudi's indexes and other engines read."""
from __future__ import annotations

import datetime as _dt
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import config as C
from ..bloom import FOOTER_KEY, TYPE_CODE_KEY, BloomFilter, StoredBloomFilter, continued_stored_filter, create_bloom_filter
from ..errors import HoodieError
from ..config import HoodieConfig
from ..schema.arrow import conform, parquet_codec
from ..schema.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_SCHEMA, RECORD_KEY
from ..storage import Storage
from .markers import marker_path
from .naming import PARTITION_METAFILE, base_file_name, partition_metadata_text


@dataclass(frozen=True)
class WriteContext:
    """What every task of one write needs; small and picklable."""
    storage: Storage
    instant: str
    data_schema: pa.Schema        # the table's data columns (no meta columns), evolved for this write
    avro_footer_schema: str       # parquet.avro.schema value, meta fields included
    options: dict                 # the write's hoodie.* options as strings

    @property
    def config(self) -> HoodieConfig:
        return HoodieConfig(self.options)

    @property
    def file_schema(self) -> pa.Schema:
        return pa.schema(META_SCHEMA + list(self.data_schema))


@contextmanager
def parquet_file(storage: Storage, rel: str) -> Iterator[pq.ParquetFile]:
    """A base file opened once: its footer read once (``pq.read_table`` reads it twice) and, on
    object stores, the column chunks a read needs fetched together."""
    with storage.open_input_file(rel) as f:
        yield pq.ParquetFile(f, pre_buffer=storage.is_object_store)


def read_footer(storage: Storage, rel: str) -> pq.FileMetaData:
    with parquet_file(storage, rel) as f:
        return f.metadata


def read_base_file(storage: Storage, rel: str, columns: list[str] | None = None) -> pa.Table:
    with parquet_file(storage, rel) as f:
        return f.read(columns=columns)


def read_base_file_and_footer(storage: Storage, rel: str, skip: frozenset[str] = frozenset()
                              ) -> tuple[pa.Table, dict[bytes, bytes]]:
    """The rows, but for the top-level columns in ``skip``, and the footer's key-value metadata."""
    with parquet_file(storage, rel) as f:
        columns = [name for name in f.schema_arrow.names if name not in skip] if skip else None
        return f.read(columns=columns), f.metadata.metadata or {}


def _bloom_settings(cfg: HoodieConfig) -> tuple[int, float, str, int]:
    return (cfg.get(C.BLOOM_NUM_ENTRIES), cfg.get(C.BLOOM_FPP), cfg.get_str(C.BLOOM_FILTER_TYPE),
            cfg.get(C.BLOOM_DYNAMIC_MAX_ENTRIES))


def continued_filter(footer: dict[bytes, bytes], cfg: HoodieConfig) -> StoredBloomFilter | None:
    """A stored base file's bloom filter for its rewrite to add new keys to, when it is the filter
    this writer would make (``bloom.continued_stored_filter``); None to build a new one."""
    raw = footer.get(FOOTER_KEY.encode())
    if raw is None:
        return None
    try:
        return continued_stored_filter(raw, footer.get(TYPE_CODE_KEY.encode(), b""), *_bloom_settings(cfg))
    except HoodieError:
        return None


def ensure_partition_metadata(storage: Storage, partition: str, instant: str) -> None:
    """Write ``.hoodie_partition_metadata`` once per partition; concurrent tasks race harmlessly."""
    path = f"{partition}/{PARTITION_METAFILE}" if partition else PARTITION_METAFILE
    if storage.exists(path):
        return
    depth = len(partition.split("/")) if partition else 0
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    storage.write_text(path, partition_metadata_text(instant, depth, now))


DICTIONARY_SAMPLE_ROWS = 10_000


class BaseFileWriter:
    """Streams rows into one new base file of a file group and returns its Hudi write stat."""

    def __init__(self, ctx: WriteContext, partition: str, file_id: str, token: str,
                 io_type: str, prev_commit: str | None, bloom: BloomFilter | StoredBloomFilter | None = None):
        """``bloom``: a filter to continue (``continued_filter``) instead of a new one."""
        self.ctx, self.partition, self.file_id, self.prev_commit = ctx, partition, file_id, prev_commit
        self.file_name = base_file_name(file_id, token, ctx.instant)
        self.path = f"{partition}/{self.file_name}" if partition else self.file_name
        cfg = ctx.config
        storage = ctx.storage
        storage.write_bytes(marker_path(ctx.instant, partition, self.file_name, io_type), b"")
        ensure_partition_metadata(storage, partition, ctx.instant)
        self._bloom: BloomFilter | StoredBloomFilter = bloom or create_bloom_filter(*_bloom_settings(cfg))
        self._min_key: str | None = None
        self._max_key: str | None = None
        self._seq = 0
        self.num_written = 0
        self._started = time.monotonic()
        self._schema = _dictionary_typed(ctx.file_schema)
        self._stream = storage.open_output(self.path)
        self._writer: pq.ParquetWriter | None = None      # opened by the first rows (their dictionary columns)

    def write(self, rows: pa.Table, stamp: bool, task_partition: int, new_keys: pa.Array | None = None) -> pa.Table:
        """Write rows; ``stamp`` gives them this instant's commit time and sequence numbers,
        otherwise (stored rows carried over) they keep theirs. Either way they get this file's name.
        ``new_keys``: the only keys of ``rows`` the bloom filter lacks (a continued filter); all
        of them when None. Returns the rows as written (CDC logs them), the meta columns that
        repeat one value as dictionaries (``conform`` to ``file_schema`` makes them strings)."""
        n = rows.num_rows
        if n == 0:
            return conform(rows, self._schema)
        if stamp:
            seq = np.arange(self._seq, self._seq + n)
            self._seq += n
            prefix = f"{self.ctx.instant}_{task_partition}_"
            rows = _set(rows, COMMIT_TIME, _repeated(self.ctx.instant, n))
            rows = _set(rows, COMMIT_SEQNO, pc.binary_join_element_wise(
                prefix, pa.array(seq).cast(pa.string()), ""))
        rows = _set(rows, FILE_NAME, _repeated(self.file_name, n))
        rows = conform(rows, self._schema)
        keys = rows[RECORD_KEY]
        self._bloom.add_keys(keys if new_keys is None else new_keys)
        lo, hi = pc.min_max(keys).values()
        lo, hi = lo.as_py(), hi.as_py()
        self._min_key = lo if self._min_key is None or lo < self._min_key else self._min_key
        self._max_key = hi if self._max_key is None or hi > self._max_key else self._max_key
        self._open(rows).write_table(rows, row_group_size=max(n, 1))
        self.num_written += n
        return rows

    def _open(self, rows: pa.Table | None) -> pq.ParquetWriter:
        if self._writer is None:
            cfg = self.ctx.config
            self._writer = pq.ParquetWriter(
                self._stream, self._schema,
                compression=parquet_codec(cfg.get_str(C.PARQUET_COMPRESSION)),
                data_page_size=cfg.get(C.PARQUET_PAGE_SIZE), coerce_timestamps="us",
                allow_truncated_timestamps=True, store_schema=False, write_statistics=True,
                use_dictionary=dictionary_columns(rows, self._schema))
        return self._writer

    @property
    def bytes_written(self) -> int:
        """Bytes of the row groups written so far (each write is flushed as a row group)."""
        return self._stream.tell()

    def close(self, num_inserts: int, num_updates: int, num_deletes: int) -> dict:
        footer = {
            "parquet.avro.schema": self.ctx.avro_footer_schema,
            "writer.model.name": "avro",
            FOOTER_KEY: self._bloom.serialize(),
            TYPE_CODE_KEY: self._bloom.type_code,
        }
        if self._min_key is not None:
            footer["hoodie_min_record_key"] = self._min_key
            footer["hoodie_max_record_key"] = self._max_key
        writer = self._open(None)
        writer.add_key_value_metadata(footer)
        writer.close()
        size = self._stream.tell()          # what the stream took: no request needed to learn it
        self._stream.close()
        took = int((time.monotonic() - self._started) * 1000)
        return write_stat(self.file_id, self.path, self.partition, self.prev_commit,
                          num_writes=self.num_written, num_inserts=num_inserts,
                          num_updates=num_updates, num_deletes=num_deletes, size=size,
                          upsert_ms=took if self.prev_commit else 0,
                          create_ms=0 if self.prev_commit else took)


def dictionary_columns(rows: pa.Table | None, schema: pa.Schema) -> list[str]:
    """Columns to dictionary-encode, judged on a file's first rows (conformed to ``schema``):
    those whose values repeat.
    Parquet writers try a dictionary for every column and fall back when it grows past a page;
    for a column of unique values (keys, sequence numbers, measurements) that attempt costs a
    quarter of the encoding time and leaves a dictionary page in the file for nothing."""
    unique = {COMMIT_SEQNO, RECORD_KEY}
    names = [f.name for f in schema if f.name not in unique]
    if rows is None or rows.num_rows < DICTIONARY_SAMPLE_ROWS:
        return names
    sample = rows.slice(0, DICTIONARY_SAMPLE_ROWS)
    return [name for name in names
            if pa.types.is_nested(schema.field(name).type) or pa.types.is_dictionary(schema.field(name).type)
            or pc.count_distinct(sample[name], mode="all").as_py() <= DICTIONARY_SAMPLE_ROWS // 2]


# Meta columns a base file holds few values of (one file name; the commit times of its rows): written
# from dictionary arrays, so one value is not copied and hashed per row. The file's column is the same
# dictionary-encoded string either way.
_REPEATED = (COMMIT_TIME, FILE_NAME)
_CODES = pa.int32()


def _dictionary_typed(schema: pa.Schema) -> pa.Schema:
    for name in _REPEATED:
        at = schema.get_field_index(name)
        schema = schema.set(at, schema.field(at).with_type(pa.dictionary(_CODES, pa.string())))
    return schema


def _repeated(value: str, n: int) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32), _CODES), pa.array([value], pa.string()))


def write_stat(file_id: str, path: str | None, partition: str, prev_commit: str | None, *,
               num_writes: int, num_inserts: int, num_updates: int, num_deletes: int, size: int,
               upsert_ms: int = 0, create_ms: int = 0) -> dict:
    """A HoodieWriteStat as table version 6 stores it in commit metadata JSON."""
    return {
        "fileId": file_id, "path": path, "cdcStats": None,
        "prevCommit": prev_commit or "null",
        "numWrites": num_writes, "numDeletes": num_deletes, "numUpdateWrites": num_updates,
        "numInserts": num_inserts, "totalWriteBytes": size, "totalWriteErrors": 0,
        "tempPath": None, "partitionPath": partition, "totalLogRecords": 0,
        "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
        "fileSizeInBytes": size, "minEventTime": None, "maxEventTime": None,
        "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": upsert_ms, "totalCreateTime": create_ms},
    }


def _set(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    i = table.schema.get_field_index(name)
    if i < 0:
        return table.append_column(pa.field(name, values.type), values)
    return table.set_column(i, pa.field(name, values.type), values)
