"""What a writer logs for CDC: Hudi's CDC schemas per logging mode (byte for byte, but for the meta
fields our images carry first), the records
of a merge per mode, and CDC data blocks that read back here and decode with fastavro."""
import io
import json
import struct
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest

from hudi_engine.cdc import (CDC_SUFFIX, LoggingMode, cdc_avro_schema, cdc_data_block, cdc_log_file_name,
                             cdc_records, cdc_schema_json, cdc_write_token, written)
from hudi_engine.file_group.log_file import (BlockType, HeaderKey, data_block_records, encode_block,
                                             iter_log_blocks)
from hudi_engine.file_group.naming import parse_log_file_name
from hudi_engine.schema.avro import add_meta_fields, arrow_to_avro

DATA = pa.schema([pa.field("name", pa.string()), pa.field("fruit", pa.string()),
                  pa.field("price", pa.decimal128(10, 2))])
META_NAMES = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
              "_hoodie_file_name")
META = [pa.field(n, pa.string()) for n in META_NAMES]
FILE = pa.schema(META + list(DATA))
WRITER_SCHEMA = add_meta_fields(arrow_to_avro(DATA, "fruits"))
IMAGE = ('{"type":"record","name":"fruits_record","namespace":"hoodie.fruits","fields":['
         + "".join(f'{{"name":"{n}","type":["null","string"],"doc":"","default":null}},' for n in META_NAMES) +
         '{"name":"name","type":["null","string"],"default":null},'
         '{"name":"fruit","type":["null","string"],"default":null},'
         '{"name":"price","type":["null",{"type":"fixed","name":"fixed","namespace":'
         '"hoodie.fruits.fruits_record.price","size":5,"logicalType":"decimal","precision":10,"scale":2}],'
         '"default":null}]}')


def fruit_rows(commit, pairs):
    return pa.Table.from_pylist([{"_hoodie_commit_time": commit, "_hoodie_record_key": k, "name": k, "fruit": f,
                                  "price": Decimal(len(f)) / 4 if f != "banana" else None}
                                 for k, f in pairs], schema=FILE)


def meta(commit, key):
    return {"_hoodie_commit_time": commit, "_hoodie_commit_seqno": None, "_hoodie_record_key": key,
            "_hoodie_partition_path": None, "_hoodie_file_name": None}


STORED = fruit_rows("c1", [("jack", "apple"), ("sarah", "orange"), ("john", "pineapple")])
NEW = fruit_rows("c2", [("jack", "banana"), ("zoe", "kiwi")])
CHANGES = written(STORED, NEW, pa.array(["john"]))


def test_mode_names_parse_like_the_table_config():
    assert LoggingMode.parse("data_before") is LoggingMode.DATA_BEFORE
    assert LoggingMode.parse(" OP_KEY_ONLY") is LoggingMode.OP_KEY_ONLY
    with pytest.raises(ValueError):
        LoggingMode.parse("cdc_op_key")


def test_schemas_per_mode_are_hudis_text_with_meta_fields_first_in_the_image():
    field = '{{"name":"{}","type":["null",{}],"doc":"","default":null}}'
    assert cdc_schema_json(LoggingMode.OP_KEY_ONLY, WRITER_SCHEMA) == (
        '{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
        '{"name":"record_key","type":["string","null"]}]}')
    assert cdc_schema_json(LoggingMode.DATA_BEFORE, WRITER_SCHEMA) == (
        '{"type":"record","name":"CDC","fields":[' + field.format("op", '"string"') + ","
        + field.format("record_key", '"string"') + "," + field.format("before", IMAGE) + "]}")
    assert cdc_schema_json(LoggingMode.DATA_BEFORE_AFTER, WRITER_SCHEMA) == (
        '{"type":"record","name":"CDC","fields":[' + field.format("op", '"string"') + ","
        + field.format("ts_ms", '"string"') + "," + field.format("before", IMAGE) + ","
        + field.format("after", '"hoodie.fruits.fruits_record"') + "]}")


