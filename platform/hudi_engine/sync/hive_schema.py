"""The table schema as Hive and Spark see it: Hive column types (HiveSchemaUtil's mapping of the
Parquet Hudi writes), and the ``spark.sql.sources.*`` properties and serde parameters that make
Spark read the metastore table as a ``hudi`` data source table (SparkDataSourceTableUtils)."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

from .errors import HiveSyncError

INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
SERDE_PATH = "path"                          # where Spark reads a data source table from
SERDE_READ_OPTIMIZED = "hoodie.query.as.ro.table"
SPARK_PROVIDER = "spark.sql.sources.provider"
SPARK_SCHEMA_PREFIX = "spark.sql.sources.schema."


@dataclass(frozen=True)
class Column:
    name: str
    type: str                   # Hive type, lower case, no spaces (as the metastore returns it)
    comment: str | None = None  # None: comments are not synced


def hive_columns(schema: pa.Schema, support_timestamp: bool, with_comments: bool) -> list[Column]:
    return [Column(f.name, hive_type(f.type, support_timestamp, f.name),
                   (_comment(f) or "") if with_comments else None) for f in schema]


def split_partition_keys(columns: list[Column], partition_fields: tuple[str, ...]
                         ) -> tuple[list[Column], list[Column]]:
    """Data columns and partition keys. Hive keeps them apart; a key's type is its column's type,
    or string when the schema lacks it (e.g. a ``datestr`` made by the extractor)."""
    by_name = {c.name.lower(): c for c in columns}
    wanted = {f.lower() for f in partition_fields}
    keys = [Column(f.lower(), by_name[f.lower()].type if f.lower() in by_name else "string",
                   by_name[f.lower()].comment if f.lower() in by_name else None)
            for f in partition_fields]
    return [c for c in columns if c.name.lower() not in wanted], keys


def hive_type(t: pa.DataType, support_timestamp: bool, path: str) -> str:
    if pa.types.is_struct(t):
        fields = ",".join(f"{f.name.replace('-', '_')}:{hive_type(f.type, support_timestamp, f'{path}.{f.name}')}"
                          for f in t)
        return f"struct<{fields}>"
    if pa.types.is_map(t):
        return (f"map<{hive_type(t.key_type, support_timestamp, path)},"
                f"{hive_type(t.item_type, support_timestamp, path)}>")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"array<{hive_type(t.value_type, support_timestamp, path)}>"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if support_timestamp else "bigint"
    for check, name in _HIVE_LEAVES:
        if check(t):
            return name
    raise HiveSyncError(f"column {path!r} has type {t}, which has no Hive equivalent")


_HIVE_LEAVES = ((pa.types.is_boolean, "boolean"), (pa.types.is_int32, "int"), (pa.types.is_int64, "bigint"),
                (pa.types.is_float32, "float"), (pa.types.is_float64, "double"),
                (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
                (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"),
                (pa.types.is_fixed_size_binary, "binary"), (pa.types.is_date32, "date"),
                (pa.types.is_time32, "int"), (pa.types.is_time64, "bigint"))


# --- Spark data source table ---------------------------------------------------------------------
def spark_table_properties(schema: pa.Schema, partition_fields: tuple[str, ...], threshold: int) -> dict[str, str]:
    """Provider, schema JSON cut into ``threshold``-sized parts, and partition columns. Spark wants
    partition columns last in the schema; one the schema lacks is added as a string."""
    by_name = {f.name.lower(): f for f in schema}
    keys = [by_name.get(p.lower()) or pa.field(p, pa.string()) for p in partition_fields]
    key_names = {k.name for k in keys}
    fields = [f for f in schema if f.name not in key_names] + keys
    text = json.dumps({"type": "struct", "fields": [_spark_field(f) for f in fields]}, separators=(",", ":"))
    parts = [text[i:i + threshold] for i in range(0, len(text), threshold)]
    props = {SPARK_PROVIDER: "hudi", SPARK_SCHEMA_PREFIX + "numParts": str(len(parts))}
    props.update({f"{SPARK_SCHEMA_PREFIX}part.{i}": part for i, part in enumerate(parts)})
    if keys:
        props[SPARK_SCHEMA_PREFIX + "numPartCols"] = str(len(keys))
        props.update({f"{SPARK_SCHEMA_PREFIX}partCol.{i}": k.name for i, k in enumerate(keys)})
    return props


def spark_serde_properties(location: str, read_optimized: bool) -> dict[str, str]:
    return {SERDE_PATH: location, SERDE_READ_OPTIMIZED: "true" if read_optimized else "false"}


def _spark_field(f: pa.Field) -> dict:
    comment = _comment(f)
    return {"name": f.name, "type": _spark_type(f.type, f.name), "nullable": f.nullable,
            "metadata": {"comment": comment} if comment else {}}


def _spark_type(t: pa.DataType, path: str):
    """Spark's type JSON as Hudi derives it from the Avro schema (time-* stay integer/long)."""
    if pa.types.is_struct(t):
        return {"type": "struct", "fields": [_spark_field(f) for f in t]}
    if pa.types.is_map(t):
        return {"type": "map", "keyType": "string", "valueType": _spark_type(t.item_type, path),
                "valueContainsNull": t.item_field.nullable}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "elementType": _spark_type(t.value_type, path),
                "containsNull": t.value_field.nullable}
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp"
    hive = hive_type(t, False, path)
    return _SPARK_BY_HIVE.get(hive, hive)


_SPARK_BY_HIVE = {"int": "integer", "bigint": "long"}


def _comment(f: pa.Field) -> str | None:
    raw = (f.metadata or {}).get(b"comment")
    return raw.decode("utf-8") if raw else None
