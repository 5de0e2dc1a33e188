"""Reading a HudiTable or HudiPipeline: defaults applied, and everything the CRD's schema and CEL
rules check checked here too, with the same paths and messages, so the operator and local runs
refuse exactly what the API server refuses (the tests hold the two against each other).
Transition rules need the old object: ``check_update``."""
from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping
from typing import Any, Union

from .common import API_GROUP, API_VERSION, DNS_NAME, NAME_LEN, ObjectMeta, SparkSpec
from .errors import SpecError
from .fields import (FieldInfo, Rule, api_fields, camel, class_rules, class_transitions, inner_type, kind_of,
                     matches)
from .pipeline import HudiPipelineResource
from .table import HudiTableResource

Resource = Union[HudiTableResource, HudiPipelineResource]
API = f"{API_GROUP}/{API_VERSION}"
RESOURCES: dict[str, type] = {"HudiTable": HudiTableResource, "HudiPipeline": HudiPipelineResource}
_TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec", "status")


def load(resource: Mapping[str, Any]) -> Resource:
    """The resource as model objects, the CRD's defaults applied; ``SpecError`` names the first field
    the API server would refuse. Spark settings stay as written: the planner lays them over the
    platform's (SPARK_DEFAULTS, then the operator's job defaults)."""
    if not isinstance(resource, Mapping):
        raise SpecError("(resource)", f"must be an object with apiVersion, kind, metadata and spec, got "
                                      f"{_shown(resource)}")
    _no_unknown(resource, _TOP_LEVEL, "")
    if resource.get("apiVersion") != API:
        raise SpecError("apiVersion", f"must be {API}, got {resource.get('apiVersion')!r}")
    kind = resource.get("kind")
    if kind not in RESOURCES:
        raise SpecError("kind", f"must be one of {', '.join(RESOURCES)}, got {kind!r}")
    cls = RESOURCES[kind]
    metadata = _metadata(resource.get("metadata"))
    if resource.get("spec") is None:
        raise SpecError("spec", "is required")
    spec = parse_object(typing.get_type_hints(cls)["spec"], resource["spec"], "spec")
    status = resource.get("status")
    if status is not None and not isinstance(status, Mapping):
        raise SpecError("status", f"must be an object, got {_shown(status)}")
    loaded = cls(api_version=API, kind=kind, metadata=metadata, spec=spec,
                 status=None if status is None else dict(status))
    _check(class_rules(cls), loaded, "")
    return loaded


def load_spark(raw: Any, path: str) -> SparkSpec:
    """Spark settings in the shape of a HudiTable's ``spec.spark`` (the operator's platform-wide job
    defaults), checked as the CRD checks them; ``path`` names where they came from in errors."""
    return parse_object(SparkSpec, raw, path)


def check_update(old: Mapping[str, Any] | Resource, new: Mapping[str, Any] | Resource) -> None:
    """Refuse an update the CRD's transition rules refuse (``self == oldSelf`` on a table's identity:
    basePath, tableType, keys, partitioning, key generator, bucket count). Takes resources as dicts
    (what kopf hands over) or loaded."""
    before = load(old) if isinstance(old, Mapping) else old
    after = load(new) if isinstance(new, Mapping) else new
    if before.kind != after.kind:
        raise SpecError("kind", f"cannot change from {before.kind} to {after.kind}")
    _compare(before.spec, after.spec, "spec")


def _compare(old: Any, new: Any, path: str) -> None:
    """The fields' transition rules (the more specific message first), then the object's."""
    for f in api_fields(type(old)):
        before, after = getattr(old, f.name), getattr(new, f.name)
        where = _join(path, f.json_name)
        if f.info.immutable and before != after:
            raise SpecError(where, f.info.immutable)
        if kind_of(f.type) == "object" and before is not None and after is not None:
            _compare(before, after, where)
    for transition in class_transitions(type(old)):
        if not transition.check(old, new):
            raise SpecError(_join(path, transition.field_path), transition.message)


