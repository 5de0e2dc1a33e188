"""Metadata-table records: schema, keys, builders/parsers, Avro encoding and merging, checked against
Hudi's algorithms (hash values independently computed or taken from the JVM and from tables Hudi
wrote)."""
import base64
import datetime as dt
import decimal
import hashlib
import json
import struct
import uuid
import zipfile

import fastavro
import pyarrow as pa
import pytest

from hudi_engine import config as C
from hudi_engine.metadata_table import hashing, keys, merge, records as R, schema, values
from tests.conftest import FIXTURES

V9_TABLE = "sample_table/cow/v9_txns_simple_meta.zip"
V8_TABLE = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
HUDI_SEED = -625288518          # HashID's 0xdabadaba as the Java int handed to lz4-java's XXHash


# --- schema --------------------------------------------------------------------------------------

def _schema_from_fixture_log(relative: str) -> dict:
    """The writer schema Hudi put in the header of a `files` log block of a fixture table."""
    with zipfile.ZipFile(FIXTURES / relative) as zf:
        for name in zf.namelist():
            if "/.hoodie/metadata/files/.files-" in name and ".log." in name and not name.startswith("__MACOSX"):
                data = zf.read(name)
                start = data.find(b'{"type":"record","name":"HoodieMetadataRecord"')
                if start < 0:
                    continue
                depth = 0
                for end in range(start, len(data)):
                    depth += {ord("{"): 1, ord("}"): -1}.get(data[end], 0)
                    if depth == 0:
                        return json.loads(data[start:end + 1])
    raise AssertionError(f"no metadata record schema in {relative}")


def test_schema_parses_with_hudis_full_names():
    parsed = fastavro.parse_schema(schema.metadata_record_schema())
    assert parsed["name"] == "org.apache.hudi.avro.model.HoodieMetadataRecord" == schema.FULL_NAME
    names = fastavro.schema.to_parsing_canonical_form(schema.METADATA_RECORD_SCHEMA)
    for full in ("org.apache.hudi.avro.model.HoodieMetadataFileInfo", "org.apache.hudi.avro.model.HoodieMetadataBloomFilter",
                 "org.apache.hudi.avro.model.HoodieMetadataColumnStats", "org.apache.hudi.avro.model.HoodieRecordIndexInfo",
                 "org.apache.hudi.avro.model.HoodieSecondaryIndexInfo", "org.apache.hudi.avro.model.DecimalWrapper",
                 "org.apache.hudi.avro.model.ArrayWrapper", "org.apache.hudi.avro.model.HoodieValueTypeInfo"):
        assert f'"{full}"' in names
    assert [f["name"] for f in schema.METADATA_RECORD_SCHEMA["fields"]] == [
        "key", "type", "filesystemMetadata", "BloomFilterMetadata", "ColumnStatsMetadata",
        "recordIndexMetadata", "SecondaryIndexMetadata"]


@pytest.mark.parametrize("relative, version", [(V9_TABLE, 9), (V8_TABLE, 8)])
def test_schema_equals_what_hudi_wrote(relative, version):
    theirs = _schema_from_fixture_log(relative)
    ours = schema.metadata_record_schema(version, meta_fields=True)
    canonical = fastavro.schema.to_parsing_canonical_form
    assert canonical(ours) == canonical(theirs)
    assert canonical(schema.metadata_record_schema(version)) != canonical(theirs)   # without meta columns


def test_schema_versions():
    stats = {v: next(f for f in schema.metadata_record_schema(v)["fields"] if f["name"] == "ColumnStatsMetadata")
             for v in (8, 9)}
    assert "valueType" not in [f["name"] for f in stats[8]["type"][1]["fields"]]
    assert "valueType" in [f["name"] for f in stats[9]["type"][1]["fields"]]
    with pytest.raises(ValueError):
        schema.metadata_record_schema(6)


# --- hashes ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, h64, h32", [             # published xxHash reference values (seed 0)
    (b"", 0xEF46DB3751D8E999, 0x02CC5D05),
    (b"a", 0xD24EC4F1A98C6E5B, 0x550D7456),
    (b"abc", 0x44BC2CF5AD770999, 0x32D153FF),
])
def test_xxhash_reference_vectors(data, h64, h32):
    assert hashing.xxh64(data) == h64 and hashing.xxh32(data) == h32


# Computed in the JVM with lz4-java's XXHashFactory (what Hudi's HashID calls) and Java's
# String.hashCode, through py4j in a throwaway script; covers the >= 16/32-byte stripe paths.
JVM = [
    ("", 968236986745439706, 1565310455, 0),
    ("a", 311287853899042483, 2724830031, 97),
    ("region=us", 16392349603605789588, 3074219817, 74315815),
    ("x" * 31, 18354354651963578034, 2339938477, 549519224),
    ("y" * 32, 14392938082608159917, 1480388772, -503893504),
    ("partition/with/a/long/path=2024-01-01/and-more-segments", 14793303055948884826, 2830294447, 1261929386),
    ("é日本語" * 9, 13858904327064955227, 1715160945, 991778942),
]


@pytest.mark.parametrize("text, h64, h32, java_hash", JVM)
def test_hashes_match_the_jvm(text, h64, h32, java_hash):
    data = text.encode("utf-8")
    assert hashing.xxh64(data, HUDI_SEED) == h64
    assert hashing.xxh32(data, HUDI_SEED) == h32
    assert hashing.hash_id(text, 64) == struct.pack(">Q", h64)
    assert hashing.hash_id(text, 32) == struct.pack(">I", h32)
    assert keys.java_string_hash(text) == java_hash


def test_index_ids_are_padded_base64():
    file_name = "c7bbe63e-fa43-40ba-94a9-03158165edc6-0_1-27-53_20260307162434124.parquet"
    assert hashing.file_index_id(file_name) == base64.b64encode(hashlib.md5(file_name.encode()).digest()).decode()
    assert hashing.partition_index_id("region=us") == base64.b64encode(struct.pack(">Q", JVM[2][1])).decode()
    assert len(hashing.column_index_id("c")) == 12 and hashing.column_index_id("c").endswith("=")
    assert len(hashing.file_index_id("f")) == 24 and hashing.file_index_id("f").endswith("==")
    with pytest.raises(ValueError):
        hashing.hash_id("x", 16)


