"""``--filter-dupes``: drop incoming records whose key the target already holds, so an insert-only
pipeline replaying its source never writes a key twice."""
from __future__ import annotations

from typing import Iterator, Mapping

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from hudi_engine import config as C
from hudi_engine.api import PARTITION_PATH, RECORD_KEY, HoodieTable, KeyGenerator, key_generator_from_config, read
from hudi_engine.config import HoodieConfig

_KEY, _PARTITION = "_hoodie_streamer_key", "_hoodie_streamer_partition"


def drop_existing_keys(spark: SparkSession, df: DataFrame, base_path: str,
                       options: Mapping[str, str]) -> DataFrame:
    if not HoodieTable.exists(base_path):
        return df
    cfg = HoodieConfig({**options, **HoodieTable.load(base_path).props})
    keygen = key_generator_from_config(cfg)
    is_global = cfg.get_str(C.INDEX_TYPE).upper().startswith("GLOBAL")
    schema = StructType([*df.schema.fields, StructField(_KEY, StringType()), StructField(_PARTITION, StringType())])
    keyed = df.mapInArrow(_Keys(keygen), schema)
    existing = read(spark, base_path).select(RECORD_KEY, PARTITION_PATH)
    on = [keyed[_KEY] == existing[RECORD_KEY]]
    if not is_global:
        on.append(keyed[_PARTITION] == existing[PARTITION_PATH])
    return keyed.join(existing, on, "left_anti").drop(_KEY, _PARTITION)


class _Keys:
    def __init__(self, keygen: KeyGenerator):
        self.keygen = keygen

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield (batch.append_column(_KEY, self.keygen.record_keys(batch))
                   .append_column(_PARTITION, self.keygen.partition_paths(batch)))
