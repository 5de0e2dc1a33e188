"""Walking Avro schemas as fastavro parses them; shared by the block encoder and decoder."""
from __future__ import annotations

from typing import Any

import fastavro


def parse_schema(schema: Any) -> tuple[Any, dict]:
    """fastavro's parse of a (JSON-decoded) schema: references to named types become full names,
    resolvable in the returned dict."""
    named: dict = {}
    return fastavro.parse_schema(schema, named_schemas=named), named


def resolve(t: Any, named: dict) -> Any:
    """Named references and ``{"type": <schema>}`` wrappers replaced by what they stand for."""
    while True:
        if isinstance(t, str) and t in named:
            t = named[t]
        elif isinstance(t, dict) and (not isinstance(t["type"], str) or t["type"] in named):
            t = t["type"]
        else:
            return t


def nullable_branch(union: list, path: str) -> tuple[int, int | None]:
    """The one non-null branch of a union and its null branch (None if it has none). Spark, hence
    Hudi, writes no other unions; Arrow would need a struct per branch for them."""
    values = [i for i, b in enumerate(union) if b != "null"]
    if len(values) != 1:
        raise NotImplementedError(f"column {path!r}: Avro unions of several non-null types are not supported")
    return values[0], union.index("null") if "null" in union else None
