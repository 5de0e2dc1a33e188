"""The contract every source keeps: given the last checkpoint, return the next batch and the
checkpoint that follows it, without losing or repeating a record.

A source never commits anything. The streamer writes the batch and stores ``Batch.checkpoint`` in
the same commit (``deltastreamer.checkpoint.key``), so a batch that fails or is killed is fetched
again from the old checkpoint on the next run.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

# Columns of the records a source could not turn into rows (they go to the error table).
RAW_RECORD = "raw_record"          # the record as received (text, or base64 of binary payloads)
REASON = "reason"                  # an ErrorReason name
MESSAGE = "message"                # what was wrong, for a person
SOURCE_POSITION = "source_position"  # where it came from: "file:<path>", "kafka:<topic>/<p>@<offset>", ...
ERROR_SCHEMA = StructType([StructField(RAW_RECORD, StringType()), StructField(REASON, StringType()),
                           StructField(MESSAGE, StringType()), StructField(SOURCE_POSITION, StringType())])


class ErrorReason(str, Enum):
    """Why a record went to the error table; Hudi's ErrorEvent reasons plus quality rules."""
    JSON_ROW_DESERIALIZATION_FAILURE = "JSON_ROW_DESERIALIZATION_FAILURE"
    AVRO_DESERIALIZATION_FAILURE = "AVRO_DESERIALIZATION_FAILURE"
    CSV_ROW_DESERIALIZATION_FAILURE = "CSV_ROW_DESERIALIZATION_FAILURE"
    INVALID_RECORD_SCHEMA = "INVALID_RECORD_SCHEMA"
    CUSTOM_TRANSFORMER_FAILURE = "CUSTOM_TRANSFORMER_FAILURE"
    RECORD_CREATION = "RECORD_CREATION"           # e.g. the record key or partition field is null
    QUALITY_RULE_FAILURE = "QUALITY_RULE_FAILURE"


@dataclass(frozen=True)
class Batch:
    """One fetch. ``data`` holds good rows in the source's schema, ``errors`` rows of ERROR_SCHEMA;
    either may be None when empty. ``checkpoint`` is where the next fetch starts (None: the source
    has never produced anything). ``lag_records``/``lag_seconds``: what is still waiting upstream
    after this batch, when the source can tell."""
    data: DataFrame | None
    checkpoint: str | None
    errors: DataFrame | None = None
    lag_records: int | None = None
    lag_seconds: float | None = None
    position: str = ""             # a short human description of the range fetched, for progress lines
    # Reading ``data`` again fetches and parses nothing (the source holds the batch in Spark's cache,
    # or it is immutable files Spark reads cheaply), so the streamer need not cache it for its count.
    stable: bool = False


class Source(Protocol):
    """Built from the job's merged ``hoodie.*`` properties (plain strings)."""

    def __init__(self, props: Mapping[str, str]) -> None: ...

    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        """The next batch after ``checkpoint``, at most about ``limit`` units (bytes for files,
        events for Kafka, instants for Hudi-incremental; ``limit`` <= 0 means the source's own
        default). Must be deterministic: the same checkpoint and limit give the same records while
        the upstream keeps them."""
        ...
