"""Record keys and partition paths as Spark column expressions, computed in the JVM.

A write that shuffles its records to file groups needs their keys first; making them in Python means
sending every row to a Python worker and back before the shuffle. For the generators and column
types where Spark's own cast to string is provably the text Hudi (and ``generators``) produce, the
same rules are written here as expressions instead: strings, integral types, booleans and
timestamps (as epoch microseconds). Everything else (floats, decimals, dates, timestamp-based and
custom partitioning, collated strings) returns None, and the caller runs the Python pass.

Bad records fail in the JVM with the generator's own message, raised the first time a job
evaluates the partition path (which every counting step of a write groups by); the message starts
with ``HoodieValidationError:`` so the driver re-raises it as one (``write.writer._user_error``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, ByteType, DataType, IntegerType, LongType, ShortType, StringType,
                               StructType, TimestampType)

from .generators import (COMPOSITE_KEY_FIELD_VALUE_INFIX, EMPTY_RECORDKEY_PLACEHOLDER, NULL_RECORDKEY_PLACEHOLDER,
                         PARTITION_PATH_SEPARATOR, RECORD_KEY_PARTS_SEPARATOR, TRAVERSAL_ADVICE, TRAVERSAL_RE,
                         TRAVERSAL_WHAT, KeyGenerator, bad_key_text)
from .paths import _ESCAPE_CHARS, _ESCAPE_RE, DEFAULT_PARTITION_PATH

# Kinds whose keys and paths are plain values of their fields (no date parsing, no per-field types).
_PLAIN_KINDS = ("SIMPLE", "COMPLEX", "NON_PARTITION", "GLOBAL_DELETE")
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
VALIDATION_PREFIX = "HoodieValidationError: "
_DESCRIBED_COLUMNS = 8      # as many as the Python generator's first bad record shows
_DESCRIBED_CHARS = 40


@dataclass(frozen=True)
class KeyColumns:
    """The record key and the partition path of every row; ``path`` also carries the row checks:
    the first that holds fails the job with its message."""
    key: Column
    path: Column


def key_columns(keygen: KeyGenerator, schema: StructType,
                checks: Sequence[tuple[Column, str, str]] = ()) -> KeyColumns | None:
    """Spark expressions of ``keygen``'s record key and partition path over rows of ``schema``;
    None when a field's text needs the Python pass (or does not exist: the Python pass names it).
    ``checks``: more rows to refuse, (condition, message before the record, message after it)."""
    if keygen.kind not in _PLAIN_KINDS:
        return None
    fields = list(dict.fromkeys(keygen.record_key_fields + keygen.partition_fields))
    values: dict[str, Column] = {}
    for name in fields:
        value = _field_text(schema, name, keygen)
        if value is None:
            return None
        values[name] = value

    key, bad_key = _record_key(keygen, values)
    path = _partition_path(keygen, values)
    described = describe_row(schema, fields)
    what, advice = bad_key_text(keygen.record_key_fields)
    # In the order the Python pass finds them: the key, the other checks, then the path.
    rules = [(bad_key, F.concat(F.lit(what + "; bad record: "), described, F.lit(". " + advice)))]
    rules += [(condition, F.concat(F.lit(before), described, F.lit(after))) for condition, before, after in checks]
    if keygen.partition_fields:
        rules.append((path.rlike(TRAVERSAL_RE),
                      F.concat(F.lit("Partition path '"), path, F.lit(f"' {TRAVERSAL_WHAT}; record: "), described,
                               F.lit(". " + TRAVERSAL_ADVICE))))
    checked = None
    for condition, message in rules:
        error = F.raise_error(F.concat(F.lit(VALIDATION_PREFIX), message))
        checked = F.when(condition, error) if checked is None else checked.when(condition, error)
    assert checked is not None
    return KeyColumns(key, checked.otherwise(path))


def field_column(schema: StructType, path: str) -> tuple[Column, DataType] | None:
    """Column ``a`` or nested ``a.b.c`` (a null parent gives null) and its type, matched by exact
    name as the Python generator does; None when it is not in ``schema``."""
    parts = path.split(".")
    dtype: DataType = schema
    column: Column | None = None
    for part in parts:
        if not isinstance(dtype, StructType):
            return None
        match = [f for f in dtype.fields if f.name == part]
        if len(match) != 1 or len([f for f in dtype.fields if f.name.lower() == part.lower()]) != 1:
            return None       # absent, or only told apart by case (Spark resolves names without it)
        dtype = match[0].dataType
        column = F.col("`" + part.replace("`", "``") + "`") if column is None else column.getField(part)
    assert column is not None
    return column, dtype


def _field_text(schema: StructType, name: str, keygen: KeyGenerator) -> Column | None:
    """The field as ``values.java_strings`` renders it, when Spark's cast gives the same text."""
    found = field_column(schema, name)
    if found is None:
        return None
    column, dtype = found
    if isinstance(dtype, StringType):
        # A collated string compares and joins by its collation, not by the key's bytes.
        return column if getattr(dtype, "collation", "UTF8_BINARY") == "UTF8_BINARY" else None
    if isinstance(dtype, _INTEGRAL) or isinstance(dtype, BooleanType):
        return column.cast("string")      # Long.toString / Boolean.toString: "-12", "true"
    if isinstance(dtype, TimestampType) and not keygen.consistent_logical_timestamp:
        return F.unix_micros(column).cast("string")   # Avro's timestamp-micros long
    return None


