"""Hudi's meta columns: the one definition every reader, writer and job uses (hudi-rs ``MetaField``).

Every base file and data log block starts with these five string columns; the operation column
is written only when ``hoodie.allow.operation.metadata.field`` is on (merge-on-read, CDC).
"""
from __future__ import annotations

import pyarrow as pa

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_FIELDS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
OPERATION_FIELD = "_hoodie_operation"   # never part of the data schema

META_SCHEMA = [pa.field(name, pa.string()) for name in META_FIELDS]


def without_meta_fields(schema: pa.Schema) -> pa.Schema:
    """The data columns of a schema that may carry the meta columns (a table's, a query's)."""
    return pa.schema([f for f in schema if f.name not in META_FIELDS])
