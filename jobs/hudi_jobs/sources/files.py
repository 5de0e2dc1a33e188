"""File sources on storage: Hudi's JsonDFSSource, CsvDFSSource, ParquetDFSSource and AvroDFSSource.

A fetch lists the root, picks the next files by modification time (``file_selection``) and returns
them as lazy DataFrames: the driver never reads a row. Lines that cannot be parsed, or do not fit
the source schema, become error records naming their file and never reach ``data``.

Spark's JSON and CSV file readers parse only the columns a query asks for, so a line whose bad
value sits in a column a transformer drops would pass as good (and show up as an error as well).
JSON lines are therefore parsed with ``from_json`` over the files' text, which parses whole lines;
CSV, whose quoting and headers only its file reader handles, is read whole into a cache that the
next fetch releases. Avro object container files are decoded in the executors with fastavro, one
task per file, since Spark has no Avro reader here.
"""
from __future__ import annotations

import json
import re
import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Iterable, Iterator, Mapping

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from fastavro.read import SchemaResolutionError
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from hudi_engine.api import avro_to_arrow
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieValidationError
from hudi_engine.spark import parquet_frame, spark_opens, task_indexes
from hudi_engine.storage import Storage

from ..keys import files as K
from ..keys.schema import SOURCE_SCHEMA_FILE
from ..schema_provider import spark_struct
from .avro_values import arrow_values
from .base import MESSAGE, RAW_RECORD, REASON, SOURCE_POSITION, Batch, ErrorReason
from .file_selection import SourceFile, select, source_files
from .text_lines import LINE, VALUE, lines_frame

# Helper columns of the reads; ``data`` never carries them.
CORRUPT = "_hoodie_streamer_corrupt_record"
ERROR_REASON = "_hoodie_streamer_error_reason"
ERROR_MESSAGE = "_hoodie_streamer_error_message"
POSITION = "_hoodie_streamer_source_position"
BAD_LINE = "_hoodie_streamer_bad_line"

_GLOB_CHARS = re.compile(r"([\\*?\[\]{}])")
_AVRO_CHUNK = 10_000          # records per Arrow batch when decoding Avro
_HEADER_READERS = 8           # parallel Avro header reads on the driver when inferring the schema


