"""Record keys and partition paths, byte-for-byte as Hudi's Spark writers produce them.

Hudi never re-derives a key from data once written: ``_hoodie_record_key`` and the partition folder
are compared as strings on every later upsert.  A key that differs by one character (``1.0`` vs
``1``, ``id:1`` vs ``1``) silently creates a duplicate instead of an update, so every rule here
follows Hudi 0.14/0.15 (table version 6) exactly, including its quirks, and says where 1.x differs.

The reference is Hudi's default write path (insert/upsert through the Spark datasource), which turns
each row into an Avro record and calls the ``*AvroKeyGenerator`` logic on it
(``HoodieAvroUtils.getNestedFieldValAsString``).  Everything runs on Arrow batches with
``pyarrow.compute``, so the same code serves Spark's ``mapInArrow`` on executors and small in-process
writes.  Python only touches values Arrow cannot format the Java way (floats outside
``[1e-3, 1e7)``, partition values that need URL escaping), once per distinct value.
"""
from __future__ import annotations

import datetime as _dt
import re
import struct
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Callable, Sequence, Union

import pyarrow as pa
import pyarrow.compute as pc

from . import config as C
from .config import HoodieConfig
from .errors import HoodieConfigError, HoodieValidationError

Batch = Union[pa.RecordBatch, pa.Table]

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
PARTITION_PATH_SEPARATOR = "/"
RECORD_KEY_PARTS_SEPARATOR = ","
COMPOSITE_KEY_FIELD_VALUE_INFIX = ":"

# The raw writer option: v6 tables persist Custom partition fields without their types.
_WRITE_PARTITION_FIELD_KEY = C.PARTITION_FIELDS.alternatives[0]

_PKG = "org.apache.hudi.keygen."
_CLASS_BY_KIND = {
    "SIMPLE": _PKG + "SimpleKeyGenerator",
    "COMPLEX": _PKG + "ComplexKeyGenerator",
    "NON_PARTITION": _PKG + "NonpartitionedKeyGenerator",
    "TIMESTAMP": _PKG + "TimestampBasedKeyGenerator",
    "CUSTOM": _PKG + "CustomKeyGenerator",
    "GLOBAL_DELETE": _PKG + "GlobalDeleteKeyGenerator",
}
_KIND_BY_CLASS = {
    **{cls: kind for kind, cls in _CLASS_BY_KIND.items()},
    _PKG + "SimpleAvroKeyGenerator": "SIMPLE",
    _PKG + "ComplexAvroKeyGenerator": "COMPLEX",
    _PKG + "NonpartitionedAvroKeyGenerator": "NON_PARTITION",
    _PKG + "NonPartitionedKeyGenerator": "NON_PARTITION",
    _PKG + "NonPartitionedAvroKeyGenerator": "NON_PARTITION",
    _PKG + "TimestampBasedAvroKeyGenerator": "TIMESTAMP",
    _PKG + "CustomAvroKeyGenerator": "CUSTOM",
    _PKG + "GlobalAvroDeleteKeyGenerator": "GLOBAL_DELETE",
}
_TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS",
                    "EPOCHMICROSECONDS", "SCALAR")
# java.util.concurrent.TimeUnit -> milliseconds factor (numerator, denominator)
_UNIT_TO_MS = {"NANOSECONDS": (1, 1_000_000), "MICROSECONDS": (1, 1000), "MILLISECONDS": (1, 1),
               "SECONDS": (1000, 1), "MINUTES": (60_000, 1), "HOURS": (3_600_000, 1),
               "DAYS": (86_400_000, 1)}


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimestampSpec:
    """The ``hoodie.keygen.timebased.*`` settings of one timestamp partition field.

    ``input_zone``/``output_zone`` are ``None`` when Hudi would leave the Joda zone unset (no
    ``timezone``/``input.timezone``/``output.timezone`` given): strings then keep the offset they
    were written with and numbers use the JVM zone, which we take to be UTC.
    """
    timestamp_type: str
    output_format: str
    input_formats: tuple[str, ...] = ()
    input_zone: str | None = None
    output_zone: str | None = None
    scalar_unit: str = "SECONDS"


