"""Delete blocks (HoodieDeleteBlock): the keys one write removed from a file group, each with the
ordering value the delete carries.

Content: int32 version | int32 length | serialized keys. Version 3 (Hudi 0.13 and later) is an
Avro ``HoodieDeleteRecordList`` whose ``orderingVal`` is a union of one-field wrapper records
(BooleanWrapper, IntWrapper, ...). Versions 1 and 2 were Kryo-serialized Java objects, which
tables of version 6 and later do not hold; they are not read here.

Hudi writes ``IntWrapper(0)`` for a delete without an ordering value and its log reader treats an
ordering value equal to ``Integer 0`` as "no ordering: the delete wins by arrival order". Here both
that sentinel and an Avro null read as a null ``ordering_value``, and a null is written as
``IntWrapper(0)``; any other value reads back in its natural Arrow type. Several ordering fields
(Hudi 1.1) make an ``ArrayWrapper`` of the values' wrappers, the union's last branch; here a struct
``ordering_value`` (fields in ordering order) reads and writes as one.
"""
from __future__ import annotations

import io
import struct
from typing import Mapping

import fastavro
import pyarrow as pa
import pyarrow.compute as pc

from .avro_encode import concatenated, constant, encode_column, encode_long, encode_tagged, join
from .block import LogBlock
from .format import BLOCK_CONTENT_VERSION, BlockType, HeaderKey

KEY, PARTITION, ORDERING = "record_key", "partition_path", "ordering_value"

_NAMESPACE = "org.apache.hudi.avro.model"
# orderingVal's union after "null": (wrapper record, its value's Avro type, the value's Arrow type).
_WRAPPERS = [
    ("BooleanWrapper", "boolean", pa.bool_()),
    ("IntWrapper", "int", pa.int32()),
    ("LongWrapper", "long", pa.int64()),
    ("FloatWrapper", "float", pa.float32()),
    ("DoubleWrapper", "double", pa.float64()),
    ("BytesWrapper", "bytes", pa.binary()),
    ("StringWrapper", "string", pa.string()),
    ("DateWrapper", "int", pa.date32()),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
     pa.decimal128(30, 15)),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
    ("TimestampMicrosWrapper", "long", pa.timestamp("us", tz="UTC")),
]
_OPTIONAL_STRING = ["null", "string"]
_WRAPPER_RECORDS = [{"type": "record", "name": name, "fields": [{"name": "value", "type": value}]}
                    for name, value, _ in _WRAPPERS]
_ARRAY_WRAPPER = {"type": "record", "name": "ArrayWrapper", "fields": [
    {"name": "wrappedValues", "default": None, "type": [
        "null", {"type": "array", "items": ["null"] + [f"{_NAMESPACE}.{name}" for name, _, _ in _WRAPPERS]}]}]}
_LIST_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": _NAMESPACE,
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieDeleteRecord",
        "fields": [
            {"name": "recordKey", "type": _OPTIONAL_STRING, "default": None},
            {"name": "partitionPath", "type": _OPTIONAL_STRING, "default": None},
            {"name": "orderingVal", "default": None, "type": ["null"] + _WRAPPER_RECORDS + [_ARRAY_WRAPPER]},
        ]}}}],
})
_BRANCH_BY_NAME = {f"{_NAMESPACE}.{name}": i for i, (name, _, _) in enumerate(_WRAPPERS, start=1)}
_INT_WRAPPER = _BRANCH_BY_NAME[f"{_NAMESPACE}.IntWrapper"]
_ARRAY_BRANCH = len(_WRAPPERS) + 1
_ARRAY_WRAPPER_NAME = f"{_NAMESPACE}.ArrayWrapper"
_NO_ORDERING = encode_long(_INT_WRAPPER) + encode_long(0)   # IntWrapper(0)


def delete_block(keys: pa.Table | Mapping[str, list], instant: str,
                 avro_schema_json: str | None = None) -> LogBlock:
    """A version 3 delete block of ``keys`` (a table or a dict of lists with ``record_key``,
    ``partition_path`` and optionally ``ordering_value``). Hudi's data-table writes put their writer
    schema in the header; the metadata table's do not, hence ``avro_schema_json`` is optional."""
    keys = keys if isinstance(keys, pa.Table) else pa.table(dict(keys))
    n = keys.num_rows
    ordering = keys[ORDERING].combine_chunks() if ORDERING in keys.column_names else None
    items = join(encode_column(keys[KEY].combine_chunks().cast(pa.string()), _OPTIONAL_STRING),
                 encode_column(keys[PARTITION].combine_chunks().cast(pa.string()), _OPTIONAL_STRING),
                 _ordering_values(ordering, n))
    # one Avro array block (count, items) closed by a zero count; an empty array is the zero alone
    payload = (encode_long(n) + concatenated(items) if n else b"") + b"\x00"
    content = struct.pack(">ii", BLOCK_CONTENT_VERSION, len(payload)) + payload
    header = {HeaderKey.INSTANT_TIME: instant}
    if avro_schema_json is not None:
        header[HeaderKey.SCHEMA] = avro_schema_json
    return LogBlock(BlockType.DELETE_BLOCK, header, content=content)


