"""Arrow <-> Avro schema conversion that reproduces, byte for byte, the Avro JSON Hudi writes via Spark.

Hudi (Spark datasource, table version 6) keeps the table schema as Avro JSON in three shapes:

* ``"create"`` -- ``hoodie.table.create.schema`` in ``hoodie.properties``: Spark's own Spark->Avro
  conversion, untouched.  A nullable type is the union ``[T, "null"]`` and no field has a default.
* ``"commit"`` -- ``extraMetadata.schema`` of every commit: the same schema after Hudi moved ``"null"``
  to the front of every union and gave each nullable field ``"default": null`` (Avro only accepts a
  null default when null is the first branch).  Column comments become field ``doc``.
* the ``parquet.avro.schema`` footer of base files: the commit shape with Hudi's five meta fields
  prepended (:func:`add_meta_fields`).

Naming follows Spark: the top record is ``<table>_record`` in namespace ``hoodie.<table>`` (table
name sanitised the way Hudi does); a nested record is named after its column and lives in
``<enclosing namespace>.<enclosing record name>``; array items and map values reuse the name of the
column they belong to; a decimal is a ``fixed`` called ``fixed`` in namespace
``<enclosing namespace>.<enclosing record>.<column>``, sized to the fewest bytes that hold the
precision.  Nullability comes from the Arrow fields (Spark's ``nullable``/``containsNull``/
``valueContainsNull``); map keys are never nullable.  Timestamps with any time zone are instants
(``timestamp-*``, read back as UTC); naive ones are ``local-timestamp-*`` like Spark's TIMESTAMP_NTZ.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

import pyarrow as pa

from .meta_fields import META_FIELDS, OPERATION_FIELD

__all__ = [
    "STYLES",
    "add_meta_fields",
    "arrow_schema_compatible",
    "reconcile_nullability",
    "arrow_to_avro",
    "avro_to_arrow",
    "record_name_and_namespace",
    "sanitize_name",
    "to_json",
]

_ALL_META = frozenset(META_FIELDS + (OPERATION_FIELD,))

STYLES = ("commit", "create")

_NULL = "null"
_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_UNION_MEMBER = re.compile(r"member\d+")


# --------------------------------------------------------------------------------------------------
# names
# --------------------------------------------------------------------------------------------------

def sanitize_name(name: str) -> str:
    """Table names become Avro names; Hudi masks every character Avro rejects with ``__``."""
    if not name:
        raise ValueError("table name must not be empty")
    if not re.match(r"[A-Za-z_]", name[0]):
        name = "__" + name[1:]
    return re.sub(r"[^A-Za-z0-9_]", "__", name)


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """The top record's identity; readers compare it, so it must match what Hudi derives."""
    clean = sanitize_name(table_name)
    return f"{clean}_record", f"hoodie.{clean}"


def _check_avro_name(name: str, where: str) -> None:
    # Avro's SchemaBuilder refuses such names, so Spark/Hudi could never write this column.
    ok = bool(name) and (name[0].isalpha() or name[0] == "_") and all(
        c.isalnum() or c == "_" for c in name[1:])
    if not ok:
        raise ValueError(
            f"column {where!r}: {name!r} is not a valid Avro name (letters, digits and '_' only, "
            "not starting with a digit); Hudi cannot store it -- rename the column")


# --------------------------------------------------------------------------------------------------
# Arrow -> Avro
# --------------------------------------------------------------------------------------------------

def _min_bytes_for_precision(precision: int) -> int:
    """Spark sizes decimal ``fixed`` types to the smallest two's-complement width holding 10**p."""
    n = 1
    while 2 ** (8 * n - 1) < 10 ** precision:
        n += 1
    return n


def _union(avro_type: Any, style: str) -> list:
    return [_NULL, avro_type] if style == "commit" else [avro_type, _NULL]


def _is_nullable_union(avro_type: Any) -> bool:
    return isinstance(avro_type, list) and _NULL in avro_type


def _can_be_union(st: pa.StructType) -> bool:
    # Spark turns complex Avro unions into struct<member0, member1, ...>; Hudi's copy of Spark's
    # converter turns such structs back into unions so the round trip keeps the table schema stable.
    return st.num_fields > 0 and all(
        _UNION_MEMBER.fullmatch(f.name) and f.nullable for f in st)


