"""Our block encoders on data of every Avro type: what we write we read back, and the Avro bytes are
those of the reference Avro implementation (fastavro) writing Hudi's schemas."""
import datetime as dt
import io
import json
from decimal import Decimal

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.file_group.log_file import (BlockType, CommandType, HeaderKey, LogBlock, avro_blocks_records,
                                             avro_data_block,
                                             command_block_target, data_block_records, delete_block,
                                             delete_block_keys, encode_block, iter_log_blocks,
                                             parquet_data_block, rollback_command_block)
from hudi_engine.file_group.log_file.avro_encode import encode_records
from hudi_engine.schema.avro import add_meta_fields, arrow_to_avro, avro_to_arrow, to_json

UTC = dt.timezone.utc
SCHEMA = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "", "default": None},
    {"name": "_hoodie_record_key", "type": ["null", "string"], "doc": "", "default": None},
    {"name": "id", "type": "long"},
    {"name": "flag", "type": ["null", "boolean"], "default": None},
    {"name": "small", "type": ["int", "null"]},
    {"name": "ratio", "type": ["null", "float"], "default": None},
    {"name": "price", "type": ["null", "double"], "default": None},
    {"name": "blob", "type": ["null", "bytes"], "default": None},
    {"name": "amount", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.amount",
                                         "size": 9, "logicalType": "decimal", "precision": 20, "scale": 3}],
     "default": None},
    {"name": "big_amount", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 6}],
     "default": None},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
    {"name": "at", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    {"name": "at_ms", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
    {"name": "local", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}], "default": None},
    {"name": "clock", "type": ["null", {"type": "long", "logicalType": "time-micros"}], "default": None},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
    {"name": "tags", "type": ["null", {"type": "array", "items": ["null", "string"]}], "default": None},
    {"name": "attrs", "type": ["null", {"type": "map", "values": ["null", {"type": "array", "items": "long"}]}],
     "default": None},
    {"name": "point", "type": ["null", {"type": "record", "name": "point", "fields": [
        {"name": "x", "type": ["null", "double"], "default": None},
        {"name": "label", "type": ["null", "Kind"], "default": None}]}], "default": None},
    {"name": "points", "type": {"type": "array", "items": "point"}},
]}


def rows(n: int) -> list[dict]:
    out = []
    for i in range(n):
        gap = i % 4 == 3   # every fourth row is null wherever the schema allows
        out.append({
            "_hoodie_commit_time": "001", "_hoodie_record_key": f"key-{i}", "id": [-(2 ** 63), 2 ** 63 - 1, 0, -1][i % 4],
            "flag": None if gap else i % 2 == 0, "small": None if gap else -(2 ** 31) + i,
            "ratio": None if gap else i / 8, "price": None if gap else -i * 1.5,
            "blob": None if gap else bytes(range(i % 7)) + "é".encode(),
            "amount": None if gap else Decimal(f"{'-' if i % 2 else ''}{10 ** 16 + i}.{i % 1000:03d}"),
            "big_amount": None if gap else Decimal(f"{'-' if i % 3 else ''}{i * 12345}.000128"),
            "day": None if gap else dt.date(1969, 12, 31) + dt.timedelta(days=i * 400),
            "at": None if gap else dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=i * 1_000_003),
            "at_ms": None if gap else dt.datetime(1950, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=i),
            "local": None if gap else dt.datetime(2030, 6, 1) + dt.timedelta(seconds=i),
            "clock": None if gap else dt.time(i % 24, i % 60, 0, i),
            "kind": "ABC"[i % 3],
            "tags": None if gap else [None if j == 1 else f"t{j}" * j for j in range(i % 4)],
            "attrs": None if gap else {f"k{j}": (None if j == 2 else list(range(j))) for j in range(i % 5)},
            "point": None if gap else {"x": None if i % 2 else i * 0.25, "label": None if i % 3 else "C"},
            "points": [{"x": float(j), "label": "B"} for j in range(i % 3)],
        })
    return out


def table(n: int = 12) -> pa.Table:
    return pa.Table.from_pylist(rows(n), schema=avro_to_arrow(SCHEMA))


