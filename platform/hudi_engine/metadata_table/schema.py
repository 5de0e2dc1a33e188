"""``HoodieMetadataRecord``: the Avro schema of every value in the metadata table's HFiles and logs.

Shape as in Hudi's ``hudi-common/src/main/avro/HoodieMetadata.avsc`` (namespace
``org.apache.hudi.avro.model``): one record type for all partitions, told apart by ``type``, with one
optional member per partition (files map, bloom filter, column stats, record index, secondary
index). Column-stats min/max values sit in one-field "wrapper" records so that a union can hold
any primitive.

Two releases matter for what is on disk:

* table version 8 (Hudi 1.0): no ``ArrayWrapper`` and no ``valueType`` in column stats;
* table version 9 (Hudi 1.1): adds ``ArrayWrapper`` (to min/max) and ``valueType``
  (``HoodieValueTypeInfo``: the logical type of min/max), both with defaults so 1.0 data resolves.

Hudi writes base-file and log values with the five ``_hoodie_*`` meta columns in front (only
``_hoodie_file_name`` filled, in base files) and the ``key`` field emptied (the HFile key holds it);
:func:`metadata_record_schema` builds either layout.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import fastavro

from ..schema.meta_fields import META_FIELDS

NAMESPACE = "org.apache.hudi.avro.model"
RECORD_NAME = "HoodieMetadataRecord"
FULL_NAME = f"{NAMESPACE}.{RECORD_NAME}"
LATEST_TABLE_VERSION = 9


def _wrapper(name: str, value_type, what: str) -> dict:
    return {"namespace": NAMESPACE, "type": "record", "name": name,
            "doc": f"A record wrapping {what} to be able to be used it w/in Avro's Union",
            "fields": [{"type": value_type, "name": "value"}]}


# The wrappers in union order; the order is the on-disk union index, so it must not change.
_WRAPPERS = [
    _wrapper("BooleanWrapper", "boolean", "boolean type"),
    _wrapper("IntWrapper", "int", "int type"),
    _wrapper("LongWrapper", "long", "long type"),
    _wrapper("FloatWrapper", "float", "float type"),
    _wrapper("DoubleWrapper", "double", "double type"),
    _wrapper("BytesWrapper", "bytes", "bytes type"),
    _wrapper("StringWrapper", "string", "string type"),
    _wrapper("DateWrapper", {"type": "int"}, "Date logical type"),
    _wrapper("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
             "Decimal logical type"),
    _wrapper("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}, "Time-micros logical type"),
    _wrapper("TimestampMicrosWrapper", {"type": "long"}, "Timestamp-micros logical type"),
    _wrapper("LocalDateWrapper", {"type": "int"}, "Local Date type"),
]
WRAPPER_NAMES = tuple(f"{NAMESPACE}.{w['name']}" for w in _WRAPPERS)
ARRAY_WRAPPER = f"{NAMESPACE}.ArrayWrapper"

_ARRAY_WRAPPER = {
    "namespace": NAMESPACE, "type": "record", "name": "ArrayWrapper",
    "doc": "A record containing a list of wrapped values.",
    "fields": [{"name": "wrappedValues",
                "doc": "An array where each element is one of the supported wrapper types.",
                "type": ["null", {"type": "array", "items": ["null", *WRAPPER_NAMES]}],
                "default": None}]}


def _column_stats(table_version: int) -> dict:
    with_arrays = table_version >= 9
    min_union = ["null", *copy.deepcopy(_WRAPPERS)] + ([_ARRAY_WRAPPER] if with_arrays else [])
    max_union = ["null", *WRAPPER_NAMES] + ([ARRAY_WRAPPER] if with_arrays else [])
    fields = [
        {"doc": "File name for which this column statistics applies", "name": "fileName",
         "type": ["null", "string"], "default": None},
        {"doc": "Column name for which this column statistics applies", "name": "columnName",
         "type": ["null", "string"], "default": None},
        {"doc": "Minimum value in the range. Based on user data table schema, we can convert this to "
                "appropriate type", "name": "minValue", "type": min_union, "default": None},
        {"doc": "Maximum value in the range. Based on user data table schema, we can convert it to "
                "appropriate type", "name": "maxValue", "type": max_union, "default": None},
        {"doc": "Total count of values", "name": "valueCount", "type": ["null", "long"], "default": None},
        {"doc": "Total count of null values", "name": "nullCount", "type": ["null", "long"], "default": None},
        {"doc": "Total storage size on disk", "name": "totalSize", "type": ["null", "long"], "default": None},
        {"doc": "Total uncompressed storage size on disk", "name": "totalUncompressedSize",
         "type": ["null", "long"], "default": None},
        {"doc": "Column range entry valid/deleted flag", "name": "isDeleted", "type": "boolean"},
        {"doc": "Whether the min/max range of a column is tight bound or not", "name": "isTightBound",
         "type": "boolean", "default": False},
    ]
    if with_arrays:
        fields.append({
            "doc": "Value type information containing enum ordinal and optional additional information",
            "name": "valueType",
            "type": ["null", {"type": "record", "name": "HoodieValueTypeInfo", "namespace": NAMESPACE,
                              "fields": [
                                  {"doc": "Enum type ordinal representing the value type",
                                   "name": "typeOrdinal", "type": "int"},
                                  {"doc": "Optional additional information about the value type",
                                   "name": "additionalInfo", "type": ["null", "string"], "default": None}]}],
            "default": None})
    return {"doc": "Data file column statistics", "name": "HoodieMetadataColumnStats", "type": "record",
            "fields": fields}


def _record_index() -> dict:
    layout = ("\nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and "
              "fileIndex). \nFileID format is {UUID}-{fileIndex}.")
    return {"type": "record", "name": "HoodieRecordIndexInfo", "fields": [
        {"name": "partitionName", "type": ["null", "string"], "default": None,
         "doc": "Refers to the partition name the record belongs to"},
        {"name": "fileIdHighBits", "type": ["null", "long"], "default": None,
         "doc": "Refers to high 64 bits if the fileId is based on UUID format. " + layout},
        {"name": "fileIdLowBits", "type": ["null", "long"], "default": None,
         "doc": "Refers to low 64 bits if the fileId is based on UUID format. " + layout},
        {"name": "fileIndex", "type": ["null", "int"], "default": None,
         "doc": "Index representing file index which is used to re-construct UUID based fileID. "
                "Applicable when the fileId is based on UUID format. " + layout},
        {"name": "fileId", "type": ["null", "string"], "default": None,
         "doc": "Represents fileId of the location where record belongs to. When the encoding is 1, "
                "fileID is stored in raw string format."},
        {"name": "instantTime", "type": ["null", "long"], "default": None,
         "doc": "Epoch time in millisecond representing the commit time at which record was added"},
        {"name": "fileIdEncoding", "type": "int", "default": 0,
         "doc": "Represents fileId encoding. Possible values are 0 and 1. O represents UUID based fileID, "
                "and 1 represents raw string format of the fileId. \nWhen the encoding is 0, reader can "
                "deduce fileID from fileIdLowBits, fileIdHighBits and fileIndex."},
        {"name": "position", "type": ["null", "long"], "default": None,
         "doc": "Represents position of record within a file group for easier access. It will be used "
                "for index lookup."},
    ]}


def _build(table_version: int, meta_fields: bool) -> dict:
    fields = [{"name": name, "type": ["null", "string"], "doc": "", "default": None}
              for name in META_FIELDS] if meta_fields else []
    fields += [
        {"name": "key", "type": "string"},
        {"name": "type", "doc": "Type of the metadata record", "type": "int"},
        {"doc": "Contains information about partitions and files within the dataset",
         "name": "filesystemMetadata",
         "type": ["null", {"type": "map", "values": {
             "type": "record", "name": "HoodieMetadataFileInfo", "fields": [
                 {"name": "size", "type": "long", "doc": "Size of the file"},
                 {"name": "isDeleted", "type": "boolean", "doc": "True if this file has been deleted"}]}}]},
        {"doc": "Metadata Index of bloom filters for all data files in the user table",
         "name": "BloomFilterMetadata",
         "type": ["null", {"doc": "Data file bloom filter details", "name": "HoodieMetadataBloomFilter",
                           "type": "record", "fields": [
                               {"doc": "Bloom filter type code", "name": "type", "type": "string"},
                               {"doc": "Instant timestamp when this metadata was created/updated",
                                "name": "timestamp", "type": "string"},
                               {"doc": "Bloom filter binary byte array", "name": "bloomFilter", "type": "bytes"},
                               {"doc": "Bloom filter entry valid/deleted flag", "name": "isDeleted",
                                "type": "boolean"}]}],
         "default": None},
        {"doc": "Metadata Index of column statistics for all data files in the user table",
         "name": "ColumnStatsMetadata", "type": ["null", _column_stats(table_version)], "default": None},
        {"name": "recordIndexMetadata",
         "doc": "Metadata Index that contains information about record keys and their location in the dataset",
         "type": ["null", _record_index()], "default": None},
        {"name": "SecondaryIndexMetadata",
         "doc": "Metadata Index that contains information about secondary keys and the corresponding "
                "record keys in the dataset",
         "type": ["null", {"type": "record", "name": "HoodieSecondaryIndexInfo", "fields": [
             {"name": "isDeleted", "type": "boolean", "doc": "True if this entry has been deleted"}]}],
         "default": None},
    ]
    return {"namespace": NAMESPACE, "type": "record", "name": RECORD_NAME,
            "doc": "A record saved within the Metadata Table", "fields": fields}


def metadata_record_schema(table_version: int = LATEST_TABLE_VERSION, meta_fields: bool = False) -> dict:
    """The schema as a fresh dict (fastavro's ``parse_schema`` input); ``table_version`` 8 = Hudi 1.0,
    9 = Hudi 1.1. ``meta_fields`` puts the ``_hoodie_*`` columns in front, as Hudi's files carry them."""
    if table_version < 8:
        raise ValueError(f"metadata records of table version {table_version} are not supported (8 or 9)")
    return _build(min(table_version, LATEST_TABLE_VERSION), meta_fields)


def without_logical_types(schema):
    """A copy of a schema without ``logicalType`` annotations. Decoding through it keeps wrapper
    values as stored (decimal wrappers as bytes, time-micros as longs), as Hudi's generated Avro
    classes see them and as the builders produce them."""
    if isinstance(schema, dict):
        return {k: without_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [without_logical_types(v) for v in schema]
    return schema


@lru_cache(maxsize=None)
def parsed_schema(table_version: int = LATEST_TABLE_VERSION, meta_fields: bool = False, logical: bool = True):
    """:func:`metadata_record_schema`, parsed once by fastavro (``logical=False``: see
    :func:`without_logical_types`)."""
    plain = metadata_record_schema(table_version, meta_fields)
    return fastavro.parse_schema(plain if logical else without_logical_types(plain))


METADATA_RECORD_SCHEMA = metadata_record_schema()
