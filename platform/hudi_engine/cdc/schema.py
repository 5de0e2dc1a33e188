"""CDC names and schemas as Hudi defines them (HoodieCDCUtils, HoodieCDCOperation,
HoodieCDCSupplementalLoggingMode), so CDC blocks we write read back in Hudi and theirs in ours.

A CDC log file's records depend on the table's supplemental logging mode:

* ``OP_KEY_ONLY``: ``{op, record_key}``; readers look both images up in the file slices.
* ``DATA_BEFORE``: ``{op, record_key, before}``; readers look the after image up.
* ``DATA_BEFORE_AFTER``: ``{op, ts_ms, before, after}``; nothing else is read.

Images are full rows, meta columns included, so a CDC query's ``before``/``after`` are the same
whatever the mode: Hudi (up to 1.1) logs images without meta columns yet infers other cases with
them, so its output differs by mode (apache/hudi#14363). The CDC record layout is Hudi's; only
the image record carries the five ``_hoodie_*`` columns first, as the table's files do.
"""
from __future__ import annotations

import json
from enum import Enum
from typing import Any, Mapping

import pyarrow as pa

from ..schema.avro import add_meta_fields, to_json
from ..schema.meta_fields import COMMIT_TIME, OPERATION_FIELD

OP, TS_MS, BEFORE, AFTER, RECORD_KEY = "op", "ts_ms", "before", "after", "record_key"
INSERT, UPDATE, DELETE = "i", "u", "d"
# Appended to the write token of a CDC log file's name: ``.<fileId>_<instant>.log.<v>_<token>-cdc``.
CDC_SUFFIX = "-cdc"
# What an incremental query in CDC format returns (Debezium's layout; images as JSON text).
QUERY_SCHEMA = pa.schema([pa.field(OP, pa.string()), pa.field(TS_MS, pa.string()),
                          pa.field(BEFORE, pa.string()), pa.field(AFTER, pa.string())])
# Never part of an image: the per-record operation column of Hudi 1.x tables.
NOT_IMAGED = frozenset((OPERATION_FIELD,))

# HoodieCDCUtils.CDC_SCHEMA_OP_AND_RECORDKEY_STRING: a literal, so unlike the other two modes'
# schemas its unions put "null" last and its fields have neither doc nor default.
_OP_KEY_SCHEMA = {"type": "record", "name": "Record", "fields": [
    {"name": OP, "type": ["string", "null"]}, {"name": RECORD_KEY, "type": ["string", "null"]}]}


class LoggingMode(Enum):
    """``hoodie.table.cdc.supplemental.logging.mode``: how much a CDC log file keeps."""
    OP_KEY_ONLY = "OP_KEY_ONLY"
    DATA_BEFORE = "DATA_BEFORE"
    DATA_BEFORE_AFTER = "DATA_BEFORE_AFTER"

    @classmethod
    def parse(cls, value: str) -> "LoggingMode":
        """The table property's value; Hudi upper-cases it before ``valueOf``."""
        return cls(value.strip().upper())


def data_avro_schema(table_avro: Mapping[str, Any] | str) -> dict:
    """The schema of CDC images: the table's writer schema with its meta fields (the footer
    schema; a commit schema gets them added)."""
    src = json.loads(table_avro) if isinstance(table_avro, str) else dict(table_avro)
    if not any(f["name"] == COMMIT_TIME for f in src["fields"]):
        src = add_meta_fields(src)
    return {**src, "fields": [f for f in src["fields"] if f["name"] not in NOT_IMAGED]}


def cdc_avro_schema(mode: LoggingMode, table_avro: Mapping[str, Any] | str) -> dict:
    """The Avro schema of CDC records (HoodieCDCUtils.schemaBySupplementalLoggingMode): a record
    ``CDC`` without namespace whose fields are nullable strings and nullable images, each with
    ``"doc": ""`` and a null default. The second image refers to the first by full name, as
    Avro prints a named type it has already written."""
    if mode is LoggingMode.OP_KEY_ONLY:
        return _OP_KEY_SCHEMA
    image = data_avro_schema(table_avro)
    name = image["name"] if "." in image["name"] or not image.get("namespace") \
        else f"{image['namespace']}.{image['name']}"
    fields = [_field(OP, "string"), _field(RECORD_KEY, "string"), _field(BEFORE, image)]
    if mode is LoggingMode.DATA_BEFORE_AFTER:
        fields = [_field(OP, "string"), _field(TS_MS, "string"), _field(BEFORE, image),
                  _field(AFTER, name)]
    return {"type": "record", "name": "CDC", "fields": fields}


def cdc_schema_json(mode: LoggingMode, table_avro: Mapping[str, Any] | str) -> str:
    """The schema text a CDC block's header carries (Avro's ``Schema.toString()``)."""
    return to_json(cdc_avro_schema(mode, table_avro))


def _field(name: str, avro_type: Any) -> dict:
    return {"name": name, "type": ["null", avro_type], "doc": "", "default": None}