# --- keys ------------------------------------------------------------------------------------------

def test_partition_identifiers():
    assert keys.partition_identifier("") == "." and keys.partition_identifier("a=1/b=2") == "a=1/b=2"
    assert keys.partition_path_of_identifier(".") == "" and keys.files_key("") == "."
    assert keys.ALL_PARTITIONS_KEY == "__all_partitions__"


def test_column_stats_and_bloom_keys():
    file_name = "c7bbe63e-fa43-40ba-94a9-03158165edc6-0_1-27-53_20260307162434124.parquet"
    # The key Hudi 1.1 wrote for column `currency` of this file (v9_txns_simple_meta's column_stats HFile).
    assert keys.column_stats_key("currency", "region=us", file_name) == "/m6lxu4Dh5w=431THTTwO5Q=W7RhzS2IFnrW7FlqIkFJUw=="
    assert keys.column_stats_key("currency", "region=us", "region=us/" + file_name) == \
        keys.column_stats_key("currency", "region=us", file_name)
    expected = (hashing.column_index_id("currency") + hashing.partition_index_id("region=us")
                + base64.b64encode(hashlib.md5(file_name.encode()).digest()).decode())
    assert keys.column_stats_key("currency", "region=us", file_name) == expected
    assert keys.column_stats_key_prefix("currency", "region=us") == expected[:24]
    assert keys.bloom_filter_key("region=us", file_name) == expected[12:]
    assert keys.partition_stats_key("region=us", "currency") == expected[:24]
    assert keys.bloom_filter_key("", "f.parquet").startswith(hashing.partition_index_id("."))


@pytest.mark.parametrize("key, n, expected", [
    ("a", 10, 7), ("TXN-008", 10, 1), ("TXN-001", 10, 8),  # as in v9_txns_simple_meta: record-index-0001-0, -0008-0
    ("polygenelubricants", 10, 8),                     # hashCode is Integer.MIN_VALUE: abs() stays negative
    ("", 3, 0), ("x" * 100, 10, 6),
])
def test_file_group_index(key, n, expected):
    assert keys.file_group_index(key, n) == expected
    assert keys.file_group_indexes(pa.array([key, "a"]), n).tolist() == [expected, keys.file_group_index("a", n)]


def test_file_group_index_is_javas_formula():
    for key in ["TXN-001", "7a84095f-737f-40bc-b62f-6b69664712d2", "é", "\U0001F600", "Aa", "BB"]:
        h = keys.java_string_hash(key)
        java_abs = lambda v: v if v == -2**31 else abs(v)
        rem = abs(java_abs(h)) % 7 * (1 if java_abs(h) >= 0 else -1)
        assert keys.file_group_index(key, 7) == java_abs(rem)
    many = ["TXN-001", "7a84095f-737f-40bc-b62f-6b69664712d2", "é", "\U0001F600", "Aa", "polygenelubricants"]
    assert keys.file_group_indexes(pa.array(many), 7).tolist() == [keys.file_group_index(x, 7) for x in many]
    with pytest.raises(ValueError):
        keys.file_group_index("a", 0)


def test_file_group_ids():
    assert keys.file_group_id(keys.FILES, 0) == "files-0000-0"
    assert keys.file_group_id(keys.COLUMN_STATS, 1) == "col-stats-0001-0"
    assert keys.file_group_id(keys.BLOOM_FILTERS, 3) == "bloom-filters-0003-0"
    assert keys.file_group_id(keys.RECORD_INDEX, 12) == "record-index-0012-0"
    assert keys.file_group_id(keys.PARTITION_STATS, 0) == "partition-stats-0000-0"
    assert keys.file_group_id(keys.SECONDARY_INDEX, 6, "secondary_index_merchant_idx") == \
        "secondary-index-merchant-idx-0006-0"
    assert keys.file_group_index_of_id("record-index-0009-0") == 9
    assert [keys.partition_type_of_record(t).path for t in (1, 2, 3, 4, 5)] == \
        ["files", "files", "column_stats", "bloom_filters", "record_index"]
    with pytest.raises(ValueError):
        keys.partition_type_of_record(99)


# --- builders, parsers, encode/decode -------------------------------------------------------------

def _round_trip(record, **kw):
    data = R.encode(record, **kw)
    assert R.decode(data, key=record["key"]) == record
    return data


def test_files_records_round_trip():
    listing = R.partition_list_record(["a=1", "", "b=2"])
    assert listing["key"] == "__all_partitions__" and listing["type"] == 1
    assert listing["filesystemMetadata"]["."] == {"size": 0, "isDeleted": False}
    assert R.partitions_of(listing) == ["", "a=1", "b=2"]
    _round_trip(listing)
    dropped = R.partition_list_record(["b=2"], is_deleted=True)
    assert R.partitions_of(dropped) == [] and dropped["filesystemMetadata"]["b=2"]["isDeleted"]

    files = R.files_record("a=1", {"f1.parquet": 100, "f2.log": 7}, ["f0.parquet"])
    assert files["key"] == "a=1" and files["type"] == 2
    assert R.files_of(files) == {"f1.parquet": 100, "f2.log": 7}
    assert R.deleted_files_of(files) == ["f0.parquet"]
    _round_trip(files)
    assert R.files_record("", {"f": 1})["key"] == "."
    assert R.files_partition_delete("") == R.Delete(".")


def test_encode_empties_the_key_as_hudi_does():
    record = R.files_record("a=1", {"f1.parquet": 100})
    data = R.encode(record)
    assert data[:6] == b"\x00\x00\x00\x00\x00\x00"      # five null meta columns, then key ""
    assert R.decode(data)["key"] == ""
    assert R.decode(data, key="a=1") == record
    kept = R.encode(record, meta_fields=False, keep_key=True)
    assert R.decode(kept, schema.metadata_record_schema(meta_fields=False)) == record
    assert R.decode(kept, json.dumps(schema.metadata_record_schema(meta_fields=False))) == record