class KeyGenerator:
    """One of Hudi's built-in key generators, applied to Arrow batches."""

    def __init__(self, kind: str, record_key_fields: Sequence[str], partition_fields: Sequence[str] = (),
                 *, hive_style_partitioning: bool = False, url_encode_partitioning: bool = False,
                 consistent_logical_timestamp: bool = False, encode_single_key_field_name: bool = True,
                 timestamp_spec: TimestampSpec | None = None,
                 partition_field_types: Sequence[str] | None = None, legacy_float_format: bool = True):
        kind = kind.upper()
        if kind not in _CLASS_BY_KIND:
            raise HoodieConfigError(f"Unknown key generator type {kind!r}; use one of "
                                    f"{', '.join(_CLASS_BY_KIND)}")
        self.kind = kind
        self.class_name = _CLASS_BY_KIND[kind]
        self.record_key_fields = [f.strip() for f in record_key_fields if f.strip()]
        self.partition_fields = [f.strip() for f in partition_fields if f.strip()]
        self.hive_style_partitioning = bool(hive_style_partitioning)
        self.url_encode_partitioning = bool(url_encode_partitioning)
        self.consistent_logical_timestamp = bool(consistent_logical_timestamp)
        self.legacy_float_format = bool(legacy_float_format)
        self.timestamp_spec = timestamp_spec
        self.partition_field_types: list[str] | None = None
        name = self.class_name.rsplit(".", 1)[-1]
        if not self.record_key_fields:
            raise HoodieConfigError(
                f"{name} needs a record key: set {C.RECORDKEY_FIELDS.alternatives[0]} "
                "(auto-generated record keys are not supported by this engine)")
        if kind in ("SIMPLE", "TIMESTAMP") and len(self.record_key_fields) != 1:
            raise HoodieConfigError(
                f"{name} takes exactly one record key field, got {','.join(self.record_key_fields)}; "
                f"use {_CLASS_BY_KIND['COMPLEX']} for a composite key")
        if kind in ("SIMPLE", "TIMESTAMP") and len(self.partition_fields) != 1:
            raise HoodieConfigError(
                f"{name} takes exactly one partition field, got {self.partition_fields or 'none'}; "
                f"use {_CLASS_BY_KIND['COMPLEX']} for several or "
                f"{_CLASS_BY_KIND['NON_PARTITION']} for none")
        if kind == "NON_PARTITION":
            self.partition_fields = []

        # Simple/Timestamp always write the bare value; NonPartitioned/Custom do so for one field;
        # Complex does unless told VALUE_ONLY; GlobalDelete always composes.
        if kind in ("SIMPLE", "TIMESTAMP"):
            self.composite_key = False
        elif kind in ("NON_PARTITION", "CUSTOM"):
            self.composite_key = len(self.record_key_fields) > 1
        elif kind == "COMPLEX":
            self.composite_key = len(self.record_key_fields) > 1 or encode_single_key_field_name
        else:
            self.composite_key = True

        self._parts: list[_PartitionPart] = []
        if kind in ("SIMPLE", "COMPLEX"):
            self._parts = [_SimplePart(f, self) for f in self.partition_fields]
        elif kind == "TIMESTAMP":
            self._parts = [_TimestampPart(self.partition_fields[0], self._require_spec(), self)]
        elif kind == "CUSTOM":
            types = [t.upper() for t in (partition_field_types or [])]
            if len(types) != len(self.partition_fields) or not set(types) <= {"SIMPLE", "TIMESTAMP"}:
                raise HoodieConfigError(
                    "CustomKeyGenerator needs a type for every partition field, in the format "
                    "`field1:simple,field2:timestamp` (hoodie.datasource.write.partitionpath.field)")
            self.partition_field_types = types
            for f, t in zip(self.partition_fields, types):
                self._parts.append(_SimplePart(f, self) if t == "SIMPLE"
                                   else _TimestampPart(f, self._require_spec(), self))

    def __repr__(self) -> str:
        return (f"KeyGenerator({self.class_name}, record_key_fields={self.record_key_fields}, "
                f"partition_fields={self.partition_fields}, hive_style={self.hive_style_partitioning})")

    def _require_spec(self) -> TimestampSpec:
        if self.timestamp_spec is None:
            raise HoodieConfigError(
                f"{C.TIMESTAMP_TYPE.key} is required for timestamp-based partitioning "
                f"(one of {', '.join(_TIMESTAMP_TYPES)}); version 6 tables do not store it in "
                "hoodie.properties, so pass it with the write options")
        return self.timestamp_spec

    # -- keys ------------------------------------------------------------------------------------
    def record_keys(self, batch: Batch) -> pa.Array:
        """``_hoodie_record_key`` for every row; raises :class:`HoodieValidationError` on a bad key."""
        values = [self._strings(batch, f, "record key") for f in self.record_key_fields]
        if not self.composite_key:
            keys = values[0]
            bad = pc.fill_null(pc.or_(pc.is_null(keys), pc.equal(keys, "")), True)
            if _any(bad):
                self._raise_bad_key(batch, bad)
            return keys
        pieces: list = []
        all_missing = None
        for i, (field, vals) in enumerate(zip(self.record_key_fields, values)):
            empty = pc.fill_null(pc.equal(vals, ""), False)
            missing = pc.or_(pc.is_null(vals), empty)
            all_missing = missing if all_missing is None else pc.and_(all_missing, missing)
            filled = pc.if_else(empty, EMPTY_RECORDKEY_PLACEHOLDER,
                                vals.fill_null(NULL_RECORDKEY_PLACEHOLDER))
            prefix = (("" if i == 0 else RECORD_KEY_PARTS_SEPARATOR)
                      + field + COMPOSITE_KEY_FIELD_VALUE_INFIX)
            pieces += [pa.scalar(prefix), filled]
        if _any(all_missing):
            self._raise_bad_key(batch, all_missing)
        return pc.binary_join_element_wise(*pieces, "")

    def partition_paths(self, batch: Batch) -> pa.Array:
        """Relative partition path for every row (``""`` for a non-partitioned table)."""
        n = batch.num_rows
        if not self._parts or self.kind == "GLOBAL_DELETE":
            return pa.nulls(n, pa.string()).fill_null("")
        rendered = [part.render(batch) for part in self._parts]
        paths = (rendered[0] if len(rendered) == 1
                 else pc.binary_join_element_wise(*rendered, PARTITION_PATH_SEPARATOR))
        # A ".." segment would put files outside the table (Hudi 1.x rejects it too; 0.14 did not).
        traversal = pc.fill_null(pc.match_substring_regex(paths, r"(^|/)\.\.(/|$)"), False)
        if _any(traversal):
            row = _first_true(traversal)
            raise HoodieValidationError(
                f"Partition path {paths[row].as_py()!r} of row {row} contains a '..' segment, which "
                f"would write outside the table; record: {_describe_row(batch, row, self._fields())}. "
                "Clean the partition column or enable "
                f"{C.URL_ENCODE_PARTITIONING.key}=true")
        return paths

    def validate(self, batch: Batch) -> None:
        """Fail before writing anything: missing or unusable fields, null/empty record keys.

        Cheap (no key strings are built), so writers can call it and then :meth:`record_keys` /
        :meth:`partition_paths`, which raise the same errors themselves (and, for timestamp-based
        partitions, the unparsable-value error).
        """
        columns = {}
        for role, fields in (("record key", self.record_key_fields), ("partition", self.partition_fields)):
            for field in fields:
                arr = _resolve(batch, field, role)
                java_strings(arr.slice(0, 0), field=field)  # type check only
                columns[field] = arr
        missing = None
        for field in self.record_key_fields:
            arr = columns[field]
            if pa.types.is_dictionary(arr.type):
                arr = arr.dictionary_decode()
            gone = pc.is_null(arr)
            if _is_text(arr.type):
                gone = pc.or_(gone, pc.fill_null(pc.equal(arr.cast(pa.string()), ""), False))
            if not self.composite_key:
                missing = gone
            else:
                missing = gone if missing is None else pc.and_(missing, gone)
        if missing is not None and _any(missing):
            self._raise_bad_key(batch, missing)

    # -- helpers ---------------------------------------------------------------------------------
    def _fields(self) -> list[str]:
        return list(dict.fromkeys(self.record_key_fields + self.partition_fields))

    def _strings(self, batch: Batch, field: str, role: str) -> pa.Array:
        return java_strings(_resolve(batch, field, role), self.consistent_logical_timestamp, field,
                            legacy_float_format=self.legacy_float_format)

    def _raise_bad_key(self, batch: Batch, bad: pa.Array) -> None:
        row = _first_true(bad)
        count = pc.sum(pc.cast(bad, pa.int64())).as_py()
        fields = ", ".join(self.record_key_fields)
        what = (f"Record key field {fields!r} is null or empty" if len(self.record_key_fields) == 1
                else f"All record key fields ({fields}) are null or empty")
        raise HoodieValidationError(
            f"{what} in row {row} ({count} of {batch.num_rows} rows affected); first bad record: "
            f"{_describe_row(batch, row, self._fields())}. Every Hudi record needs a non-empty key: "
            f"fill {fields} or drop these rows before writing, or choose other key fields "
            f"({C.RECORDKEY_FIELDS.alternatives[0]}).")


