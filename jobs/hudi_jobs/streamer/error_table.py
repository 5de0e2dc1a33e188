"""The error table: a Hudi table beside the target holding every record the pipeline could not
ingest, with the raw record, the reason, where it came from and when.

Rows are keyed by a hash of (target, source position, raw record) and upserted, so a batch that is
retried after a failure or a kill writes its bad records once, like its good ones. The error table
commits before the target does (Hudi's order), so a target commit never exists without its errors.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudi_engine.api import write
from hudi_engine.config import HoodieConfig

from ..keys import streamer as K
from ..sources.base import RAW_RECORD, SOURCE_POSITION

ERROR_ID, TARGET_TABLE, ERROR_TIME, ERROR_DATE, BATCH = (
    "error_id", "target_table", "error_time", "error_date", "batch_checkpoint")


@dataclass(frozen=True)
class ErrorTable:
    base_path: str
    name: str
    fail_batch_on_write_error: bool       # hoodie.errortable.write.failure.strategy=ROLLBACK_COMMIT

    @classmethod
    def from_props(cls, props: Mapping[str, str], target_base_path: str, target_table: str) -> "ErrorTable | None":
        cfg = HoodieConfig(props)
        if not cfg.get(K.ERROR_TABLE_ENABLED):
            return None
        base = cfg.get_str(K.ERROR_TABLE_BASE_PATH) or posixpath.join(
            posixpath.dirname(target_base_path.rstrip("/")), f"{target_table}_errors")
        name = cfg.get_str(K.ERROR_TABLE_NAME) or f"{target_table}_errors"
        strategy = cfg.get_str(K.ERROR_TABLE_WRITE_FAILURE_STRATEGY).upper()
        return cls(base, name, strategy == K.ROLLBACK_COMMIT)

    def write(self, errors: DataFrame, target_table: str, checkpoint: str | None) -> str:
        """Upsert one batch's error rows; returns the error table's instant."""
        rows = errors.select(
            F.sha2(F.concat_ws("\u0000", F.lit(target_table), F.col(SOURCE_POSITION),
                               F.coalesce(F.col(RAW_RECORD), F.lit(""))), 256).alias(ERROR_ID),
            F.lit(target_table).alias(TARGET_TABLE), "*",
            F.lit(checkpoint or "").alias(BATCH),
            F.current_timestamp().alias(ERROR_TIME),
            F.date_format(F.current_timestamp(), "yyyy-MM-dd").alias(ERROR_DATE))
        return write(rows, self.base_path, {
            "hoodie.table.name": self.name,
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
            "hoodie.datasource.write.operation": "upsert",
            "hoodie.datasource.write.recordkey.field": ERROR_ID,
            "hoodie.datasource.write.partitionpath.field": ERROR_DATE,
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.precombine.field": ERROR_TIME,
            # A batch retried on another day must find its errors under yesterday's partition.
            "hoodie.index.type": "GLOBAL_SIMPLE",
        })