def test_avro_datums_are_those_of_the_reference_avro_writer():
    data = rows(40)
    datums = encode_records(pa.Table.from_pylist(data, schema=avro_to_arrow(SCHEMA)), SCHEMA)
    parsed = fastavro.parse_schema(SCHEMA)
    for i, record in enumerate(data):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, record)
        assert datums[i].as_py() == out.getvalue(), i


def test_avro_data_block_round_trips_every_type():
    t = table(40)
    block = avro_data_block(t, json.dumps(SCHEMA), "001")
    assert block.block_type == BlockType.AVRO_DATA_BLOCK and block.instant_time == "001"
    assert block.header == {HeaderKey.INSTANT_TIME: "001", HeaderKey.SCHEMA: json.dumps(SCHEMA)}
    [read] = iter_log_blocks(encode_block(block))
    assert data_block_records(read).equals(t)


def test_avro_data_block_takes_columns_by_name_and_fills_missing_nullable_ones():
    schema = add_meta_fields(arrow_to_avro(pa.schema([("id", pa.int64()), ("name", pa.string())]), "t"))
    given = pa.table({"name": ["a", None], "id": pa.array([1, 2], pa.int32())})
    got = data_block_records(avro_data_block(given, to_json(schema), "002"))
    assert got["id"].to_pylist() == [1, 2] and got["name"].to_pylist() == ["a", None]
    assert got["_hoodie_record_key"].null_count == 2


def test_avro_and_parquet_blocks_decode_only_the_columns_asked_for():
    """Every field alone, and a mix around nested ones: the values of a full decode, the others
    stepped over (names the block lacks stay absent)."""
    t = table(40)
    blocks = [avro_data_block(t, json.dumps(SCHEMA), "001"), parquet_data_block(t, json.dumps(SCHEMA), "001")]
    mixes = [[name] for name in t.column_names] + [["points", "_hoodie_record_key"], ["id", "kind", "missing"], []]
    for block in blocks:
        for columns in mixes:
            want = t.select([n for n in t.column_names if n in columns])
            assert data_block_records(block, columns).equals(want), (block.block_type, columns)


def test_avro_blocks_of_one_schema_decode_together_in_block_order():
    t = table(40)
    blocks = [avro_data_block(t.slice(0, 25), json.dumps(SCHEMA), "001"), avro_data_block(t.slice(25, 0), json.dumps(SCHEMA), "002"),
              avro_data_block(t.slice(25), json.dumps(SCHEMA), "003")]
    assert avro_blocks_records(blocks).equals(t)
    assert avro_blocks_records(blocks, ["points", "id"]).equals(t.select(["id", "points"]))
    other = add_meta_fields(arrow_to_avro(pa.schema([("id", pa.int64())]), "t"))
    with pytest.raises(ValueError, match="share their writer schema"):
        avro_blocks_records([blocks[0], avro_data_block(pa.table({"id": [1]}), to_json(other), "004")])


def test_nulls_in_a_non_nullable_field_are_refused():
    bad = table(4).set_column(2, "id", pa.array([1, None, 3, 4], pa.int64()))
    with pytest.raises(ValueError, match="'id'"):
        avro_data_block(bad, json.dumps(SCHEMA), "001")


def test_an_empty_avro_data_block():
    empty = table(0)
    assert data_block_records(avro_data_block(empty, json.dumps(SCHEMA), "001")).equals(empty)


@pytest.mark.parametrize("codec, parquet_name", [("gzip", "GZIP"), ("snappy", "SNAPPY"), ("uncompressed", "UNCOMPRESSED")])
def test_parquet_data_block_round_trips_with_hudis_footer(codec, parquet_name):
    t = table(40)
    block = parquet_data_block(t, json.dumps(SCHEMA), "001", compression=codec)
    assert block.block_type == BlockType.PARQUET_DATA_BLOCK
    assert block.content.startswith(b"PAR1") and block.content.endswith(b"PAR1")
    assert data_block_records(block).equals(t.replace_schema_metadata(None))
    footer = pq.read_metadata(pa.BufferReader(block.content))
    assert footer.metadata == {b"parquet.avro.schema": json.dumps(SCHEMA).encode(), b"writer.model.name": b"avro"}
    assert footer.row_group(0).column(0).compression == parquet_name


