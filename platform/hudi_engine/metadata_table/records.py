"""Build, parse, encode and decode ``HoodieMetadataRecord`` values, as ``HoodieMetadataPayload`` does.

A record is the plain dict fastavro reads and writes (field names as in the schema; wrapped
column-stats values as ``(wrapper name, {"value": v})`` union tuples). A *delete* of a whole key
(a partition dropped from ``files``, a record key gone from ``record_index``) is not a record but a
:class:`Delete`: Hudi writes those keys to a log delete block, and a delete hides older values.

Values in Hudi's HFiles and HFile log blocks are schemaless Avro with the ``_hoodie_*`` meta
columns in front and ``key`` emptied (the HFile key holds it); :func:`encode` writes that layout by
default and :func:`decode` puts ``key`` back from the HFile key when given.
"""
from __future__ import annotations

import datetime as _dt
import io
import json
import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping
from zoneinfo import ZoneInfo

import fastavro
import pyarrow as pa

from ..timeline.instant import parse_instant_time
from . import keys as k
from .schema import LATEST_TABLE_VERSION, META_FIELDS, parsed_schema, without_logical_types
from .values import VALUE_TYPES, ValueType, unwrap, value_type_of, wrap

FILE_ID_ENCODING_UUID, FILE_ID_ENCODING_RAW = 0, 1
MISSING_FILE_INDEX = -1
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(frozen=True)
class Delete:
    """A deleted key (Hudi: an empty payload, written to a log delete block). ``partition`` is the
    data partition, kept for the partitioned record index."""
    key: str
    partition: str | None = None


def _record(key: str, record_type: int, **members) -> dict:
    return {"key": key, "type": record_type, "filesystemMetadata": None, "BloomFilterMetadata": None,
            "ColumnStatsMetadata": None, "recordIndexMetadata": None, "SecondaryIndexMetadata": None,
            **members}


# --- files partition ----------------------------------------------------------------------------
# Hudi fills the files maps into java.util.HashMaps and Avro writes them in the map's iteration
# order: by bucket (the spread String.hashCode masked by the table size), insertion order within a
# bucket. Ordering the dicts the same way makes the encoded bytes Hudi's.

def table_size_for(n: int) -> int:
    """``HashMap.tableSizeFor``: the power of two >= ``n`` (at least 1)."""
    size = 1
    while size < n:
        size *= 2
    return size


def java_map_order(items: Iterable[tuple[str, object]], capacity: int) -> dict:
    """``items`` (insertion order; a repeated key keeps its place) as a HashMap of ``capacity``
    buckets iterates them."""
    entries = dict(items)

    def bucket(key: str) -> int:
        h = k.java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    order = sorted(enumerate(entries), key=lambda pair: (bucket(pair[1]), pair[0]))
    return {key: entries[key] for _, key in order}


def default_map_capacity(size: int, capacity: int = 16) -> int:
    """Buckets of a ``new HashMap<>()`` (or one that started at ``capacity``) after ``size`` puts."""
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity



def partition_list_record(partitions: Iterable[str], is_deleted: bool = False) -> dict:
    """``createPartitionListRecord``: the ``__all_partitions__`` record naming (or, with
    ``is_deleted``, dropping) data partitions; each maps to ``{size: 0, isDeleted}``."""
    listing = {k.partition_identifier(p): {"size": 0, "isDeleted": is_deleted} for p in partitions}
    listing = java_map_order(listing.items(), default_map_capacity(len(listing)))
    return _record(k.ALL_PARTITIONS_KEY, k.ALL_PARTITIONS.record_type, filesystemMetadata=listing)


def files_record(partition: str, added: Mapping[str, int] | None = None,
                 deleted: Iterable[str] = ()) -> dict:
    """``createPartitionFilesRecord``: files added to (name -> size in bytes) and deleted from one
    data partition; a deletion wins over an addition of the same name, as in Hudi's map."""
    listing = {name: {"size": int(size), "isDeleted": False} for name, size in (added or {}).items()}
    listing.update({name: {"size": 0, "isDeleted": True} for name in deleted})
    listing = java_map_order(listing.items(), table_size_for(len(listing)))     # new HashMap<>(size, 1)
    return _record(k.files_key(partition), k.FILES.record_type, filesystemMetadata=listing)


def files_partition_delete(partition: str) -> Delete:
    """A dropped data partition: its file-list record is deleted."""
    return Delete(k.files_key(partition))


def partitions_of(record: dict) -> list[str]:
    """Relative paths of the partitions an ``__all_partitions__`` record lists (sorted)."""
    return sorted(k.partition_path_of_identifier(p) for p, info in (record["filesystemMetadata"] or {}).items()
                  if not info["isDeleted"])


