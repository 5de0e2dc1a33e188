"""Kafka message values → records, on the executors: text for JSON (Spark parses it), Avro binary
with a known schema, or the Confluent wire format (magic byte 0, 4-byte big-endian schema id, Avro
binary) whose writer schema the schema registry serves by id.

A value that cannot be decoded raises :class:`DecodeError` with a message for a person; the reader
turns it into an error record and goes on with the batch. Only a registry that cannot be reached
fails the task, since then every record would be wrong.
"""
from __future__ import annotations

import base64
import io
import json
import struct
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable

import fastavro
import pyarrow as pa

from hudi_engine.api import avro_to_arrow
from hudi_engine.errors import HoodieConfigError, HoodieError

from .avro_values import arrow_values

MAGIC_BYTE = 0
WIRE_HEADER = 5
_DESERIALIZER = "hoodie.streamer.source.kafka.value.deserializer.class"

_SCHEMAS: dict[tuple[str, int], str] = {}     # (registry, id) → schema, shared by a worker's tasks
_SCHEMAS_LOCK = threading.Lock()


class DecodeError(ValueError):
    """One value cannot be turned into a record."""


class SchemaRegistryError(HoodieError):
    """The schema registry cannot be asked (unreachable, refused, answered nonsense)."""


def registry_base(url: str) -> str:
    """The registry's base URL from a schema URL such as
    ``http://registry:8081/subjects/orders-value/versions/latest``."""
    base = url.split("/subjects", 1)[0].split("/schemas/ids/", 1)[0]
    return base.rstrip("/")