class _DFSSource(ABC):
    """Listing, selection and checkpoint; each format turns the chosen files into rows."""

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        self.cfg = HoodieConfig(props)
        self.root = self.cfg.require(K.ROOT, "the file sources read the files under it")
        selector = self.cfg.get_str(K.INPUT_SELECTOR)
        if selector and selector.rsplit(".", 1)[-1] != K.DFS_PATH_SELECTOR:
            raise HoodieConfigError(
                f"{K.INPUT_SELECTOR.key}={selector} is not supported; leave it unset (files are picked "
                f"by modification time, as by Hudi's {K.DFS_PATH_SELECTOR})")
        self.storage = Storage(self.root, props)
        self.schema_avro = schema_avro
        self._cached: DataFrame | None = None

    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        """The files modified after ``checkpoint``, up to ``limit`` bytes (<= 0: all of them)."""
        if self._cached is not None:            # the previous batch is done with
            self._cached.unpersist()
            self._cached = None
        if not self.storage.is_dir(""):
            raise HoodieConfigError(f"{K.ROOT.key}={self.root} is not a folder: fix the path, or create "
                                    "the folder before the first run")
        selection = select(source_files(self.storage.list(recursive=True)), checkpoint, limit)
        lag = selection.lag_seconds(time.time_ns() // 1_000_000)
        if not selection.files:
            return Batch(None, selection.checkpoint, lag_seconds=lag, position=selection.describe())
        data, errors = self._read(spark, selection.files)
        return Batch(data, selection.checkpoint, errors, lag_seconds=lag, position=selection.describe(),
                     stable=True)

    def _held(self, rows: DataFrame) -> DataFrame:
        """Rows both sides of a batch (good and bad) are taken from: cached until the next fetch, so
        the files are read and parsed once however often the batch is counted and written."""
        self._cached = rows.persist()
        return self._cached

    @abstractmethod
    def _read(self, spark: SparkSession,
              files: tuple[SourceFile, ...]) -> tuple[DataFrame | None, DataFrame | None]:
        """Good rows and error rows (ERROR_SCHEMA) of the files, lazily."""

    def _spark_paths(self, files: Iterable[SourceFile]) -> list[str]:
        """Paths Spark opens literally: its readers would expand glob characters in file names."""
        return [_GLOB_CHARS.sub(r"\\\1", self.storage.uri(f.path)) for f in files]

    def _lines(self, spark: SparkSession, files: tuple[SourceFile, ...], encoding: str = "utf-8") -> DataFrame:
        """The files' non-blank lines read through Arrow, where Spark cannot open the storage."""
        return lines_frame(spark, self.storage, [f.path for f in files],
                           [_position(self.storage, f.path) for f in files], POSITION, encoding)


class JsonDFSSource(_DFSSource):
    """JSON lines, one record per line (gzip files too); the schema is inferred over the batch's
    files when no source schema is given."""

    def _read(self, spark, files):
        if spark_opens(spark, self.storage):
            paths = self._spark_paths(files)
            schema = spark_struct(self.schema_avro) if self.schema_avro else _infer_json(spark.read, paths)
            lines = (spark.read.text(paths).where(F.trim("value") != "")
                     .select("value", _spark_file_position().alias(POSITION)))
        else:
            lines = self._lines(spark, files).select(VALUE, POSITION)
            schema = (spark_struct(self.schema_avro) if self.schema_avro
                      else _infer_json(spark.read, _values(lines)))
        parsed = lines.select("*", F.from_json("value", _with_corrupt(schema), _PERMISSIVE).alias("r"))
        row = F.col("r")
        bad = row.isNull() | row.getField(CORRUPT).isNotNull()
        # Only a bad line's text and position are kept: the good ones' would double what is cached.
        rows = self._held(parsed.select(row, bad.alias(BAD_LINE), *[F.when(bad, F.col(c)).alias(c)
                                                                     for c in ("value", POSITION)]))
        failed = F.col(BAD_LINE)
        # No column at all (every line bad): no data rows to give.
        data = rows.where(~failed).select(*[row.getField(f.name).alias(f.name) for f in schema.fields]) \
            if schema.fields else None
        reason, message = _json_problem(schema, row, F.col("value"))
        errors = rows.where(failed).select(F.col("value").alias(RAW_RECORD), reason.alias(REASON),
                                           message.alias(MESSAGE), F.col(POSITION).alias(SOURCE_POSITION))
        return data, errors


class CsvDFSSource(_DFSSource):
    """CSV files, read with Spark's CSV reader and the ``hoodie.streamer.csv.*`` options. A batch's
    parsed lines stay cached until the next fetch, so good and bad rows are told apart once, on
    whole lines, whatever columns the consumer reads."""

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        super().__init__(props, schema_avro)
        self.options = {option: value for option, prop in K.CSV_OPTIONS.items()
                        if (value := self.cfg.get_str(prop)) is not None}

    def _read(self, spark, files):
        on_spark = spark_opens(spark, self.storage)
        lines = None if on_spark else self._lines(spark, files, self.options.get("encoding", "utf-8"))
        if self.schema_avro:
            schema = spark_struct(self.schema_avro)
        else:
            source = self._spark_paths(files) if on_spark else _values(lines)
            schema = spark.read.options(**{"inferSchema": "true", **self.options}).csv(source).schema
        if not schema.fields:       # only blank lines: no records
            return None, None
        rows = self._held(self._spark_rows(spark, files, schema) if on_spark else self._parsed(lines, schema))
        data = rows.where(F.col(CORRUPT).isNull()).drop(CORRUPT, POSITION)
        # The partial row names what did read: the other columns are missing or of the wrong type.
        read_as = F.to_json(F.struct(*[F.col(_quoted(f.name)) for f in schema.fields]))
        message = F.concat(F.lit(f"the line does not fit the {len(schema.fields)} columns of the source "
                                 "schema (a field too many or too few, or a value of the wrong type); "
                                 "it reads as "), read_as)
        errors = rows.where(F.col(CORRUPT).isNotNull()).select(
            F.col(CORRUPT).alias(RAW_RECORD), F.lit(ErrorReason.CSV_ROW_DESERIALIZATION_FAILURE.value).alias(REASON),
            message.alias(MESSAGE), F.col(POSITION).alias(SOURCE_POSITION))
        return data, errors

    def _spark_rows(self, spark, files, schema: StructType) -> DataFrame:
        return (spark.read.options(**self.options).option("columnNameOfCorruptRecord", CORRUPT)
                .schema(_with_corrupt(schema)).csv(self._spark_paths(files))
                .select("*", _spark_file_position().alias(POSITION)))

    def _parsed(self, lines: DataFrame, schema: StructType) -> DataFrame:
        """Lines read through Arrow, parsed as Spark's CSV reader parses them (``from_csv`` takes
        the same options); header and comment lines are dropped here, as that reader does."""
        options = {k: v for k, v in self.options.items() if k not in _FILE_ONLY_CSV_OPTIONS}
        if str(self.options.get("multiLine", "false")).lower() == "true":
            raise HoodieConfigError(
                f"{K.CSV_OPTIONS['multiLine'].key}=true needs Spark's own file reader, which cannot open "
                f"{self.storage.base_uri} (pyspark has no S3A connector); add hadoop-aws to the session "
                "or keep records on one line")
        drop = (F.col(LINE) == 0) if str(self.options.get("header", "false")).lower() == "true" else F.lit(False)
        if self.options.get("comment"):
            drop = drop | F.col(VALUE).startswith(self.options["comment"])
        mode = options.get("mode", "PERMISSIVE").upper()
        parsed = F.from_csv(VALUE, _with_corrupt(schema).toDDL(),
                            {**options, "mode": "PERMISSIVE" if mode == "DROPMALFORMED" else mode,
                             "columnNameOfCorruptRecord": CORRUPT})
        rows = lines.where(~drop).select(parsed.alias("r"), F.col(POSITION)).select("r.*", POSITION)
        return rows.where(F.col(CORRUPT).isNull()) if mode == "DROPMALFORMED" else rows


# CSV reader options about files rather than values: handled when the lines are read.
_FILE_ONLY_CSV_OPTIONS = ("header", "inferSchema", "samplingRatio", "enforceSchema", "encoding", "comment",
                          "multiLine")


class ParquetDFSSource(_DFSSource):
    """Parquet files, read with Spark's Parquet reader; schemas of the batch's files merged."""

    def _read(self, spark, files):
        if not spark_opens(spark, self.storage):
            return parquet_frame(spark, self.storage, [f.path for f in files], self._arrow_schema(files)), None
        reader = spark.read
        if self.schema_avro:
            reader = reader.schema(spark_struct(self.schema_avro))
        else:
            reader = reader.option("mergeSchema", str(self.cfg.get(K.PARQUET_MERGE_SCHEMA)).lower())
        return reader.parquet(*self._spark_paths(files)), None

    def _arrow_schema(self, files: tuple[SourceFile, ...]) -> pa.Schema:
        """The source schema, else the files' merged (or, as Spark does without mergeSchema, the
        first file's) schema from their footers."""
        if self.schema_avro:
            return to_arrow_schema(spark_struct(self.schema_avro))
        chosen = files if self.cfg.get(K.PARQUET_MERGE_SCHEMA) else files[:1]
        storage = self.storage
        with ThreadPoolExecutor(_HEADER_READERS) as pool:
            schemas = list(pool.map(lambda f: pq.read_schema(storage.full(f.path), filesystem=storage.fs), chosen))
        return pa.unify_schemas(schemas, promote_options="permissive")


class AvroDFSSource(_DFSSource):
    """Avro object container files, decoded with fastavro in the executors into the source schema
    (Avro schema resolution), or into the union of the files' own schemas when none is given. A
    file that is not valid Avro becomes one error record, not a failed batch."""

    def _read(self, spark, files):
        if self.schema_avro:
            schema = spark_struct(self.schema_avro)
        else:
            schema = from_arrow_schema(_merged_writer_schema(self.storage, files))
        # Error rows carry no data, so every data column is nullable in the decoded rows.
        out = StructType([StructField(f.name, f.dataType, True, f.metadata) for f in schema.fields]
                         + [StructField(c, StringType()) for c in (ERROR_REASON, ERROR_MESSAGE, POSITION)])
        decode = _DecodeAvroFiles(self.storage, [f.path for f in files], self.schema_avro, to_arrow_schema(out))
        rows = self._held(task_indexes(spark, len(files)).mapInArrow(decode, out))
        failed = F.col(ERROR_REASON).isNotNull()
        # No column at all (no file of the batch is readable Avro): no data rows to give.
        data = rows.where(~failed).drop(ERROR_REASON, ERROR_MESSAGE, POSITION) if schema.fields else None
        errors = rows.where(failed).select(
            F.lit(None).cast(StringType()).alias(RAW_RECORD), F.col(ERROR_REASON).alias(REASON),
            F.col(ERROR_MESSAGE).alias(MESSAGE), F.col(POSITION).alias(SOURCE_POSITION))
        return data, errors


# --- JSON and CSV ---------------------------------------------------------------------------------

_PERMISSIVE = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}