def key_generator_from_config(cfg: HoodieConfig) -> KeyGenerator:
    """Pick the key generator the way Hudi's Spark writer does: class, then type, then inference."""
    record_key_fields = cfg.get_list(C.RECORDKEY_FIELDS)
    partition_spec = cfg.get_list(C.PARTITION_FIELDS)
    # v6 tables persist Custom partition fields without their types; the writer's option has them.
    write_spec = [p.strip() for p in cfg.raw().get(_WRITE_PARTITION_FIELD_KEY, "").split(",") if p.strip()]
    if any(":" in p for p in write_spec) and not any(":" in p for p in partition_spec):
        partition_spec = write_spec

    kind = None
    class_name = cfg.get_str(C.KEYGEN_CLASS)
    if class_name:
        kind = _KIND_BY_CLASS.get(class_name.strip())
        if kind is None:
            raise HoodieConfigError(
                f"Key generator class {class_name!r} cannot run in this engine; use one of "
                f"{', '.join(_CLASS_BY_KIND.values())} (or {C.KEYGEN_TYPE.key})")
    else:
        type_name = (cfg.get_str(C.KEYGEN_TYPE) or "").strip().upper()
        if type_name:
            kind = type_name[:-len("_AVRO")] if type_name.endswith("_AVRO") else type_name
            if kind not in _CLASS_BY_KIND:
                raise HoodieConfigError(f"{C.KEYGEN_TYPE.key}={type_name!r} is not supported; use one "
                                        f"of {', '.join(_CLASS_BY_KIND)}")
    if kind is None:
        # KeyGenUtils.inferKeyGeneratorType (1.x adds the CUSTOM case; harmless for 0.14 configs)
        if not partition_spec:
            kind = "NON_PARTITION"
        elif ":" in partition_spec[0]:
            kind = "CUSTOM"
        elif len(partition_spec) == 1 and len(record_key_fields) <= 1:
            kind = "SIMPLE"
        else:
            kind = "COMPLEX"

    field_types = None
    if kind == "CUSTOM":
        pairs = [p.split(":", 1) for p in partition_spec]
        partition_fields = [p[0].strip() for p in pairs]
        field_types = [p[1].strip().upper() if len(p) == 2 else "" for p in pairs]
    else:
        partition_fields = [p.split(":", 1)[0].strip() for p in partition_spec]

    needs_spec = kind == "TIMESTAMP" or (field_types is not None and "TIMESTAMP" in field_types)
    return KeyGenerator(
        kind, record_key_fields, partition_fields,
        hive_style_partitioning=cfg.get(C.HIVE_STYLE_PARTITIONING),
        url_encode_partitioning=cfg.get(C.URL_ENCODE_PARTITIONING),
        consistent_logical_timestamp=cfg.get(C.CONSISTENT_LOGICAL_TIMESTAMP),
        encode_single_key_field_name=_encode_single_key_field_name(cfg),
        timestamp_spec=_timestamp_spec(cfg) if needs_spec else None,
        partition_field_types=field_types,
        legacy_float_format=_legacy_float_format(cfg))


def _legacy_float_format(cfg: HoodieConfig) -> bool:
    return cfg.get_str(C.KEYGEN_JAVA_FLOAT_FORMAT).strip().upper() == "LEGACY"


def partition_values_from_path(path: str, fields: Sequence[str], hive_style: bool, *,
                               url_encoded: bool = False) -> dict[str, str | None]:
    """Partition column values from a relative partition path, the inverse of simple/complex layouts.

    ``__HIVE_DEFAULT_PARTITION__`` comes back as ``None`` (the value was null or empty).  A value
    that itself contained ``/`` (written without URL encoding) is reassembled for hive-style paths;
    for plain paths that is only possible with a single field, which then gets the whole path
    (also what a timestamp-based ``yyyy/MM/dd`` layout yields).
    """
    fields = [f for f in fields if f]
    if not fields:
        return {}
    path = path.strip("/")
    segments = path.split("/") if path else [""]
    if hive_style:
        values: dict[str, list[str]] = {}
        current = None
        nxt = 0
        for seg in segments:
            if nxt < len(fields) and seg.startswith(fields[nxt] + "="):
                current = fields[nxt]
                values[current] = [seg[len(current) + 1:]]
                nxt += 1
            elif current is not None:
                values[current].append(seg)
            else:
                raise HoodieValidationError(
                    f"Partition path {path!r} is not hive style for fields {list(fields)} "
                    f"(expected {fields[0]}=...); check {C.HIVE_STYLE_PARTITIONING.key}")
        if nxt != len(fields):
            raise HoodieValidationError(
                f"Partition path {path!r} lacks field {fields[nxt]!r}; expected "
                + "/".join(f + "=..." for f in fields))
        raw = {f: "/".join(v) for f, v in values.items()}
    elif len(fields) == 1:
        raw = {fields[0]: path}
    else:
        if len(segments) != len(fields):
            raise HoodieValidationError(
                f"Partition path {path!r} has {len(segments)} levels but the table has "
                f"{len(fields)} partition fields {list(fields)}; a value containing '/' cannot be "
                f"told apart without {C.HIVE_STYLE_PARTITIONING.key} or {C.URL_ENCODE_PARTITIONING.key}")
        raw = dict(zip(fields, segments))
    out: dict[str, str | None] = {}
    for f, v in raw.items():
        if v == DEFAULT_PARTITION_PATH:
            out[f] = None
        else:
            out[f] = unescape_path_name(v) if url_encoded else v
    return out


def escape_path_name(value: str) -> str:
    """Hive's FileUtils.escapePathName, as Hudi's PartitionPathEncodeUtils does it."""
    if not value:
        return DEFAULT_PARTITION_PATH
    return "".join(f"%{ord(c):02X}" if c in _ESCAPE_CHARS else c for c in value)


