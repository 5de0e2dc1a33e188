"""An upstream Hudi table read incrementally (Hudi's HoodieIncrSource): bronze → silver.

The checkpoint is the last upstream instant consumed (its completion time on Hudi 1.x tables, as
Hudi 1.x checkpoints). Each fetch takes up to ``num_instants`` commits. When the upstream table
writes CDC logs, the batch is built from its change feed instead of a plain incremental query, so
deletes flow downstream as ``_hoodie_is_deleted`` rows, which a plain incremental query cannot see.
"""
from __future__ import annotations

import time
from typing import Mapping

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import (BinaryType, DateType, IntegerType, LongType, StringType, StructField, StructType,
                               TimestampType)

from hudi_engine import config as C
from hudi_engine.api import (
    IS_DELETED,
    META_FIELDS,
    OPERATION_FIELD,
    PARTITION_PATH,
    RECORD_KEY,
    HoodieTable,
    parse_instant_time,
    read,
    read_cdc,
    table_schema,
)
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError

from ..keys import streamer as K
from .base import Batch


def incremental_window(positions: list[str], checkpoint: str | None, num_instants: int,
                       missing_strategy: str | None) -> tuple[str, str] | None:
    """(begin exclusive, end inclusive) of the next fetch over the upstream's completed commit
    positions (sorted), or None when nothing is new."""
    if checkpoint is None:
        if not positions:
            return None
        if missing_strategy == K.READ_LATEST:
            return (positions[-2] if len(positions) > 1 else "0"), positions[-1]
        if missing_strategy == K.READ_UPTO_LATEST_COMMIT:
            return "0", positions[-1]
        checkpoint = "0"
    newer = [p for p in positions if p > checkpoint]
    if not newer:
        return None
    return checkpoint, newer[:max(1, num_instants)][-1]


class HoodieIncrSource:
    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        cfg = HoodieConfig(props)
        self.path = cfg.require(K.HOODIEINCR_PATH, "HoodieIncrSource reads that upstream Hudi table")
        self.num_instants = cfg.get(K.HOODIEINCR_NUM_INSTANTS)
        self.missing_strategy = cfg.get_str(K.HOODIEINCR_MISSING_CHECKPOINT_STRATEGY)
        self.drop_all_meta = cfg.get(K.HOODIEINCR_DROP_ALL_META_FIELDS)

    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        """``limit`` is ignored, as in Hudi: the window is counted in instants."""
        if not HoodieTable.exists(self.path):
            raise HoodieConfigError(f"{K.HOODIEINCR_PATH.key}={self.path} is not a Hudi table (no "
                                    ".hoodie/hoodie.properties); write the upstream table first")
        table = HoodieTable.load(self.path)
        positions = commit_positions(table)
        window = incremental_window(positions, checkpoint, self.num_instants, self.missing_strategy)
        if window is None:
            return Batch(None, checkpoint, lag_records=0, lag_seconds=0.0)
        begin, end = window
        data = changes(spark, table, begin, end)
        waiting = [p for p in positions if p > end]
        return Batch(self._drop_meta(data), end, lag_records=None,
                     lag_seconds=_age_seconds(waiting[0]) if waiting else 0.0,
                     position=f"{self.path} instants ({begin}, {end}]")

    def _drop_meta(self, df: DataFrame) -> DataFrame:
        keep = () if self.drop_all_meta else (PARTITION_PATH,)
        return df.drop(*[c for c in (*META_FIELDS, OPERATION_FIELD) if c not in keep])


def commit_positions(table: HoodieTable) -> list[str]:
    """The completed commits' positions in the order incremental queries use: completion times on
    Hudi 1.x tables, instant times before."""
    by_completion = table.layout_version >= 2
    return sorted(i.completion_time if by_completion else i.timestamp for i in table.timeline.completed_writes())