def test_images_keep_meta_fields_but_not_the_operation_whichever_table_schema_is_given():
    commit_schema = arrow_to_avro(DATA, "fruits")
    with_operation = add_meta_fields(commit_schema, with_operation=True)
    for mode in LoggingMode:
        expected = cdc_avro_schema(mode, json.dumps(WRITER_SCHEMA))
        assert cdc_avro_schema(mode, commit_schema) == cdc_avro_schema(mode, with_operation) == expected


def test_a_merge_logs_updates_and_deletes_in_stored_order_then_inserts():
    rows = CHANGES.to_pylist()
    assert [(r["op"], r["record_key"]) for r in rows] == [("u", "jack"), ("d", "john"), ("i", "zoe")]
    assert list(rows[0]["before"]) == FILE.names
    assert rows[0]["before"] == {**meta("c1", "jack"), "name": "jack", "fruit": "apple", "price": Decimal("1.25")}
    assert rows[0]["after"] == {**meta("c2", "jack"), "name": "jack", "fruit": "banana", "price": None}
    assert rows[1]["before"]["_hoodie_commit_time"] == "c1" and rows[2]["after"]["_hoodie_commit_time"] == "c2"
    assert rows[1]["after"] is None and rows[2]["before"] is None


def test_a_new_file_group_logs_only_inserts():
    assert [r["op"] for r in written(None, NEW, pa.array([], pa.string())).to_pylist()] == ["i", "i"]


@pytest.mark.parametrize("mode, columns", [
    (LoggingMode.OP_KEY_ONLY, ["op", "record_key"]),
    (LoggingMode.DATA_BEFORE, ["op", "record_key", "before"]),
    (LoggingMode.DATA_BEFORE_AFTER, ["op", "ts_ms", "before", "after"]),
])
def test_cdc_blocks_round_trip_and_decode_with_fastavro(mode, columns):
    records = cdc_records(CHANGES, mode, "20240101000000000")
    assert records.column_names == columns
    schema_json = cdc_schema_json(mode, WRITER_SCHEMA)
    block = cdc_data_block(records, schema_json, "20240101000000000")
    assert block.block_type == BlockType.CDC_DATA_BLOCK
    assert block.header == {HeaderKey.INSTANT_TIME: "20240101000000000", HeaderKey.SCHEMA: schema_json}
    [read] = iter_log_blocks(encode_block(block))
    assert read.block_type == BlockType.CDC_DATA_BLOCK
    assert data_block_records(read).to_pylist() == records.to_pylist()
    assert _fastavro_records(read.content, schema_json) == records.to_pylist()


def test_ts_ms_is_the_writing_instant():
    records = cdc_records(CHANGES, LoggingMode.DATA_BEFORE_AFTER, "007")
    assert set(records["ts_ms"].to_pylist()) == {"007"}


def test_a_merge_that_changed_nothing_still_gets_a_cdc_block():
    empty = cdc_records(CHANGES.slice(0, 0), LoggingMode.DATA_BEFORE_AFTER, "007")
    block = cdc_data_block(empty, cdc_schema_json(LoggingMode.DATA_BEFORE_AFTER, WRITER_SCHEMA), "007")
    assert data_block_records(block).num_rows == 0


def test_cdc_log_file_names_carry_the_suffix_after_the_write_token():
    name = cdc_log_file_name("fg1-0", "20240101000000000", 1, "3-7-9")
    assert name == ".fg1-0_20240101000000000.log.1_3-7-9-cdc"
    assert cdc_write_token("3-7-9") == "3-7-9" + CDC_SUFFIX
    parsed = parse_log_file_name(name)
    assert (parsed.file_id, parsed.instant, parsed.version, parsed.write_token, parsed.is_cdc) == (
        "fg1-0", "20240101000000000", 1, "3-7-9", True)


def _fastavro_records(content: bytes, schema_json: str) -> list[dict]:
    """Hudi's Avro block content: version, count, then length-prefixed datums."""
    schema = fastavro.parse_schema(json.loads(schema_json))
    _, count = struct.unpack_from(">ii", content)
    pos, out = 8, []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        out.append(fastavro.schemaless_reader(io.BytesIO(content[pos + 4:pos + 4 + length]), schema))
        pos += 4 + length
    return out