def files_of(record: dict) -> dict[str, int]:
    """``getFileList``: file name -> size of the files a file-list record holds (not deleted)."""
    return {name: info["size"] for name, info in sorted((record["filesystemMetadata"] or {}).items())
            if not info["isDeleted"]}


def deleted_files_of(record: dict) -> list[str]:
    """``getDeletions``: the names a file-list record marks deleted (sorted)."""
    return sorted(name for name, info in (record["filesystemMetadata"] or {}).items() if info["isDeleted"])


# --- column stats --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ColumnStats:
    """One column's statistics in one file, values as Python objects."""
    file_name: str
    column_name: str
    min_value: object
    max_value: object
    null_count: int | None
    value_count: int | None
    total_size: int | None
    total_uncompressed_size: int | None
    is_deleted: bool
    is_tight_bound: bool = False
    value_type: ValueType | None = None


def column_stats_record(partition: str, file_name: str, column: str, *, arrow_type: pa.DataType,
                        min_value=None, max_value=None, null_count: int = 0, value_count: int = 0,
                        total_size: int = 0, total_uncompressed_size: int = 0, is_deleted: bool = False,
                        is_tight_bound: bool = False, table_version: int = LATEST_TABLE_VERSION) -> dict:
    """``createColumnStatsRecords``: one column's range in one data file (the file's name only).
    ``arrow_type`` (the column's type) picks the wrapper and, for table version 9, ``valueType``."""
    vt = value_type_of(arrow_type)
    stats = {"fileName": file_name.rsplit("/", 1)[-1], "columnName": column,
             "minValue": wrap(min_value, vt, table_version), "maxValue": wrap(max_value, vt, table_version),
             "valueCount": value_count, "nullCount": null_count, "totalSize": total_size,
             "totalUncompressedSize": total_uncompressed_size, "isDeleted": is_deleted,
             "isTightBound": is_tight_bound}
    if table_version >= 9:
        stats["valueType"] = vt.as_avro()
    return _record(k.column_stats_key(column, partition, file_name), k.COLUMN_STATS.record_type,
                   ColumnStatsMetadata=stats)


def column_stats_tombstone(partition: str, file_name: str, column: str,
                           table_version: int = LATEST_TABLE_VERSION) -> dict:
    """A deleted file's entry (Hudi's stub range: no min/max, counts -1, ``isDeleted``)."""
    stats = {"fileName": file_name.rsplit("/", 1)[-1], "columnName": column, "minValue": None,
             "maxValue": None, "valueCount": -1, "nullCount": -1, "totalSize": -1,
             "totalUncompressedSize": -1, "isDeleted": True, "isTightBound": False}
    if table_version >= 9:
        stats["valueType"] = None
    return _record(k.column_stats_key(column, partition, file_name), k.COLUMN_STATS.record_type,
                   ColumnStatsMetadata=stats)


def column_stats_of(record: dict) -> ColumnStats:
    """The column stats a column-stats (or partition-stats) record holds."""
    s = record["ColumnStatsMetadata"]
    vt_avro = s.get("valueType")
    vt = None
    if vt_avro is not None:
        vt = ValueType(VALUE_TYPES[vt_avro["typeOrdinal"]], vt_avro.get("additionalInfo"))
    return ColumnStats(s["fileName"], s["columnName"], unwrap(s["minValue"], vt_avro), unwrap(s["maxValue"], vt_avro),
                       s["nullCount"], s["valueCount"], s["totalSize"], s["totalUncompressedSize"],
                       s["isDeleted"], s.get("isTightBound", False), vt)


# --- bloom filters -------------------------------------------------------------------------------

@dataclass(frozen=True)
class BloomFilterInfo:
    type: str
    timestamp: str
    bloom_filter: bytes
    is_deleted: bool

    @property
    def serialized(self) -> str:
        """The filter as the Base64 string Hudi's ``BloomFilterFactory.fromString`` takes."""
        return self.bloom_filter.decode("utf-8")


def bloom_filter_record(partition: str, file_name: str, instant_time: str, bloom_filter: bytes | str,
                        bloom_type: str = "DYNAMIC_V0", is_deleted: bool = False) -> dict:
    """``createBloomFilterMetadataRecord``: a base file's bloom filter. Hudi stores the UTF-8 bytes
    of the filter's serialized (Base64) string, the same string a Parquet footer carries."""
    if "/" in file_name:
        raise ValueError(f"invalid base file {file_name!r} for a bloom filter record")
    data = bloom_filter.encode("utf-8") if isinstance(bloom_filter, str) else bytes(bloom_filter)
    return _record(k.bloom_filter_key(partition, file_name), k.BLOOM_FILTERS.record_type,
                   BloomFilterMetadata={"type": bloom_type, "timestamp": instant_time, "bloomFilter": data,
                                        "isDeleted": is_deleted})