def _timestamp(t: pa.TimestampType, path: str) -> dict:
    if t.unit == "us":
        logical = "timestamp-micros"
    elif t.unit == "ms":
        logical = "timestamp-millis"
    else:
        raise ValueError(
            f"column {path!r}: timestamp unit {t.unit!r} has no Avro/Hudi equivalent; "
            "cast it to 'us' (what Spark writes) or 'ms' first")
    # Spark: TimestampType (an instant) -> timestamp-*, TimestampNTZType -> local-timestamp-*.
    if t.tz is None:
        logical = "local-" + logical
    return {"type": "long", "logicalType": logical}


def _to_avro(t: pa.DataType, nullable: bool, record_name: str, namespace: str,
             enclosing_ns: str | None, style: str, path: str) -> Any:
    """One Spark ``toAvroType`` step: the type of column ``record_name`` whose record lives in ``namespace``."""
    types = pa.types
    if isinstance(t, pa.DictionaryType):
        return _to_avro(t.value_type, nullable, record_name, namespace, enclosing_ns, style, path)
    if isinstance(t, pa.ExtensionType):
        return _to_avro(t.storage_type, nullable, record_name, namespace, enclosing_ns, style, path)

    if types.is_null(t):
        return _NULL  # Spark never wraps NullType in a union
    if types.is_boolean(t):
        out: Any = "boolean"
    elif types.is_int8(t) or types.is_int16(t) or types.is_int32(t) or types.is_uint8(t) or types.is_uint16(t):
        out = "int"
    elif types.is_int64(t) or types.is_uint32(t):
        out = "long"
    elif types.is_uint64(t):
        raise ValueError(f"column {path!r}: uint64 does not fit an Avro long; cast to int64 or decimal(20, 0)")
    elif types.is_float16(t) or types.is_float32(t):
        out = "float"
    elif types.is_float64(t):
        out = "double"
    elif types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
        out = "string"
    elif (types.is_binary(t) or types.is_large_binary(t) or types.is_binary_view(t)
          or types.is_fixed_size_binary(t)):
        out = "bytes"  # Spark has only BinaryType
    elif types.is_decimal(t):
        full = f"{namespace}.{record_name}" if namespace else record_name
        out = {"type": "fixed", "name": "fixed"}
        if full != enclosing_ns:
            out["namespace"] = full
        out.update({"size": _min_bytes_for_precision(t.precision), "logicalType": "decimal",
                    "precision": t.precision, "scale": t.scale})
    elif types.is_date(t):
        out = {"type": "int", "logicalType": "date"}
    elif types.is_timestamp(t):
        out = _timestamp(t, path)
    elif types.is_time32(t) and t.unit == "ms":
        out = {"type": "int", "logicalType": "time-millis"}  # not producible by Spark; Avro's own mapping
    elif types.is_time64(t) and t.unit == "us":
        out = {"type": "long", "logicalType": "time-micros"}
    elif types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t) or types.is_list_view(t) \
            or types.is_large_list_view(t):
        vf = t.value_field
        out = {"type": "array", "items": _to_avro(vf.type, vf.nullable, record_name, namespace,
                                                 enclosing_ns, style, path + ".element")}
    elif types.is_map(t):
        kt = t.key_type
        if isinstance(kt, pa.DictionaryType):
            kt = kt.value_type
        if not (types.is_string(kt) or types.is_large_string(kt) or types.is_string_view(kt)):
            raise ValueError(f"column {path!r}: Avro maps need string keys, got {t.key_type}")
        it = t.item_field
        out = {"type": "map", "values": _to_avro(it.type, it.nullable, record_name, namespace,
                                                enclosing_ns, style, path + ".value")}
    elif types.is_struct(t):
        child_ns = f"{namespace}.{record_name}" if namespace else record_name
        if _can_be_union(t):
            members = []
            for f in t:
                m = _to_avro(f.type, False, f.name, child_ns, enclosing_ns, style, f"{path}.{f.name}")
                if isinstance(m, list):
                    raise ValueError(f"column {path}.{f.name!r}: Avro unions cannot nest")
                members.append(m)
            return [_NULL] + members if nullable else members
        out = _record(list(t), record_name, namespace, enclosing_ns, style, path)
    else:
        raise ValueError(f"column {path!r}: Arrow type {t} has no Avro/Hudi equivalent")

    return _union(out, style) if nullable else out