def test_decode_reads_hudi_1_0_layout():
    record = R.column_stats_record("p", "f.parquet", "c", arrow_type=pa.int32(), min_value=1, max_value=5,
                                   value_count=3, table_version=8)
    assert "valueType" not in record["ColumnStatsMetadata"]
    data = R.encode(record, table_version=8)
    back = R.decode(data, schema.metadata_record_schema(8, meta_fields=True), key=record["key"])
    assert back["ColumnStatsMetadata"].pop("valueType") is None
    assert back == record


def test_bloom_filter_records_round_trip():
    rec = R.bloom_filter_record("a=1", "f1.parquet", "20240101000000000", "/wAAAB4BACd...", "DYNAMIC_V0")
    assert rec["key"] == keys.bloom_filter_key("a=1", "f1.parquet") and rec["type"] == 4
    _round_trip(rec)
    info = R.bloom_filter_of(rec)
    assert info.serialized == "/wAAAB4BACd..." and info.type == "DYNAMIC_V0" and not info.is_deleted
    tomb = R.bloom_filter_tombstone("a=1", "f1.parquet", "20240102000000000")
    assert R.bloom_filter_of(tomb) == R.BloomFilterInfo("", "20240102000000000", b"", True)
    _round_trip(tomb)
    with pytest.raises(ValueError):
        R.bloom_filter_record("a=1", "a=1/f1.parquet", "1", b"")


# (arrow type, min, max, wrapper, stored min, ValueType ordinal, additional info) as Hudi 1.1 writes
# them; decimal, date and timestamp rows are the shapes of v9_txns_simple_meta's column_stats.
V9_CASES = [
    (pa.bool_(), False, True, values.BOOLEAN_W, False, 2, None),
    (pa.int32(), -3, 9, values.INT_W, -3, 3, None),
    (pa.int16(), -3, 9, values.INT_W, -3, 3, None),
    (pa.int64(), 1700000000001, 1700100000001, values.LONG_W, 1700000000001, 4, None),
    (pa.float32(), 1.5, 2.5, values.FLOAT_W, 1.5, 5, None),
    (pa.float64(), 34.15, 93.5, values.DOUBLE_W, 34.15, 6, None),
    (pa.string(), "ACC-A", "ACC-B", values.STRING_W, "ACC-A", 7, None),
    (pa.binary(), b"\x00\x01", b"\xff", values.BYTES_W, b"\x00\x01", 8, None),
    (pa.binary(4), b"abcd", b"abce", values.BYTES_W, b"abcd", 9, None),
    (pa.decimal128(15, 2), decimal.Decimal("1250.00"), decimal.Decimal("5000.00"), values.BYTES_W,
     b"\x01\xe8H", 10, "15,2"),
    (pa.date32(), dt.date(2024, 1, 15), dt.date(2024, 2, 1), values.INT_W, 19737, 12, None),
    (pa.time64("us"), dt.time(1, 2, 3, 4), dt.time(5), values.LONG_W, 3723000004, 14, None),
    (pa.time32("ms"), dt.time(0, 0, 1, 500000), dt.time(5), values.INT_W, 1500, 13, None),
    (pa.timestamp("us", "UTC"), dt.datetime(2024, 1, 15, 16, 30, tzinfo=dt.timezone.utc),
     dt.datetime(2024, 1, 15, 20, 20, tzinfo=dt.timezone.utc), values.LONG_W, 1705336200000000, 16, None),
    (pa.timestamp("ms", "UTC"), dt.datetime(2024, 1, 15, 16, 30, tzinfo=dt.timezone.utc),
     dt.datetime(2024, 1, 15, 20, 20, tzinfo=dt.timezone.utc), values.LONG_W, 1705336200000, 15, None),
    (pa.timestamp("us"), dt.datetime(2024, 1, 15, 16, 30), dt.datetime(2024, 1, 16), values.LONG_W,
     1705336200000000, 19, None),
]


@pytest.mark.parametrize("arrow_type, lo, hi, wrapper, stored, ordinal, info", V9_CASES)
def test_column_stats_values_hudi_1_1(arrow_type, lo, hi, wrapper, stored, ordinal, info):
    rec = R.column_stats_record("region=us", "f.parquet", "c", arrow_type=arrow_type, min_value=lo, max_value=hi,
                                null_count=1, value_count=4, total_size=60, total_uncompressed_size=45)
    s = rec["ColumnStatsMetadata"]
    assert s["minValue"] == (wrapper, {"value": stored})
    assert s["valueType"] == {"typeOrdinal": ordinal, "additionalInfo": info}
    _round_trip(rec)
    parsed = R.column_stats_of(R.decode(R.encode(rec), key=rec["key"]))
    assert (parsed.min_value, parsed.max_value) == (lo, hi)
    assert (parsed.null_count, parsed.value_count, parsed.total_size, parsed.total_uncompressed_size) == (1, 4, 60, 45)
    assert parsed.value_type.ordinal == ordinal and not parsed.is_deleted


