"""Transformers between the source and the table (Hudi's SqlQueryBasedTransformer,
SqlFileBasedTransformer, FlatteningTransformer), chained in order.

A transformer that fails on some records (a cast that cannot parse, a division by zero under ANSI
SQL) must not stop the pipeline: the batch is re-run on halves until the failing records are
isolated. Those go to the error table with the error Spark raised; the rest are transformed and
written. Errors that are not about records (bad SQL, a missing column) fail the batch at once.
"""
from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass
from typing import Callable, Mapping

from pyspark.errors import AnalysisException, ParseException, PySparkException
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from hudi_engine.config import ConfigProperty
from hudi_engine.errors import HoodieConfigError, HoodieError
from hudi_engine.storage import Storage

from ..keys import streamer as K
from ..sources.base import MESSAGE, RAW_RECORD, REASON, SOURCE_POSITION, ErrorReason
from .config import FLATTENING, SQL_FILE, SQL_QUERY, split_transformer, transformer_option

SRC = "<SRC>"
SRC_VIEW_PREFIX = "HOODIE_SRC_TMP_TABLE_"      # Hudi's name for the batch's view
ROW = "_hoodie_streamer_row"
MAX_ISOLATED_RECORDS = 50        # beyond this the transform, not the data, is at fault


@dataclass(frozen=True)
class Transformer:
    name: str                    # short class name
    ident: str | None            # Hudi transformer identifier ("id:Class"), suffixes its options
    apply: Callable[[SparkSession, DataFrame], DataFrame]


def build_transformers(classes: tuple[str, ...], props: Mapping[str, str]) -> list[Transformer]:
    """Transformers from canonical ``Name`` / ``id:Name`` entries (validated by the config)."""
    built = []
    for entry in classes:
        ident, name = split_transformer(entry)
        if name == SQL_QUERY:
            steps = _sql_steps([_option(props, K.TRANSFORMER_SQL, ident)])
        elif name == SQL_FILE:
            path = _option(props, K.TRANSFORMER_SQL_FILE, ident)
            text = Storage(posixpath.dirname(path) or ".").read_text(posixpath.basename(path))
            steps = _sql_steps([s for s in text.split(";") if s.strip()])
        elif name == FLATTENING:
            steps = _flatten
        else:
            raise HoodieConfigError(f"transformer {entry!r} is not supported")
        built.append(Transformer(name, ident, steps))
    return built


def _option(props: Mapping[str, str], prop: ConfigProperty, ident: str | None) -> str:
    value = transformer_option(props, prop, ident)
    if not value:
        raise HoodieConfigError(f"transformer {ident or ''}:{prop.key} is not set; set {prop.key}"
                                f"{f' or {prop.key}.{ident}' if ident else ''}")
    return value


def _sql_steps(statements: list[str]) -> Callable[[SparkSession, DataFrame], DataFrame]:
    """Each statement runs with ``<SRC>`` bound to the incoming rows; the last one's result is the
    output (as Hudi's SQL file transformer does)."""
    def apply(spark: SparkSession, df: DataFrame) -> DataFrame:
        view = f"{SRC_VIEW_PREFIX}{uuid.uuid4().hex}"
        df.createOrReplaceTempView(view)
        result = df
        for statement in statements:
            result = spark.sql(statement.replace(SRC, view))
        return result
    return apply


def _flatten(spark: SparkSession, df: DataFrame) -> DataFrame:
    """Nested struct fields become top-level columns named ``outer_inner`` (Hudi's flattening)."""
    return df.select(*_flat_columns(df.schema))


def _flat_columns(schema: StructType, prefix: list[str] | None = None) -> list:
    columns = []
    for field in schema.fields:
        path = [*(prefix or []), field.name]
        if isinstance(field.dataType, StructType):
            columns += _flat_columns(field.dataType, path)
        else:
            columns.append(F.col(".".join(f"`{p}`" for p in path)).alias("_".join(path)))
    return columns


def transform_batch(spark: SparkSession, df: DataFrame, transformers: list[Transformer],
                    position: str) -> tuple[DataFrame, DataFrame | None]:
    """(transformed rows, persisted and counted; error rows or None). ``position`` describes the
    batch, for the error rows' source position."""
    if not transformers:
        return df, None
    try:
        return _materialize(_chain(spark, df, transformers)), None
    except PySparkException as exc:
        if not _record_level(exc):
            raise _transform_error(transformers, exc) from exc
        first_error = exc
    return _isolate(spark, df, transformers, position, first_error)


def _chain(spark: SparkSession, df: DataFrame, transformers: list[Transformer]) -> DataFrame:
    for transformer in transformers:
        df = transformer.apply(spark, df)
    return df


def _materialize(df: DataFrame) -> DataFrame:
    """Caching computes every column of every row, so record errors surface here, not mid-write."""
    df = df.persist()
    try:
        df.count()
    except BaseException:
        df.unpersist()
        raise
    return df


def _record_level(exc: PySparkException) -> bool:
    return not isinstance(exc, (AnalysisException, ParseException))


def _transform_error(transformers: list[Transformer], exc: BaseException) -> HoodieError:
    names = ", ".join(f"{t.ident}:{t.name}" if t.ident else t.name for t in transformers)
    return HoodieConfigError(f"the transformers ({names}) failed on the batch: {_first_line(exc)}")


def _isolate(spark: SparkSession, df: DataFrame, transformers: list[Transformer], position: str,
             first_error: BaseException) -> tuple[DataFrame, DataFrame]:
    """Bisect the batch's rows until each failing record stands alone."""
    indexed = (df.withColumn(ROW, F.monotonically_increasing_id())
               .withColumn(ROW, F.row_number().over(Window.orderBy(ROW)) - 1).persist())
    total = indexed.count()
    failures: dict[int, str] = {}

    def check(lo: int, hi: int) -> None:
        try:
            chunk = indexed.where((F.col(ROW) >= lo) & (F.col(ROW) < hi)).drop(ROW)
            _chain(spark, chunk, transformers).write.format("noop").mode("overwrite").save()
            return
        except PySparkException as exc:
            if hi - lo == 1:
                failures[lo] = _first_line(exc)
                if len(failures) > MAX_ISOLATED_RECORDS:
                    raise HoodieError(
                        f"more than {MAX_ISOLATED_RECORDS} records of {position} fail the transformers; "
                        f"the transform itself looks wrong. First error: {_first_line(first_error)}") from exc
                return
        mid = (lo + hi) // 2
        check(lo, mid)
        check(mid, hi)

    check(0, total)
    if not failures:                  # the failure did not repeat: nothing to route
        indexed.unpersist()
        return _materialize(_chain(spark, df, transformers)), None
    bad = spark.createDataFrame(list(failures.items()), f"{ROW} long, {MESSAGE} string")
    source_columns = [c for c in indexed.columns if c != ROW]
    errors = (indexed.join(bad, ROW).select(
        F.to_json(F.struct(*source_columns)).alias(RAW_RECORD),
        F.lit(ErrorReason.CUSTOM_TRANSFORMER_FAILURE.value).alias(REASON),
        F.col(MESSAGE),
        F.concat(F.lit(f"{position} record #"), F.col(ROW).cast("string")).alias(SOURCE_POSITION)))
    good = indexed.join(bad.select(ROW), ROW, "left_anti").drop(ROW)
    return _materialize(_chain(spark, good, transformers)), _materialize(errors)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
