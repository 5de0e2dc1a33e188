"""A STAND-IN for the Confluent schema registry: a small HTTP server on loopback with the part of
its REST API that schema providers and Avro deserializers use. (The real registry is a JVM service
from Confluent that no registry we reach distributes.)

- ``POST /subjects/<subject>/versions`` with ``{"schema": "..."}`` → ``{"id": n}`` (the same schema
  text under the same subject keeps its id)
- ``GET /schemas/ids/<id>`` → ``{"schema": "..."}``
- ``GET /subjects/<subject>/versions/<n|latest>`` → ``{"subject", "version", "id", "schema"}``
- ``GET /subjects`` → the subject names

Unknown ids, subjects and versions answer 404 with the registry's error codes. ``requests`` counts
the GETs per path, so tests can check what a client fetched (e.g. that it caches by id), and
``authorizations`` keeps the Authorization header of each GET (None when absent).
"""
from __future__ import annotations

import io
import json
import struct
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import fastavro


class SchemaRegistryStub:
    """Runs until :meth:`close`; :attr:`url` is its base URL."""

    def __init__(self) -> None:
        self.schemas: dict[int, str] = {}
        self.subjects: dict[str, list[int]] = {}
        self.requests: Counter[str] = Counter()
        self.authorizations: list[str | None] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def register(self, subject: str, schema: str | dict) -> int:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        with self._lock:
            versions = self.subjects.setdefault(subject, [])
            for schema_id in versions:
                if self.schemas[schema_id] == text:
                    return schema_id
            schema_id = max(self.schemas, default=0) + 1
            self.schemas[schema_id] = text
            versions.append(schema_id)
            return schema_id

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SchemaRegistryStub:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _get(self, path: str) -> tuple[int, Any]:
        parts = [p for p in path.split("/") if p]
        with self._lock:
            if parts == ["subjects"]:
                return 200, sorted(self.subjects)
            if len(parts) == 3 and parts[:2] == ["schemas", "ids"] and parts[2].isdigit():
                schema_id = int(parts[2])
                if schema_id in self.schemas:
                    return 200, {"schema": self.schemas[schema_id]}
                return 404, {"error_code": 40403, "message": "Schema not found"}
            if len(parts) == 4 and parts[0] == "subjects" and parts[2] == "versions":
                versions = self.subjects.get(parts[1])
                if not versions:
                    return 404, {"error_code": 40401, "message": f"Subject '{parts[1]}' not found."}
                version = len(versions) if parts[3] == "latest" else int(parts[3]) if parts[3].isdigit() else 0
                if not 1 <= version <= len(versions):
                    return 404, {"error_code": 40402, "message": "Version not found."}
                schema_id = versions[version - 1]
                return 200, {"subject": parts[1], "version": version, "id": schema_id,
                             "schema": self.schemas[schema_id]}
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                stub.requests[self.path] += 1
                stub.authorizations.append(self.headers.get("Authorization"))
                self._answer(*stub._get(self.path))

            def do_POST(self):
                parts = [p for p in self.path.split("/") if p]
                if len(parts) != 3 or parts[0] != "subjects" or parts[2] != "versions":
                    self._answer(404, {"error_code": 404, "message": "HTTP 404 Not Found"})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                self._answer(200, {"id": stub.register(parts[1], body["schema"])})

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        return Handler


def confluent_wire(schema_id: int, schema: str | dict, record: dict) -> bytes:
    """What a Confluent Avro serializer writes: magic byte 0, the schema id (4 bytes, big-endian),
    then the record as Avro binary."""
    parsed = fastavro.parse_schema(json.loads(schema) if isinstance(schema, str) else schema, named_schemas={})
    out = io.BytesIO()
    out.write(struct.pack(">bI", 0, schema_id))
    fastavro.schemaless_writer(out, parsed, record)
    return out.getvalue()