def bloom_filter_tombstone(partition: str, file_name: str, instant_time: str) -> dict:
    """A deleted base file's entry: empty type and filter, ``isDeleted``."""
    return bloom_filter_record(partition, file_name, instant_time, b"", "", is_deleted=True)


def bloom_filter_of(record: dict) -> BloomFilterInfo:
    b = record["BloomFilterMetadata"]
    return BloomFilterInfo(b["type"], b["timestamp"], bytes(b["bloomFilter"]), b["isDeleted"])


# --- record index --------------------------------------------------------------------------------

@dataclass(frozen=True)
class RecordLocation:
    """Where a record key lives: ``HoodieRecordGlobalLocation``."""
    partition: str
    file_id: str
    instant_time: str
    position: int | None = None


def _zone(tz):
    if tz is None:
        return None
    return ZoneInfo(tz) if isinstance(tz, str) else tz


def instant_to_epoch_millis(instant_time: str, tz=None) -> int:
    """``HoodieInstantTimeGenerator.parseDateFromInstantTime(...).getTime()``: the instant read in the
    commit time zone (``tz``: a zone or its name; ``None`` = this machine's zone, as Hudi's LOCAL).
    A second-granularity instant gets ``999`` ms; longer instants are cut to milliseconds."""
    ts = instant_time + "999" if len(instant_time) == 14 else instant_time[:17]
    moment = parse_instant_time(ts)
    zone = _zone(tz)
    aware = moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()
    delta = aware - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def epoch_millis_to_instant(millis: int, tz=None) -> str:
    """``HoodieInstantTimeGenerator.formatDate``: epoch millis to ``yyyyMMddHHmmssSSS`` in ``tz``."""
    moment = _EPOCH + _dt.timedelta(milliseconds=millis)
    zone = _zone(tz)
    local = moment.astimezone(zone) if zone is not None else moment.astimezone()
    return local.strftime("%Y%m%d%H%M%S") + f"{local.microsecond // 1000:03d}"


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def record_index_record(record_key: str, partition: str, file_id: str, instant_time: str, *,
                        tz=None, raw_file_id: bool = False, position: int | None = None) -> dict:
    """``createRecordIndexUpdate``: ``record_key`` lives in file group ``file_id`` of ``partition``
    since ``instant_time``. A ``<uuid>-<n>`` (or bare uuid) file id is stored as its UUID's high
    and low signed 64-bit halves plus ``n`` (-1 for a bare uuid), encoding 0; ``raw_file_id``
    stores the string (encoding 1). The instant is kept as epoch millis in the commit zone ``tz``."""
    millis = instant_to_epoch_millis(instant_time, tz)
    if raw_file_id:
        info = {"partitionName": partition, "fileIdHighBits": -1, "fileIdLowBits": -1, "fileIndex": -1,
                "fileId": file_id, "instantTime": millis, "fileIdEncoding": FILE_ID_ENCODING_RAW,
                "position": position}
    else:
        try:
            if len(file_id) == 36:
                u, index = uuid.UUID(file_id), MISSING_FILE_INDEX
            else:
                head, _, tail = file_id.rpartition("-")
                u, index = uuid.UUID(head), int(tail)
        except ValueError:
            raise ValueError(f"invalid UUID or index: fileID={file_id}, partition={partition}, "
                             f"instantTime={instant_time}") from None
        info = {"partitionName": partition, "fileIdHighBits": _signed64(u.int >> 64),
                "fileIdLowBits": _signed64(u.int & ((1 << 64) - 1)), "fileIndex": index, "fileId": "",
                "instantTime": millis, "fileIdEncoding": FILE_ID_ENCODING_UUID, "position": position}
    return _record(record_key, k.RECORD_INDEX.record_type, recordIndexMetadata=info)


def record_index_delete(record_key: str, partition: str | None = None) -> Delete:
    """``createRecordIndexDelete``: the key no longer exists (partition kept for partitioned RLI)."""
    return Delete(record_key, partition)


def record_location_of(record: dict, tz=None) -> RecordLocation:
    """``getLocationFromRecordIndexInfo``: the location a record-index record holds."""
    info = record["recordIndexMetadata"]
    if info.get("fileIdEncoding", 0) == FILE_ID_ENCODING_UUID:
        u = uuid.UUID(int=((info["fileIdHighBits"] & ((1 << 64) - 1)) << 64) | (info["fileIdLowBits"] & ((1 << 64) - 1)))
        file_id = str(u) if info["fileIndex"] == MISSING_FILE_INDEX else f"{u}-{info['fileIndex']}"
    else:
        file_id = info["fileId"]
    return RecordLocation(info["partitionName"], file_id, epoch_millis_to_instant(info["instantTime"], tz),
                          info.get("position"))


