"""Schema providers (Hudi's FilebasedSchemaProvider and SchemaRegistryProvider)."""
from hudi_engine.config import define

SOURCE_SCHEMA_FILE = define(
    "hoodie.streamer.schemaprovider.source.schema.file", None,
    "Avro schema (.avsc) of the incoming records; read with pyarrow.fs, so local, s3://, gs://...",
    alternatives=("hoodie.deltastreamer.schemaprovider.source.schema.file",))
TARGET_SCHEMA_FILE = define(
    "hoodie.streamer.schemaprovider.target.schema.file", None,
    "Avro schema of the records after transformation (default: the source schema).",
    alternatives=("hoodie.deltastreamer.schemaprovider.target.schema.file",))
REGISTRY_URL = define(
    "hoodie.streamer.schemaprovider.registry.url", None,
    "Confluent schema registry URL of the source schema, e.g. "
    "http://registry:8081/subjects/orders-value/versions/latest.",
    alternatives=("hoodie.deltastreamer.schemaprovider.registry.url",))
REGISTRY_TARGET_URL = define(
    "hoodie.streamer.schemaprovider.registry.targetUrl", None,
    "Schema registry URL of the target schema (default: the source's).",
    alternatives=("hoodie.deltastreamer.schemaprovider.registry.targetUrl",))