def test_column_stats_values_hudi_1_0():
    dec = R.column_stats_record("p", "f.parquet", "d", arrow_type=pa.decimal128(10, 2), min_value=decimal.Decimal("-1.28"),
                                max_value=decimal.Decimal("12.50"), table_version=8)["ColumnStatsMetadata"]
    name, body = dec["minValue"]
    assert name == values.DECIMAL_W
    assert int.from_bytes(body["value"], "big", signed=True) == -128 * 10 ** 13       # upcast to scale 15
    rec = R.column_stats_record("p", "f.parquet", "d", arrow_type=pa.decimal128(10, 2), min_value=decimal.Decimal("-1.28"),
                                max_value=decimal.Decimal("12.50"), table_version=8)
    back = R.decode(R.encode(rec, table_version=8), schema.metadata_record_schema(8, True), key=rec["key"])
    assert back["ColumnStatsMetadata"].pop("valueType") is None and back == rec         # wrappers stay raw bytes
    assert R.column_stats_of(back).min_value == decimal.Decimal("-1.28")
    assert values.unwrap((values.TIME_MICROS_W, {"value": 3_600_000_001})) == dt.time(1, 0, 0, 1)
    assert values.unwrap((values.TIMESTAMP_MICROS_W, {"value": 1})) == dt.datetime(1970, 1, 1, 0, 0, 0, 1, dt.timezone.utc)
    date = R.column_stats_record("p", "f.parquet", "d", arrow_type=pa.date32(), min_value=dt.date(1970, 1, 2),
                                 max_value=dt.date(1970, 1, 3), table_version=8)
    assert date["ColumnStatsMetadata"]["minValue"] == (values.DATE_W, {"value": 1})
    ts = R.column_stats_record("p", "f.parquet", "t", arrow_type=pa.timestamp("us", "UTC"), min_value=5, max_value=6,
                               table_version=8)
    assert ts["ColumnStatsMetadata"]["minValue"] == (values.LONG_W, {"value": 5})
    for rec in (date, ts):
        back = R.decode(R.encode(rec, table_version=8), schema.metadata_record_schema(8, True), key=rec["key"])
        assert back["ColumnStatsMetadata"]["minValue"] == rec["ColumnStatsMetadata"]["minValue"]
    parsed = R.column_stats_of(R.decode(R.encode(date, table_version=8), schema.metadata_record_schema(8, True)))
    assert parsed.min_value == dt.date(1970, 1, 2) and parsed.value_type is None


def test_java_unscaled_bytes():
    assert values.java_unscaled_bytes(0) == b"\x00"
    assert values.java_unscaled_bytes(127) == b"\x7f" and values.java_unscaled_bytes(128) == b"\x00\x80"
    assert values.java_unscaled_bytes(-128) == b"\x80" and values.java_unscaled_bytes(-129) == b"\xff\x7f"


def test_column_stats_tombstone_and_unsupported_types():
    tomb = R.column_stats_tombstone("p", "f.parquet", "c")
    assert tomb["ColumnStatsMetadata"]["isDeleted"] and tomb["ColumnStatsMetadata"]["minValue"] is None
    assert tomb["key"] == keys.column_stats_key("c", "p", "f.parquet")
    _round_trip(tomb)
    with pytest.raises(ValueError):
        R.column_stats_record("p", "f", "c", arrow_type=pa.list_(pa.int32()))


def test_record_index_matches_hudi():
    # TXN-008 of v9_txns_simple_meta, written with the LOCAL commit time zone of that machine (UTC-6).
    rec = R.record_index_record("TXN-008", "region=apac", "07838327-b037-4532-a9df-3c5b05dd823d-0",
                                "20260307162434124", tz="America/Chicago")
    assert rec["type"] == 5 and rec["key"] == "TXN-008"
    assert rec["recordIndexMetadata"] == {
        "partitionName": "region=apac", "fileIdHighBits": 541420586697966898,
        "fileIdLowBits": -6206175399855160771, "fileIndex": 0, "fileId": "", "instantTime": 1772922274124,
        "fileIdEncoding": 0, "position": None}
    u = uuid.UUID("07838327-b037-4532-a9df-3c5b05dd823d")
    assert rec["recordIndexMetadata"]["fileIdHighBits"] == (u.int >> 64)            # positive high half
    _round_trip(rec)
    assert R.record_location_of(rec, tz="America/Chicago") == R.RecordLocation(
        "region=apac", "07838327-b037-4532-a9df-3c5b05dd823d-0", "20260307162434124")


