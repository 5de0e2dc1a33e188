"""Table schema -> Hive columns and Spark data source properties (no metastore needed)."""
import json

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

from hudi_engine.schema.avro import avro_to_arrow
from hudi_engine.sync.errors import HiveSyncError
from hudi_engine.sync.hive_schema import Column, hive_columns, spark_table_properties, split_partition_keys

AVRO = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "id", "type": "int"},
    {"name": "big", "type": ["null", "long"], "default": None, "doc": "a long"},
    {"name": "f", "type": "float"}, {"name": "d", "type": "double"}, {"name": "ok", "type": "boolean"},
    {"name": "s", "type": "string"}, {"name": "b", "type": "bytes"},
    {"name": "dec", "type": {"type": "fixed", "name": "fixed", "size": 5, "logicalType": "decimal",
                             "precision": 10, "scale": 5}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "nested", "type": {"type": "record", "name": "nested", "fields": [
        {"name": "x-y", "type": "int"},
        {"name": "inner", "type": {"type": "record", "name": "inner", "fields": [{"name": "z", "type": "double"}]}}]}},
    {"name": "region", "type": "string"},
]}
SCHEMA = avro_to_arrow(AVRO)


def types(columns):
    return [(c.name, c.type) for c in columns]


def test_hive_types_follow_hudis_parquet_mapping():
    assert types(hive_columns(SCHEMA, support_timestamp=False, with_comments=False)) == [
        ("id", "int"), ("big", "bigint"), ("f", "float"), ("d", "double"), ("ok", "boolean"),
        ("s", "string"), ("b", "binary"), ("dec", "decimal(10,5)"), ("day", "date"), ("at", "bigint"),
        ("tm", "int"), ("tags", "array<string>"), ("attrs", "map<string,bigint>"),
        ("nested", "struct<x_y:int,inner:struct<z:double>>"), ("region", "string")]


def test_support_timestamp_and_comments():
    columns = {c.name: c for c in hive_columns(SCHEMA, support_timestamp=True, with_comments=True)}
    assert columns["at"].type == "timestamp"
    assert columns["big"].comment == "a long" and columns["id"].comment == ""
    assert all(c.comment is None for c in hive_columns(SCHEMA, False, with_comments=False))


def test_unsupported_type_names_the_column():
    with pytest.raises(HiveSyncError, match="'odd'"):
        hive_columns(pa.schema([pa.field("odd", pa.duration("s"))]), False, False)


def test_partition_keys_leave_the_columns_and_keep_their_type():
    columns = hive_columns(SCHEMA, False, False)
    data, keys = split_partition_keys(columns, ("region", "datestr", "ID"))
    assert keys == [Column("region", "string"), Column("datestr", "string"), Column("id", "int")]
    assert [c.name for c in data] == [c.name for c in columns if c.name not in ("region", "id")]


def spark_schema(props):
    text = "".join(props[f"spark.sql.sources.schema.part.{i}"]
                   for i in range(int(props["spark.sql.sources.schema.numParts"])))
    return StructType.fromJson(json.loads(text))


def test_spark_properties_parse_as_a_spark_schema_with_partition_columns_last():
    props = spark_table_properties(SCHEMA, ("region", "datestr"), threshold=4000)
    assert props["spark.sql.sources.provider"] == "hudi"
    assert (props["spark.sql.sources.schema.numPartCols"], props["spark.sql.sources.schema.partCol.0"],
            props["spark.sql.sources.schema.partCol.1"]) == ("2", "region", "datestr")
    schema = spark_schema(props)
    assert schema.fieldNames()[-2:] == ["region", "datestr"]
    assert schema["big"].metadata == {"comment": "a long"}
    assert schema["id"].dataType.simpleString() == "int" and not schema["id"].nullable
    assert schema["at"].dataType.simpleString() == "timestamp"
    assert schema["tm"].dataType.simpleString() == "int"   # Hudi keeps Avro time-millis an integer
    assert schema["attrs"].dataType.simpleString() == "map<string,bigint>"
    assert schema["nested"].dataType.simpleString() == "struct<x-y:int,inner:struct<z:double>>"
    assert schema["datestr"].dataType.simpleString() == "string"


def test_long_schema_is_cut_into_parts_and_unpartitioned_has_no_part_cols():
    props = spark_table_properties(SCHEMA, (), threshold=100)
    assert int(props["spark.sql.sources.schema.numParts"]) > 5
    assert all(len(props[f"spark.sql.sources.schema.part.{i}"]) <= 100
               for i in range(int(props["spark.sql.sources.schema.numParts"])))
    assert spark_schema(props).fieldNames() == SCHEMA.names
    assert not [k for k in props if "PartCol" in k or "partCol" in k]