def _record(fields: list[pa.Field], name: str, namespace: str, enclosing_ns: str | None,
            style: str, path: str | None) -> dict:
    child_ns = f"{namespace}.{name}" if namespace else name
    avro_fields = []
    seen: set[str] = set()
    for f in fields:
        fpath = f.name if path is None else f"{path}.{f.name}"
        _check_avro_name(f.name, fpath)
        if f.name in seen:
            raise ValueError(f"column {fpath!r} appears twice")
        seen.add(f.name)
        # Avro (Java) writes a named type's namespace only when it differs from the enclosing record's.
        ftype = _to_avro(f.type, f.nullable, f.name, child_ns, namespace, style, fpath)
        entry: dict[str, Any] = {"name": f.name, "type": ftype}
        if style == "commit":
            doc = _comment(f)
            if doc is not None:
                entry["doc"] = doc
            if _is_nullable_union(ftype):
                entry["default"] = None
        avro_fields.append(entry)
    rec: dict[str, Any] = {"type": "record", "name": name}
    if namespace and namespace != enclosing_ns:
        rec["namespace"] = namespace
    rec["fields"] = avro_fields
    return rec


def _comment(f: pa.Field) -> str | None:
    md = f.metadata or {}
    raw = md.get(b"comment")
    return raw.decode("utf-8") if raw is not None else None


def arrow_to_avro(schema: pa.Schema, table_name: str, style: str = "commit", *,
                  keep_meta_fields: bool = False) -> dict:
    """The table schema as Hudi would record it, so our timeline is indistinguishable from Spark's.

    ``style="commit"`` gives ``extraMetadata.schema``; ``style="create"`` gives
    ``hoodie.table.create.schema``.  Meta columns are dropped unless ``keep_meta_fields`` because
    Hudi never keeps them in the data schema (the footer adds them back via :func:`add_meta_fields`).
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    name, namespace = record_name_and_namespace(table_name)
    fields = [f for f in schema if keep_meta_fields or f.name not in _ALL_META]
    return _record(fields, name, namespace, None, style, None)


def add_meta_fields(avro: Mapping[str, Any] | str, with_operation: bool = False) -> dict:
    """Footer/writer schema: Hudi's meta columns first, each an optional string with empty doc."""
    src = json.loads(avro) if isinstance(avro, str) else avro
    if src.get("type") != "record":
        raise ValueError("add_meta_fields needs a record schema")
    names = META_FIELDS + ((OPERATION_FIELD,) if with_operation else ())
    meta = [{"name": n, "type": [_NULL, "string"], "doc": "", "default": None} for n in names]
    rest = [dict(f) for f in src["fields"] if f["name"] not in _ALL_META]
    out: dict[str, Any] = {"type": "record", "name": src["name"]}
    for key in ("namespace", "doc"):  # Hudi rebuilds the record from name/doc/namespace only
        if key in src:
            out[key] = src[key]
    out["fields"] = meta + rest
    return out


# --------------------------------------------------------------------------------------------------
# Avro -> Arrow
# --------------------------------------------------------------------------------------------------

_TS_LOGICAL = {
    "timestamp-millis": ("ms", "UTC"),
    "timestamp-micros": ("us", "UTC"),
    "timestamp-nanos": ("ns", "UTC"),
    "local-timestamp-millis": ("ms", None),
    "local-timestamp-micros": ("us", None),
    "local-timestamp-nanos": ("ns", None),
}


def _max_precision_for_fixed(size: int) -> int:
    return int(math.floor(math.log10(2 ** (8 * size - 1) - 1))) if size > 0 else 0


def _decimal(precision: Any, scale: Any) -> pa.DataType | None:
    # Invalid decimal annotations are ignored by Avro (the value stays plain bytes), and so do we.
    if not isinstance(precision, int) or precision <= 0:
        return None
    scale = scale if isinstance(scale, int) else 0
    if scale < 0 or scale > precision or precision > 76:
        return None
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


class _Names:
    """Named types seen so far: Avro lets later uses refer to a record/enum/fixed by name."""

    def __init__(self) -> None:
        self.types: dict[str, Any] = {}
        self.active: set[str] = set()

    @staticmethod
    def full(name: str, namespace: str | None) -> str:
        if "." in name or not namespace:
            return name
        return f"{namespace}.{name}"

    def lookup(self, name: str, namespace: str | None) -> Any:
        for cand in (self.full(name, namespace), name):
            if cand in self.types or cand in self.active:
                return cand
        raise ValueError(f"Avro schema refers to unknown type {name!r}")