def test_record_index_file_id_forms():
    bare = R.record_index_record("k", "p", "07838327-b037-4532-a9df-3c5b05dd823d", "20240101000000000", tz="UTC")
    assert bare["recordIndexMetadata"]["fileIndex"] == -1
    assert R.record_location_of(bare, tz="UTC").file_id == "07838327-b037-4532-a9df-3c5b05dd823d"
    raw = R.record_index_record("k", "p", "00000003-abc-0", "20240101000000000", tz="UTC", raw_file_id=True)
    info = raw["recordIndexMetadata"]
    assert (info["fileIdEncoding"], info["fileId"], info["fileIdHighBits"], info["fileIndex"]) == (1, "00000003-abc-0", -1, -1)
    assert info["instantTime"] == int(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert R.record_location_of(raw, tz="UTC") == R.RecordLocation("p", "00000003-abc-0", "20240101000000000")
    _round_trip(raw)
    with pytest.raises(ValueError):
        R.record_index_record("k", "p", "not-a-uuid-0", "20240101000000000", tz="UTC")
    assert R.record_index_delete("k", "p") == R.Delete("k", "p")


def test_instant_times():
    assert R.instant_to_epoch_millis("20240101000000", tz="UTC") == 1704067200999     # seconds: +999 ms
    assert R.instant_to_epoch_millis("20240101000000000010", tz="UTC") == 1704067200000
    assert R.epoch_millis_to_instant(1704067200999, tz="UTC") == "20240101000000999"
    assert R.instant_to_epoch_millis("20240101000000000", tz=dt.timezone(dt.timedelta(hours=2))) == 1704060000000


# --- merging --------------------------------------------------------------------------------------

def test_files_merge_rules():
    base = R.files_record("p", {"f1": 10, "f2": 5})
    log1 = R.files_record("p", {"f3": 7, "f2": 9}, ["f1", "gone"])
    merged = merge.combine(base, log1)
    assert merged["filesystemMetadata"] == {"f2": {"size": 9, "isDeleted": False}, "f3": {"size": 7, "isDeleted": False},
                                           "gone": {"size": 0, "isDeleted": True}}
    assert R.files_of(merged) == {"f2": 9, "f3": 7} and R.deleted_files_of(merged) == ["gone"]
    assert R.files_of(merge.combine(merged, R.files_record("p", {"f2": 3}))) == {"f2": 9, "f3": 7}  # max size
    # a tombstone carried in the logs still removes the file from an older base
    logs = merge.merge([R.files_record("p", {"f9": 1}), R.files_record("p", {}, ["f1"])])
    assert R.files_of(merge.combine(base, logs)) == {"f2": 5, "f9": 1}
    # a later add re-adds a deleted name
    readd = merge.merge([base, R.files_record("p", {}, ["f1"]), R.files_record("p", {"f1": 11})])
    assert R.files_of(readd) == {"f1": 11, "f2": 5}
    twice = merge.merge([R.files_record("p", {}, ["x"]), R.files_record("p", {}, ["x"])])
    assert twice["filesystemMetadata"] == {"x": {"size": 0, "isDeleted": True}}
    with pytest.raises(ValueError):
        merge.combine(base, R.files_record("p", {"bad": 0}))


def test_partition_list_merge():
    merged = merge.merge([R.partition_list_record(["a", "b"]), R.partition_list_record(["c"]),
                          R.partition_list_record(["a"], is_deleted=True)])
    assert R.partitions_of(merged) == ["b", "c"] and merged["type"] == 1


def test_deletes():
    files = R.files_record("p", {"f": 1})
    assert merge.combine(files, R.files_partition_delete("p")) == R.Delete("p")
    assert merge.combine(R.files_partition_delete("p"), files) == files        # a value after a delete starts afresh
    assert not merge.is_live(merge.merge([files, R.Delete("p")])) and merge.is_live(files)
    assert merge.merge([]) is None and merge.combine(files, None) == files
    with pytest.raises(ValueError):
        merge.combine(files, R.partition_list_record(["p"]))


def _stats(lo, hi, n, **kw):
    return R.column_stats_record("p", "f.parquet", "c", arrow_type=pa.int64(), min_value=lo, max_value=hi,
                                 null_count=1, value_count=n, total_size=10, total_uncompressed_size=20, **kw)


def test_column_stats_merge_rules():
    merged = merge.combine(_stats(5, 9, 3), _stats(1, 7, 2))
    parsed = R.column_stats_of(merged)
    assert (parsed.min_value, parsed.max_value, parsed.value_count, parsed.null_count, parsed.total_size,
            parsed.total_uncompressed_size) == (1, 9, 5, 2, 20, 40)
    assert merged["ColumnStatsMetadata"]["minValue"] == (values.LONG_W, {"value": 1})
    tight = _stats(6, 6, 1, is_tight_bound=True)
    assert merge.combine(_stats(1, 9, 3), tight) == tight
    tomb = R.column_stats_tombstone("p", "f.parquet", "c")
    assert merge.combine(_stats(1, 9, 3), tomb) == tomb and not merge.is_live(tomb)
    assert merge.combine(tomb, _stats(2, 3, 1)) == _stats(2, 3, 1)
    nulls = merge.combine(_stats(None, None, 3), _stats(4, 4, 1))
    assert (R.column_stats_of(nulls).min_value, R.column_stats_of(nulls).max_value) == (4, 4)


def test_column_stats_merge_of_logical_values():
    def dec(lo, hi, version):
        return R.column_stats_record("p", "f.parquet", "d", arrow_type=pa.decimal128(10, 2), min_value=decimal.Decimal(lo),
                                     max_value=decimal.Decimal(hi), table_version=version)
    for version in (8, 9):
        merged = merge.combine(dec("-2.00", "1.00", version), dec("0.50", "3.25", version))
        parsed = R.column_stats_of(merged)
        assert (parsed.min_value, parsed.max_value) == (decimal.Decimal("-2.00"), decimal.Decimal("3.25"))
        back = R.decode(R.encode(merged, table_version=version), schema.metadata_record_schema(version, True),
                        key=merged["key"])
        assert R.column_stats_of(back).max_value == decimal.Decimal("3.25")


def test_newer_wins_for_record_index_and_bloom_filters():
    a = R.record_index_record("k", "p1", "07838327-b037-4532-a9df-3c5b05dd823d-0", "20240101000000000", tz="UTC")
    b = R.record_index_record("k", "p2", "17838327-b037-4532-a9df-3c5b05dd823d-1", "20240102000000000", tz="UTC")
    assert merge.combine(a, b) == b and merge.combine(b, a) == a
    assert merge.merge([a, R.record_index_delete("k"), None]) == R.Delete("k")
    assert merge.merge([a, R.record_index_delete("k"), b]) == b
    f1 = R.bloom_filter_record("p", "f.parquet", "1", b"x")
    f2 = R.bloom_filter_record("p", "f.parquet", "2", b"y")
    assert merge.combine(f1, f2) == f2
    tomb = R.bloom_filter_tombstone("p", "f.parquet", "3")
    assert merge.combine(f2, tomb) == tomb and not merge.is_live(tomb)


# --- config ---------------------------------------------------------------------------------------

def test_metadata_config_keys_and_defaults():
    cfg = C.HoodieConfig({})
    assert cfg.get(C.METADATA_ENABLE) is True
    assert cfg.get(C.METADATA_COMPACT_MAX_DELTA_COMMITS) == 10
    assert cfg.get(C.METADATA_COLUMN_STATS_ENABLE) is False and cfg.get(C.METADATA_COLUMN_STATS_FILE_GROUP_COUNT) == 2
    assert cfg.get(C.METADATA_BLOOM_FILTER_ENABLE) is False and cfg.get(C.METADATA_BLOOM_FILTER_FILE_GROUP_COUNT) == 4
    assert cfg.get(C.METADATA_RECORD_INDEX_ENABLE) is False
    assert cfg.get(C.METADATA_RECORD_INDEX_MIN_FILE_GROUPS) == 10
    assert cfg.get(C.METADATA_RECORD_INDEX_MAX_FILE_GROUPS) == 10000
    assert cfg.get(C.METADATA_RECORD_INDEX_MAX_FILE_GROUP_BYTES) == 1 << 30
    assert cfg.get(C.METADATA_RECORD_INDEX_GROWTH_FACTOR) == 2.0
    assert cfg.get(C.METADATA_COLUMN_STATS_MAX_COLUMNS) == 32 and cfg.get(C.METADATA_COLUMN_STATS_COLUMNS) is None
    legacy = C.HoodieConfig({"hoodie.metadata.record.index.enable": "true",
                             "hoodie.metadata.record.index.min.filegroup.count": "4"})
    assert legacy.get(C.METADATA_RECORD_INDEX_ENABLE) is True
    assert legacy.get(C.METADATA_RECORD_INDEX_MIN_FILE_GROUPS) == 4


# --- real metadata tables written by Hudi ----------------------------------------------------------
# Every value of every HFile (base files and HFile log blocks) of these tables is decoded; keys and
# file groups are recomputed; the merged `files` partition is compared with the table directory.

from pathlib import Path  # noqa: E402

from hudi_engine.file_group.log_file import BlockType, delete_block_keys, hfile_block_reader, iter_log_blocks  # noqa: E402
from hudi_engine.hfile import HFileReader  # noqa: E402
from tests.conftest import unzip_fixture  # noqa: E402

MDT_TABLES = [V9_TABLE, V8_TABLE, "sample_table/cow/v9_txns_nonpart_meta.zip",
              "sample_table/mor/avro/v9_txns_complex_meta.zip", "sample_table/mor/avro/v9_nonpartitioned_rollback.zip",
              "sample_table/cow/v9_timebasedkeygen_epochmillis.zip", "sample_table/cow/v9_txns_simple_overwrite.zip",
              "quickstart_trips_table/mor/avro/v9_trips_lance.zip"]


class StoredValue:
    def __init__(self, source: str, key: str, data: bytes, writer_schema: str, file_group: int, order: tuple):
        self.source, self.key, self.data, self.writer_schema = source, key, data, writer_schema
        self.file_group, self.order = file_group, order


class MetadataTable:
    """The HFile values and deletes of a table's `.hoodie/metadata`, partition by partition."""

    def __init__(self, base: Path):
        self.base = base
        self.root = base / ".hoodie" / "metadata"
        self.partitions = sorted(p.name for p in self.root.iterdir() if p.is_dir() and p.name != ".hoodie")
        # completion times of the metadata table's delta commits (timeline layout 2: <requested>_<completed>)
        self.completed = {}
        for p in (self.root / ".hoodie" / "timeline").glob("*_*.deltacommit"):
            requested, completed = p.name.split(".")[0].split("_")
            self.completed[requested] = completed

    def file_groups(self, partition: str) -> set[int]:
        return {keys.file_group_index_of_id(_file_id(p.name)) for p in (self.root / partition).iterdir()
                if p.name.endswith(".hfile") or ".log." in p.name}

    def entries(self, partition: str, latest_slice: bool = False):
        """(order, StoredValue | Delete) of every stored value; ``latest_slice``: only the newest base
        file of each file group and the log files written after it."""
        folder = self.root / partition
        bases = sorted(p for p in folder.iterdir() if p.name.endswith(".hfile"))
        logs = sorted(p for p in folder.iterdir() if ".log." in p.name)
        newest = {}
        for p in bases:
            fg, instant = _file_id(p.name), p.name.rsplit("_", 1)[1][:-len(".hfile")]
            newest[fg] = max(newest.get(fg, ""), instant)
        for p in bases:
            fg, instant = _file_id(p.name), p.name.rsplit("_", 1)[1][:-len(".hfile")]
            if latest_slice and instant != newest[fg]:
                continue
            reader = HFileReader(p.read_bytes(), path=str(p))
            for key, value in reader.items():
                yield StoredValue(p.name, key.decode(), value, reader.file_info["schema"].decode(),
                                  keys.file_group_index_of_id(fg), (instant, 0, 0))
        for p in logs:
            fg = _file_id(p.name.lstrip("."))
            instant = p.name.split("_", 1)[1].split(".log.")[0]
            version = int(p.name.split(".log.")[1].split("_")[0])
            # a log joins the newest slice when its delta commit completed after the compaction
            # that wrote the base file was requested (Hudi 1.x slices by completion time)
            if latest_slice and self.completed.get(instant, instant) <= newest.get(fg, ""):
                continue
            for i, block in enumerate(iter_log_blocks(p.read_bytes())):
                order = (instant, version, i)
                if block.block_type == BlockType.HFILE_DATA_BLOCK:
                    for key, value in hfile_block_reader(block).items():
                        yield StoredValue(p.name, key.decode(), value, block.schema,
                                          keys.file_group_index_of_id(fg), order)
                elif block.block_type == BlockType.DELETE_BLOCK:
                    deleted = delete_block_keys(block)
                    for key in deleted.column("record_key").to_pylist():
                        yield R.Delete(key), order

    def merged(self, partition: str) -> dict:
        """Each key's value after merging the latest file slices, oldest value first."""
        items = []
        for entry in self.entries(partition, latest_slice=True):
            if isinstance(entry, tuple):
                items.append((entry[1], entry[0].key, entry[0]))
            else:
                items.append((entry.order, entry.key, R.decode(entry.data, entry.writer_schema, key=entry.key)))
        out = {}
        for _, key, value in sorted(items, key=lambda t: t[0]):
            out[key] = merge.combine(out.get(key), value)
        return out


def _file_id(file_name: str) -> str:
    """`files-0000-0_...hfile` / `files-0000-0_<instant>.log...` -> `files-0000-0`."""
    return file_name.split("_", 1)[0]


def _tables_with(partition_prefix: str, parquet_bases: bool = False) -> list[str]:
    """The fixture tables whose metadata table has a partition (starting with ``partition_prefix``),
    so a test of that partition runs on exactly those tables."""
    import zipfile

    from tests.conftest import FIXTURES

    chosen = []
    for relative in MDT_TABLES:
        names = zipfile.ZipFile(FIXTURES / relative).namelist()
        if not any(f"/.hoodie/metadata/{partition_prefix}" in n for n in names):
            continue
        if parquet_bases and not any(n.endswith(".parquet") and "/.hoodie/" not in n for n in names):
            continue
        chosen.append(relative)
    return chosen


@pytest.fixture(scope="module", params=MDT_TABLES)
def mdt(request, tmp_path_factory):
    return MetadataTable(unzip_fixture(request.param, tmp_path_factory.mktemp("mdt")))


def test_real_values_decode_and_reencode_byte_for_byte(mdt):
    count = 0
    record_types = {"files": {1, 2}, "column_stats": {3}, "record_index": {5}, "partition_stats": {6}}
    for partition in mdt.partitions:
        for value in (e for e in mdt.entries(partition) if not isinstance(e, R.Delete) and not isinstance(e, tuple)):
            record = R.decode(value.data, value.writer_schema, key=value.key)
            assert record["key"] == value.key
            expected_types = record_types.get(partition, {7} if partition.startswith("secondary_index_") else set())
            assert record["type"] in expected_types, (partition, record["type"])
            # our schema reads Hudi's bytes alike, and writes them back identically
            theirs = json.loads(value.writer_schema)
            version = 9 if "valueType" in value.writer_schema else 8
            assert fastavro.schema.to_parsing_canonical_form(theirs) == \
                fastavro.schema.to_parsing_canonical_form(schema.metadata_record_schema(version, meta_fields=True))
            assert R.decode(value.data, schema.metadata_record_schema(version, True), key=value.key) == record
            raw = fastavro.schemaless_reader(__import__("io").BytesIO(value.data), fastavro.parse_schema(theirs))
            meta = {name: raw[name] for name in schema.META_FIELDS if raw[name] is not None}
            assert R.encode(record, table_version=version, meta=meta) == value.data
            count += 1
    assert count > 0


def test_real_keys_are_recomputed(mdt):
    merged_files = mdt.merged("files")
    partition_of = {}
    for key, record in merged_files.items():
        if isinstance(record, dict) and record["type"] == 2:
            for name in record["filesystemMetadata"]:
                partition_of[name] = keys.partition_path_of_identifier(key)
    for value in mdt.entries("files"):
        if isinstance(value, StoredValue):          # every file ever listed, deleted ones included
            record = R.decode(value.data, value.writer_schema, key=value.key)
            if record["type"] == 2:
                for name in record["filesystemMetadata"]:
                    partition_of.setdefault(name, keys.partition_path_of_identifier(record["key"]))
    checked = {"column_stats": 0, "partition_stats": 0, "record_index": 0}
    for partition in checked:
        if partition not in mdt.partitions:
            continue
        groups = len(mdt.file_groups(partition))
        for value in mdt.entries(partition):
            if not isinstance(value, StoredValue):
                continue
            record = R.decode(value.data, value.writer_schema, key=value.key)
            if partition == "column_stats":
                s = record["ColumnStatsMetadata"]
                assert keys.column_stats_key(s["columnName"], partition_of[s["fileName"]], s["fileName"]) == value.key
                assert keys.file_group_index(value.key, groups) == value.file_group
            elif partition == "partition_stats":
                s = record["ColumnStatsMetadata"]
                assert keys.partition_stats_key(s["fileName"], s["columnName"]) == value.key
            else:
                assert keys.file_group_index(value.key, groups) == value.file_group
                location = R.record_location_of(record)
                assert any(name.startswith(location.file_id) or name.lstrip(".").startswith(location.file_id)
                           for name, part in partition_of.items() if part == location.partition)
            checked[partition] += 1
    assert sum(checked.values()) > 0


def test_real_files_partition_lists_the_table(mdt):
    merged = mdt.merged("files")
    listing = merged[keys.ALL_PARTITIONS_KEY]
    partitions = R.partitions_of(listing)
    for partition in partitions:
        record = merged.get(keys.files_key(partition))
        listed = R.files_of(record) if merge.is_live(record) else {}
        folder = mdt.base / partition if partition else mdt.base
        on_disk = {p.name: p.stat().st_size for p in folder.iterdir()
                   if p.is_file() and not p.name.startswith(".hoodie_partition_metadata")}
        assert listed == on_disk, partition
    data_dirs = {str(p.parent.relative_to(mdt.base)) for p in mdt.base.rglob(".hoodie_partition_metadata*")
                 if ".hoodie" not in p.parent.relative_to(mdt.base).parts}
    assert {p or "." for p in partitions} == data_dirs


@pytest.mark.parametrize("mdt", _tables_with("column_stats", parquet_bases=True), indirect=True)
def test_real_column_stats_rebuilt_from_parquet_footers(mdt):
    """Our column-stats records of each live data file, built from its Parquet footer, equal Hudi's."""
    import pyarrow.parquet as pq
    from hudi_engine.metadata_table import stats

    where = {}
    for key, record in mdt.merged("files").items():
        if merge.is_live(record) and record["type"] == 2:
            where.update({name: keys.partition_path_of_identifier(key) for name in R.files_of(record)})
    compared = 0
    for key, record in mdt.merged("column_stats").items():
        s = record["ColumnStatsMetadata"] if merge.is_live(record) else None
        if s is None or not s["fileName"].endswith(".parquet") or s["fileName"] not in where:
            continue
        partition = where[s["fileName"]]
        footer = pq.ParquetFile(mdt.base / partition / s["fileName"]).metadata
        version = 9 if s.get("valueType") is not None else 8
        ours = stats.column_stats_records(partition, s["fileName"], stats.parquet_column_ranges(footer, [s["columnName"]]),
                                          table_version=version)[0]
        ours["ColumnStatsMetadata"].setdefault("valueType", None)
        assert ours == record
        compared += 1
    assert compared


def test_parquet_column_ranges_fold_row_groups(tmp_path):
    import pyarrow.parquet as pq
    from hudi_engine.metadata_table import stats

    table = pa.table({"a": pa.array([5, None, 1, 9], pa.int64()), "s": ["x", "b", None, None],
                      "n": pa.array([None] * 4, pa.int32()),
                      "st": pa.array([{"f": 1}, {"f": 2}, {"f": 3}, {"f": 4}]), "l": [[1], [2], [], None]})
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=2)
    footer = pq.ParquetFile(tmp_path / "f.parquet").metadata
    ranges = {r.column: r for r in stats.parquet_column_ranges(footer)}
    assert set(ranges) == {"a", "s", "n", "st.f"}                  # nothing under a list
    a = ranges["a"]
    assert (a.min_value, a.max_value, a.null_count, a.value_count) == (1, 9, 1, 4)
    assert a.total_size == sum(footer.row_group(g).column(0).total_compressed_size for g in range(2))
    assert (ranges["s"].min_value, ranges["s"].max_value, ranges["s"].null_count) == ("b", "x", 2)
    assert (ranges["n"].min_value, ranges["n"].null_count, ranges["n"].value_count) == (None, 4, 4)
    assert ranges["st.f"].arrow_type == pa.int64() and ranges["st.f"].max_value == 4
    assert [r.column for r in stats.parquet_column_ranges(footer, ["s", "a", "zz"])] == ["s", "a"]
    recs = stats.column_stats_records("p", "f.parquet", [a])
    assert recs[0]["key"] == keys.column_stats_key("a", "p", "f.parquet")