def _metadata(raw: Any) -> ObjectMeta:
    if not isinstance(raw, Mapping):
        raise SpecError("metadata", f"must be an object with at least a name, got {_shown(raw)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError("metadata.name", "is required")
    if len(name) > NAME_LEN or not matches(DNS_NAME, name):
        raise SpecError("metadata.name", f"must be {DNS_NAME.meaning} (at most {NAME_LEN}), got {name!r}")
    generation = raw.get("generation")
    if generation is not None and (not isinstance(generation, int) or isinstance(generation, bool)):
        raise SpecError("metadata.generation", f"must be a whole number, got {_shown(generation)}")
    return ObjectMeta(name=name, namespace=raw.get("namespace"), uid=raw.get("uid"), generation=generation,
                      labels=dict(raw.get("labels") or {}), annotations=dict(raw.get("annotations") or {}))


# --- the generic walk, mirroring fields.object_schema ---------------------------------------------------
def parse_object(cls: type, raw: Any, path: str) -> Any:
    """``raw`` (JSON) as an instance of the model class ``cls``, or SpecError. Nulls count as
    absent, as the API server prunes them before defaulting."""
    if not isinstance(raw, Mapping):
        raise SpecError(path, f"must be an object (a YAML mapping), got {_shown(raw)}")
    fields = {f.json_name: f for f in api_fields(cls)}
    _no_unknown(raw, fields, path)
    values = {}
    for json_name, f in fields.items():
        where = _join(path, json_name)
        if raw.get(json_name) is None:
            if f.required:
                raise SpecError(where, f"is required ({f.info.description.rstrip('.')})")
            continue
        value = _value(f.type, f.info, raw[json_name], where)
        _check(f.info.rules, value, where)
        values[f.name] = value
    obj = cls(**values)
    _check(class_rules(cls), obj, path)
    return obj


def _value(tp: Any, info: FieldInfo, raw: Any, path: str) -> Any:
    kind = kind_of(tp)
    if kind == "list":
        if not isinstance(raw, list):
            raise SpecError(path, f"must be a list, got {_shown(raw)}")
        if info.min_items is not None and len(raw) < info.min_items:
            raise SpecError(path, f"needs at least {info.min_items} item{'s' if info.min_items > 1 else ''}")
        if len(raw) > info.max_items:
            raise SpecError(path, f"has {len(raw)} items, at most {info.max_items} allowed")
        return tuple(_item(inner_type(tp), info, item, f"{path}[{i}]") for i, item in enumerate(raw))
    if kind == "map":
        if not isinstance(raw, Mapping):
            raise SpecError(path, f"must be a map of names to values, got {_shown(raw)}")
        if len(raw) > info.max_properties:
            raise SpecError(path, f"has {len(raw)} entries, at most {info.max_properties} allowed")
        for key in raw:
            if not isinstance(key, str):
                raise SpecError(path, f"keys must be strings, got {_shown(key)}; quote it in YAML")
        return {key: _item(inner_type(tp), info, item, f"{path}[{key}]") for key, item in raw.items()}
    return _item(tp, info, raw, path)


def _item(tp: Any, info: FieldInfo, raw: Any, path: str) -> Any:
    kind = kind_of(tp)
    if kind == "object":
        return parse_object(tp, raw, path)
    if kind == "any":
        if not isinstance(raw, Mapping):
            raise SpecError(path, f"must be an object, got {_shown(raw)}")
        return dict(raw)
    if kind == "boolean":
        if not isinstance(raw, bool):
            raise SpecError(path, f"must be true or false, got {_shown(raw)}")
        return raw
    if kind == "integer":
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise SpecError(path, f"must be a whole number, got {_shown(raw)}")
        if info.minimum is not None and raw < info.minimum:
            raise SpecError(path, f"must be at least {info.minimum}, got {raw}")
        if info.maximum is not None and raw > info.maximum:
            raise SpecError(path, f"must be at most {info.maximum}, got {raw}")
        return raw
    if not isinstance(raw, str):
        hint = "; quote it in YAML" if isinstance(raw, (bool, int, float)) else ""
        raise SpecError(path, f"must be a string, got {_shown(raw)}{hint}")
    if info.enum and raw not in info.enum:
        near = _nearest(raw, info.enum)
        raise SpecError(path, f"must be one of {', '.join(info.enum)}, got {raw!r}"
                              + (f"; did you mean {near!r}?" if near else ""))
    if info.pattern and not matches(info.pattern, raw):
        raise SpecError(path, f"must be {info.pattern.meaning}, got {raw!r}")
    if info.min_length is not None and len(raw) < info.min_length:
        raise SpecError(path, "must not be empty" if info.min_length == 1
                        else f"needs at least {info.min_length} characters")
    if info.max_length is not None and len(raw) > info.max_length:
        raise SpecError(path, f"is {len(raw)} characters long, at most {info.max_length} allowed")
    return raw


def _check(rules: tuple[Rule, ...], value: Any, path: str) -> None:
    for rule in rules:
        if not rule.check(value):
            raise SpecError(_join(path, rule.field_path), rule.error_message(value))


def _no_unknown(raw: Mapping[str, Any], known: Any, path: str) -> None:
    for key in raw:
        if key not in known:
            near = _nearest(str(key), tuple(known))
            raise SpecError(_join(path, str(key)), f"unknown field {key!r}; "
                            + (f"did you mean {near!r}?" if near else f"valid fields: {', '.join(known)}"))


def _nearest(word: str, choices: tuple[str, ...]) -> str | None:
    """The choice the user most likely meant: same letters in another case or snake_case, else the
    closest spelling."""
    for choice in choices:
        if word.lower() == choice.lower() or camel(word) == choice:
            return choice
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def _join(path: str, name: str) -> str:
    name = name.lstrip(".")
    if not name:
        return path
    return f"{path}.{name}" if path else name


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (int, float)):
        return f"{value} (a number)"
    if isinstance(value, str):
        return f"{value!r} (a string)"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__