def changes(spark: SparkSession, table: HoodieTable, begin: str, end: str) -> DataFrame:
    """Each key's last change in (begin, end] as a row: from the change feed when the table keeps
    one (a delete as its before image flagged ``_hoodie_is_deleted``), else an incremental query."""
    feed = _feed(spark, table, begin, end)
    if feed is None:
        return read(spark, table.base_path, _incremental(begin, end))
    image = F.when(F.col("op") == "d", F.col("before")).otherwise(F.col("after"))
    rows = feed.select(F.col("ts_ms"), image.alias("image"), (F.col("op") == "d").alias(IS_DELETED))
    latest = Window.partitionBy(F.col("image")[RECORD_KEY]).orderBy(F.col("ts_ms").desc())
    return _rows(rows.withColumn("_rank", F.row_number().over(latest)).where("_rank = 1"))


def change_images(spark: SparkSession, table: HoodieTable, begin: str, end: str) -> DataFrame:
    """Every row image the commits in (begin, end] took away (before images of updates and
    deletes, flagged ``_hoodie_is_deleted``) or wrote: what an aggregate must recompute. Without a
    change feed only the rows written are known."""
    feed = _feed(spark, table, begin, end)
    if feed is None:
        return read(spark, table.base_path, _incremental(begin, end)).withColumn(IS_DELETED, F.lit(False))
    removed = feed.where(F.col("op") != "i").select(F.col("before").alias("image"), F.lit(True).alias(IS_DELETED))
    written = feed.where(F.col("op") != "d").select(F.col("after").alias("image"), F.lit(False).alias(IS_DELETED))
    return _rows(removed.unionByName(written))


def _incremental(begin: str, end: str) -> dict[str, str]:
    return {C.QUERY_TYPE.key: "incremental", C.BEGIN_INSTANTTIME.key: begin, C.END_INSTANTTIME.key: end}


def _feed(spark: SparkSession, table: HoodieTable, begin: str, end: str) -> DataFrame | None:
    """The table's change feed in the window with its images parsed (None: it keeps none)."""
    if not HoodieConfig(table.props).get(C.CDC_ENABLED):
        return None
    schema = from_arrow_schema(table_schema(table))
    feed = read_cdc(spark, table, {**_incremental(begin, end), C.INCREMENTAL_FORMAT.key: "cdc"})
    return feed.select("op", "ts_ms", _image(F.col("before"), schema).alias("before"),
                       _image(F.col("after"), schema).alias("after"))


# How Hudi's CDC JSON spells values Spark's JSON reader does not take back as they are (Spark's
# internal values: a date's day number, a timestamp's microseconds, binary as Base64).
_AS_WRITTEN = {DateType: (IntegerType(), F.date_from_unix_date), TimestampType: (LongType(), F.timestamp_micros),
               BinaryType: (StringType(), F.unbase64)}


def _image(text: Column, schema: StructType) -> Column:
    """A CDC image's JSON text as a struct of the table's columns."""
    as_written = StructType([StructField(f.name, _AS_WRITTEN[type(f.dataType)][0], True)
                             if type(f.dataType) in _AS_WRITTEN else f for f in schema.fields])
    parsed = F.from_json(text, as_written)
    fields = [(_AS_WRITTEN[type(f.dataType)][1](parsed[f.name]) if type(f.dataType) in _AS_WRITTEN
               else parsed[f.name]).alias(f.name) for f in schema.fields]
    return F.when(parsed.isNotNull(), F.struct(*fields))


def _rows(images: DataFrame) -> DataFrame:
    """Images as rows with the deletion flag (a table's own ``_hoodie_is_deleted`` column gives
    way to it)."""
    fields = [f.name for f in images.schema["image"].dataType.fields if f.name != IS_DELETED]
    return images.select(*[F.col("image")[f].alias(f) for f in fields], IS_DELETED)


def _age_seconds(position: str) -> float:
    return max(0.0, time.time() - parse_instant_time(position).timestamp())