def test_secondary_index_keys():
    key = keys.secondary_index_key("a$b\\c", "r$1")
    assert key == "a\\$b\\\\c$r\\$1"
    assert keys.split_secondary_index_key(key) == ("a$b\\c", "r$1")
    assert keys.secondary_index_key(None, "x") == "\0$x" and keys.split_secondary_index_key("\0$x") == (None, "x")
    assert keys.secondary_index_file_group(key, 10) == keys.file_group_index("a\\$b\\\\c$", 10)
    assert keys.secondary_index_file_group(key, 10, index_version=1) == keys.file_group_index(key, 10)
    with pytest.raises(ValueError):
        keys.split_secondary_index_key("no-separator")
    rec = R.secondary_index_record("Amazon", "TXN-001")
    assert rec["key"] == "Amazon$TXN-001" and rec["type"] == 7
    _round_trip(rec)
    tomb = R.secondary_index_record("Amazon", "TXN-001", is_deleted=True)
    assert merge.combine(rec, tomb) == tomb and not merge.is_live(tomb)


def test_partition_stats_record():
    rec = R.partition_stats_record("region=us", "amount", arrow_type=pa.decimal128(15, 2),
                                   min_value=decimal.Decimal("1.00"), max_value=decimal.Decimal("2.50"), value_count=3)
    assert rec["key"] == keys.partition_stats_key("region=us", "amount") and rec["type"] == 6
    assert rec["ColumnStatsMetadata"]["fileName"] == "region=us"
    _round_trip(rec)
    merged = merge.combine(rec, R.partition_stats_record("region=us", "amount", arrow_type=pa.decimal128(15, 2),
                                                         min_value=decimal.Decimal("0.10"), max_value=decimal.Decimal("2"),
                                                         value_count=1))
    assert R.column_stats_of(merged).min_value == decimal.Decimal("0.10") and R.column_stats_of(merged).value_count == 4