def _named_space(t: Mapping[str, Any], enclosing_ns: str | None) -> tuple[str, str | None]:
    name = t["name"]
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    ns = t.get("namespace", enclosing_ns)
    return _Names.full(name, ns or None), (ns or None)


def _avro_to_arrow(t: Any, ns: str | None, names: _Names) -> tuple[pa.DataType, bool]:
    """Arrow type and nullability of one Avro type, following Spark's ``toSqlType``."""
    if isinstance(t, list):
        branches = [b for b in t if b != _NULL and not (isinstance(b, dict) and b.get("type") == _NULL)]
        has_null = len(branches) != len(t)
        if not branches:
            return pa.null(), True
        if len(branches) == 1:
            dt, _ = _avro_to_arrow(branches[0], ns, names)
            return dt, has_null
        base = {_base_type(b) for b in branches}
        if len(branches) == 2 and base == {"int", "long"}:
            return pa.int64(), has_null
        if len(branches) == 2 and base == {"float", "double"}:
            return pa.float64(), has_null
        members = [pa.field(f"member{i}", _avro_to_arrow(b, ns, names)[0], True)
                   for i, b in enumerate(branches)]
        return pa.struct(members), has_null

    if isinstance(t, str):
        if t in _PRIMITIVES:
            return _primitive(t, None, {}), t == _NULL
        full = names.lookup(t, ns)
        if full in names.active:
            raise ValueError(f"recursive Avro type {full!r} has no Arrow equivalent")
        return names.types[full], False

    if not isinstance(t, Mapping):
        raise ValueError(f"not an Avro schema: {t!r}")
    kind = t.get("type")
    if isinstance(kind, (list, Mapping)):
        return _avro_to_arrow(kind, ns, names)
    if kind in _PRIMITIVES:
        return _primitive(kind, t.get("logicalType"), t), kind == _NULL
    if kind in ("record", "error"):
        full, rec_ns = _named_space(t, ns)
        names.active.add(full)
        fields = []
        for f in t.get("fields", []):
            dt, nullable = _avro_to_arrow(f["type"], rec_ns, names)
            doc = f.get("doc")
            md = {"comment": doc} if doc else None
            fields.append(pa.field(f["name"], dt, nullable, metadata=md))
        names.active.discard(full)
        st = pa.struct(fields)
        names.types[full] = st
        return st, False
    if kind == "enum":
        full, _ = _named_space(t, ns)
        names.types[full] = pa.string()
        return pa.string(), False
    if kind == "fixed":
        full, _ = _named_space(t, ns)
        size = int(t["size"])
        dt: pa.DataType | None = None
        if t.get("logicalType") == "decimal":
            dt = _decimal(t.get("precision"), t.get("scale", 0))
            if dt is not None and dt.precision > _max_precision_for_fixed(size):
                dt = None
        if dt is None:
            dt = pa.binary(size)
        names.types[full] = dt
        return dt, False
    if kind == "array":
        dt, nullable = _avro_to_arrow(t["items"], ns, names)
        return pa.list_(pa.field("element", dt, nullable)), False
    if kind == "map":
        dt, nullable = _avro_to_arrow(t["values"], ns, names)
        return pa.map_(pa.field("key", pa.string(), False), pa.field("value", dt, nullable)), False
    if isinstance(kind, str):  # {"type": "some.named.Type"}
        return _avro_to_arrow(kind, ns, names)
    raise ValueError(f"unsupported Avro type {kind!r}")


def _base_type(t: Any) -> str:
    if isinstance(t, str):
        return t if t in _PRIMITIVES else "named"
    if isinstance(t, Mapping) and isinstance(t.get("type"), str):
        return t["type"]
    return "complex"