def _with_corrupt(schema: StructType) -> StructType:
    return StructType([*schema.fields, StructField(CORRUPT, StringType())])


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _infer_json(reader, paths_or_lines) -> StructType:
    inferred = reader.option("columnNameOfCorruptRecord", CORRUPT).json(paths_or_lines).schema
    return StructType([f for f in inferred.fields if f.name != CORRUPT])


def _values(lines: DataFrame):
    """The lines as the RDD of strings Spark's JSON and CSV readers infer a schema from."""
    return lines.select(VALUE).rdd.map(lambda row: row[0])


def _json_problem(schema: StructType, parsed: Column, line: Column) -> tuple[Column, Column]:
    """Reason and message of a bad ``line`` (``parsed`` in ``schema``): not a JSON object at all, or
    an object with values of the wrong type, named when they are top-level fields. Every JSON value
    reads as a string, so parsing the line with all fields as strings tells the two apart."""
    as_text = F.from_json(line, _with_corrupt(StructType([StructField(f.name, StringType())
                                                          for f in schema.fields])), _PERMISSIVE)
    is_object = as_text.isNotNull() & as_text.getField(CORRUPT).isNull()
    wrong = [F.when(parsed.getField(f.name).isNull() & as_text.getField(f.name).isNotNull(),
                    F.concat(F.lit(f"{f.name} = "), F.substring(as_text.getField(f.name), 1, 80),
                             F.lit(f" is not {f.dataType.simpleString()}")))
             for f in schema.fields]
    fields = F.concat_ws("; ", *wrong) if wrong else F.lit("")
    mismatch = F.concat(F.lit("the record does not fit the source schema: "),
                        F.when(fields != "", fields).otherwise(F.lit("a nested value has the wrong type")))
    reason = F.when(is_object, F.lit(ErrorReason.INVALID_RECORD_SCHEMA.value)).otherwise(
        F.lit(ErrorReason.JSON_ROW_DESERIALIZATION_FAILURE.value))
    message = F.when(is_object, mismatch).otherwise(F.lit("the line is not a JSON object"))
    return reason, message


