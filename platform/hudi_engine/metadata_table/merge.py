"""Combining the values one key has in a base file and later log blocks, as ``HoodieMetadataPayload``.

``preCombine(older)`` on the newer value, per partition type (``MetadataPartitionType``):

* a newer :class:`~.records.Delete` wins; a value after a delete starts afresh;
* ``files`` (file lists and ``__all_partitions__``): the union of both maps, the newer entry of a
  name taking precedence. A newer deletion of a name the older map lists removes it (tombstone and
  all); a deletion of a name the older map does not list is kept as a tombstone, so that it still
  removes the file when merged onto an older base file; a newer addition keeps the larger size
  (also re-adding a deleted name). A file-list addition must have a size > 0;
* ``column_stats`` / ``partition_stats``: if either side is a tombstone (``isDeleted``), or the
  newer range is a tight bound, the newer wins; otherwise min of mins, max of maxes, counts and
  sizes summed, names and flags from the newer;
* ``bloom_filters``, ``record_index``, secondary index and anything else: the newer wins.

Tombstone records of column stats and bloom filters survive merging (as Hudi keeps them when it
reads them from storage); :func:`is_live` says whether a reader should see a merged value.
"""
from __future__ import annotations

from typing import Iterable

from . import keys as k
from .records import Delete, default_map_capacity, java_map_order, table_size_for
from .values import DATE_W, DECIMAL_W, LOCAL_DATE_W, TIMESTAMP_MICROS_W, VALUE_TYPES, ValueType, unwrap, wrap

Value = dict | Delete | None


def combine(older: Value, newer: Value) -> Value:
    """The value of a key after ``newer`` is applied on ``older`` (``None`` = no value)."""
    if newer is None:
        return older
    if older is None or isinstance(newer, Delete) or isinstance(older, Delete):
        return newer
    if older["type"] != newer["type"]:
        raise ValueError(f"cannot combine record type {older['type']} with {newer['type']}")
    if older["key"] and newer["key"] and older["key"] != newer["key"]:
        raise ValueError(f"cannot combine {older['key']} with {newer['key']} as the keys differ")
    record_type = newer["type"]
    if record_type in (k.FILES.record_type, k.ALL_PARTITIONS.record_type):
        return {**newer, "filesystemMetadata": combine_file_listings(older, newer)}
    if record_type in (k.COLUMN_STATS.record_type, k.PARTITION_STATS.record_type):
        return {**newer, "ColumnStatsMetadata": combine_column_stats(older["ColumnStatsMetadata"],
                                                                     newer["ColumnStatsMetadata"])}
    return newer


def merge(values: Iterable[Value]) -> Value:
    """Fold a key's values oldest first (base file, then log blocks in order)."""
    result: Value = None
    for value in values:
        result = combine(result, value)
    return result


def combine_file_listings(older: dict, newer: dict) -> dict:
    """``combineFileSystemMetadata`` (entries in the iteration order of Hudi's resulting HashMap)."""
    combined = dict(older["filesystemMetadata"] or {})
    # new HashMap<>() then putAll(older): sized for the older map, doubling past a 0.75 load
    capacity = table_size_for(int(len(combined) / 0.75 + 1.0)) if combined else 16
    size = len(combined)
    listing = newer["filesystemMetadata"] or {}
    if newer["type"] == k.FILES.record_type:
        for name, info in listing.items():
            if not info["isDeleted"] and info["size"] <= 0:
                raise ValueError(f"existing files should have size > 0: {name}")
    for name, info in listing.items():
        previous = combined.get(name)
        if previous is None:
            combined[name] = info
            size += 1
            capacity = default_map_capacity(size, capacity)
        elif info["isDeleted"]:
            if previous["isDeleted"]:
                combined[name] = info                  # deleted twice: the tombstone stays
            else:
                del combined[name]
                size -= 1
        else:
            combined[name] = {"size": max(info["size"], previous["size"]), "isDeleted": False}
    return java_map_order(combined.items(), capacity)


def combine_column_stats(older: dict, newer: dict) -> dict:
    """``mergeColumnStatsRecords``: the union of two ranges of one column."""
    if older["columnName"] != newer["columnName"]:
        raise ValueError(f"cannot merge stats of {older['columnName']} with {newer['columnName']}")
    if newer["isDeleted"] or older["isDeleted"] or newer.get("isTightBound"):
        return newer
    vt_avro = newer.get("valueType") or older.get("valueType")
    mins = [v for v in (unwrap(older["minValue"], older.get("valueType")),
                        unwrap(newer["minValue"], newer.get("valueType"))) if v is not None]
    maxs = [v for v in (unwrap(older["maxValue"], older.get("valueType")),
                        unwrap(newer["maxValue"], newer.get("valueType"))) if v is not None]
    return {**newer,
            "minValue": _rewrap(min(mins) if mins else None, newer["minValue"] or older["minValue"], vt_avro),
            "maxValue": _rewrap(max(maxs) if maxs else None, newer["maxValue"] or older["maxValue"], vt_avro),
            "valueCount": _sum(older["valueCount"], newer["valueCount"]),
            "nullCount": _sum(older["nullCount"], newer["nullCount"]),
            "totalSize": _sum(older["totalSize"], newer["totalSize"]),
            "totalUncompressedSize": _sum(older["totalUncompressedSize"], newer["totalUncompressedSize"])}


def _sum(a, b):
    return None if a is None or b is None else a + b


def _rewrap(value, like, vt_avro):
    """Wrap a merged value the way the inputs were wrapped."""
    if value is None:
        return None
    if vt_avro is not None and vt_avro.get("typeOrdinal", 0) > 1:
        return wrap(value, ValueType(VALUE_TYPES[vt_avro["typeOrdinal"]], vt_avro.get("additionalInfo")), 9)
    name, body = like
    if isinstance(body.get("value"), (bytes, int)) and not isinstance(value, (bytes, int)):
        # a logical value (date, decimal, timestamp) back into its V1 wrapper's primitive
        vt = {DATE_W: ValueType("DATE"), LOCAL_DATE_W: ValueType("DATE"),
              DECIMAL_W: ValueType("DECIMAL", "30,15"),
              TIMESTAMP_MICROS_W: ValueType("TIMESTAMP_MICROS")}.get(name)
        if vt is not None:
            return (name, {"value": wrap(value, vt, 9)[1]["value"]})
    return (name, {"value": value})


def is_live(value: Value) -> bool:
    """Whether a merged value is visible to readers: not a delete, not a column-stats, bloom-filter
    or secondary-index tombstone."""
    if value is None or isinstance(value, Delete):
        return False
    for member in ("ColumnStatsMetadata", "BloomFilterMetadata", "SecondaryIndexMetadata"):
        if value.get(member) is not None and value[member].get("isDeleted"):
            return False
    return True