def delete_block_keys(block: LogBlock) -> pa.Table:
    """The deleted keys: ``record_key``, ``partition_path`` (strings) and ``ordering_value``
    (natural type of the wrapper Hudi used; null for "no ordering value"; text if one block mixes
    wrapper types, which Hudi does not do)."""
    version, length = struct.unpack_from(">ii", block.content)
    if version < BLOCK_CONTENT_VERSION:
        raise NotImplementedError(f"delete block version {version} holds Kryo-serialized keys, "
                                  "written by Hudi before 0.13; not supported")
    record = fastavro.schemaless_reader(io.BytesIO(block.content[8:8 + length]), _LIST_SCHEMA,
                                        return_record_name=True)
    deletes = record["deleteRecordList"]
    return pa.table({
        KEY: pa.array([d["recordKey"] for d in deletes], pa.string()),
        PARTITION: pa.array([d["partitionPath"] for d in deletes], pa.string()),
        ORDERING: _ordering_column([d["orderingVal"] for d in deletes]),
    })


def _ordering_values(values: pa.Array | None, n: int) -> pa.Array:
    if values is None or values.null_count == n:
        return constant(_NO_ORDERING, n)
    if pa.types.is_struct(values.type):
        return _array_wrappers(values, n)
    branch = _branch_for(values.type)
    _, value_type, arrow_type = _WRAPPERS[branch - 1]
    return encode_tagged(values.cast(arrow_type), branch, value_type, _NO_ORDERING)


def _array_wrappers(values: pa.StructArray, n: int) -> pa.Array:
    """ArrayWrapper(wrappedValues=[wrapper per field]); a null struct is the natural delete."""
    k = values.type.num_fields
    head = encode_long(_ARRAY_BRANCH) + encode_long(1) + encode_long(k)   # branch, non-null array, count
    items = []
    for i in range(k):
        field = values.field(i)
        branch = _branch_for(field.type)
        _, value_type, arrow_type = _WRAPPERS[branch - 1]
        items.append(encode_tagged(field.cast(arrow_type), branch, value_type, b"\x00"))
    rows = join(constant(head, n), *items, constant(b"\x00", n))
    return pc.if_else(values.is_valid(), rows, constant(_NO_ORDERING, n))


def _branch_for(t: pa.DataType) -> int:
    """The wrapper Hudi's ``wrapValueIntoAvro`` picks for an ordering field of this Arrow type.
    Hudi takes the field's Avro value, so timestamps and times are plain longs (ints for
    millisecond times) and only dates and decimals get their logical wrappers (the timestamp
    wrapper needs ``consistent.logical.timestamp.enabled``, off by default)."""
    types = pa.types
    if types.is_boolean(t):
        name = "BooleanWrapper"
    elif (types.is_integer(t) and t.bit_width <= 32 and t != pa.uint32()) or types.is_time32(t):
        name = "IntWrapper"
    elif types.is_integer(t) and t != pa.uint64() or types.is_timestamp(t) or types.is_time64(t):
        name = "LongWrapper"
    elif types.is_floating(t):
        name = "DoubleWrapper" if t.bit_width == 64 else "FloatWrapper"
    elif types.is_binary(t) or types.is_large_binary(t) or types.is_fixed_size_binary(t):
        name = "BytesWrapper"
    elif types.is_string(t) or types.is_large_string(t):
        name = "StringWrapper"
    elif types.is_date(t):
        name = "DateWrapper"
    elif types.is_decimal(t):
        name = "DecimalWrapper"
    else:
        raise ValueError(f"ordering values of type {t} have no Avro wrapper in Hudi's delete records")
    return _BRANCH_BY_NAME[f"{_NAMESPACE}.{name}"]


def _ordering_column(raw: list, zero_is_missing: bool = True) -> pa.Array:
    if any(item is not None and item[0] == _ARRAY_WRAPPER_NAME for item in raw):
        return _ordering_struct(raw)
    values, branches = [], set()
    for item in raw:
        if item is None:
            values.append(None)
            continue
        name, wrapped = item
        branch = _BRANCH_BY_NAME[name]
        if zero_is_missing and branch == _INT_WRAPPER and wrapped["value"] == 0:   # no ordering value
            values.append(None)
            continue
        branches.add(branch)
        values.append(wrapped["value"])
    if not branches:
        return pa.nulls(len(values))
    if len(branches) > 1:
        return pa.array([None if v is None else str(v) for v in values], pa.string())
    return pa.array(values, _WRAPPERS[branches.pop() - 1][2])


def _ordering_struct(raw: list) -> pa.Array:
    """ArrayWrapper values as a struct (fields ``0``, ``1``, ...); any other row is null."""
    rows = [item[1]["wrappedValues"] or [] if item is not None and item[0] == _ARRAY_WRAPPER_NAME else None
            for item in raw]
    width = max(len(r) for r in rows if r is not None)
    children = [_ordering_column([r[i] if r is not None and i < len(r) else None for r in rows],
                                 zero_is_missing=False) for i in range(width)]
    return pa.StructArray.from_arrays(children, [str(i) for i in range(width)],
                                      mask=pa.array([r is None for r in rows]))
