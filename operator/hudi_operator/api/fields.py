"""One model for Python and the API server: field metadata on the API dataclasses, the CEL rules
declared beside the classes they constrain, and the walker that turns both into the CRDs' OpenAPI
v3 structural schemas.

Every string, list and map must declare a bound (maxLength or enum, maxItems, maxProperties): the
API server prices each CEL rule from those bounds and refuses a CRD whose rules could cost too much.
"""
from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from dataclasses import MISSING, dataclass
from typing import Any, Callable

#: How every API class is declared: immutable, keyword-only (so required and defaulted fields mix).
model = dataclass(frozen=True, kw_only=True)


@dataclass(frozen=True)
class Pattern:
    """A regular expression (anchored, valid in Go's RE2 and Python's ``re``) and what it means in
    words, for the error message."""
    regex: str
    meaning: str


@dataclass(frozen=True)
class Rule:
    """A CEL rule (``x-kubernetes-validations``) and ``check``, its Python twin, which must agree
    with it: tests evaluate both on the same bad specs. ``check`` gets what ``self`` is in CEL (the
    object or field the rule is declared on) and returns True when the value is valid.
    ``explain`` is the Python twin of ``message_expression``."""
    rule: str
    message: str
    check: Callable[[Any], bool]
    field_path: str = ""
    message_expression: str = ""
    explain: Callable[[Any], str] | None = None

    def openapi(self) -> dict[str, str]:
        out = {"rule": self.rule, "message": self.message}
        if self.message_expression:
            out["messageExpression"] = self.message_expression
        if self.field_path:
            out["fieldPath"] = self.field_path
        return out

    def error_message(self, value: Any) -> str:
        return self.explain(value) if self.explain else self.message


@dataclass(frozen=True)
class Transition:
    """A CEL transition rule (it reads ``oldSelf``): the API server evaluates it on updates only, and
    only where the old object has the field. ``check(old, new)`` is its Python twin, which
    ``check_update`` runs; both get what ``self`` is in CEL."""
    rule: str
    message: str
    check: Callable[[Any, Any], bool]
    field_path: str = ""

    def openapi(self) -> dict[str, str]:
        out = {"rule": self.rule, "message": self.message}
        if self.field_path:
            out["fieldPath"] = self.field_path
        return out


def cel(*rules: Rule | Transition) -> Callable[[type], type]:
    """Class decorator: the CEL rules of an object, checked after its fields (transition rules on
    updates only)."""
    def attach(cls: type) -> type:
        cls.__cel_rules__ = tuple(r for r in rules if isinstance(r, Rule))
        cls.__cel_transitions__ = tuple(r for r in rules if isinstance(r, Transition))
        return cls
    return attach


def class_rules(cls: type) -> tuple[Rule, ...]:
    return getattr(cls, "__cel_rules__", ())


def class_transitions(cls: type) -> tuple[Transition, ...]:
    return getattr(cls, "__cel_transitions__", ())


