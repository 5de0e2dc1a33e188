"""Decoding Kafka values: text for JSON, plain Avro binary, and the Confluent wire format with its
schema ids resolved through a schema registry (the HTTP stand-in in tests/support)."""
import base64
import datetime
import decimal
import io
import json
import struct
import uuid

import fastavro
import pyarrow as pa
import pytest

from hudi_jobs.sources.kafka_decode import (AvroDecoder, DecodeError, RegistryClient, SchemaRegistryError,
                                            raw_text, registry_base, utf8_text)
from tests.support.schema_registry_stub import SchemaRegistryStub, confluent_wire

ORDER_V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "int"},
    {"name": "item", "type": "string"},
]}
ORDER_V2 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "item", "type": "string"},
    {"name": "qty", "type": "int", "default": 1},
]}


def avro_binary(schema, record):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema, named_schemas={}), record)
    return out.getvalue()


@pytest.fixture
def registry():
    with SchemaRegistryStub() as stub:
        yield stub


# --- text and registry URLs ------------------------------------------------------------------------------

@pytest.mark.parametrize("url, base", [
    ("http://registry:8081/subjects/orders-value/versions/latest", "http://registry:8081"),
    ("http://registry:8081/", "http://registry:8081"),
    ("https://r.example.com/api/sr/subjects/x/versions/3", "https://r.example.com/api/sr"),
    ("http://registry:8081/schemas/ids/7", "http://registry:8081"),
])
def test_registry_base_is_the_url_up_to_subjects(url, base):
    assert registry_base(url) == base


def test_raw_text_keeps_text_and_base64s_binary():
    assert raw_text('{"a": "é"}'.encode()) == '{"a": "é"}'
    assert raw_text(b'{\n\t"a": 1}\r\n') == '{\n\t"a": 1}\r\n'
    assert raw_text(b"\x00\xff\x10") == base64.b64encode(b"\x00\xff\x10").decode()
    assert raw_text(b"\x00\x02ok") == base64.b64encode(b"\x00\x02ok").decode()   # valid UTF-8, but binary


def test_utf8_text_refuses_binary_naming_the_byte():
    assert utf8_text(b'{"a": 1}') == '{"a": 1}'
    with pytest.raises(DecodeError, match="not UTF-8 text \\(byte 1 is 0xff\\)"):
        utf8_text(b"{\xff}")


# --- plain Avro binary -----------------------------------------------------------------------------------

def test_plain_avro_decodes_into_the_schemas_arrow_type():
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=False)
    records = [decoder.decode(avro_binary(ORDER_V1, {"id": i, "item": f"i{i}"})) for i in range(3)]
    column, refused = decoder.to_arrow(records + [None])
    assert refused == {}
    assert column.type == pa.struct([pa.field("id", pa.int32(), False), pa.field("item", pa.string(), False)])
    assert column.to_pylist() == [{"id": 0, "item": "i0"}, {"id": 1, "item": "i1"}, {"id": 2, "item": "i2"}, None]


def test_plain_avro_garbage_is_a_decode_error():
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=False)
    with pytest.raises(DecodeError, match="not Avro binary of the source schema"):
        decoder.decode(b"\x02")


def test_bytes_left_after_the_record_mean_another_schema():
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=False)
    with pytest.raises(DecodeError, match="2 bytes left after an Avro record"):
        decoder.decode(avro_binary(ORDER_V2, {"id": 1, "item": "x", "qty": -200}))   # zigzag -200: 2 bytes


def test_logical_types_unions_and_collections_fit_the_arrow_type():
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "either", "type": ["null", "int", "string"]},
        {"name": "tags", "type": {"type": "map", "values": ["null", {"type": "string", "logicalType": "uuid"}]}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "n", "type": ["int", "long"]}]}}},
    ]}
    at = datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)
    ref = uuid.UUID("12345678-1234-5678-1234-567812345678")
    record = {"at": at, "day": datetime.date(2024, 5, 1), "price": decimal.Decimal("12.34"), "ref": str(ref),
              "either": "seven", "tags": {"a": str(ref), "b": None}, "lines": [{"n": 3}, {"n": 4}]}
    decoder = AvroDecoder(json.dumps(schema), wire=False)
    other = decoder.decode(avro_binary(schema, {**record, "either": 7, "lines": []}))
    column, refused = decoder.to_arrow([decoder.decode(avro_binary(schema, record)), other])
    assert refused == {}
    first, second = column.to_pylist()
    assert first["at"] == at and first["day"] == datetime.date(2024, 5, 1)
    assert first["price"] == decimal.Decimal("12.34") and first["ref"] == str(ref)
    assert first["either"] == {"member0": None, "member1": "seven"}
    assert second["either"] == {"member0": 7, "member1": None}
    assert dict(first["tags"]) == {"a": str(ref), "b": None}
    assert first["lines"] == [{"n": 3}, {"n": 4}] and second["lines"] == []