def _spark_file_position() -> Column:
    """``file:<path>`` of a row's file, from the URL-encoded URI Spark keeps ('+' is literal there)."""
    uri = F.url_decode(F.replace(F.col("_metadata.file_path"), F.lit("+"), F.lit("%2B")))
    return F.concat(F.lit("file:"), F.regexp_replace(uri, "^file:(//)?", ""))


# --- Avro -----------------------------------------------------------------------------------------

def _position(storage: Storage, rel: str) -> str:
    return "file:" + (storage.full(rel) if storage.is_local else storage.uri(rel))


_AVRO_MAGIC = b"Obj\x01"


@contextmanager
def _open_avro(storage: Storage, rel: str, buffer_size: int = 1 << 20) -> Iterator[pa.NativeFile]:
    """A buffered stream of an Avro file; refused up front when it lacks Avro's magic bytes (fastavro
    would otherwise read garbage as a header and fail obscurely)."""
    with storage.fs.open_input_file(storage.full(rel)) as raw:
        if raw.read(len(_AVRO_MAGIC)) != _AVRO_MAGIC:
            raise ValueError("it does not start with Avro's magic bytes 'Obj\\x01'")
        raw.seek(0)
        yield pa.BufferedInputStream(raw, buffer_size=buffer_size)


def _merged_writer_schema(storage: Storage, files: Iterable[SourceFile]) -> pa.Schema:
    """The union of the files' own schemas, from their headers (files that are not Avro are left
    to the executors, which report them)."""
    def header(f: SourceFile) -> pa.Schema | None:
        try:
            with _open_avro(storage, f.path, buffer_size=1 << 16) as stream:
                return avro_to_arrow(fastavro.reader(stream).writer_schema)
        except OSError:
            raise
        except Exception:
            return None
    with ThreadPoolExecutor(_HEADER_READERS) as pool:
        schemas = [s for s in pool.map(header, files) if s is not None]
    if not schemas:
        return pa.schema([])
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise HoodieValidationError(
            f"the Avro files of this batch under {storage.base_uri} have incompatible schemas ({exc}); "
            f"give the source schema ({SOURCE_SCHEMA_FILE.key}) so every file is read into it") from exc


