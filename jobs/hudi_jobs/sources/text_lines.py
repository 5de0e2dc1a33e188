"""Lines of text files read in the executors through ``pyarrow.fs``, for storage that Spark's
Hadoop layer cannot open (``s3://`` with pyspark's stock jars). Like Spark's text reader: lines
end at ``\\n``, ``\\r\\n`` or ``\\r``; ``.gz``, ``.bz2``, ``.zst`` and ``.lz4`` files are
decompressed; blank lines are dropped (no source keeps them). A file is streamed, never held whole.
"""
from __future__ import annotations

import codecs
import re
from typing import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from hudi_engine.spark import task_indexes
from hudi_engine.storage import Storage

VALUE, LINE = "value", "_hoodie_streamer_line"
_CHUNK_BYTES = 8 << 20
_BATCH_LINES = 10_000
_BREAKS = re.compile(r"\r\n|\r|\n")


def lines_frame(spark: SparkSession, storage: Storage, paths: list[str], positions: list[str],
                position_column: str, encoding: str = "utf-8") -> DataFrame:
    """(``value``, ``_hoodie_streamer_line``, ``position_column``): each non-blank line of the files
    at ``paths``, its 0-based line number in its file and the file's position text."""
    schema = pa.schema([(VALUE, pa.string()), (LINE, pa.int64()), (position_column, pa.string())])
    read = _ReadLines(storage, tuple(paths), tuple(positions), schema, encoding)
    return task_indexes(spark, len(paths)).mapInArrow(read, from_arrow_schema(schema))


class _ReadLines:
    def __init__(self, storage: Storage, paths: tuple[str, ...], positions: tuple[str, ...],
                 schema: pa.Schema, encoding: str):
        self.storage, self.paths, self.positions = storage, paths, positions
        self.schema, self.encoding = schema, encoding

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield from self.read(index)

    def read(self, index: int) -> Iterator[pa.RecordBatch]:
        position = self.positions[index]
        values: list[str] = []
        numbers: list[int] = []
        for number, line in enumerate(self.lines(self.paths[index])):
            if line.strip():
                values.append(line)
                numbers.append(number)
            if len(values) == _BATCH_LINES:
                yield self._batch(values, numbers, position)
                values, numbers = [], []
        if values:
            yield self._batch(values, numbers, position)

    def lines(self, rel: str) -> Iterator[str]:
        storage = self.storage
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        pending = ""
        with storage.fs.open_input_stream(storage.full(rel), compression="detect") as stream:
            while True:
                chunk = stream.read(_CHUNK_BYTES)
                text = pending + decoder.decode(chunk, final=not chunk)
                if not chunk:
                    yield from _BREAKS.split(text)
                    return
                # A chunk may end inside a line, or between the '\r' and '\n' of one break.
                held = "\r" if text.endswith("\r") else ""
                parts = _BREAKS.split(text[:len(text) - len(held)])
                pending = parts.pop() + held
                yield from parts

    def _batch(self, values: list[str], numbers: list[int], position: str) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays(
            [pa.array(values, pa.string()), pa.array(numbers, pa.int64()),
             pa.array([position] * len(values), pa.string())], schema=self.schema)
