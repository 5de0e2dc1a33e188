"""fastavro's decoded values → the values pyarrow takes for ``avro_to_arrow``'s type of the same
Avro schema. The Avro file source and the Kafka Avro decoder both hand fastavro's records to
pyarrow, and both need the same few fixes, kept here in one place: UUID objects become text,
unions of several types become ``{"member<i>": value}`` structs (as in Spark), named types in
unions given as fastavro's ``(full name, value)`` tuples are unwrapped.
"""
from __future__ import annotations

import json
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Callable
from uuid import UUID

_NAMED = ("record", "error", "enum", "fixed")
# Python types fastavro decodes each Avro type to, to tell which branch of a union a value took.
# fastavro applies the writer's logical types, so a branch also takes its base type's values (a
# union cannot hold two types of one base type, so this stays unambiguous) and strings may be UUIDs.
_DECODED_AS = {"boolean": (bool,), "int": (int,), "long": (int,), "float": (float,), "double": (float,),
               "string": (str, UUID), "bytes": (bytes,), "fixed": (bytes,), "array": (list,), "map": (dict,)}
_LOGICAL_DECODED_AS = {"date": (date,), "time-millis": (time,), "time-micros": (time,),
                       "timestamp-millis": (datetime,), "timestamp-micros": (datetime,),
                       "timestamp-nanos": (datetime,), "local-timestamp-millis": (datetime,),
                       "local-timestamp-micros": (datetime,), "local-timestamp-nanos": (datetime,),
                       "decimal": (Decimal,)}


def arrow_values(schema: Any, writer: Any = None,
                 error: type[ValueError] = ValueError) -> Callable[[Any], Any]:
    """A function making a record that fastavro decoded with the reader schema ``schema`` (parsed by
    ``fastavro.parse_schema``, expanded or not) fit ``avro_to_arrow(schema)``; records that need
    nothing are returned as they are. ``writer``: the schema the records were written with, when
    another one: fastavro decodes by the writer's logical types, so where it has uuid strings and
    ``schema`` plain ones the values are UUID objects. A value fitting no branch of its union
    raises ``error``. Recursive schemas are not supported (``avro_to_arrow`` refuses them first)."""
    names = schema.get("__named_schemas", {}) if isinstance(schema, dict) else {}
    uuids = writer is not None and '"logicalType": "uuid"' in json.dumps(writer)
    return _Converters(names, uuids, error).of(schema) or (lambda record: record)


def _kind(t: Any) -> str:
    """'union', or the Avro type name of a resolved type."""
    if isinstance(t, list):
        return "union"
    return t if isinstance(t, str) else t["type"]


def _untagged(value: Any) -> Any:
    """The value of a named type that fastavro gave as (full name, value)."""
    return value[1] if isinstance(value, tuple) else value


def _took(value: Any, branch: Any) -> bool:
    """Whether an untagged ``value`` is of the (resolved) union ``branch``."""
    kind = _kind(branch)
    if kind in ("record", "error"):
        return isinstance(value, dict) and set(value) == {f["name"] for f in branch["fields"]}
    if kind == "enum":
        return isinstance(value, str) and value in branch["symbols"]
    logical = branch.get("logicalType") if isinstance(branch, dict) else None
    return type(value) in _LOGICAL_DECODED_AS.get(logical, ()) + _DECODED_AS.get(kind, ())


class _Converters:
    """The converters of one schema: its named types, and whether strings may be UUID objects."""

    def __init__(self, names: dict, uuids: bool, error: type[ValueError]):
        self.names, self.uuids, self.error = names, uuids, error

    def resolve(self, t: Any) -> Any:
        """The type ``t`` stands for: named types looked up, ``{"type": <type>}`` wrappers removed."""
        while True:
            inner = t.get("type") if isinstance(t, dict) else t
            if isinstance(inner, str) and inner in self.names:
                t = self.names[inner]
            elif isinstance(t, dict) and isinstance(inner, (list, dict)):
                t = inner
            else:
                return t

    def of(self, t: Any) -> Callable[[Any], Any] | None:
        """How a non-null value of type ``t`` becomes what pyarrow takes; None where it already is."""
        t = self.resolve(t)
        kind = _kind(t)
        if kind == "union":
            return self.union(t)
        if kind in ("record", "error"):
            fields = [(f["name"], c) for f in t["fields"] if (c := self.of(f["type"]))]
            if not fields:
                return None

            def record(value: dict) -> dict:
                value = dict(value)
                for name, convert in fields:
                    if value.get(name) is not None:
                        value[name] = convert(value[name])
                return value
            return record
        if kind == "array":
            item = self.of(t["items"])
            return (lambda value: [None if v is None else item(v) for v in value]) if item else None
        if kind == "map":
            entry = self.of(t["values"])
            return (lambda value: {k: None if v is None else entry(v) for k, v in value.items()}) if entry else None
        if kind == "string" and (self.uuids or isinstance(t, dict) and t.get("logicalType") == "uuid"):
            return str
        return None

    def union(self, t: list) -> Callable[[Any], Any] | None:
        branches = [b for b in (self.resolve(b) for b in t) if _kind(b) != "null"]
        if len(branches) == 1:
            inner = self.of(branches[0])
            if _kind(branches[0]) not in _NAMED:
                return inner
            return (lambda value: inner(_untagged(value))) if inner else _untagged
        if len(branches) == 2 and {_kind(b) for b in branches} in ({"int", "long"}, {"float", "double"}):
            return None                      # avro_to_arrow widens them to one type
        members = [(f"member{i}", b, self.of(b)) for i, b in enumerate(branches)]

        def member(decoded: Any) -> dict:
            name, value = decoded if isinstance(decoded, tuple) else (None, decoded)
            for field, branch, convert in members:
                if (isinstance(branch, dict) and branch.get("name") == name) if name else _took(value, branch):
                    return {field: convert(value) if convert else value}
            raise self.error(f"the value {decoded!r} matches no branch of the union {json.dumps(t)}")
        return member
