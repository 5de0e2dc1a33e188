"""The simple bucket index: a key's file group is a function of the key, so writes look nothing up.

As Hudi's BucketIdentifier: the hash fields' values (the record key's, for a composite key those of
``hoodie.bucket.index.hash.field``) are hashed as a Java ``List<String>.hashCode()``, masked to a
non-negative int and taken modulo ``hoodie.bucket.index.num.buckets``. A bucket's file group id
starts with the bucket number as 8 digits (``00000003-...-0``), which is how later writes, and
other engines, find it again.
"""
from __future__ import annotations

import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieConfigError
from ..java_hash import java_string_hash, java_string_hashes

_MASK32 = np.uint64(0xFFFFFFFF)


def list_hashes(columns: list[np.ndarray]) -> np.ndarray:
    """Java's ``List.hashCode()`` over per-element hashes: 31 * h + e, starting from 1."""
    h = np.ones(len(columns[0]) if columns else 0, np.uint64)
    for c in columns:
        h = (h * np.uint64(31) + c) & _MASK32
    return h


NULL_PART, EMPTY_PART = "__null__", "__empty__"


def key_parts(record_key: str, hash_fields: list[str]) -> list[str | None]:
    """Hudi's KeyGenUtils.extractRecordKeysByFields: the values of a composite key
    ("f1:v1,f2:v2") whose field is a hash field, in key order; a part without ':' is taken whole."""
    values: list[str | None] = []
    for part in record_key.split(","):
        name, sep, value = part.partition(":")
        if not sep:
            values.append(part)
        elif not hash_fields or name in hash_fields:
            values.append(None if value == NULL_PART else "" if value == EMPTY_PART else value)
    return values


def bucket_ids(record_keys: pa.Array, hash_fields: list[str], num_buckets: int) -> np.ndarray:
    """Each key's bucket, as Hudi computes it."""
    if num_buckets < 1:
        raise HoodieConfigError(f"hoodie.bucket.index.num.buckets must be at least 1, got {num_buckets}")
    if pc.any(pc.match_substring_regex(record_keys, "[:,]")).as_py():
        hashes = np.array([_list_hash(key_parts(k, hash_fields)) for k in record_keys.to_pylist()], np.uint64)
    else:   # plain keys: the list holds the key alone
        hashes = list_hashes([java_string_hashes(record_keys)])
    return ((hashes & np.uint64(0x7FFFFFFF)) % np.uint64(num_buckets)).astype(np.int32)


def _list_hash(values: list[str | None]) -> int:
    h = 1
    for v in values:
        h = (h * 31 + (0 if v is None else java_string_hash(v))) & 0xFFFFFFFF
    return h


def new_bucket_file_id(bucket: int) -> str:
    """A new file group for a bucket: a random UUID whose first 8 characters are the bucket number."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


# Hudi's BucketIdentifier.CONSTANT_FILE_ID_SUFFIX: the UUID tail of a bucket's fixed file id.
NBCC_FILE_ID_SUFFIX = "-0000-0000-0000-000000000000"


def nbcc_bucket_file_id(bucket: int) -> str:
    """A bucket's one file group under non-blocking concurrency control, as Hudi names it
    (``BucketIdentifier.newBucketFileIdForNBCC``: the bucket as ``%08d``, the constant tail, then
    ``-0``): the same id for every writer, so that concurrent writers append to one file group, and
    the same in every partition (a file group is its partition and file id together)."""
    return f"{bucket:08d}{NBCC_FILE_ID_SUFFIX}-0"


def bucket_of(file_id: str) -> int | None:
    """The bucket a file group belongs to, or None for a file id that is not a bucket's."""
    head = file_id[:8]
    return int(head) if len(file_id) > 8 and head.isdigit() and file_id[8] == "-" else None