def _record_key(keygen: KeyGenerator, values: dict[str, Column]) -> tuple[Column, Column]:
    """``generators.KeyGenerator.record_keys`` as an expression, and the rows it refuses."""
    texts = [values[f] for f in keygen.record_key_fields]
    missing = [v.isNull() | (v == "") for v in texts]
    if not keygen.composite_key:
        return texts[0], missing[0]
    pieces: list[Column] = []
    for i, (field, text) in enumerate(zip(keygen.record_key_fields, texts)):
        prefix = ("" if i == 0 else RECORD_KEY_PARTS_SEPARATOR) + field + COMPOSITE_KEY_FIELD_VALUE_INFIX
        filled = F.coalesce(F.when(text == "", F.lit(EMPTY_RECORDKEY_PLACEHOLDER)).otherwise(text),
                            F.lit(NULL_RECORDKEY_PLACEHOLDER))
        pieces += [F.lit(prefix), filled]
    all_missing = missing[0]
    for m in missing[1:]:
        all_missing = all_missing & m
    return F.concat(*pieces), all_missing


def _partition_path(keygen: KeyGenerator, values: dict[str, Column]) -> Column:
    """``parts._SimplePart`` segments joined by "/" ("" for a non-partitioned table)."""
    if not keygen.partition_fields or keygen.kind == "GLOBAL_DELETE":
        return F.lit("")
    segments = []
    for field in keygen.partition_fields:
        text = values[field]
        segment = F.when(text.isNull() | (text == ""), F.lit(DEFAULT_PARTITION_PATH)).otherwise(text)
        if keygen.url_encode_partitioning:
            segment = F.when(segment.rlike(_ESCAPE_RE), _escaped(segment)).otherwise(segment)
        if keygen.hive_style_partitioning:
            segment = F.concat(F.lit(field + "="), segment)
        segments.append(segment)
    if len(segments) == 1:
        return segments[0]
    return F.concat_ws(PARTITION_PATH_SEPARATOR, *segments)


def _escaped(text: Column) -> Column:
    """``paths.escape_path_name`` of a non-empty value: "%" first, as the others' escapes hold one."""
    for char in sorted(_ESCAPE_CHARS, key=lambda c: c != "%"):
        text = F.replace(text, F.lit(char), F.lit(f"%{ord(char):02X}"))
    return text


def describe_row(schema: StructType, fields: Sequence[str]) -> Column:
    """The record as ``arrow_helpers._describe_row`` shows it: the key and partition columns first,
    at most eight columns, each value cut at 40 characters."""
    names = schema.names
    first = [f.split(".")[0] for f in fields]
    order = list(dict.fromkeys([f for f in first if f in names] + names))[:_DESCRIBED_COLUMNS]
    types = {f.name: f.dataType for f in schema.fields}
    parts: list[Column] = [F.lit("{")]
    for i, name in enumerate(order):
        column = F.col("`" + name.replace("`", "``") + "`")
        text = column.cast("string")
        if isinstance(types[name], StringType):
            text = F.concat(F.lit("'"), text, F.lit("'"))
        elif isinstance(types[name], BooleanType):
            text = F.when(column, F.lit("True")).when(~column, F.lit("False"))
        text = F.when(F.length(text) > _DESCRIBED_CHARS,
                      F.concat(F.substring(text, 1, _DESCRIBED_CHARS - 3), F.lit("..."))).otherwise(text)
        parts += [F.lit(("" if i == 0 else ", ") + repr(name) + ": "), F.coalesce(text, F.lit("None"))]
    if len(names) > _DESCRIBED_COLUMNS:
        parts.append(F.lit(f", '...': '{len(names) - _DESCRIBED_COLUMNS} more columns'"))
    parts.append(F.lit("}"))
    return F.concat(*parts)