@pytest.mark.parametrize("mdt", _tables_with("secondary_index_"), indirect=True)
def test_real_secondary_index_file_groups(mdt):
    definitions = {}
    index_json = mdt.base / ".hoodie" / ".index_defs" / "index.json"
    if index_json.exists():
        definitions = json.loads(index_json.read_text())["indexDefinitions"]
    partitions = [p for p in mdt.partitions if p.startswith("secondary_index_")]
    assert partitions
    for partition in partitions:
        version = 2 if definitions.get(partition, {}).get("version") == "V2" else 1
        groups = len(mdt.file_groups(partition))
        for value in mdt.entries(partition):
            if isinstance(value, StoredValue):
                assert keys.secondary_index_file_group(value.key, groups, version) == value.file_group
                secondary, record_key = keys.split_secondary_index_key(value.key)
                assert keys.secondary_index_key(secondary, record_key) == value.key


@pytest.mark.parametrize("mdt", _tables_with("record_index"), indirect=True)
def test_real_record_index_locations(mdt):
    """Every record-index entry points at a data file of its partition whose file id and commit time
    it names. The instant is stored as epoch millis in the writer's LOCAL zone: these tables were
    written in UTC (the 1.0 one) or US Central time (the 1.1 ones)."""
    data_files = [p for p in mdt.base.rglob("*") if p.is_file() and ".hoodie" not in p.relative_to(mdt.base).parts]
    entries = [r for r in mdt.merged("record_index").values() if merge.is_live(r)]
    assert entries

    def all_found(tz):
        for record in entries:
            loc = R.record_location_of(record, tz=tz)
            folder = mdt.base / loc.partition if loc.partition else mdt.base
            if not any(p.parent == folder and p.name.lstrip(".").startswith(loc.file_id) and loc.instant_time in p.name
                       for p in data_files):
                return False
        return True

    assert any(all_found(tz) for tz in ("UTC", "America/Chicago"))