def _primitive(kind: str, logical: Any, t: Mapping[str, Any]) -> pa.DataType:
    if kind == "null":
        return pa.null()
    if kind == "boolean":
        return pa.bool_()
    if kind == "int":
        if logical == "date":
            return pa.date32()
        if logical == "time-millis":
            return pa.time32("ms")
        return pa.int32()
    if kind == "long":
        if logical in _TS_LOGICAL:
            unit, tz = _TS_LOGICAL[logical]
            return pa.timestamp(unit, tz=tz)
        if logical == "time-micros":
            return pa.time64("us")
        return pa.int64()
    if kind == "float":
        return pa.float32()
    if kind == "double":
        return pa.float64()
    if kind == "string":
        return pa.string()
    if kind == "bytes":
        if logical == "decimal":
            dt = _decimal(t.get("precision"), t.get("scale", 0))
            if dt is not None:
                return dt
        return pa.binary()
    raise ValueError(f"unsupported Avro primitive {kind!r}")


def avro_to_arrow(avro: Mapping[str, Any] | str) -> pa.Schema:
    """Arrow schema of a Hudi table schema (any of the three shapes), so readers can unify files.

    A union with ``"null"`` (in either position) means nullable; ``[int, long]`` reads as int64 and
    ``[float, double]`` as float64; other unions become ``struct<member0, ...>`` as in Spark; enums
    read as strings; a field ``doc`` becomes the Arrow field's ``comment`` metadata.
    """
    src = json.loads(avro) if isinstance(avro, str) else avro
    dt, _ = _avro_to_arrow(src, None, _Names())
    if not pa.types.is_struct(dt):
        raise ValueError("a Hudi table schema must be an Avro record")
    return pa.schema(list(dt))


# --------------------------------------------------------------------------------------------------
# JSON text
# --------------------------------------------------------------------------------------------------

_JACKSON_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _json_string(s: str) -> str:
    # Jackson (used by Avro's Schema.toString) escapes only quotes, backslashes and control characters,
    # the latter with upper-case hex; everything else, non-ASCII included, is written as is.
    out = ['"']
    for c in s:
        esc = _JACKSON_SHORT.get(c)
        if esc is not None:
            out.append(esc)
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _java_double(x: float) -> str:
    """``Double.toString`` layout (Jackson writes doubles that way), e.g. ``1.0``, ``1.0E10``."""
    if math.isnan(x) or math.isinf(x):
        raise ValueError("JSON cannot hold NaN or infinite numbers")
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    # repr() gives the shortest digits that round-trip; only the layout differs from Java.
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?", repr(abs(x)))
    assert m is not None
    int_part, frac_part = m.group(1), m.group(2) or ""
    raw = int_part + frac_part
    digits = raw.lstrip("0")
    point = len(int_part) + int(m.group(3) or 0) - (len(raw) - len(digits))
    digits = digits.rstrip("0") or "0"
    exp10 = point - 1
    if -3 <= exp10 < 7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp10}"


def _dump(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_json_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_java_double(value))
    elif isinstance(value, Mapping):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(_json_string(str(k)))
            out.append(":")
            _dump(v, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _dump(v, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def to_json(avro: Mapping[str, Any]) -> str:
    """Compact JSON exactly as Avro's ``Schema.toString()`` prints it (key order kept, no spaces)."""
    out: list[str] = []
    _dump(avro, out)
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# schema evolution
# --------------------------------------------------------------------------------------------------

# Avro's reader/writer promotions, which is what Hudi accepts without schema-on-read.
_PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
}


def _kind(t: pa.DataType) -> tuple:
    """The Avro-level identity of an Arrow type: widths Avro cannot tell apart compare equal."""
    types = pa.types
    if isinstance(t, pa.DictionaryType):
        return _kind(t.value_type)
    if types.is_null(t):
        return ("null",)
    if types.is_boolean(t):
        return ("boolean",)
    if types.is_int8(t) or types.is_int16(t) or types.is_int32(t) or types.is_uint8(t) or types.is_uint16(t):
        return ("int",)
    if types.is_int64(t) or types.is_uint32(t):
        return ("long",)
    if types.is_float16(t) or types.is_float32(t):
        return ("float",)
    if types.is_float64(t):
        return ("double",)
    if types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
        return ("string",)
    if types.is_binary(t) or types.is_large_binary(t) or types.is_binary_view(t) or types.is_fixed_size_binary(t):
        return ("bytes",)
    if types.is_decimal(t):
        return ("decimal", t.precision, t.scale)
    if types.is_date(t):
        return ("date",)
    if types.is_timestamp(t):
        return ("timestamp", t.tz is not None)
    if types.is_time(t):
        return ("time",)
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t) or types.is_list_view(t) \
            or types.is_large_list_view(t):
        return ("list",)
    if types.is_map(t):
        return ("map",)
    if types.is_struct(t):
        return ("struct",)
    return ("other", str(t))


