"""Arrow <-> Avro table schemas against what Hudi 0.14 (Spark) wrote into the hudi-rs sample tables.

Nullability: the Avro schema is the truth.  The Arrow schema pyarrow reads back from a Hudi base file
agrees with it everywhere except list elements: parquet-avro writes the legacy two-level list layout
(``repeated group array``), which cannot express a null element, so pyarrow reports the element as
``not null`` while the Avro items are ``["null", record]``.  The fixtures' source DataFrames were all
nullable (Spark's default), so the tests relax list elements back to nullable -- and check, via
``avro_to_arrow`` of the footer, that this is the only adjustment needed.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.schema.avro import (
    add_meta_fields,
    arrow_schema_compatible,
    arrow_to_avro,
    avro_to_arrow,
    record_name_and_namespace,
    sanitize_name,
    to_json,
)
from hudi_engine.schema.meta_fields import META_FIELDS, OPERATION_FIELD
from tests.conftest import unzip_fixture

V6_TABLES = ("v6_simplekeygen_nonhivestyle", "v6_complexkeygen_hivestyle", "v6_nonpartitioned")


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------

def unzip_table(tmp_path: Path, name: str) -> Path:
    """A v6 COW table written by real Hudi, extracted; fails when the fixture is missing."""
    root = unzip_fixture(f"sample_table/cow/{name}.zip", tmp_path)
    assert (root / ".hoodie" / "hoodie.properties").is_file()
    return root


def java_properties_value(text: str, key: str) -> str:
    """Just enough of java.util.Properties to read one single-line value (``\\:``, ``\\uXXXX``...)."""
    for line in text.splitlines():
        if line.startswith(key + "="):
            raw = line[len(key) + 1:]
            return re.sub(r"\\u([0-9a-fA-F]{4})|\\(.)",
                          lambda m: chr(int(m.group(1), 16)) if m.group(1) else
                          {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(m.group(2), m.group(2)), raw)
    raise AssertionError(f"{key} not in hoodie.properties")


def nullable_list_elements(t: pa.DataType) -> pa.DataType:
    """Undo the two-level-list artefact described in the module docstring."""
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(nullable_list_elements(t.value_type)).with_nullable(True))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(nullable_list_elements(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field, t.item_field.with_type(nullable_list_elements(t.item_type)))
    return t


def spark_view(schema: pa.Schema, drop_meta: bool = True) -> pa.Schema:
    return pa.schema([f.with_type(nullable_list_elements(f.type)) for f in schema
                      if not (drop_meta and f.name in META_FIELDS)])


def base_files(root: Path) -> list[Path]:
    files = sorted(p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts)
    assert files
    return files


def commit_schema_for(root: Path, base_file: Path) -> str:
    """``extraMetadata.schema`` of the commit that wrote ``base_file`` (instant = file name suffix)."""
    instant = base_file.stem.rsplit("_", 1)[1]
    meta = json.loads((root / ".hoodie" / f"{instant}.commit").read_text())
    return meta["extraMetadata"]["schema"]


@pytest.fixture(scope="module", params=V6_TABLES)
def table(request, tmp_path_factory):
    name = request.param
    return name, unzip_table(tmp_path_factory.mktemp(name), name)


# --------------------------------------------------------------------------------------------------
# byte-for-byte against the fixtures
# --------------------------------------------------------------------------------------------------

def test_commit_schema_is_byte_identical(table):
    name, root = table
    for f in base_files(root):
        arrow = spark_view(pq.read_schema(f))
        assert to_json(arrow_to_avro(arrow, name)) == commit_schema_for(root, f), f


def test_footer_schema_is_byte_identical(table):
    name, root = table
    for f in base_files(root):
        footer = pq.read_metadata(f).metadata[b"parquet.avro.schema"].decode()
        arrow = spark_view(pq.read_schema(f))
        assert to_json(add_meta_fields(arrow_to_avro(arrow, name))) == footer, f
        # meta columns in the input are dropped, then put back in Hudi's order
        with_meta = spark_view(pq.read_schema(f), drop_meta=False)
        assert [x.name for x in with_meta][:5] == list(META_FIELDS)
        assert to_json(add_meta_fields(arrow_to_avro(with_meta, name))) == footer


def test_create_schema_is_byte_identical(table):
    name, root = table
    expected = java_properties_value((root / ".hoodie" / "hoodie.properties").read_text(),
                                     "hoodie.table.create.schema")
    for f in base_files(root):
        arrow = spark_view(pq.read_schema(f))
        assert to_json(arrow_to_avro(arrow, name, style="create")) == expected, f


def test_list_elements_are_the_only_nullability_gap(table):
    name, root = table
    f = base_files(root)[0]
    raw = pq.read_schema(f)
    footer = pq.read_metadata(f).metadata[b"parquet.avro.schema"].decode()
    truth = avro_to_arrow(footer)
    assert truth.equals(spark_view(raw, drop_meta=False))
    assert not truth.equals(raw)  # the gap is real: raw parquet says "array: ... not null"
    assert raw.field("arrayField").type.value_field.nullable is False
    assert truth.field("arrayField").type.value_field.nullable is True


def test_fixture_schemas_read_back_and_round_trip(table):
    name, root = table
    f = base_files(root)[0]
    commit = commit_schema_for(root, f)
    create = java_properties_value((root / ".hoodie" / "hoodie.properties").read_text(),
                                   "hoodie.table.create.schema")
    footer = pq.read_metadata(f).metadata[b"parquet.avro.schema"].decode()
    data = spark_view(pq.read_schema(f))
    # both union orders read to the same Arrow schema
    assert avro_to_arrow(commit).equals(data)
    assert avro_to_arrow(json.loads(create)).equals(data)
    assert avro_to_arrow(footer).names[:5] == list(META_FIELDS)
    # Avro -> Arrow -> Avro reproduces each stored string
    assert to_json(arrow_to_avro(avro_to_arrow(commit), name)) == commit
    assert to_json(arrow_to_avro(avro_to_arrow(create), name, "create")) == create
    assert to_json(add_meta_fields(arrow_to_avro(avro_to_arrow(footer), name))) == footer
    assert to_json(json.loads(footer)) == footer


def test_fixture_types_map_as_spark_does(table):
    name, root = table
    commit = json.loads(commit_schema_for(root, base_files(root)[0]))
    fields = {f["name"]: f for f in commit["fields"]}
    assert commit["name"] == f"{name}_record" and commit["namespace"] == f"hoodie.{name}"
    assert fields["byteField"]["type"] == ["null", "int"]  # ByteType -> int
    assert fields["decimalField"]["type"][1] == {
        "type": "fixed", "name": "fixed", "namespace": f"hoodie.{name}.{name}_record.decimalField",
        "size": 5, "logicalType": "decimal", "precision": 10, "scale": 5}
    arrow = avro_to_arrow(commit)
    assert arrow.field("timestampField").type == pa.timestamp("us", tz="UTC")
    assert arrow.field("dateField").type == pa.date32()
    assert arrow.field("decimalField").type == pa.decimal128(10, 5)
    assert arrow.field("binaryField").type == pa.binary()


# --------------------------------------------------------------------------------------------------
# Arrow -> Avro rules
# --------------------------------------------------------------------------------------------------

def everything() -> pa.Schema:
    point = pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64(), nullable=False)])
    return pa.schema([
        pa.field("b", pa.bool_()),
        pa.field("i", pa.int32(), nullable=False),
        pa.field("l", pa.int64()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.float64()),
        pa.field("s", pa.string(), metadata={"comment": "a comment"}),
        pa.field("bin", pa.binary()),
        pa.field("dec", pa.decimal128(10, 5)),
        pa.field("dec38", pa.decimal128(38, 0), nullable=False),
        pa.field("dec_wide", pa.decimal256(50, 10)),
        pa.field("day", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("ts_ms", pa.timestamp("ms", tz="UTC")),
        pa.field("ts_ntz", pa.timestamp("us")),
        pa.field("ts_ntz_ms", pa.timestamp("ms")),
        pa.field("t_ms", pa.time32("ms")),
        pa.field("t_us", pa.time64("us")),
        pa.field("nothing", pa.null()),
        pa.field("ints", pa.list_(pa.field("element", pa.int32()))),
        pa.field("req_ints", pa.list_(pa.field("element", pa.int32(), nullable=False)), nullable=False),
        pa.field("decs", pa.list_(pa.field("element", pa.decimal128(4, 2)))),
        pa.field("points", pa.list_(pa.field("element", point))),
        pa.field("nested_lists", pa.list_(pa.field("element", pa.list_(pa.field("element", pa.string()))))),
        pa.field("by_name", pa.map_(pa.field("key", pa.string(), False), pa.field("value", point))),
        pa.field("counts", pa.map_(pa.field("key", pa.string(), False), pa.field("value", pa.int64(), False))),
        pa.field("nested", pa.struct([
            pa.field("a", pa.string()),
            pa.field("inner", pa.struct([pa.field("z", pa.decimal128(20, 2)), pa.field("w", pa.date32())])),
            pa.field("tags", pa.list_(pa.field("element", point))),
        ])),
        pa.field("choice", pa.struct([pa.field("member0", pa.int32()), pa.field("member1", pa.string())])),
    ])


@pytest.mark.parametrize("style", ["commit", "create"])
def test_round_trip_all_types(style):
    s = everything()
    avro = arrow_to_avro(s, "tbl", style=style)
    back = avro_to_arrow(to_json(avro))
    assert back.equals(s), f"\n{back}\n!=\n{s}"
    if style == "commit":  # comments travel as field doc only in the commit shape (as in Hudi)
        assert back.equals(s, check_metadata=True)
        assert back.field("s").metadata == {b"comment": b"a comment"}


def test_commit_style_details():
    avro = arrow_to_avro(everything(), "tbl")
    f = {x["name"]: x for x in avro["fields"]}
    assert (avro["name"], avro["namespace"]) == ("tbl_record", "hoodie.tbl")
    assert f["b"] == {"name": "b", "type": ["null", "boolean"], "default": None}
    assert f["i"] == {"name": "i", "type": "int"}  # non-nullable: plain type, no default
    assert f["s"] == {"name": "s", "type": ["null", "string"], "doc": "a comment", "default": None}
    assert f["dec38"]["type"]["size"] == 16
    assert f["ts_ntz"]["type"] == ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]
    assert f["ts_ms"]["type"] == ["null", {"type": "long", "logicalType": "timestamp-millis"}]
    assert f["nothing"] == {"name": "nothing", "type": "null"}  # Spark never unions NullType
    assert f["req_ints"]["type"] == {"type": "array", "items": "int"}
    assert f["counts"]["type"] == ["null", {"type": "map", "values": "long"}]
    # decimals inside arrays and structs: fixed named after the column, namespaced below its record
    assert f["decs"]["type"][1]["items"][1]["namespace"] == "hoodie.tbl.tbl_record.decs"
    inner = f["nested"]["type"][1]["fields"][1]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("inner", "hoodie.tbl.tbl_record.nested")
    assert inner["fields"][0]["type"][1]["namespace"] == "hoodie.tbl.tbl_record.nested.inner.z"
    tags_item = f["nested"]["type"][1]["fields"][2]["type"][1]["items"][1]
    assert (tags_item["name"], tags_item["namespace"]) == ("tags", "hoodie.tbl.tbl_record.nested")
    # struct<member0, member1> is Spark's rendering of an Avro union, so it goes back to a union
    assert f["choice"]["type"] == ["null", "int", "string"] and f["choice"]["default"] is None


def test_create_style_details():
    avro = arrow_to_avro(everything(), "tbl", style="create")
    f = {x["name"]: x for x in avro["fields"]}
    assert f["b"] == {"name": "b", "type": ["boolean", "null"]}
    assert f["s"] == {"name": "s", "type": ["string", "null"]}  # no doc, no default
    assert f["points"]["type"][0]["items"][1] == "null"
    assert f["choice"]["type"] == ["null", "int", "string"]
    assert "default" not in to_json(avro)


@pytest.mark.parametrize("precision,size", [(1, 1), (2, 1), (3, 2), (4, 2), (9, 4), (10, 5), (18, 8),
                                            (19, 9), (38, 16), (76, 32)])
def test_decimal_fixed_size(precision, size):
    t = pa.decimal128(precision, 0) if precision <= 38 else pa.decimal256(precision, 0)
    avro = arrow_to_avro(pa.schema([pa.field("x", t, nullable=False)]), "t")
    assert avro["fields"][0]["type"]["size"] == size


def test_small_ints_become_int():
    s = pa.schema([pa.field("a", pa.int8()), pa.field("b", pa.int16()), pa.field("c", pa.uint16())])
    assert [f["type"] for f in arrow_to_avro(s, "t")["fields"]] == [["null", "int"]] * 3
    assert avro_to_arrow(arrow_to_avro(s, "t")).types == [pa.int32()] * 3


def test_table_names_are_sanitized_like_hudi():
    assert sanitize_name("my-table.v2") == "my__table__v2"
    assert sanitize_name("1st") == "__st"
    assert record_name_and_namespace("1st table") == ("__st__table_record", "hoodie.__st__table")
    avro = arrow_to_avro(pa.schema([pa.field("a", pa.int32())]), "my-table")
    assert (avro["name"], avro["namespace"]) == ("my__table_record", "hoodie.my__table")


@pytest.mark.parametrize("field,match", [
    (pa.field("bad-name", pa.int32()), "not a valid Avro name"),
    (pa.field("1abc", pa.int32()), "not a valid Avro name"),
    (pa.field("ts", pa.timestamp("ns")), "cast it to 'us'"),
    (pa.field("ts", pa.timestamp("s", tz="UTC")), "cast it to 'us'"),
    (pa.field("m", pa.map_(pa.int32(), pa.string())), "string keys"),
    (pa.field("u", pa.uint64()), "uint64"),
    (pa.field("dur", pa.duration("us")), "no Avro/Hudi equivalent"),
])
def test_unwritable_columns_are_rejected(field, match):
    with pytest.raises(ValueError, match=match):
        arrow_to_avro(pa.schema([field]), "t")


def test_unknown_style_rejected():
    with pytest.raises(ValueError, match="style"):
        arrow_to_avro(pa.schema([pa.field("a", pa.int32())]), "t", style="footer")


# --------------------------------------------------------------------------------------------------
# meta fields
# --------------------------------------------------------------------------------------------------

def test_add_meta_fields():
    base = arrow_to_avro(pa.schema([pa.field("id", pa.int32())]), "t")
    out = add_meta_fields(base)
    assert [f["name"] for f in out["fields"]] == list(META_FIELDS) + ["id"]
    assert out["fields"][0] == {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "",
                                "default": None}
    assert to_json(out).startswith('{"type":"record","name":"t_record","namespace":"hoodie.t","fields":'
                                   '[{"name":"_hoodie_commit_time","type":["null","string"],"doc":"",'
                                   '"default":null},')
    assert base["fields"] == [{"name": "id", "type": ["null", "int"], "default": None}]  # input untouched
    # idempotent: existing meta fields are replaced, not duplicated
    assert add_meta_fields(out) == out
    assert add_meta_fields(to_json(out)) == out
    op = add_meta_fields(base, with_operation=True)
    assert [f["name"] for f in op["fields"]][5] == OPERATION_FIELD


def test_meta_fields_read_as_nullable_strings():
    avro = add_meta_fields(arrow_to_avro(pa.schema([pa.field("id", pa.int64(), nullable=False)]), "t"))
    arrow = avro_to_arrow(avro)
    assert arrow.names == list(META_FIELDS) + ["id"]
    assert all(arrow.field(n).type == pa.string() and arrow.field(n).nullable for n in META_FIELDS)
    assert arrow.field("id").nullable is False
    # and arrow_to_avro drops them again unless asked to keep them
    assert [f["name"] for f in arrow_to_avro(arrow, "t")["fields"]] == ["id"]
    assert len(arrow_to_avro(arrow, "t", keep_meta_fields=True)["fields"]) == 6


# --------------------------------------------------------------------------------------------------
# Avro -> Arrow on schemas Spark would not write
# --------------------------------------------------------------------------------------------------

def test_avro_to_arrow_general_avro():
    avro = {
        "type": "record", "name": "r", "namespace": "ns", "fields": [
            {"name": "a", "type": ["int", "null"]},
            {"name": "b", "type": ["null", "int"], "default": None},
            {"name": "c", "type": "int"},
            {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
            {"name": "e2", "type": ["null", "Color"]},  # reference by short name in the same namespace
            {"name": "p", "type": {"type": "record", "name": "P", "fields": [{"name": "x", "type": "long"}]}},
            {"name": "p2", "type": "ns.P"},  # reference by full name
            {"name": "bd", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}},
            {"name": "fx", "type": {"type": "fixed", "name": "md5", "size": 16}},
            {"name": "tiny", "type": {"type": "fixed", "name": "tiny", "size": 1,
                                      "logicalType": "decimal", "precision": 9, "scale": 0}},
            {"name": "tm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "ltm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "ltu", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {"name": "uuid", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "il", "type": ["int", "long"]},
            {"name": "fd", "type": ["null", "float", "double"]},
            {"name": "mix", "type": ["null", "string", "int", "P"]},
            {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
            {"name": "arr", "type": {"type": "array", "items": "string"}},
            {"name": "doc", "type": "string", "doc": "explained"},
        ]}
    arrow = avro_to_arrow(json.dumps(avro))
    t = {f.name: f for f in arrow}
    assert (t["a"].type, t["a"].nullable) == (pa.int32(), True)
    assert (t["b"].type, t["b"].nullable) == (pa.int32(), True)
    assert t["c"].nullable is False
    assert t["e"].type == pa.string() and t["e2"].type == pa.string() and t["e2"].nullable
    assert t["p"].type == t["p2"].type == pa.struct([pa.field("x", pa.int64(), False)])
    assert t["bd"].type == pa.decimal128(5, 2)
    assert t["fx"].type == pa.binary(16)
    assert t["tiny"].type == pa.binary(1)  # precision does not fit 1 byte: Avro ignores the annotation
    assert t["tm"].type == pa.timestamp("ms", tz="UTC")
    assert t["ltm"].type == pa.timestamp("ms")
    assert t["ltu"].type == pa.timestamp("us")
    assert t["uuid"].type == pa.string()
    assert (t["il"].type, t["il"].nullable) == (pa.int64(), False)
    assert (t["fd"].type, t["fd"].nullable) == (pa.float64(), True)
    assert t["mix"].type == pa.struct([pa.field("member0", pa.string()), pa.field("member1", pa.int32()),
                                       pa.field("member2", t["p"].type)])
    assert t["m"].type == pa.map_(pa.field("key", pa.string(), False), pa.field("value", pa.string()))
    assert t["arr"].type.value_field.nullable is False
    assert t["doc"].metadata == {b"comment": b"explained"}


def test_avro_to_arrow_rejects_recursion_and_non_records():
    rec = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
    with pytest.raises(ValueError, match="recursive"):
        avro_to_arrow(rec)
    with pytest.raises(ValueError, match="record"):
        avro_to_arrow('"string"')


# --------------------------------------------------------------------------------------------------
# JSON text
# --------------------------------------------------------------------------------------------------

def test_to_json_matches_avro_java_layout():
    assert to_json({"a": [1, None, True, False], "b": {"c": "d"}}) == '{"a":[1,null,true,false],"b":{"c":"d"}}'
    assert to_json({"doc": 'q"\\\n\tü\x01'}) == '{"doc":"q\\"\\\\\\n\\tü\\u0001"}'
    assert to_json({"default": [1.0, 0.001, 1e7, 1.5e-5, -2.25]}) == '{"default":[1.0,0.001,1.0E7,1.5E-5,-2.25]}'


# --------------------------------------------------------------------------------------------------
# schema evolution
# --------------------------------------------------------------------------------------------------

def _s(*fields: pa.Field) -> pa.Schema:
    return pa.schema(list(fields))


OLD = _s(pa.field("id", pa.int32(), False), pa.field("n", pa.int32()), pa.field("f", pa.float32()),
         pa.field("name", pa.string()), pa.field("amount", pa.decimal128(10, 2)),
         pa.field("ts", pa.timestamp("us", tz="UTC")),
         pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
         pa.field("xs", pa.list_(pa.int32())),
         pa.field("m", pa.map_(pa.string(), pa.int32())))


@pytest.mark.parametrize("new", [
    OLD,
    _s(*OLD, pa.field("extra", pa.string())),  # add nullable column
    _s(*[f for f in OLD if f.name != "name"]),  # dropped column reads as null
    _s(*[f.with_type(pa.int64()) if f.name == "n" else f for f in OLD]),  # int -> long
    _s(*[f.with_type(pa.float64()) if f.name == "n" else f for f in OLD]),  # int -> double
    _s(*[f.with_type(pa.float64()) if f.name == "f" else f for f in OLD]),  # float -> double
    _s(*[f.with_type(pa.int16()) if f.name == "n" else f for f in OLD]),  # same Avro int
    _s(*[f.with_type(pa.large_string()) if f.name == "name" else f for f in OLD]),
    _s(*[f.with_type(pa.decimal128(12, 3)) if f.name == "amount" else f for f in OLD]),
    _s(*[f.with_type(pa.timestamp("ms", tz="UTC")) if f.name == "ts" else f for f in OLD]),
    _s(*[f.with_nullable(True) if f.name == "id" else f for f in OLD]),  # required -> nullable
    _s(*[f.with_type(pa.struct([pa.field("a", pa.int64()), pa.field("c", pa.date32())]))
         if f.name == "st" else f for f in OLD]),  # nested widen + add + drop
    _s(*[f.with_type(pa.list_(pa.int64())) if f.name == "xs" else f for f in OLD]),
    _s(*[f.with_type(pa.map_(pa.string(), pa.float64())) if f.name == "m" else f for f in OLD]),
], ids=lambda s: ",".join(f"{f.name}:{f.type}" for f in s)[:60])
def test_compatible_changes(new):
    assert arrow_schema_compatible(OLD, new) is None


@pytest.mark.parametrize("change,column", [
    (("n", pa.string()), "n"),  # int -> string
    (("f", pa.int64()), "f"),  # narrowing
    (("name", pa.int32()), "name"),  # string stays string
    (("amount", pa.decimal128(10, 1)), "amount"),  # loses a fraction digit
    (("amount", pa.decimal128(9, 2)), "amount"),  # loses an integer digit
    (("ts", pa.timestamp("us")), "ts"),  # instant -> local time
    (("st", pa.struct([pa.field("a", pa.string())])), "st.a"),
    (("st", pa.string()), "st"),
    (("xs", pa.list_(pa.string())), "xs.element"),
    (("m", pa.map_(pa.string(), pa.string())), "m.value"),
])
def test_incompatible_type_changes_name_the_column(change, column):
    name, new_type = change
    new = _s(*[f.with_type(new_type) if f.name == name else f for f in OLD])
    msg = arrow_schema_compatible(OLD, new)
    assert msg is not None and f"'{column}'" in msg and "cannot change type" in msg


def test_new_required_column_is_rejected():
    msg = arrow_schema_compatible(OLD, _s(*OLD, pa.field("must", pa.int32(), nullable=False)))
    assert msg is not None and "'must'" in msg and "nullable" in msg
    nested = _s(*[f.with_type(pa.struct([*f.type, pa.field("c", pa.int32(), False)])) if f.name == "st" else f
                  for f in OLD])
    assert "'st.c'" in arrow_schema_compatible(OLD, nested)


def test_nullable_cannot_become_required():
    new = _s(*[f.with_nullable(False) if f.name == "name" else f for f in OLD])
    msg = arrow_schema_compatible(OLD, new)
    assert msg is not None and "'name'" in msg and "nullable" in msg
    new = _s(*[f.with_type(pa.list_(pa.field("element", pa.int32(), False))) if f.name == "xs" else f
               for f in OLD])
    assert "'xs.element'" in arrow_schema_compatible(OLD, new)


def test_first_offending_column_is_reported():
    new = _s(*[f.with_type(pa.string()) if f.name in ("n", "f") else f for f in OLD])
    assert "'n'" in arrow_schema_compatible(OLD, new)


def test_a_batch_without_nulls_in_nullable_columns_is_no_schema_change():
    """Hudi's writer reconciles nullability: Spark marks literals non-nullable, and a batch that
    sets a nullable column with one keeps the table's schema."""
    from hudi_engine.schema.avro import reconcile_nullability

    strict = _s(*[f.with_nullable(False) if f.name in ("name", "xs") else f for f in OLD])
    strict = _s(*[f.with_type(pa.list_(pa.field("element", pa.int32(), False))) if f.name == "xs" else f
                  for f in strict], pa.field("extra", pa.int32(), nullable=False))
    assert arrow_schema_compatible(OLD, strict) is not None
    reconciled = reconcile_nullability(strict, OLD)
    assert "'extra' is new and not nullable" in arrow_schema_compatible(OLD, reconciled)
    assert arrow_schema_compatible(OLD, reconcile_nullability(pa.schema(list(strict)[:-1]), OLD)) is None
    assert reconciled.field("name").nullable and reconciled.field("xs").type.value_field.nullable
    assert not reconciled.field("extra").nullable, "a new column keeps its own nullability"
