"""Where a source's record schema comes from when it is not inferred: an Avro schema file
(FilebasedSchemaProvider) or a Confluent schema registry (SchemaRegistryProvider).

Schemas are returned as Avro JSON strings; ``spark_struct`` turns one into the Spark schema the
readers apply, through the engine's Avro → Arrow mapping, so types match what the table stores.
"""
from __future__ import annotations

import json
import posixpath
import urllib.request
from typing import Mapping

from hudi_engine.api import avro_to_arrow
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.storage import Storage

from .keys import schema as K

FILE_BASED = "FilebasedSchemaProvider"
REGISTRY = "SchemaRegistryProvider"
_PACKAGE = "org.apache.hudi.utilities.schema."


def provider_name(class_name: str | None) -> str | None:
    """The short name of a schema provider class, accepting Hudi's fully qualified names."""
    if not class_name:
        return None
    short = class_name[len(_PACKAGE):] if class_name.startswith(_PACKAGE) else class_name
    if short not in (FILE_BASED, REGISTRY):
        raise HoodieConfigError(
            f"--schemaprovider-class {class_name!r} is not supported; use {FILE_BASED} (an Avro "
            f"schema file) or {REGISTRY} (a Confluent schema registry), or leave it out to infer")
    return short


def source_schema(class_name: str | None, props: Mapping[str, str]) -> str | None:
    """The source's Avro schema JSON, or None when the schema is to be inferred."""
    name = provider_name(class_name)
    cfg = HoodieConfig(props)
    if name == FILE_BASED:
        return read_schema_file(cfg.require(K.SOURCE_SCHEMA_FILE, f"{FILE_BASED} reads the schema from it"))
    if name == REGISTRY:
        return fetch_registry_schema(cfg.require(K.REGISTRY_URL, f"{REGISTRY} fetches the schema from it"))
    return None


def read_schema_file(path: str) -> str:
    text = Storage(posixpath.dirname(path) or ".").read_text(posixpath.basename(path))
    _check_avro(text, path)
    return text


def fetch_registry_schema(url: str, timeout: float = 30.0) -> str:
    """The ``schema`` of a registry answer (``/subjects/<s>/versions/<v>`` or ``/schemas/ids/<id>``)."""
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.schemaregistry.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.load(response)
    except OSError as exc:
        raise HoodieConfigError(f"could not fetch the schema from the schema registry at {url}: {exc}") from exc
    if "schema" not in answer:
        raise HoodieConfigError(f"the schema registry at {url} answered without a schema: {answer}")
    _check_avro(answer["schema"], url)
    return answer["schema"]


def spark_struct(avro_json: str):
    """The Spark StructType of an Avro record schema."""
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(avro_to_arrow(avro_json))


def _check_avro(text: str, where: str) -> None:
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HoodieConfigError(f"the schema at {where} is not JSON: {exc}") from exc
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise HoodieConfigError(f"the schema at {where} must be an Avro record schema "
                                f'({{"type": "record", "name": ..., "fields": [...]}})')
