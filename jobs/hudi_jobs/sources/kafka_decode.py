"""Kafka message values → records, on the executors: text for JSON (Spark parses it), Avro binary
with a known schema, or the Confluent wire format (magic byte 0, 4-byte big-endian schema id, Avro
binary) whose writer schema the schema registry serves by id.

A value that cannot be decoded raises :class:`DecodeError` with a message for a person; the reader
turns it into an error record and goes on with the batch. Only a registry that cannot be reached
fails the task, since then every record would be wrong.
"""
from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
import struct
import threading
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable

import fastavro
import pyarrow as pa

from hudi_engine.errors import HoodieConfigError, HoodieError
from hudi_engine.schema.avro import avro_to_arrow

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
        self._arrow_ready = _converter(self.reader, self.reader.get("__named_schemas", {})) or (lambda v: v)
        self._writers: dict[int, Any] = {}

    def decode(self, value: bytes) -> dict:
        """The record of one value, ready for :meth:`to_arrow`."""
        return self._arrow_ready(self._decode(value))

    def _decode(self, value: bytes) -> dict:
        if not self.wire:
            return self._read(value, self.reader, None, "the source schema")
        if len(value) < WIRE_HEADER or value[0] != MAGIC_BYTE:
            first = f"starts with byte 0x{value[0]:02x}" if value else "is empty"
            raise DecodeError(
                f"the value {first}, not the Confluent wire format (magic byte 0, then a 4-byte schema "
                f"id). If the topic holds plain Avro, set {_DESERIALIZER}=org.apache.kafka.common.serialization."
                f"ByteArrayDeserializer; if it holds JSON, read it with JsonKafkaSource, or for Debezium set "
                f"{_DESERIALIZER}=org.apache.kafka.common.serialization.StringDeserializer")
        schema_id = struct.unpack(">I", value[1:WIRE_HEADER])[0]
        writer = self._writer(schema_id)
        return self._read(value[WIRE_HEADER:], writer, None if writer == self.reader else self.reader,
                          f"its writer schema (id {schema_id})")

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

    def _writer(self, schema_id: int) -> Any:
        if schema_id not in self._writers:
            text = self.registry.schema(schema_id)
            if text is None:
                raise DecodeError(f"schema id {schema_id} of the value is not in the schema registry at "
                                  f"{self.registry.bases[0]}")
            try:
                self._writers[schema_id] = fastavro.parse_schema(json.loads(text), named_schemas={})
            except Exception as exc:                 # the registry's answer, not the record, is wrong
                raise SchemaRegistryError(f"schema id {schema_id} from the schema registry at "
                                          f"{self.registry.bases[0]} is not a valid Avro schema: {exc}") from None
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


# --- fastavro values → values pyarrow takes for the reader schema's Arrow type --------------------

def _resolve(t: Any, names: dict) -> Any:
    while True:
        if isinstance(t, str) and t in names:
            t = names[t]
        elif isinstance(t, dict) and isinstance(t.get("type"), (list, dict)):
            t = t["type"]
        elif isinstance(t, dict) and isinstance(t.get("type"), str) and t["type"] in names:
            t = names[t["type"]]
        else:
            return t


def _kind(t: Any) -> str:
    return t if isinstance(t, str) else t["type"]


def _converter(t: Any, names: dict) -> Callable[[Any], Any] | None:
    """A function making fastavro's value of type ``t`` fit ``avro_to_arrow``'s type, or None when
    pyarrow takes it as it is (the common case: only UUIDs and unions of several types differ)."""
    t = _resolve(t, names)
    if isinstance(t, list):
        branches = [b for b in t if _kind(_resolve(b, names)) != "null"]
        kinds = {_kind(_resolve(b, names)) for b in branches}
        if len(branches) == 1:
            inner = _converter(branches[0], names)
            return None if inner is None else (lambda v: None if v is None else inner(v))
        if len(branches) == 2 and kinds in ({"int", "long"}, {"float", "double"}):
            return None
        members = [(i, _resolve(b, names), _converter(b, names)) for i, b in enumerate(branches)]

        def union(v: Any) -> Any:
            if v is None:
                return None
            for i, branch, conv in members:
                if _matches(v, branch, names):
                    return {f"member{i}": conv(v) if conv else v}
            raise DecodeError(f"value {v!r} fits no branch of the union {t}")
        return union
    kind = _kind(t)
    if kind in ("record", "error"):                  # never recursive: avro_to_arrow refuses those
        fields = [(f["name"], _converter(f["type"], names)) for f in t["fields"]]
        fields = [(n, c) for n, c in fields if c is not None]
        if not fields:
            return None

        def record(v: dict) -> dict:
            out = dict(v)
            for name, conv in fields:
                if out.get(name) is not None:
                    out[name] = conv(out[name])
            return out
        return record
    if kind == "array":
        item = _converter(t["items"], names)
        return None if item is None else (lambda v: [None if x is None else item(x) for x in v])
    if kind == "map":
        value = _converter(t["values"], names)
        return None if value is None else (lambda v: {k: None if x is None else value(x) for k, x in v.items()})
    if isinstance(t, dict) and t.get("logicalType") == "uuid":
        return str
    return None


def _matches(v: Any, t: Any, names: dict) -> bool:
    kind = _kind(t)
    logical = t.get("logicalType") if isinstance(t, dict) else None
    if logical in ("timestamp-millis", "timestamp-micros", "timestamp-nanos", "local-timestamp-millis",
                   "local-timestamp-micros", "local-timestamp-nanos"):
        return isinstance(v, datetime.datetime)
    if logical == "date":
        return isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
    if logical in ("time-millis", "time-micros"):
        return isinstance(v, datetime.time)
    if logical == "decimal":
        return isinstance(v, decimal.Decimal)
    if logical == "uuid":
        return isinstance(v, uuid.UUID)
    if kind == "boolean":
        return isinstance(v, bool)
    if kind in ("int", "long"):
        return isinstance(v, int) and not isinstance(v, bool)
    if kind in ("float", "double"):
        return isinstance(v, float)
    if kind == "string":
        return isinstance(v, str)
    if kind == "enum":
        return isinstance(v, str) and v in t["symbols"]
    if kind in ("bytes", "fixed"):
        return isinstance(v, bytes)
    if kind in ("record", "error"):
        return isinstance(v, dict) and set(v) == {f["name"] for f in t["fields"]}
    if kind == "array":
        return isinstance(v, list)
    if kind == "map":
        return isinstance(v, dict)
    return False