TS = [dt.datetime(2024, 1, 1, 12, tzinfo=UTC), dt.datetime(1900, 1, 1, tzinfo=UTC), None]
WRAPPER_CASES = [  # ordering column, the wrapper Hudi picks for it, the column as read back if it differs
    (pa.array([True, False, None]), "BooleanWrapper", None),
    (pa.array([5, -7, None], pa.int32()), "IntWrapper", None),
    (pa.array([5, 2 ** 40, None], pa.int64()), "LongWrapper", None),
    (pa.array([1.5, -2.25, None], pa.float32()), "FloatWrapper", None),
    (pa.array([1.5, -2.25, None], pa.float64()), "DoubleWrapper", None),
    (pa.array([b"\x00\xff", b"", None]), "BytesWrapper", None),
    (pa.array(["2024-01-01", "é", None]), "StringWrapper", None),
    (pa.array([dt.date(2024, 2, 29), dt.date(1960, 1, 1), None]), "DateWrapper", None),
    (pa.array([Decimal("12.5"), Decimal("-0.000000000000001"), None], pa.decimal128(30, 15)), "DecimalWrapper", None),
    (pa.array([Decimal("12.50"), None, Decimal("-3.25")], pa.decimal128(10, 2)), "DecimalWrapper",
     pa.array([Decimal("12.5"), None, Decimal("-3.25")], pa.decimal128(30, 15))),
    # Hudi takes a timestamp or time field's Avro value: a plain long (int for milliseconds of day)
    (pa.array(TS, pa.timestamp("us", tz="UTC")), "LongWrapper", pa.array(TS, pa.timestamp("us", tz="UTC")).cast(pa.int64())),
    (pa.array([dt.time(23, 59, 59, 999999), None, dt.time(0)], pa.time64("us")), "LongWrapper",
     pa.array([86_399_999_999, None, 0], pa.int64())),
    (pa.array([dt.time(0, 0, 1), None, dt.time(1)], pa.time32("ms")), "IntWrapper", pa.array([1000, None, 3_600_000], pa.int32())),
]
NAMESPACE = "org.apache.hudi.avro.model"
WRAPPER_VALUE_TYPES = {
    "BooleanWrapper": "boolean", "IntWrapper": "int", "LongWrapper": "long", "FloatWrapper": "float",
    "DoubleWrapper": "double", "BytesWrapper": "bytes", "StringWrapper": "string", "DateWrapper": "int",
    "DecimalWrapper": {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
    "TimeMicrosWrapper": {"type": "long", "logicalType": "time-micros"}, "TimestampMicrosWrapper": "long",
}
DELETE_LIST = {  # HoodieDeleteRecordList.avsc as Hudi 0.14+ compiles it (wrappers from HoodieMetadata.avsc)
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": NAMESPACE, "fields": [
        {"name": "deleteRecordList", "type": {"type": "array", "items": {
            "type": "record", "name": "HoodieDeleteRecord", "fields": [
                {"name": "recordKey", "type": ["null", "string"], "default": None},
                {"name": "partitionPath", "type": ["null", "string"], "default": None},
                {"name": "orderingVal", "default": None, "type": ["null"] + [
                    {"type": "record", "name": name, "fields": [{"name": "value", "type": value}]}
                    for name, value in WRAPPER_VALUE_TYPES.items()]}]}}}]}


def reference_delete_content(keys, partitions, wrapper, values) -> bytes:
    """What Hudi writes for these deletes: version 3, length, the Avro HoodieDeleteRecordList
    (``values``: the wrapper's plain values; None for no ordering value)."""
    records = [{"recordKey": k, "partitionPath": p,
                "orderingVal": (f"{NAMESPACE}.IntWrapper", {"value": 0}) if v is None
                else (f"{NAMESPACE}.{wrapper}", {"value": v})}
               for k, p, v in zip(keys, partitions, values)]
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(DELETE_LIST), {"deleteRecordList": records})
    payload = out.getvalue()
    return (3).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + payload


@pytest.mark.parametrize("ordering, wrapper, read_back", WRAPPER_CASES,
                         ids=[f"{o.type}-{w}" for o, w, _ in WRAPPER_CASES])
