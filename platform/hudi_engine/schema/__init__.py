"""Table schemas: Arrow in the engine, Avro JSON on disk (the shapes Hudi's Spark writer records)."""
from .avro import (
    META_FIELDS,
    OPERATION_FIELD,
    add_meta_fields,
    arrow_schema_compatible,
    arrow_to_avro,
    avro_to_arrow,
    record_name_and_namespace,
    sanitize_name,
    to_json,
)

__all__ = [
    "META_FIELDS",
    "OPERATION_FIELD",
    "add_meta_fields",
    "arrow_schema_compatible",
    "arrow_to_avro",
    "avro_to_arrow",
    "record_name_and_namespace",
    "sanitize_name",
    "to_json",
]