def raw_text(value: bytes) -> str:
    """A value as an error record keeps it: its text when it is printable UTF-8 text, else base64
    (binary that happens to be valid UTF-8 would be unreadable and ambiguous as text)."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\t\n\r" for c in text):
        return text
    return base64.b64encode(value).decode("ascii")


def utf8_text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"the value is not UTF-8 text (byte {exc.start} is 0x{value[exc.start]:02x}), "
                          "so it cannot be JSON") from None


class RegistryClient:
    """Schemas by id from a Confluent schema registry (``GET <base>/schemas/ids/<id>``), each
    fetched once per process."""

    def __init__(self, urls: str, user_info: str | None = None, timeout: float = 30.0):
        self.bases: list[str] = []
        self._auth: dict[str, str] = {}
        for url in (u.strip() for u in urls.split(",") if u.strip()):
            parts = urllib.parse.urlsplit(registry_base(url))
            credentials = user_info or (urllib.parse.unquote(f"{parts.username}:{parts.password or ''}")
                                        if parts.username else None)
            host = parts.netloc.rsplit("@", 1)[-1]
            base = urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))
            self.bases.append(base)
            if credentials:
                self._auth[base] = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")
        if not self.bases:
            raise HoodieConfigError("no schema registry URL given to resolve Confluent wire-format schema ids")
        self.timeout = timeout

    def schema(self, schema_id: int) -> str | None:
        """The Avro schema JSON registered under ``schema_id``; None when the registry has no such id."""
        key = (self.bases[0], schema_id)
        with _SCHEMAS_LOCK:
            if key in _SCHEMAS:
                return _SCHEMAS[key]
        found = self._fetch(schema_id)
        if found is not None:                       # ids never change once given; misses are asked again
            with _SCHEMAS_LOCK:
                _SCHEMAS[key] = found
        return found

    def _fetch(self, schema_id: int) -> str | None:
        failures = []
        for base in self.bases:
            url = f"{base}/schemas/ids/{schema_id}"
            headers = {"Accept": "application/vnd.schemaregistry.v1+json"}
            if base in self._auth:
                headers["Authorization"] = self._auth[base]
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                            timeout=self.timeout) as response:
                    answer = json.load(response)
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return None
                failures.append(f"{url}: HTTP {exc.code} {exc.reason}")
                continue
            except (OSError, ValueError) as exc:
                failures.append(f"{url}: {exc}")
                continue
            kind = answer.get("schemaType", "AVRO")
            if kind != "AVRO" or "schema" not in answer:
                raise SchemaRegistryError(
                    f"schema id {schema_id} at {url} is a {kind} schema, not Avro; this source reads Avro only")
            return answer["schema"]
        raise SchemaRegistryError(f"could not fetch schema id {schema_id} from the schema registry "
                                  f"({'; '.join(failures)}); check schema.registry.url / the registry URL "
                                  "and that the registry is up")


class AvroDecoder:
    """Avro values decoded into records of the reader schema ``reader_schema`` (Avro JSON).

    ``wire``: values are in the Confluent wire format and are decoded with their writer's schema
    from ``registry``, then resolved into the reader schema by Avro's rules (added fields take
    their defaults, removed ones are dropped, int widens to long...). Otherwise values are plain
    Avro binary written with the reader schema itself.
    """

    def __init__(self, reader_schema: str, wire: bool, registry: RegistryClient | None = None):
        if wire and registry is None:
            raise HoodieConfigError("Confluent wire-format values need a schema registry to resolve their schema ids")
        self.wire = wire
        self.registry = registry
        self.reader = fastavro.parse_schema(json.loads(reader_schema), named_schemas={})
        self.arrow_type = pa.struct(list(avro_to_arrow(reader_schema)))
        self._arrow_ready = arrow_values(self.reader, error=DecodeError)
        self._writers: dict[int, tuple[Any, Callable[[dict], dict]]] = {}   # id → schema, its arrow_values

    def decode(self, value: bytes) -> dict:
        """The record of one value, ready for :meth:`to_arrow`."""
        if not self.wire:
            return self._arrow_ready(self._read(value, self.reader, None, "the source schema"))
        if len(value) < WIRE_HEADER or value[0] != MAGIC_BYTE:
            first = f"starts with byte 0x{value[0]:02x}" if value else "is empty"
            raise DecodeError(
                f"the value {first}, not the Confluent wire format (magic byte 0, then a 4-byte schema "
                f"id). If the topic holds plain Avro, set {_DESERIALIZER}=org.apache.kafka.common.serialization."
                f"ByteArrayDeserializer; if it holds JSON, read it with JsonKafkaSource, or for Debezium set "
                f"{_DESERIALIZER}=org.apache.kafka.common.serialization.StringDeserializer")
        schema_id = struct.unpack(">I", value[1:WIRE_HEADER])[0]
        writer, arrow_ready = self._writer(schema_id)
        return arrow_ready(self._read(value[WIRE_HEADER:], writer, None if writer == self.reader else self.reader,
                                      f"its writer schema (id {schema_id})"))

    def to_arrow(self, records: list[dict | None]) -> tuple[pa.StructArray, dict[int, str]]:
        """Decoded records (None for values that failed) as one Arrow column of the reader schema's
        type, and the positions of records Arrow refused (a decimal wider than its precision...)
        with why; those become null."""
        try:
            return pa.array(records, type=self.arrow_type), {}
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            pass
        refused: dict[int, str] = {}
        kept = list(records)
        for i, record in enumerate(records):
            if record is None:
                continue
            try:
                pa.array([record], type=self.arrow_type)
            except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
                refused[i] = f"the record does not fit the source schema's types: {exc}"
                kept[i] = None
        return pa.array(kept, type=self.arrow_type), refused

    def _writer(self, schema_id: int) -> tuple[Any, Callable[[dict], dict]]:
        """The writer schema of ``schema_id``, and how records read with it become ready for Arrow
        (fastavro keeps the writer's logical types: its uuid strings come as UUID objects)."""
        if schema_id not in self._writers:
            text = self.registry.schema(schema_id)
            if text is None:
                raise DecodeError(f"schema id {schema_id} of the value is not in the schema registry at "
                                  f"{self.registry.bases[0]}")
            try:
                writer = fastavro.parse_schema(json.loads(text), named_schemas={})
            except Exception as exc:                 # the registry's answer, not the record, is wrong
                raise SchemaRegistryError(f"schema id {schema_id} from the schema registry at "
                                          f"{self.registry.bases[0]} is not a valid Avro schema: {exc}") from None
            self._writers[schema_id] = writer, arrow_values(self.reader, writer=writer, error=DecodeError)
        return self._writers[schema_id]

    def _read(self, payload: bytes, writer: Any, reader: Any, what: str) -> dict:
        buffer = io.BytesIO(payload)
        try:
            record = fastavro.schemaless_reader(buffer, writer, reader)
        except Exception as exc:                     # fastavro raises whatever the bytes provoke
            raise DecodeError(f"the value is not Avro binary of {what} ({type(exc).__name__}: {exc})") from None
        extra = len(payload) - buffer.tell()
        if extra:
            raise DecodeError(f"the value has {extra} bytes left after an Avro record of {what}: it was "
                              "written with another schema")
        if not isinstance(record, dict):
            raise DecodeError(f"{what} is not an Avro record schema")
        return record