@dataclass(frozen=True)
class FieldInfo:
    """What a field declares besides its type. String constraints (enum, pattern, lengths) apply to
    the strings wherever they are: the field itself, a list's items or a map's values; enums are of
    strings only."""
    description: str
    schema_default: Any = MISSING
    enum: tuple[Any, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    pattern: Pattern | None = None
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    max_properties: int | None = None
    rules: tuple[Rule, ...] = ()
    immutable: str | None = None          # the message of the transition rule ``self == oldSelf``
    atomic: bool = False                  # an object a more specific level replaces whole (see SparkSpec.merged)
    list_map_keys: tuple[str, ...] = ()   # a list of objects keyed by these fields (conditions)


def spec_field(description: str, *, default: Any = MISSING, **constraints: Any) -> Any:
    """A dataclass field with its API metadata. ``default``: absent = required; None = optional with
    no default; a model class, ``{}`` or ``()`` = an empty object, map or list; else a scalar."""
    def info(schema_default: Any) -> dict[str, FieldInfo]:
        return {"api": FieldInfo(description, schema_default=schema_default, **constraints)}
    if default is MISSING:
        return dataclasses.field(metadata=info(MISSING))
    if isinstance(default, type) and dataclasses.is_dataclass(default):
        return dataclasses.field(default_factory=default, metadata=info({}))
    if isinstance(default, dict):
        if default:
            raise ValueError("a map default must be empty")
        return dataclasses.field(default_factory=dict, metadata=info({}))
    if isinstance(default, tuple):
        if default:
            raise ValueError("a list default must be empty")
        return dataclasses.field(default=(), metadata=info([]))
    return dataclasses.field(default=default, metadata=info(MISSING if default is None else default))


# --- reading the model -----------------------------------------------------------------------------
def camel(name: str) -> str:
    """The JSON name of an attribute: ``max_delta_commits`` → ``maxDeltaCommits``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class ApiField:
    name: str          # snake_case attribute
    json_name: str     # camelCase field
    type: Any          # the annotation, Optional stripped
    info: FieldInfo
    required: bool


@functools.cache
def api_fields(cls: type) -> tuple[ApiField, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if "api" not in f.metadata:
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with spec_field()")
        required = f.default is MISSING and f.default_factory is MISSING
        out.append(ApiField(f.name, camel(f.name), strip_optional(hints[f.name]), f.metadata["api"], required))
    return tuple(out)


def strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {tp}")
        return args[0]
    return tp


def kind_of(tp: Any) -> str:
    """object (a model class), list, map, any (a pass-through object, ``dict[str, Any]``), string,
    integer or boolean."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "object"
    origin = typing.get_origin(tp)
    if origin is tuple:
        return "list"
    if origin is dict:
        return "any" if typing.get_args(tp)[1] is Any else "map"
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise TypeError(f"unsupported field type {tp!r}")


_SCALARS = {str: "string", int: "integer", bool: "boolean"}


def inner_type(tp: Any) -> Any:
    """The item type of a list, the value type of a map."""
    return typing.get_args(tp)[0 if typing.get_origin(tp) is tuple else 1]


# --- model → OpenAPI v3 -----------------------------------------------------------------------------
def object_schema(cls: type) -> dict[str, Any]:
    """The structural schema of a model class, its fields' constraints and its CEL rules."""
    props, required = {}, []
    for f in api_fields(cls):
        props[f.json_name] = _property_schema(f, f"{cls.__name__}.{f.name}")
        if f.required:
            required.append(f.json_name)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    rules = class_rules(cls) + class_transitions(cls)
    if rules:
        schema["x-kubernetes-validations"] = [r.openapi() for r in rules]
    return schema


def _property_schema(f: ApiField, where: str) -> dict[str, Any]:
    info = f.info
    schema: dict[str, Any] = {"description": info.description, **_value_schema(f.type, info, where)}
    if info.schema_default is not MISSING:
        schema["default"] = info.schema_default
    if info.atomic:
        schema["x-kubernetes-map-type"] = "atomic"
    rules = [r.openapi() for r in info.rules]
    if info.immutable:
        rules.append({"rule": "self == oldSelf", "message": info.immutable})
    if rules:
        schema["x-kubernetes-validations"] = schema.get("x-kubernetes-validations", []) + rules
    return schema


def _value_schema(tp: Any, info: FieldInfo, where: str) -> dict[str, Any]:
    kind = kind_of(tp)
    if kind == "list":
        if info.max_items is None:
            raise TypeError(f"{where}: a list needs max_items (CEL cost)")
        schema: dict[str, Any] = {"type": "array"}
        if info.min_items is not None:
            schema["minItems"] = info.min_items
        schema["maxItems"] = info.max_items
        if info.list_map_keys:
            schema["x-kubernetes-list-type"] = "map"
            schema["x-kubernetes-list-map-keys"] = list(info.list_map_keys)
        schema["items"] = _item_schema(inner_type(tp), info, where)
        return schema
    if kind == "map":
        if info.max_properties is None:
            raise TypeError(f"{where}: a map needs max_properties (CEL cost)")
        return {"type": "object", "maxProperties": info.max_properties,
                "additionalProperties": _item_schema(inner_type(tp), info, where)}
    return _item_schema(tp, info, where)


def _item_schema(tp: Any, info: FieldInfo, where: str) -> dict[str, Any]:
    kind = kind_of(tp)
    if kind == "object":
        return object_schema(tp)
    if kind == "any":
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if kind in ("list", "map"):
        raise TypeError(f"{where}: lists and maps of lists or maps are not supported")
    schema: dict[str, Any] = {"type": kind}
    if kind == "string":
        if info.max_length is None and not info.enum:
            raise TypeError(f"{where}: a string needs max_length or enum (CEL cost)")
        if info.format:
            schema["format"] = info.format
        if info.enum:
            schema["enum"] = list(info.enum)
        if info.pattern:
            schema["pattern"] = info.pattern.regex
        if info.min_length is not None:
            schema["minLength"] = info.min_length
        if info.max_length is not None:
            schema["maxLength"] = info.max_length
    elif kind == "integer":
        if info.minimum is not None:
            schema["minimum"] = info.minimum
        if info.maximum is not None:
            schema["maximum"] = info.maximum
    return schema


# --- model → JSON -----------------------------------------------------------------------------------
def to_json(value: Any) -> Any:
    """A model object as the JSON the API holds (camelCase, unset fields left out): for status
    writes, the reconciled-spec record and round-trip checks."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in api_fields(type(value)):
            v = getattr(value, f.name)
            if v is not None:
                out[f.json_name] = to_json(v)
        return out
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


def matches(pattern: Pattern, value: str) -> bool:
    """OpenAPI ``pattern`` semantics: a search, not a full match (our patterns are anchored)."""
    return re.search(pattern.regex, value) is not None