# --- partition stats and secondary index -----------------------------------------------------------

def partition_stats_record(partition: str, column: str, *, arrow_type: pa.DataType, min_value=None,
                           max_value=None, null_count: int = 0, value_count: int = 0, total_size: int = 0,
                           total_uncompressed_size: int = 0, is_deleted: bool = False,
                           is_tight_bound: bool = False, table_version: int = LATEST_TABLE_VERSION,
                           key_prefix: str | None = None) -> dict:
    """``createPartitionStatsRecords``: one column's range over a whole data partition (``fileName``
    holds the partition path; ``key_prefix``: an expression index's, which keeps them beside its
    file records)."""
    record = column_stats_record(partition, partition or ".", column, arrow_type=arrow_type, min_value=min_value,
                                 max_value=max_value, null_count=null_count, value_count=value_count,
                                 total_size=total_size, total_uncompressed_size=total_uncompressed_size,
                                 is_deleted=is_deleted, is_tight_bound=is_tight_bound, table_version=table_version)
    record["ColumnStatsMetadata"]["fileName"] = partition
    return {**record, "key": k.partition_stats_key(partition, column, key_prefix), "type": k.PARTITION_STATS.record_type}


def partition_stats_tombstone(partition: str, column: str, table_version: int = LATEST_TABLE_VERSION,
                              key_prefix: str | None = None) -> dict:
    """A column of a dropped (or no longer boundable) partition: Hudi's stub range, deleted and tight."""
    record = column_stats_tombstone(partition, partition or ".", column, table_version)
    record["ColumnStatsMetadata"].update(fileName=partition, isTightBound=True)
    return {**record, "key": k.partition_stats_key(partition, column, key_prefix), "type": k.PARTITION_STATS.record_type}


def secondary_index_record(secondary_key: str | None, record_key: str, is_deleted: bool = False) -> dict:
    """``createSecondaryIndexRecord``: key ``<secondary key>$<record key>`` (escaped)."""
    return _record(k.secondary_index_key(secondary_key, record_key), k.SECONDARY_INDEX.record_type,
                   SecondaryIndexMetadata={"isDeleted": is_deleted})


# --- encoding ------------------------------------------------------------------------------------

def encode(record: dict, *, table_version: int = LATEST_TABLE_VERSION, meta_fields: bool = True,
           keep_key: bool = False, meta: Mapping[str, str] | None = None) -> bytes:
    """Schemaless Avro of ``record`` as Hudi stores HFile values: with the ``_hoodie_*`` columns
    (null, or as ``meta`` gives them: Hudi's base files set ``_hoodie_file_name``) and an empty
    ``key`` unless told otherwise."""
    out = io.BytesIO()
    value = dict(record) if keep_key else {**record, "key": ""}
    if meta:
        unknown = set(meta) - set(META_FIELDS)
        if unknown or not meta_fields:
            raise ValueError(f"not meta columns of this layout: {sorted(unknown) or sorted(meta)}")
        value.update(meta)
    fastavro.schemaless_writer(out, parsed_schema(table_version, meta_fields), value)
    return out.getvalue()


@lru_cache(maxsize=64)
def _parsed_json(text: str):
    return fastavro.parse_schema(without_logical_types(json.loads(text)))


def decode(data: bytes, writer_schema=None, key: str | None = None) -> dict:
    """A record back from :func:`encode`'s bytes, or from Hudi's: ``writer_schema`` is the schema the
    bytes were written with (a dict, JSON text, or ``None`` for :func:`encode`'s default), ``key``
    the HFile key to restore an emptied ``key``. Meta columns are dropped; fields a 1.0 writer
    lacked come back with their defaults."""
    if writer_schema is None:
        writer = parsed_schema(LATEST_TABLE_VERSION, True, logical=False)
    elif isinstance(writer_schema, (str, bytes)):
        writer = _parsed_json(writer_schema if isinstance(writer_schema, str) else writer_schema.decode("utf-8"))
    else:
        writer = fastavro.parse_schema(without_logical_types(writer_schema))
    record = fastavro.schemaless_reader(io.BytesIO(data), writer, parsed_schema(LATEST_TABLE_VERSION, False, logical=False),
                                        return_record_name=True, return_record_name_override=True)
    for name in META_FIELDS:
        record.pop(name, None)
    if key is not None and not record["key"]:
        record["key"] = key
    return record