def test_delete_block_ordering_values_use_hudis_wrappers(ordering, wrapper, read_back):
    read_back = ordering if read_back is None else read_back
    keys = pa.table({"record_key": ["a", "b", "c"], "partition_path": ["p=1", None, ""], "ordering_value": ordering})
    block = delete_block(keys, "003", avro_schema_json="{}")
    assert block.header == {HeaderKey.INSTANT_TIME: "003", HeaderKey.SCHEMA: "{}"}
    plain = read_back.cast(pa.int32()) if wrapper == "DateWrapper" else read_back
    assert block.content == reference_delete_content(["a", "b", "c"], ["p=1", None, ""], wrapper, plain.to_pylist())
    assert delete_block_keys(block).equals(keys.set_column(2, "ordering_value", read_back))


@pytest.mark.parametrize("wrapper, value, read_back", [
    ("TimestampMicrosWrapper", 1_700_000_000_000_001,
     pa.array([dt.datetime(2023, 11, 14, 22, 13, 20, 1, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))),
    ("TimeMicrosWrapper", dt.time(12, 0, 0, 5), pa.array([dt.time(12, 0, 0, 5)], pa.time64("us"))),
])
def test_delete_blocks_with_hudis_other_wrappers_read_in_their_logical_types(wrapper, value, read_back):
    block = LogBlock(BlockType.DELETE_BLOCK, {HeaderKey.INSTANT_TIME: "1"},
                     content=reference_delete_content(["k"], ["p"], wrapper, [value]))
    assert delete_block_keys(block)["ordering_value"].combine_chunks().equals(read_back)


def test_deletes_without_ordering_values_write_hudis_int_zero_and_read_as_null():
    block = delete_block({"record_key": ["k1", "k2"], "partition_path": ["p", "p"]}, "004")
    assert block.header == {HeaderKey.INSTANT_TIME: "004"}
    assert block.content == reference_delete_content(["k1", "k2"], ["p", "p"], None, [None, None])
    got = delete_block_keys(block)
    assert got["record_key"].to_pylist() == ["k1", "k2"] and got["ordering_value"].null_count == 2


def test_an_empty_delete_block():
    block = delete_block({"record_key": pa.array([], pa.string()), "partition_path": pa.array([], pa.string())}, "5")
    assert block.content == reference_delete_content([], [], None, [])
    assert delete_block_keys(block).num_rows == 0


def test_rollback_command_block_round_trip():
    block = rollback_command_block("20240101000000000", "20240102000000000")
    [read] = iter_log_blocks(encode_block(block))
    assert read.block_type == BlockType.COMMAND_BLOCK and read.content == b""
    assert read.command_type == CommandType.ROLLBACK_BLOCK and read.header[HeaderKey.COMMAND_BLOCK_TYPE] == "0"
    assert command_block_target(read) == "20240101000000000" and read.instant_time == "20240102000000000"
    with pytest.raises(ValueError):
        command_block_target(delete_block({"record_key": [], "partition_path": []}, "1"))


def test_a_100k_row_block_of_every_type_round_trips():
    """(Its speed is the Avro decoding bucket of ``benchmarks.profile_read``, not a timed test.)"""
    n = 100_000
    schema = add_meta_fields(arrow_to_avro(pa.schema([
        ("ts", pa.int64()), ("uuid", pa.string()), ("rider", pa.string()), ("fare", pa.float64()),
        ("at", pa.timestamp("us", tz="UTC")), ("amount", pa.decimal128(12, 2)), ("day", pa.date32()),
        ("city", pa.string())]), "trips"))
    t = pa.table({
        "_hoodie_commit_time": ["20240101000000000"] * n, "_hoodie_record_key": [f"k{i:09d}" for i in range(n)],
        "ts": pa.array(range(n), pa.int64()), "uuid": [f"{i:032x}" for i in range(n)],
        "rider": ["rider-" + "x" * (i % 9) for i in range(n)], "fare": [i / 7 for i in range(n)],
        "at": pa.array(range(1_700_000_000_000_000, 1_700_000_000_000_000 + n), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        "amount": pa.array([Decimal(i) / 100 for i in range(n)], pa.decimal128(12, 2)),
        "day": pa.array(range(n), pa.int32()).cast(pa.date32()), "city": ["san_francisco", None] * (n // 2)})
    back = data_block_records(avro_data_block(t, to_json(schema), "20240101000000000"))
    assert back.num_rows == n
    for name in t.column_names:
        assert back[name].equals(t[name]), name
