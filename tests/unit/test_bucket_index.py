"""Bucket ids as Hudi's BucketIdentifier computes them (Java hash codes), and bucket file ids."""
import numpy as np
import pyarrow as pa
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.index import bucket as b


@pytest.mark.parametrize("value, java", [
    ("", 0), ("a", 97), ("hello", 99162322), ("Aa", 2112), ("BB", 2112), ("é", 233),
    ("\U0001F600", 1772899),                      # a surrogate pair: two UTF-16 units, as Java hashes it
    ("0e3f8a1c-7b2d-4c5e-9f60-123456789abc", 1953300939),   # values checked against the JVM (Objects.hashCode)
])
def test_java_string_hash_codes(value, java):
    assert int(b.java_string_hashes(pa.array([value]))[0]) == java & 0xFFFFFFFF
    assert int(b.java_string_hashes(pa.array([value, "ascii"]))[0]) == java & 0xFFFFFFFF


def test_list_hash_code_folds_elements():
    assert b._list_hash(["a", "b"]) == 4066 and b._list_hash([None]) == 31 and b._list_hash([]) == 1
    assert int(b.list_hashes([np.array([97], np.uint64), np.array([98], np.uint64)])[0]) == 4066


def test_bucket_ids_of_plain_and_composite_keys():
    assert b.bucket_ids(pa.array(["hello", "a"]), ["id"], 4).tolist() == [(31 + 99162322) % 4, (31 + 97) % 4]
    # Composite keys hash the values of the hash fields only, in key order.
    keys = pa.array(["id:a,ts:1", "id:a,ts:2", "ts:1,id:b"])
    assert b.bucket_ids(keys, ["id"], 1000).tolist() == [128, 128, (31 + 98) % 1000]
    assert b.bucket_ids(keys, ["id", "ts"], 100000).tolist()[:2] == [(31 * 128 + 49) % 100000, (31 * 128 + 50) % 100000]
    assert b.key_parts("id:__null__,ts:__empty__", []) == [None, ""]
    with pytest.raises(HoodieConfigError, match="num.buckets"):
        b.bucket_ids(keys, ["id"], 0)


def test_bucket_file_ids():
    fid = b.new_bucket_file_id(7)
    assert fid.startswith("00000007-") and fid.endswith("-0") and len(fid) == 38
    assert b.bucket_of(fid) == 7 and b.bucket_of("0e3f8a1c-7b2d-4c5e-9f60-123456789abc-0") is None
    assert b.bucket_of("00000012-0000-0000-0000-000000000000-0") == 12