def _type_change_ok(old: tuple, new: tuple) -> bool:
    if old == new:
        return True
    if old[0] == "decimal" and new[0] == "decimal":
        # widening only: neither integer digits nor fraction digits may shrink
        return new[2] >= old[2] and new[1] - new[2] >= old[1] - old[2]
    return new[0] in _PROMOTIONS.get(old[0], ())


def _check_field(old: pa.Field, new: pa.Field, path: str) -> str | None:
    if old.nullable and not new.nullable:
        return (f"column {path!r} is nullable in the table but not in the new schema; existing "
                "records may hold nulls, so keep it nullable")
    return _check_type(old.type, new.type, path)


def _check_type(old: pa.DataType, new: pa.DataType, path: str) -> str | None:
    ko, kn = _kind(old), _kind(new)
    if ko[0] == "null":
        return None  # an all-null column may take any type: every old value is null
    if ko[0] in ("list", "map", "struct") or kn[0] in ("list", "map", "struct"):
        if ko[0] != kn[0]:
            return f"column {path!r}: cannot change type from {old} to {new}"
        if ko[0] == "list":
            return _check_field(old.value_field, new.value_field, f"{path}.element")
        if ko[0] == "map":
            return (_check_type(old.key_type, new.key_type, f"{path}.key")
                    or _check_field(old.item_field, new.item_field, f"{path}.value"))
        return _check_fields(list(old), list(new), path)
    if not _type_change_ok(ko, kn):
        return f"column {path!r}: cannot change type from {old} to {new}"
    return None


def _check_fields(old_fields: list[pa.Field], new_fields: list[pa.Field], prefix: str | None) -> str | None:
    old_by_name = {f.name: f for f in old_fields}
    for nf in new_fields:
        path = nf.name if prefix is None else f"{prefix}.{nf.name}"
        of = old_by_name.get(nf.name)
        if of is None:
            if not nf.nullable:
                return (f"column {path!r} is new and not nullable; existing records have no value "
                        "for it, so add it as nullable")
            continue
        msg = _check_field(of, nf, path)
        if msg:
            return msg
    return None  # columns only in ``old`` are fine: they read as null from now on


def reconcile_nullability(incoming: pa.Schema, table: pa.Schema) -> pa.Schema:
    """``incoming`` with every column (and nested field) nullable where the table's is, as Hudi's
    writer reconciles a batch's schema: a batch without nulls in a nullable column is no change
    of schema (Spark marks literals and many expressions non-nullable)."""
    by_name = {f.name: f for f in table}
    return pa.schema([_reconcile_field(f, by_name.get(f.name)) for f in incoming], metadata=incoming.metadata)


def _reconcile_field(new: pa.Field, old: pa.Field | None) -> pa.Field:
    if old is None:
        return new
    t, o = new.type, old.type
    if pa.types.is_struct(t) and pa.types.is_struct(o):
        fields = {f.name: f for f in o}
        t = pa.struct([_reconcile_field(f, fields.get(f.name)) for f in t])
    elif pa.types.is_list(t) and pa.types.is_list(o):
        t = pa.list_(_reconcile_field(t.value_field, o.value_field))
    elif pa.types.is_large_list(t) and pa.types.is_large_list(o):
        t = pa.large_list(_reconcile_field(t.value_field, o.value_field))
    elif pa.types.is_map(t) and pa.types.is_map(o):
        t = pa.map_(t.key_field, _reconcile_field(t.item_field, o.item_field))
    return new.with_type(t).with_nullable(new.nullable or old.nullable)


def arrow_schema_compatible(old: pa.Schema, new: pa.Schema) -> str | None:
    """Why ``new`` cannot replace the table schema ``old`` (first offending column), or None.

    Mirrors what Hudi accepts without schema-on-read: new columns must be nullable; a column may
    widen int->long/float/double, long->float/double, float->double, or a decimal without losing
    digits; int8/int16/int32 are one Avro ``int``; nullable columns stay nullable; a dropped column is
    fine (it reads as null).  Applied recursively to struct fields, list elements and map values.
    """
    return _check_fields(list(old), list(new), None)