class _DecodeAvroFiles:
    """Executor side: each task decodes the files whose indexes it receives into ``out`` batches
    (data columns, then error reason, message and position, set only on a file's error row)."""

    def __init__(self, storage: Storage, paths: list[str], reader_schema: str | None, out: pa.Schema):
        self.storage, self.paths, self.reader_schema, self.out = storage, paths, reader_schema, out

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        storage = self.storage
        reader_schema = json.loads(self.reader_schema) if self.reader_schema else None
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield from decode_avro_file(storage, self.paths[index], reader_schema, self.out)


def decode_avro_file(storage: Storage, rel: str, reader_schema: dict | None,
                     out: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The records of one Avro file as ``out`` batches; what cannot be decoded ends in one error
    row (the records before it are kept). Storage errors propagate, so Spark retries the task."""
    kept = 0
    try:
        for rows, arrow in _decoded_chunks(storage, rel, reader_schema):
            yield from _conform(pa.Table.from_pylist(rows, schema=arrow), out).to_batches()
            kept += len(rows)
    except OSError:
        raise
    except Exception as exc:
        schema_problem = isinstance(exc, (SchemaResolutionError, pa.ArrowInvalid, pa.ArrowTypeError))
        reason = ErrorReason.INVALID_RECORD_SCHEMA if schema_problem else ErrorReason.AVRO_DESERIALIZATION_FAILURE
        what = "does not fit the source schema" if schema_problem else "is not a readable Avro object container file"
        message = (f"the file {what}: {type(exc).__name__}: {exc} ({kept} records before the failure "
                   "were read; the rest of the file was not)")
        row = {ERROR_REASON: reason.value, ERROR_MESSAGE: message, POSITION: _position(storage, rel)}
        yield pa.RecordBatch.from_pylist([row], schema=out)


def _decoded_chunks(storage: Storage, rel: str,
                    reader_schema: dict | None) -> Iterator[tuple[list[dict], pa.Schema]]:
    """Records of one file, ready for pyarrow, in chunks; records decoded before a failure come out
    before it is raised."""
    with _open_avro(storage, rel) as stream:
        records = fastavro.reader(stream, reader_schema=reader_schema, return_named_type=True)
        schema = fastavro.parse_schema(reader_schema or records.writer_schema, expand=True, _write_hint=False)
        arrow = avro_to_arrow(schema)
        convert = arrow_values(schema, writer=records.writer_schema if reader_schema else None)
        rows: list[dict] = []
        failure = None
        try:
            for record in records:
                rows.append(convert(record))
                if len(rows) == _AVRO_CHUNK:
                    yield rows, arrow
                    rows = []
        except OSError:
            raise
        except Exception as exc:
            failure = exc
        if rows:
            yield rows, arrow
        if failure is not None:
            raise failure


def _conform(table: pa.Table, out: pa.Schema) -> pa.Table:
    """A file's records in the batch schema: missing columns null, types cast to Spark's Arrow types."""
    n = table.num_rows
    columns = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(n, f.type)
               for f in out]
    return pa.Table.from_arrays(columns, schema=out)

