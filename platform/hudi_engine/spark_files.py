"""Parquet files as a Spark DataFrame on any storage the engine can open.

pyspark ships Hadoop's client without the S3A connector or a cloud SDK, so Spark's own reader only
opens what its Hadoop layer has a filesystem for (local files, and whatever the user's session
adds). Elsewhere the files are read in the executors through ``pyarrow.fs``: one task per file
batch, a row group at a time.
"""
from __future__ import annotations

import logging
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from .schema.arrow import conform
from .storage import Storage

log = logging.getLogger(__name__)

_known: dict[str, bool] = {}


def spark_opens(spark: SparkSession, storage: Storage) -> bool:
    """Whether the session's Hadoop layer has a filesystem for ``storage``'s scheme."""
    if storage.is_local:
        return True
    scheme = storage.base_uri.split("://", 1)[0]
    if scheme not in _known:
        jvm = spark.sparkContext._jvm
        try:
            jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(
                scheme, spark.sparkContext._jsc.hadoopConfiguration())
            _known[scheme] = True
        except Exception:   # Py4JJavaError: UnsupportedFileSystemException
            _known[scheme] = False
        log.debug("Spark %s open %s:// itself", "can" if _known[scheme] else "cannot", scheme)
    return _known[scheme]


def task_indexes(spark: SparkSession, count: int) -> DataFrame:
    """Rows 0..count-1 spread over up to 4 tasks per core: executor work (a file, a file slice)
    picked by index with ``mapInArrow``."""
    return spark.range(count, numPartitions=max(1, min(count, spark.sparkContext.defaultParallelism * 4)))


def received_indexes(batches: Iterator[pa.RecordBatch]) -> Iterator[int]:
    """Executor side of :func:`task_indexes`: the indexes one task received, in order."""
    for batch in batches:
        yield from batch.column(0).to_pylist()


def parquet_frame(spark: SparkSession, storage: Storage, paths: list[str], schema: pa.Schema) -> DataFrame:
    """The rows of the parquet files at ``paths`` (relative to ``storage``) in ``schema``'s columns;
    a column a file lacks reads as nulls."""
    if spark_opens(spark, storage):
        return spark.read.schema(from_arrow_schema(schema)).parquet(*[storage.uri(p) for p in paths])
    return task_indexes(spark, len(paths)).mapInArrow(ReadParquetFiles(storage, tuple(paths), schema),
                                                      from_arrow_schema(schema))


class ReadParquetFiles:
    """Executor side: the files whose indexes a task receives, a row group at a time."""

    def __init__(self, storage: Storage, paths: tuple[str, ...], schema: pa.Schema):
        self.storage, self.paths, self.schema = storage, paths, schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for index in received_indexes(batches):
            yield from self.read(self.paths[index])

    def read(self, rel: str) -> Iterator[pa.RecordBatch]:
        with self.storage.open_input_file(rel) as raw:
            parquet = pq.ParquetFile(raw)
            columns = [f.name for f in self.schema if f.name in parquet.schema_arrow.names]
            for group in range(parquet.num_row_groups):
                yield from conform(parquet.read_row_group(group, columns=columns), self.schema).to_batches()