def test_record_arrow_refuses_is_reported_by_position_and_nulled():
    def price(precision):
        return {"type": "record", "name": "R", "fields": [
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": 2}}]}
    decoder = AvroDecoder(json.dumps(price(4)), wire=False)
    good = decoder.decode(avro_binary(price(4), {"price": decimal.Decimal("12.34")}))
    too_wide = decoder.decode(avro_binary(price(10), {"price": decimal.Decimal("123456.78")}))
    column, refused = decoder.to_arrow([good, too_wide, good])
    assert list(refused) == [1] and "does not fit the source schema's types" in refused[1]
    assert column.to_pylist() == [{"price": decimal.Decimal("12.34")}, None, {"price": decimal.Decimal("12.34")}]


# --- Confluent wire format with the registry stand-in ---------------------------------------------------

def test_wire_format_decodes_with_the_writer_schema_from_the_registry(registry):
    schema_id = registry.register("orders-value", ORDER_V1)
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=True, registry=RegistryClient(registry.url))
    values = [confluent_wire(schema_id, ORDER_V1, {"id": i, "item": "x"}) for i in range(5)]
    assert [decoder.decode(v) for v in values] == [{"id": i, "item": "x"} for i in range(5)]
    assert registry.requests[f"/schemas/ids/{schema_id}"] == 1


def test_registry_answers_are_cached_per_process_across_decoders(registry):
    schema_id = registry.register("orders-value", ORDER_V1)
    value = confluent_wire(schema_id, ORDER_V1, {"id": 1, "item": "x"})
    for _ in range(3):
        AvroDecoder(json.dumps(ORDER_V1), wire=True, registry=RegistryClient(registry.url)).decode(value)
    assert registry.requests[f"/schemas/ids/{schema_id}"] == 1


def test_older_writer_schema_is_resolved_into_the_source_schema(registry):
    v1 = registry.register("orders-value", ORDER_V1)
    v2 = registry.register("orders-value", ORDER_V2)
    decoder = AvroDecoder(json.dumps(ORDER_V2), wire=True, registry=RegistryClient(registry.url))
    old = decoder.decode(confluent_wire(v1, ORDER_V1, {"id": 1, "item": "a"}))
    new = decoder.decode(confluent_wire(v2, ORDER_V2, {"id": 2, "item": "b", "qty": 5}))
    column, _ = decoder.to_arrow([old, new])
    assert column.to_pylist() == [{"id": 1, "item": "a", "qty": 1}, {"id": 2, "item": "b", "qty": 5}]


def test_writer_schema_that_cannot_resolve_is_a_decode_error(registry):
    other = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "sku", "type": "string"}]}
    other_id = registry.register("orders-value", other)
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=True, registry=RegistryClient(registry.url))
    with pytest.raises(DecodeError, match=f"writer schema \\(id {other_id}\\)"):
        decoder.decode(confluent_wire(other_id, other, {"sku": "x"}))


def test_unknown_schema_id_is_a_decode_error_naming_the_id(registry):
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=True, registry=RegistryClient(registry.url))
    with pytest.raises(DecodeError, match=f"schema id 42 .* not in the schema registry at {registry.url}"):
        decoder.decode(struct.pack(">bI", 0, 42) + avro_binary(ORDER_V1, {"id": 1, "item": "x"}))


@pytest.mark.parametrize("value, shown", [(b'{"id": 1}', "starts with byte 0x7b"), (b"", "is empty"),
                                          (b"\x00\x00\x01", "starts with byte 0x00")])
def test_bad_magic_byte_or_short_value_is_a_decode_error(registry, value, shown):
    decoder = AvroDecoder(json.dumps(ORDER_V1), wire=True, registry=RegistryClient(registry.url))
    with pytest.raises(DecodeError, match=f"{shown}, not the Confluent wire format.*StringDeserializer"):
        decoder.decode(value)


def test_registry_credentials_from_the_url_are_sent_and_not_kept_in_it(registry):
    schema_id = registry.register("orders-value", ORDER_V1)
    host = registry.url.removeprefix("http://")
    client = RegistryClient(f"http://ingest:s%40cret@{host}/subjects/orders-value/versions/latest")
    assert client.bases == [registry.url]
    assert json.loads(client.schema(schema_id)) == ORDER_V1
    assert registry.authorizations == ["Basic " + base64.b64encode(b"ingest:s@cret").decode()]


def test_unreachable_registry_fails_the_task_naming_the_url():
    client = RegistryClient("http://127.0.0.1:9", timeout=2)
    with pytest.raises(SchemaRegistryError, match="could not fetch schema id 3 .*127.0.0.1:9/schemas/ids/3"):
        client.schema(3)


def test_second_registry_url_is_tried_when_the_first_is_down(registry):
    schema_id = registry.register("orders-value", ORDER_V1)
    client = RegistryClient(f"http://127.0.0.1:9,{registry.url}", timeout=2)
    assert json.loads(client.schema(schema_id)) == ORDER_V1
