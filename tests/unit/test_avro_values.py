"""fastavro's decoded values made to fit ``avro_to_arrow``'s type of the same schema (shared by the
Avro file source and the Kafka Avro decoder): each case decodes real Avro binary with fastavro and
checks pyarrow takes the result."""
import io
import uuid

import fastavro
import pyarrow as pa
import pytest

from hudi_engine.schema.avro import avro_to_arrow
from hudi_jobs.sources.avro_values import arrow_values

POINT = {"type": "record", "name": "Point", "namespace": "geo", "fields": [{"name": "x", "type": "int"}]}
UUID_TYPE = {"type": "string", "logicalType": "uuid"}
REF = uuid.UUID("12345678-1234-5678-1234-567812345678")


def record(*fields):
    return {"type": "record", "name": "R", "namespace": "t", "fields": [{"name": n, "type": t} for n, t in fields]}


def roundtrip(schema, values, writer=None, named=False):
    """``values`` written with ``writer`` (default ``schema``), read back into ``schema`` by fastavro,
    converted, and checked through pyarrow; the converted records."""
    reader = fastavro.parse_schema(schema, named_schemas={})
    written = fastavro.parse_schema(writer or schema, named_schemas={})
    convert = arrow_values(reader, writer=written if writer else None)
    out = []
    for value in values:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, written, value)
        buffer.seek(0)
        out.append(convert(fastavro.schemaless_reader(buffer, written, reader if writer else None,
                                                      return_named_type=named)))
    pa.array(out, type=pa.struct(list(avro_to_arrow(schema))))
    return out


def test_uuids_become_text_at_the_top_and_nested():
    schema = record(("id", UUID_TYPE), ("maybe", ["null", UUID_TYPE]),
                    ("inner", {"type": "record", "name": "In", "fields": [{"name": "ref", "type": UUID_TYPE}]}),
                    ("refs", {"type": "array", "items": UUID_TYPE}),
                    ("by", {"type": "map", "values": ["null", UUID_TYPE]}))
    [out] = roundtrip(schema, [{"id": str(REF), "maybe": None, "inner": {"ref": str(REF)}, "refs": [str(REF)],
                                "by": {"a": str(REF), "b": None}}])
    assert out == {"id": str(REF), "maybe": None, "inner": {"ref": str(REF)}, "refs": [str(REF)],
                   "by": {"a": str(REF), "b": None}}


def test_uuids_of_the_writer_become_text_where_the_reader_has_plain_strings():
    [out] = roundtrip(record(("id", "string")), [{"id": str(REF)}], writer=record(("id", UUID_TYPE)))
    assert out == {"id": str(REF)}


def test_a_union_of_several_types_becomes_member_structs():
    schema = record(("v", ["null", "string", "int", POINT]))
    out = roundtrip(schema, [{"v": "seven"}, {"v": 7}, {"v": {"x": 3}}, {"v": None}])
    assert [r["v"] for r in out] == [{"member0": "seven"}, {"member1": 7}, {"member2": {"x": 3}}, None]


def test_named_types_in_unions_given_as_tuples_are_unwrapped_by_name():
    twin = {**POINT, "name": "Twin"}                # the same fields: only the name tells them apart
    schema = record(("v", ["null", POINT, twin, "string"]), ("p", ["null", "geo.Point"]))
    values = [{"v": ("geo.Twin", {"x": 1}), "p": ("geo.Point", {"x": 2})}, {"v": "s", "p": None}]
    out = roundtrip(schema, values, named=True)
    assert out == [{"v": {"member1": {"x": 1}}, "p": {"x": 2}}, {"v": {"member2": "s"}, "p": None}]


def test_referenced_named_types_are_resolved():
    schema = record(("p", POINT), ("v", ["geo.Point", "string"]), ("ps", {"type": "array", "items": "geo.Point"}))
    out = roundtrip(schema, [{"p": {"x": 1}, "v": {"x": 2}, "ps": [{"x": 3}]}])
    assert out == [{"p": {"x": 1}, "v": {"member0": {"x": 2}}, "ps": [{"x": 3}]}]


def test_int_long_and_float_double_unions_are_left_alone():
    schema = record(("n", ["null", "int", "long"]), ("f", ["float", "double"]))
    convert = arrow_values(fastavro.parse_schema(schema, named_schemas={}))
    value = {"n": 3, "f": 1.5}
    assert convert(value) is value
    assert roundtrip(schema, [value]) == [value]


def test_unions_inside_arrays_and_maps():
    schema = record(("a", {"type": "array", "items": ["null", "int", "string"]}),
                    ("m", {"type": "map", "values": ["boolean", "string"]}))
    [out] = roundtrip(schema, [{"a": [1, None, "x"], "m": {"k": True, "l": "y"}}])
    assert out == {"a": [{"member0": 1}, None, {"member1": "x"}],
                   "m": {"k": {"member0": True}, "l": {"member1": "y"}}}


def test_a_value_of_no_branch_raises_naming_the_union():
    class Refused(ValueError):
        pass
    convert = arrow_values(fastavro.parse_schema(record(("v", ["int", "string"])), named_schemas={}), error=Refused)
    with pytest.raises(Refused, match=r'the value 1\.5 matches no branch of the union \["int", "string"\]'):
        convert({"v": 1.5})
    with pytest.raises(ValueError, match="no branch of the union"):
        arrow_values(fastavro.parse_schema(record(("v", ["int", "string"])), named_schemas={}))({"v": b"x"})
