"""A HudiTable's declared columns as the Avro schema the streamer's FilebasedSchemaProvider reads,
made by the engine's own Arrow → Avro conversion so it is the schema the table will store."""
from __future__ import annotations

import pyarrow as pa

from hudi_engine.api import arrow_to_avro, to_json

_TYPES = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
          "double": pa.float64(), "boolean": pa.bool_(), "date": pa.date32(),
          "timestamp": pa.timestamp("us", tz="UTC"), "bytes": pa.binary()}


def columns_avro(columns, table_name: str) -> str:
    """Avro JSON of the declared ``columns`` (ColumnSpec) of table ``table_name``."""
    fields = []
    for column in columns:
        kind = pa.decimal128(column.precision, column.scale or 0) if column.type == "decimal" \
            else _TYPES[column.type]
        metadata = {"comment": column.comment} if column.comment else None
        fields.append(pa.field(column.name, kind, nullable=column.nullable, metadata=metadata))
    return to_json(arrow_to_avro(pa.schema(fields), table_name))
