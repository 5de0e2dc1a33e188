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

from typing import Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieValidationError
from .arrow_helpers import Batch, _any, _describe_row, _first_true, _is_text, _resolve
from .parts import _PartitionPart, _SimplePart
from .timestamps import _TIMESTAMP_TYPES, TimestampSpec, _TimestampPart, _timestamp_spec
from .values import java_strings

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
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
        traversal = pc.fill_null(pc.match_substring_regex(paths, TRAVERSAL_RE), False)
        if _any(traversal):
            row = _first_true(traversal)
            raise HoodieValidationError(
                f"Partition path {paths[row].as_py()!r} of row {row} {TRAVERSAL_WHAT}; record: "
                f"{_describe_row(batch, row, self._fields())}. {TRAVERSAL_ADVICE}")
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
        what, advice = bad_key_text(self.record_key_fields)
        raise HoodieValidationError(
            f"{what} in row {row} ({count} of {batch.num_rows} rows affected); first bad record: "
            f"{_describe_row(batch, row, self._fields())}. {advice}")


# A ".." segment of a partition path, and what its refusal says (here and in ``spark_columns``).
TRAVERSAL_RE = r"(^|/)\.\.(/|$)"
TRAVERSAL_WHAT = "contains a '..' segment, which would write outside the table"
TRAVERSAL_ADVICE = f"Clean the partition column or enable {C.URL_ENCODE_PARTITIONING.key}=true"


def bad_key_text(record_key_fields: Sequence[str]) -> tuple[str, str]:
    """What a refused null/empty record key is, and what to do about it."""
    fields = ", ".join(record_key_fields)
    what = (f"Record key field {fields!r} is null or empty" if len(record_key_fields) == 1
            else f"All record key fields ({fields}) are null or empty")
    return what, (f"Every Hudi record needs a non-empty key: fill {fields} or drop these rows before "
                  f"writing, or choose other key fields ({C.RECORDKEY_FIELDS.alternatives[0]}).")


def partition_field_names(spec: Iterable[str]) -> tuple[str, ...]:
    """Partition field names of a partition path spec; a CustomKeyGenerator's ``field:TYPE`` keeps
    only the field."""
    return tuple(p.split(":", 1)[0].strip() for p in spec if p.strip())


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
        partition_fields = list(partition_field_names(partition_spec))

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


def _encode_single_key_field_name(cfg: HoodieConfig) -> bool:
    """ComplexKeyGenerator with ONE record key field (HUDI-7001): 0.14.0 and older wrote "id:1",
    0.14.1/0.15.0/1.0.0-1.0.2 wrote "1", 0.14.2/0.15.1/1.0.3/1.1 went back to "id:1"."""
    encoding = cfg.get_str(C.COMPLEX_KEYGEN_ENCODING)
    if encoding:
        return encoding.strip().upper() == "FIELD_PREFIXED"
    if cfg.get(C.COMPLEX_KEYGEN_NEW_ENCODING):
        return False
    return cfg.get(C.COMPLEX_KEYGEN_ENCODE_SINGLE_FIELD_NAME)