def test_java_map_order():
    assert R.table_size_for(0) == 1 and R.table_size_for(3) == 4 and R.table_size_for(16) == 16
    assert R.default_map_capacity(12) == 16 and R.default_map_capacity(13) == 32
    # "Aa" and "BB" share a hash (2112): one bucket, insertion order; "a" (97) lands in bucket 1 of 16
    assert list(R.java_map_order([("a", 1), ("BB", 2), ("Aa", 3)], 16)) == ["BB", "Aa", "a"]
    assert list(R.java_map_order([("a", 1), ("Aa", 3), ("BB", 2)], 16)) == ["Aa", "BB", "a"]
    assert list(R.files_record("p", {"b": 1, "a": 2})["filesystemMetadata"]) == ["b", "a"]   # 98, 97 in 2 buckets


def test_real_files_records_rebuilt_byte_for_byte(mdt):
    """Each file-list record of the HFile log blocks, rebuilt from its entries (in Hudi's order),
    encodes to Hudi's bytes: the map follows Java's HashMap iteration order."""
    rebuilt = 0
    for value in mdt.entries("files"):
        if not isinstance(value, StoredValue) or value.source.endswith(".hfile"):
            continue
        record = R.decode(value.data, value.writer_schema, key=value.key)
        listing = record["filesystemMetadata"]
        if record["type"] == 2:
            again = R.files_record(keys.partition_path_of_identifier(record["key"]),
                                   {n: i["size"] for n, i in listing.items() if not i["isDeleted"]},
                                   [n for n, i in listing.items() if i["isDeleted"]])
        else:
            live = [keys.partition_path_of_identifier(p) for p, i in listing.items() if not i["isDeleted"]]
            again = R.partition_list_record(live) if len(live) == len(listing) else record
        version = 9 if "valueType" in value.writer_schema else 8
        assert R.encode(again, table_version=version) == R.encode(record, table_version=version)
        rebuilt += 1
    assert rebuilt > 0