def unescape_path_name(value: str) -> str:
    """Inverse of :func:`escape_path_name` (``%XX`` with two hex digits, anything else kept)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), value)


# ------------------------------------------------------------------------------------------------
# value -> Java string
# ------------------------------------------------------------------------------------------------
def java_strings(arr: pa.Array, consistent_logical_timestamp: bool = False, field: str = "", *,
                 legacy_float_format: bool = True) -> pa.Array:
    """Each value as ``String.valueOf`` of what Hudi's Avro record holds for it (nulls stay null).

    Spark hands Hudi an Avro record, so: ints/longs/booleans/strings print as Java does; float and
    double use ``Float/Double.toString``; decimals ``BigDecimal.toString`` (scientific below 1e-6
    when the scale is large: ``0E-18``); dates ``LocalDate.toString``; timestamps are the raw epoch
    microseconds unless the consistent-logical-timestamp option turns them into
    ``java.sql.Timestamp.toString`` (rendered in UTC, i.e. a JVM running in UTC).
    """
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if isinstance(t, pa.ExtensionType):
        arr = arr.storage
        t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if _is_text(t):
        return arr.cast(pa.string())
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_decimal(t):
        # Arrow's decimal text follows the same to-scientific-string rule as BigDecimal.toString.
        return arr.cast(pa.string())
    if pa.types.is_floating(t):
        return _java_float_strings(arr, legacy_float_format)
    if pa.types.is_date(t):
        return arr.cast(pa.date32()).cast(pa.string())
    if pa.types.is_timestamp(t):
        if consistent_logical_timestamp and t.tz is not None:
            return _java_sql_timestamp_strings(arr)
        # Spark's timestamps reach Avro as timestamp-micros longs.
        return pc.cast(arr.cast(pa.timestamp("us", t.tz), safe=False), pa.int64()).cast(pa.string())
    raise HoodieValidationError(
        f"Field {field!r} has type {t}; Hudi only builds keys and partition paths from scalar "
        "columns (string, integer, boolean, float, decimal, date, timestamp). Pick another field "
        "or derive a string column first.")


def _is_string_view(t: pa.DataType) -> bool:
    fn = getattr(pa.types, "is_string_view", None)
    return bool(fn and fn(t))


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t)


def _java_float_strings(arr: pa.Array, legacy: bool = True) -> pa.Array:
    """Java's Float/Double.toString: plain within [1e-3, 1e7) ("1.0", "0.001"), else "1.0E7".

    The digits are the shortest that round-trip (JDK 19+), except that with ``legacy`` (JDK 8-18,
    what Spark 3 / Hudi 0.14-0.15 run on) integral values from 2^53 (float: 2^24) up to 2^63 print
    their exact integer digits as the old FloatingDecimal did: 5.995244730532772E17 becomes
    "5.9952447305327718E17".  Other old-JDK oddities (a few values >= 1e19) are not reproduced.
    """
    if arr.type == pa.float16():
        arr = arr.cast(pa.float32())
    single = arr.type == pa.float32()
    text = arr.cast(pa.string())  # shortest round-trip digits, for float32 and float64 alike
    magnitude = pc.abs(arr)
    plain = pc.or_(pc.and_(pc.greater_equal(magnitude, 1e-3), pc.less(magnitude, 1e7)),
                   pc.equal(magnitude, 0))
    fast = pc.fill_null(pc.and_(plain, pc.invert(pc.match_substring(text, "e"))), False)
    fixed = pc.if_else(pc.match_substring(text, "."), text,
                       pc.binary_join_element_wise(text, pa.scalar(".0"), ""))
    out = pc.if_else(fast, fixed, text)
    # Scientific notation, rebuilt from Arrow's three layouts: "1.5e+300", "12345678", "0.000025".
    tiny = 1.1754943508222875e-38 if single else 2.2250738585072014e-308
    normal = pc.and_(pc.is_finite(arr), pc.greater_equal(magnitude, tiny))
    sci = pc.fill_null(pc.and_(pc.invert(plain), normal), False)
    if _any(sci):
        g = pc.extract_regex(pc.if_else(sci, text, "0e0"),
                             r"^(?P<s>-?)(?:(?P<a>\d)(?:\.(?P<af>\d+))?e(?P<ae>[+-]\d+)"
                             r"|(?P<b>\d+)|0\.(?P<cz>0*)(?P<c>\d+))$")
        f = {name: pc.struct_field(g, name) for name in ("s", "a", "af", "ae", "b", "cz", "c")}
        is_a = pc.not_equal(f["a"], "")
        is_b = pc.not_equal(f["b"], "")
        first = pc.if_else(is_a, f["a"], pc.utf8_slice_codeunits(pc.if_else(is_b, f["b"], f["c"]), 0, 1))
        rest = pc.if_else(is_a, f["af"], pc.utf8_rtrim(
            pc.utf8_slice_codeunits(pc.if_else(is_b, f["b"], f["c"]), 1), characters="0"))
        rest = pc.if_else(pc.equal(rest, ""), "0", rest)
        exp_a = pc.cast(pc.utf8_ltrim(pc.if_else(is_a, f["ae"], "0"), characters="+"), pa.int64())
        exp_b = pc.subtract(pc.cast(pc.utf8_length(f["b"]), pa.int64()), 1)
        exp_c = pc.negate(pc.add(pc.cast(pc.utf8_length(f["cz"]), pa.int64()), 1))
        exp = pc.if_else(is_a, exp_a, pc.if_else(is_b, exp_b, exp_c))
        built = pc.binary_join_element_wise(f["s"], first, pa.scalar("."), rest, pa.scalar("E"),
                                            exp.cast(pa.string()), "")
        sci = pc.and_(sci, pc.is_valid(g))
        out = pc.if_else(sci, built, out)
    # NaN, infinities and subnormals (Java then prints two digits: "4.9E-324") in Python.
    rare = pc.and_(pc.is_valid(arr), pc.invert(pc.or_(fast, sci)))
    out = _map_rare(out, rare, lambda s: _java_float_text(s, single))
    if legacy:
        big = pc.and_(pc.greater_equal(magnitude, 2.0 ** (24 if single else 53)),
                      pc.less(magnitude, 2.0 ** 63))
        big = pc.and_(big, pc.equal(pc.trunc(arr), arr))
        out = _map_rare(out, big, lambda s: _legacy_integral_text(s, single), keys=text)
    return out


def _legacy_integral_text(shortest: str, single: bool) -> str:
    """Old FloatingDecimal for an integral value below 2^63: its exact digits, less the ones the
    binary precision cannot vouch for (floor(p * log10 2) of them, p = excess exponent - 1),
    rounded half up."""
    value = float(shortest)
    if single:
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    v = int(abs(value))
    bin_exp = v.bit_length() - 1
    significant_bits = 24 if single else 53
    dropped = 0
    if bin_exp > significant_bits:
        p = bin_exp - significant_bits - 1
        dropped = int(p * 0.30102999566398120) if p > 1 else 0
    if dropped:
        scale = 10 ** dropped
        v, residue = divmod(v, scale)
        if residue >= scale // 2:
            v += 1
    digits = str(v)
    e10 = len(digits) - 1 + dropped
    digits = digits.rstrip("0") or "0"
    return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:] or '0'}E{e10}"


def _java_float_text(shortest: str, single: bool = False) -> str:
    """One value from its shortest round-trip text (Arrow's), laid out as the JDK (19+) does."""
    if shortest in ("nan", "-nan"):
        return "NaN"
    if shortest in ("inf", "-inf"):
        return "-Infinity" if shortest.startswith("-") else "Infinity"
    sign, digits, exp = Decimal(shortest).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    neg = "-" if sign else ""
    if digits == [0]:
        return neg + "0.0"
    if len(digits) == 1:
        # Java never prints fewer than two significant digits: it takes the 2-digit decimal
        # closest to the binary value (Double.MIN_VALUE is "4.9E-324", not "5.0E-324").
        value = float(shortest)
        if single:
            value = struct.unpack("<f", struct.pack("<f", value))[0]
        exact = abs(Decimal(value))
        two = exact.scaleb(-exact.adjusted()).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
        shift = exact.adjusted()
        if two >= 10:
            two, shift = Decimal("1.0"), shift + 1
        _, digits2, _ = two.as_tuple()
        digits = list(digits2)
        if len(digits) > 1 and digits[-1] == 0:
            digits.pop()
        exp = shift - (len(digits) - 1)
    e10 = len(digits) - 1 + exp
    if -3 <= e10 < 7:
        txt = format(Decimal((0, tuple(digits), exp)), "f")
        return neg + (txt if "." in txt else txt + ".0")
    mantissa = "".join(map(str, digits[1:])) or "0"
    return f"{neg}{digits[0]}.{mantissa}E{e10}"


def _java_sql_timestamp_strings(arr: pa.Array) -> pa.Array:
    """``new java.sql.Timestamp(micros / 1000).toString()`` in UTC: "2023-04-01 17:01:00.0"."""
    micros = pc.cast(arr.cast(pa.timestamp("us", "UTC"), safe=False), pa.int64())
    millis = pc.divide(micros, 1000)  # Java long division truncates, like Arrow's
    secs, rem = _floor_divmod(millis, 1000)
    base = pc.strftime(pc.cast(secs, pa.timestamp("s", "UTC")), format="%Y-%m-%d %H:%M:%S")
    frac = pc.utf8_rtrim(pc.utf8_lpad(rem.cast(pa.string()), width=3, padding="0"), characters="0")
    frac = pc.if_else(pc.equal(rem, 0), "0", frac)
    return pc.binary_join_element_wise(base, frac, ".")


# ------------------------------------------------------------------------------------------------
# partition parts
# ------------------------------------------------------------------------------------------------
_ESCAPE_CHARS = frozenset([chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
_ESCAPE_RE = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(_ESCAPE_CHARS)) + "]"


class _PartitionPart:
    def __init__(self, field: str, owner: KeyGenerator):
        self.field = field
        self.owner = owner

    def render(self, batch: Batch) -> pa.Array:
        values = self.values(batch)
        if self.owner.url_encode_partitioning:
            values = _map_rare(values, pc.fill_null(pc.match_substring_regex(values, _ESCAPE_RE), False),
                               escape_path_name)
        if self.owner.hive_style_partitioning:
            values = pc.binary_join_element_wise(pa.scalar(self.field + "="), values, "")
        return values

    def values(self, batch: Batch) -> pa.Array:
        raise NotImplementedError


class _SimplePart(_PartitionPart):
    """The value as a string; null or empty becomes ``__HIVE_DEFAULT_PARTITION__``."""

    def values(self, batch: Batch) -> pa.Array:
        owner = self.owner
        vals = java_strings(_resolve(batch, self.field, "partition"), owner.consistent_logical_timestamp,
                            self.field, legacy_float_format=owner.legacy_float_format)
        return pc.if_else(pc.fill_null(pc.equal(vals, ""), True), DEFAULT_PARTITION_PATH, vals)


class _TimestampPart(_PartitionPart):
    """TimestampBasedAvroKeyGenerator: a time value re-formatted with the output pattern.

    Hudi's rules, kept as is: a null value becomes "1" (one unit after the epoch) or, for string
    types, the epoch+1ms written with the first input pattern; numbers (float and decimal truncated,
    a date as its epoch-day count, a timestamp as its epoch-microsecond count unless the
    consistent-logical-timestamp option is on) are counted in the type's unit.
    """

    def __init__(self, field: str, spec: TimestampSpec, owner: KeyGenerator):
        super().__init__(field, owner)
        ttype = spec.timestamp_type.upper()
        if ttype not in _TIMESTAMP_TYPES:
            raise HoodieConfigError(f"{C.TIMESTAMP_TYPE.key}={spec.timestamp_type!r} is not valid; use "
                                    f"one of {', '.join(_TIMESTAMP_TYPES)}")
        self.ttype = ttype
        self.spec = spec
        if not spec.output_format:
            raise HoodieConfigError(f"{C.TIMESTAMP_OUTPUT_DATE_FORMAT.key} is required for "
                                    "timestamp-based partitioning (e.g. yyyy/MM/dd)")
        self.output = JavaDatePattern(spec.output_format, C.TIMESTAMP_OUTPUT_DATE_FORMAT.key)
        self.in_zone = _arrow_zone(spec.input_zone) if spec.input_zone else None
        self.out_zone = _arrow_zone(spec.output_zone) if spec.output_zone else None
        self.inputs: list[JavaDatePattern] = []
        self.unit = None
        if ttype in ("DATE_STRING", "MIXED"):
            if not spec.input_formats:
                raise HoodieConfigError(f"{C.TIMESTAMP_INPUT_DATE_FORMAT.key} is required when "
                                        f"{C.TIMESTAMP_TYPE.key}={ttype}")
            self.inputs = [JavaDatePattern(p, C.TIMESTAMP_INPUT_DATE_FORMAT.key, parse=True)
                           for p in spec.input_formats]
            # getDefaultPartitionVal: epoch+1ms printed with the first pattern in the input zone
            zone = self.in_zone or self.out_zone or "UTC"
            one_ms = pa.array([1], pa.int64()).cast(pa.timestamp("ms", zone))
            self.default_text = self.inputs[0].format(one_ms)[0].as_py()
        else:
            unit = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
                    "EPOCHMICROSECONDS": "MICROSECONDS"}.get(ttype, (spec.scalar_unit or "SECONDS").upper())
            if unit not in _UNIT_TO_MS:
                raise HoodieConfigError(f"{C.TIMESTAMP_SCALAR_UNIT.key}={spec.scalar_unit!r} is not a "
                                        f"TimeUnit; use one of {', '.join(_UNIT_TO_MS)}")
            self.unit = unit

    def values(self, batch: Batch) -> pa.Array:
        arr = _resolve(batch, self.field, "partition")
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        t = arr.type
        textual = _is_text(t)
        if textual and self.inputs:
            text = arr.cast(pa.string()).fill_null(self.default_text)
            millis, zone, offsets = self._parse_strings(batch, text)
        elif pa.types.is_timestamp(t) and t.tz is not None and self.owner.consistent_logical_timestamp:
            # java.sql.Timestamp branch: the instant itself, whatever the timestamp type
            millis = pc.divide(pc.cast(arr.cast(pa.timestamp("us", "UTC"), safe=False), pa.int64()), 1000)
            if self.inputs:
                default = self._parse_strings(batch, pa.array([self.default_text]))[0]
                millis = millis.fill_null(default[0])
            else:
                millis = millis.fill_null(self._to_millis(pa.array([1], pa.int64()))[0])
            zone, offsets = self.out_zone or "UTC", None
        elif self.inputs:
            raise HoodieValidationError(
                f"Partition field {self.field!r} has type {t} but {C.TIMESTAMP_TYPE.key}="
                f"{self.ttype} expects date strings; use UNIX_TIMESTAMP, EPOCHMILLISECONDS, "
                "EPOCHMICROSECONDS or SCALAR for numbers")
        else:
            longs = self._longs(batch, arr).fill_null(1)
            millis = self._to_millis(longs)
            zone, offsets = self.out_zone or "UTC", None
        return self.output.format(pc.cast(millis, pa.timestamp("ms", zone)), offsets)

    def _longs(self, batch: Batch, arr: pa.Array) -> pa.Array:
        t = arr.type
        if pa.types.is_integer(t):
            return arr.cast(pa.int64())
        if pa.types.is_floating(t):
            return pc.trunc(arr).cast(pa.int64())  # Double.longValue()
        if pa.types.is_decimal(t):
            return arr.cast(pa.int64(), safe=False)  # BigDecimal.longValue() truncates
        if pa.types.is_date(t):
            return pc.cast(arr.cast(pa.date32()), pa.int32()).cast(pa.int64())  # LocalDate.toEpochDay
        if pa.types.is_timestamp(t):
            return pc.cast(arr.cast(pa.timestamp("us", t.tz), safe=False), pa.int64())
        if _is_text(t):
            # 0.14 throws here; Hudi 1.1 writes epoch numbers held in strings (see v9 fixtures).
            text = pc.utf8_trim_whitespace(arr.cast(pa.string()))
            ok = pc.fill_null(pc.match_substring_regex(text, r"^[+-]?[0-9]+$"), True)
            if not _all(ok):
                row = _first_true(pc.invert(ok))
                raise HoodieValidationError(
                    f"Partition field {self.field!r} value {arr[row].as_py()!r} in row {row} is not a "
                    f"whole number of {self.unit.lower()} ({C.TIMESTAMP_TYPE.key}={self.ttype}); "
                    f"record: {_describe_row(batch, row, self.owner._fields())}")
            return text.cast(pa.int64())
        raise HoodieValidationError(
            f"Partition field {self.field!r} has type {t}, which a timestamp-based key generator "
            "cannot read; use a number, date, timestamp or string column")

    def _to_millis(self, longs: pa.Array) -> pa.Array:
        num, den = _UNIT_TO_MS[self.unit]
        if den > 1:
            return pc.divide(longs, den)  # TimeUnit.convert truncates toward zero
        return pc.multiply_checked(longs, num) if num > 1 else longs

    def _parse_strings(self, batch: Batch, text: pa.Array) -> tuple[pa.Array, str, pa.Array | None]:
        """Joda parse with the input patterns (first full match wins).

        -> (ms to print, zone to print them in, per-row offset minutes when printing wall-clock time)
        """
        local = offset = None
        matched = None
        for pattern in self.inputs:
            loc, off, ok = pattern.parse(text)
            if matched is None:
                local, offset, matched = loc, off, ok
            else:
                take = pc.and_(ok, pc.invert(matched))
                local = pc.if_else(take, loc, local)
                offset = pc.if_else(take, off, offset)
                matched = pc.or_(matched, ok)
        if not _all(matched):
            row = _first_true(pc.invert(matched))
            raise HoodieValidationError(
                f"Partition field {self.field!r} value {text[row].as_py()!r} in row {row} does not "
                f"match {C.TIMESTAMP_INPUT_DATE_FORMAT.key}={','.join(self.spec.input_formats)!r}; "
                f"record: {_describe_row(batch, row, self.owner._fields())}. Fix the value or add "
                "its pattern to the input formats")
        if self.in_zone is None and self.out_zone is None:
            # Joda prints in the zone it parsed (the string's own offset, else the JVM's):
            # the output is the wall-clock time written in the string, with its offset.
            return local, "UTC", offset.fill_null(0)
        # only rows without an offset of their own are read in the input zone
        naive = pc.cast(pc.if_else(pc.is_valid(offset), 0, local), pa.timestamp("ms"))
        try:
            assumed = pc.assume_timezone(naive, timezone=self.in_zone or "UTC",
                                         ambiguous="earliest", nonexistent="raise")
        except pa.ArrowInvalid as e:
            raise HoodieValidationError(
                f"Partition field {self.field!r} holds a local time that does not exist in "
                f"{self.in_zone} (daylight-saving gap): {e}") from None
        by_zone = pc.cast(assumed, pa.int64())
        by_offset = pc.subtract(local, pc.multiply(offset, 60_000))
        instants = pc.if_else(pc.is_valid(offset), by_offset, by_zone)
        return instants, (self.out_zone or self.in_zone), None


# ------------------------------------------------------------------------------------------------
# Java (Joda) date patterns
# ------------------------------------------------------------------------------------------------
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december"]
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMERIC_LETTERS = set("yYxMdHhkKmsSDwe")
_PARSE_LETTERS = set("yYMdHhkKmsSaEZ")
_PRINT_LETTERS = set("yYxMdHhkKmsSaEZzDwe")


def _re_literal(text: str) -> str:
    return "".join(c if c.isalnum() and c.isascii() else f"\\x{{{ord(c):x}}}" for c in text)


class JavaDatePattern:
    """A Joda/Java ``DateTimeFormat`` pattern (``yyyy-MM-dd'T'HH:mm:ss.SSSZ``) run with Arrow.

    Parsing builds one RE2 regex with a named group per field (``extract_regex``), so it takes any
    digit counts Joda takes, fractions and ``Z``/``+hh:mm`` offsets, which ``strptime`` cannot.
    Printing assembles the pieces per field, so unpadded (``M``, ``d``) and fraction (``SSS``)
    fields come out as Joda prints them.
    """

    def __init__(self, pattern: str, key: str = "pattern", parse: bool = False):
        self.pattern = pattern
        self.tokens = self._tokenize(pattern, key)
        allowed = _PARSE_LETTERS if parse else _PRINT_LETTERS
        for tok in self.tokens:
            if tok[0] != "'" and tok[0] not in allowed:
                raise HoodieConfigError(
                    f"{key}={pattern!r}: pattern letter {tok[0]!r} is not supported for "
                    f"{'parsing' if parse else 'printing'} (supported: {''.join(sorted(allowed))})")
        if parse:
            self.regex = self._build_regex()

    @staticmethod
    def _tokenize(pattern: str, key: str) -> list[tuple[str, object]]:
        tokens: list[tuple[str, object]] = []
        i, n = 0, len(pattern)
        lit = []
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    lit.append("'")
                    i += 2
                    continue
                end = i + 1
                buf = []
                while True:
                    if end >= n:
                        raise HoodieConfigError(f"{key}={pattern!r}: unterminated quote")
                    if pattern[end] == "'":
                        if end + 1 < n and pattern[end + 1] == "'":
                            buf.append("'")
                            end += 2
                            continue
                        break
                    buf.append(pattern[end])
                    end += 1
                lit.append("".join(buf))
                i = end + 1
            elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                if lit:
                    tokens.append(("'", "".join(lit)))
                    lit = []
                tokens.append((c, j - i))
                i = j
            else:
                lit.append(c)
                i += 1
        if lit:
            tokens.append(("'", "".join(lit)))
        return tokens

    def _is_numeric(self, idx: int) -> bool:
        if idx >= len(self.tokens):
            return False
        letter, count = self.tokens[idx]
        return letter in _NUMERIC_LETTERS and not (letter == "M" and count >= 3)

    def _build_regex(self) -> str:
        out = ["^"]
        names = "|".join(sorted(_MONTHS + [m[:3] for m in _MONTHS], key=len, reverse=True))
        days = "|".join(sorted(_DAYS + [d[:3] for d in _DAYS], key=len, reverse=True))
        for idx, (letter, count) in enumerate(self.tokens):
            if letter == "'":
                out.append(f"(?i:{_re_literal(count)})")
                continue
            if letter in "yY":
                if count == 2:
                    body = r"\d{2}"
                else:
                    body = rf"\d{{1,{count}}}" if self._is_numeric(idx + 1) else r"\d{1,9}"
            elif letter == "M":
                body = f"(?i:{names})" if count >= 3 else r"\d{1,2}"
            elif letter in "dHhkKms":
                body = r"\d{1,2}"
            elif letter == "S":
                body = r"\d{1,9}"
            elif letter == "a":
                body = "(?i:am|pm)"
            elif letter == "E":
                body = f"(?i:{days})"
            elif letter == "Z":
                if count > 2:
                    raise HoodieConfigError(f"{self.pattern!r}: zone ids (ZZZ) cannot be parsed; "
                                            "use Z or ZZ for offsets")
                body = r"Z|[+-]\d{2}(?::?\d{2})?"
            else:  # pragma: no cover - guarded in __init__
                raise AssertionError(letter)
            out.append(f"(?P<g{idx}>{body})")
        out.append("$")
        return "".join(out)

    def parse(self, text: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
        """-> (wall-clock ms as if UTC, offset minutes or null, matched-and-valid mask)."""
        n = len(text)
        groups = pc.extract_regex(text, self.regex)
        matched = pc.fill_null(pc.is_valid(groups), False)

        def grp(idx: int) -> pa.Array:
            return pc.struct_field(groups, f"g{idx}")

        def num(idx: int) -> pa.Array:
            return pc.cast(pc.if_else(matched, grp(idx), "0"), pa.int64())

        def const(v: int) -> pa.Array:
            return pa.nulls(n, pa.int64()).fill_null(v)

        year, month, day = const(1970), const(1), const(1)
        hour, minute, second, millis = const(0), const(0), const(0), const(0)
        hour12 = pm = None
        offset = pa.nulls(n, pa.int64())
        for idx, (letter, count) in enumerate(self.tokens):
            if letter == "'":
                continue
            if letter in "yY":
                year = num(idx)
                if count == 2:  # Joda two-digit year: pivot 30 years back, window of 100
                    pivot = _dt.date.today().year - 30
                    base = pivot - 50
                    century = base - base % 100
                    year = pc.add(year, century)
                    year = pc.if_else(pc.less(year, base), pc.add(year, 100), year)
            elif letter == "M":
                if count >= 3:
                    lower = pc.utf8_lower(pc.if_else(matched, grp(idx), "jan"))
                    pos = pc.index_in(lower, value_set=pa.array(_MONTHS + [m[:3] for m in _MONTHS]))
                    month = pc.add(_floor_divmod(pos.cast(pa.int64()), 12)[1], 1)
                else:
                    month = num(idx)
            elif letter == "d":
                day = num(idx)
            elif letter == "H":
                hour = num(idx)
            elif letter == "k":  # 1-24
                hour = _floor_divmod(num(idx), 24)[1]
            elif letter in "hK":  # 1-12 / 0-11 with an am/pm marker
                hour12 = _floor_divmod(num(idx), 12)[1]
            elif letter == "m":
                minute = num(idx)
            elif letter == "s":
                second = num(idx)
            elif letter == "S":  # fraction of second; Joda keeps milliseconds
                digits = pc.binary_join_element_wise(pc.if_else(matched, grp(idx), "0"),
                                                     pa.scalar("00"), "")
                millis = pc.cast(pc.utf8_slice_codeunits(digits, 0, 3), pa.int64())
            elif letter == "a":
                pm = pc.equal(pc.utf8_lower(pc.if_else(matched, grp(idx), "am")), "pm")
            elif letter == "Z":
                offset = _offset_minutes(pc.if_else(matched, grp(idx), pa.scalar(None, pa.string())))
        if hour12 is not None:
            hour = hour12 if pm is None else pc.if_else(pm, pc.add(hour12, 12), hour12)

        def pad(a: pa.Array, width: int) -> pa.Array:
            return pc.utf8_lpad(a.cast(pa.string()), width=width, padding="0")

        text_ts = pc.binary_join_element_wise(
            pad(year, 4), pa.scalar("-"), pad(month, 2), pa.scalar("-"), pad(day, 2), pa.scalar(" "),
            pad(hour, 2), pa.scalar(":"), pad(minute, 2), pa.scalar(":"), pad(second, 2), "")
        ts = pc.strptime(text_ts, format="%Y-%m-%d %H:%M:%S", unit="s", error_is_null=True)
        # strptime rolls Feb 30 over to Mar 2; Joda rejects it, so demand an exact round trip.
        same = [pc.equal(pc.year(ts), year), pc.equal(pc.month(ts), month),
                pc.equal(pc.day(ts), day), pc.equal(pc.hour(ts), hour),
                pc.equal(pc.minute(ts), minute), pc.equal(pc.second(ts), second)]
        ok = matched
        for s in same:
            ok = pc.and_(ok, pc.fill_null(s, False))
        local = pc.add(pc.multiply(pc.cast(ts, pa.int64()), 1000), millis)
        local = pc.if_else(ok, local, None)
        return local, pc.if_else(ok, offset, None), ok

    def format(self, ts: pa.Array, offsets: pa.Array | None = None) -> pa.Array:
        """Print zoned timestamps (the zone of ``ts``'s type) the way Joda prints this pattern.

        ``offsets`` (minutes) stands for per-row fixed-offset zones: ``ts`` then holds wall-clock
        times and zone letters print these offsets.
        """
        n = len(ts)
        pieces: list = [pa.nulls(n, pa.string()).fill_null("")]

        def pad(a: pa.Array, width: int) -> pa.Array:
            return pc.utf8_lpad(a.cast(pa.string()), width=width, padding="0")

        for letter, count in self.tokens:
            if letter == "'":
                pieces.append(pa.scalar(count))
            elif letter in "yYx":
                year = pc.iso_year(ts) if letter == "x" else pc.year(ts)
                year = year.cast(pa.int64())
                pieces.append(pad(_floor_divmod(year, 100)[1], 2) if count == 2 else pad(year, count))
            elif letter == "M":
                if count >= 3:
                    pieces.append(pc.strftime(ts, format="%B" if count >= 4 else "%b"))
                else:
                    pieces.append(pad(pc.month(ts), count))
            elif letter == "d":
                pieces.append(pad(pc.day(ts), count))
            elif letter == "D":
                pieces.append(pad(pc.day_of_year(ts), count))
            elif letter == "w":
                pieces.append(pad(pc.iso_week(ts), count))
            elif letter == "e":
                pieces.append(pad(pc.day_of_week(ts, count_from_zero=False, week_start=1), count))
            elif letter == "E":
                pieces.append(pc.strftime(ts, format="%A" if count >= 4 else "%a"))
            elif letter in "HhkK":
                hour = pc.hour(ts).cast(pa.int64())
                if letter == "k":
                    hour = pc.if_else(pc.equal(hour, 0), 24, hour)
                elif letter in "hK":
                    hour = _floor_divmod(hour, 12)[1]
                    if letter == "h":
                        hour = pc.if_else(pc.equal(hour, 0), 12, hour)
                pieces.append(pad(hour, count))
            elif letter == "m":
                pieces.append(pad(pc.minute(ts), count))
            elif letter == "s":
                pieces.append(pad(pc.second(ts), count))
            elif letter == "S":
                ms = pad(pc.millisecond(ts), 3)
                if count < 3:
                    ms = pc.utf8_slice_codeunits(ms, 0, count)
                elif count > 3:
                    ms = pc.binary_join_element_wise(ms, pa.scalar("0" * (count - 3)), "")
                pieces.append(ms)
            elif letter == "a":
                pieces.append(pc.if_else(pc.less(pc.hour(ts), 12), "AM", "PM"))
            elif letter in "Zz" and offsets is not None:
                # a parsed offset is a fixed-offset zone: its id is "+05:30", or "UTC" for zero
                text = _offset_text(offsets, ":" if count == 2 or count >= 3 or letter == "z" else "")
                if letter == "z" or count >= 3:
                    text = pc.if_else(pc.equal(offsets, 0), "UTC", text)
                pieces.append(text)
            elif letter == "Z":
                if count >= 3:
                    pieces.append(pa.scalar(ts.type.tz or "UTC"))
                else:
                    pieces.append(pc.strftime(ts, format="%z" if count == 1 else "%Ez"))
            elif letter == "z":
                pieces.append(pc.strftime(ts, format="%Z"))
        return pc.binary_join_element_wise(*pieces, "")


def _offset_text(minutes: pa.Array, separator: str) -> pa.Array:
    sign = pc.if_else(pc.less(minutes, 0), "-", "+")
    hours, mins = _floor_divmod(pc.abs(minutes), 60)
    pad = lambda a: pc.utf8_lpad(a.cast(pa.string()), width=2, padding="0")  # noqa: E731
    return pc.binary_join_element_wise(sign, pad(hours), pa.scalar(separator), pad(mins), "")


def _offset_minutes(text: pa.Array) -> pa.Array:
    parts = pc.extract_regex(text, r"^(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})?$")
    hh = pc.cast(pc.struct_field(parts, "hh"), pa.int64())
    mm = pc.cast(pc.fill_null(pc.if_else(pc.equal(pc.struct_field(parts, "mm"), ""), "0",
                                         pc.struct_field(parts, "mm")), "0"), pa.int64())
    total = pc.add(pc.multiply(hh, 60), mm)
    total = pc.if_else(pc.equal(pc.struct_field(parts, "sign"), "-"), pc.negate(total), total)
    return pc.if_else(pc.equal(text, "Z"), 0, total)


# Java's three-letter zone ids that the tz database lacks (java.time.ZoneId.SHORT_IDS)
_JAVA_SHORT_ZONES = {"PST": "America/Los_Angeles", "CST": "America/Chicago", "EST": "-05:00",
                     "MST": "-07:00", "HST": "-10:00", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
                     "CTT": "Asia/Shanghai", "AET": "Australia/Sydney", "ECT": "Europe/Paris",
                     "BST": "Asia/Dhaka", "PRC": "Asia/Shanghai"}


def _arrow_zone(java_id: str) -> str:
    """A Java TimeZone id as Arrow understands it; unknown ids fail here instead of Java's silent GMT."""
    z = java_id.strip()
    m = re.fullmatch(r"(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", z)
    if m:
        return f"{m.group(1)}{int(m.group(2)):02d}:{int(m.group(3) or 0):02d}"
    if z.upper() in ("GMT", "UTC", "UT", "Z", "ZULU", "UCT"):
        return "UTC"
    z = _JAVA_SHORT_ZONES.get(z, z)
    try:
        pc.hour(pa.array([0], pa.int64()).cast(pa.timestamp("ms", z)))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise HoodieConfigError(f"Time zone {java_id!r} is unknown; use an IANA id such as "
                                "'UTC' or 'Asia/Shanghai', or an offset like '+08:00'") from None
    return z


def _timestamp_spec(cfg: HoodieConfig) -> TimestampSpec:
    ttype = (cfg.get_str(C.TIMESTAMP_TYPE) or "").strip().upper()
    if not ttype:
        raise HoodieConfigError(
            f"{C.TIMESTAMP_TYPE.key} is required for timestamp-based partitioning (one of "
            f"{', '.join(_TIMESTAMP_TYPES)}); version 6 tables do not store it in hoodie.properties, "
            "so pass it with the write options")
    delimiter = cfg.get_str(C.TIMESTAMP_INPUT_DATE_FORMAT_DELIMITER) or ","
    raw_inputs = cfg.get_str(C.TIMESTAMP_INPUT_DATE_FORMAT) or ""
    inputs = tuple(p.strip() for p in re.split(delimiter, raw_inputs) if p.strip()) if raw_inputs else ()
    # HoodieDateTimeParser: an explicit `timezone` overrides both sides; otherwise an unset side
    # stays unset (it does not fall back to the declared "UTC" default).
    if cfg.contains(C.TIMESTAMP_TIMEZONE):
        both = (cfg.get_str(C.TIMESTAMP_TIMEZONE) or "").strip() or None
        in_zone = out_zone = both
    else:
        in_zone = (cfg.get_str(C.TIMESTAMP_INPUT_TIMEZONE) or "").strip() or None
        out_zone = (cfg.get_str(C.TIMESTAMP_OUTPUT_TIMEZONE) or "").strip() or None
    return TimestampSpec(ttype, cfg.get_str(C.TIMESTAMP_OUTPUT_DATE_FORMAT) or "", inputs,
                         in_zone, out_zone, (cfg.get_str(C.TIMESTAMP_SCALAR_UNIT) or "SECONDS").upper())


def _encode_single_key_field_name(cfg: HoodieConfig) -> bool:
    """ComplexKeyGenerator with ONE record key field (HUDI-7001): 0.14.0 and older wrote "id:1",
    0.14.1/0.15.0/1.0.0-1.0.2 wrote "1", 0.14.2/0.15.1/1.0.3/1.1 went back to "id:1"."""
    encoding = cfg.get_str(C.COMPLEX_KEYGEN_ENCODING)
    if encoding:
        return encoding.strip().upper() == "FIELD_PREFIXED"
    if cfg.get(C.COMPLEX_KEYGEN_NEW_ENCODING):
        return False
    return cfg.get(C.COMPLEX_KEYGEN_ENCODE_SINGLE_FIELD_NAME)


# ------------------------------------------------------------------------------------------------
# small Arrow helpers
# ------------------------------------------------------------------------------------------------
def _column(batch: Batch, name: str) -> pa.Array:
    col = batch.column(name)
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    return col


def _resolve(batch: Batch, path: str, role: str) -> pa.Array:
    """Column ``a`` or nested ``a.b.c`` (a null parent gives null), as HoodieAvroUtils reads it."""
    parts = path.split(".")
    names = batch.schema.names
    option = (C.RECORDKEY_FIELDS if role == "record key" else C.PARTITION_FIELDS).alternatives[0]
    if parts[0] not in names:
        near = [n for n in names if n.lower() == parts[0].lower()]
        hint = f" (did you mean {near[0]!r}? names are case-sensitive)" if near else ""
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise HoodieValidationError(
            f"{role.capitalize()} field {path!r} is not in the input{hint}; columns are: {shown}. "
            f"Add the column or set {option} to existing field(s).")
    arr = _column(batch, parts[0])
    for depth, part in enumerate(parts[1:], start=1):
        t = arr.type
        if not pa.types.is_struct(t) or t.get_field_index(part) < 0:
            parent = ".".join(parts[:depth])
            children = [t.field(i).name for i in range(t.num_fields)] if pa.types.is_struct(t) else []
            raise HoodieValidationError(
                f"{role.capitalize()} field {path!r} is not in the input: {parent!r} "
                + (f"has fields {children}" if children else f"is {t}, not a struct")
                + f". Fix {option}.")
        arr = pc.struct_field(arr, part)
    return arr


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(pc.fill_null(mask, False), min_count=0).as_py())


def _all(mask: pa.Array) -> bool:
    return bool(pc.all(pc.fill_null(mask, False), min_count=0).as_py())


def _first_true(mask: pa.Array) -> int:
    return pc.index(pc.fill_null(mask, False), True).as_py()


def _describe_row(batch: Batch, row: int, fields: Sequence[str], limit: int = 8) -> dict:
    """The bad record as a short dict: key/partition columns first, long values cut."""
    names = batch.schema.names
    first = [f.split(".")[0] for f in fields]
    order = list(dict.fromkeys([f for f in first if f in names] + names))[:limit]
    out = {}
    for name in order:
        value = _column(batch, name)[row].as_py()
        text = repr(value)
        out[name] = value if len(text) <= 40 else text[:37] + "..."
    if len(names) > limit:
        out["..."] = f"{len(names) - limit} more columns"
    return out


def _floor_divmod(values: pa.Array, n: int) -> tuple[pa.Array, pa.Array]:
    q = pc.divide(values, n)
    r = pc.subtract(values, pc.multiply(q, n))
    neg = pc.fill_null(pc.less(r, 0), False)
    return pc.if_else(neg, pc.subtract(q, 1), q), pc.if_else(neg, pc.add(r, n), r)


def _map_rare(values: pa.Array, mask: pa.Array, fn: Callable[[str], str],
              keys: pa.Array | None = None) -> pa.Array:
    """Replace ``values[mask]`` by ``fn(key)`` (key defaults to the value), once per distinct key."""
    mask = pc.fill_null(mask, False)
    if not _any(mask):
        return values
    keys = values if keys is None else keys
    distinct = pc.unique(pc.filter(keys, mask))
    mapped = pa.array([fn(v) for v in distinct.to_pylist()], pa.string())
    return pc.if_else(mask, pc.take(mapped, pc.index_in(keys, value_set=distinct)), values)
