"""Bloom filters must be byte-identical to what Hudi's Java writer puts in parquet footers."""

from __future__ import annotations

import base64
import random
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import unzip_fixture

from hudi_engine.bloom import (
    DYNAMIC_V0,
    FOOTER_KEY,
    SIMPLE,
    TYPE_CODE_KEY,
    continued_stored_filter,
    create_bloom_filter,
    deserialize_bloom_filter,
)
from hudi_engine.errors import HoodieConfigError, HoodieError, HoodieValidationError

TABLES = ["v6_simplekeygen_nonhivestyle", "v6_complexkeygen_hivestyle"]

# Keys of every UTF-8 width and every tail length (len % 4), to exercise the signed-byte tail.
ODD_KEYS = ["a", "é", "ü1", "日本", "日本語", "ключ-1", "ÿÿÿ", "€", "x€y", "emoji😀",
            "id:1,name:Zoë", "Ω", "ab", "abc", "abcd", "abcde"]
# Produced by Hadoop 3.4.2's org.apache.hadoop.util.bloom classes (the ones Hudi ports) for
# ODD_KEYS: BloomFilter(959 bits, 7 hashes, MURMUR) and DynamicBloomFilter(48, 7, MURMUR, nr=5).
HADOOP_SIMPLE_100_001 = (
    "/////wAAAAcBAAADvwkADBCAIiMAAEAAgAAYCGCACAgBAAK1AAAAAsANAACAAACAAADAAAAMAgIAAAFAgCBABQIQ"
    "MAAQAQAAQAAAAAAAAAwAAFAIAAUAAAQFAAAIwJQAACCQCAAACAIYJDBgCAAAAAIQIEAQAAEAEASAAAAAQAAUAQAoAQ==")
HADOOP_DYNAMIC_5_001 = (
    "/////wAAAAcBAAAAMAAAAAUAAAABAAAABP////8AAAAHAQAAADD2dIxT4Hj/////AAAABwEAAAAwpzj5gmSD////"
    "/wAAAAcBAAAAMPSZlnUqC/////8AAAAHAQAAADAAwEIAABE=")


def _base_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.parquet")
                  if "__MACOSX" not in p.parts and ".hoodie" not in p.parts)


@pytest.fixture(params=TABLES)
def base_files(request, tmp_path) -> list[Path]:
    files = _base_files(unzip_fixture(f"sample_table/cow/{request.param}.zip", tmp_path))
    assert files, "fixture has no base files"
    return files


def _footer(path: Path) -> tuple[str, str, list[str]]:
    meta = pq.ParquetFile(path).metadata.metadata
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    return meta[FOOTER_KEY.encode()].decode(), meta[TYPE_CODE_KEY.encode()].decode(), keys


def _random_keys(rng: random.Random, count: int, alphabet: str) -> list[str]:
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(count)]


def _set_bits(serialized: str) -> set[int]:
    """Bit positions of a SIMPLE filter, read straight off the Writable layout."""
    raw = base64.b64decode(serialized)
    _, _, _, size = struct.unpack(">iibi", raw[:13])
    bits = np.unpackbits(np.frombuffer(raw[13:], np.uint8), count=size, bitorder="little")
    return set(np.flatnonzero(bits).tolist())


def _reference_positions(key: str, num_hashes: int, size: int) -> list[int]:
    """Plain-Python Hadoop MurmurHash chain, independent of the vectorized implementation."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    data = key.encode("utf-8")
    positions, h = [], 0
    for _ in range(num_hashes):
        h = (h ^ len(data)) & mask
        whole = len(data) // 4 * 4
        for i in range(0, whole, 4):
            k = (int.from_bytes(data[i:i + 4], "little") * m) & mask
            k = ((k ^ (k >> 24)) * m) & mask
            h = ((h * m) & mask) ^ k
        tail = data[whole:]
        for j, byte in enumerate(tail):
            h ^= ((byte - 256 if byte >= 128 else byte) << (8 * (len(tail) - 1 - j))) & mask
        if tail:
            h = (h * m) & mask
        h ^= h >> 13
        h = (h * m) & mask
        h ^= h >> 15
        positions.append(abs(h - (1 << 32) if h >= 1 << 31 else h) % size)
    return positions


# (num_entries, fpp) -> (bits, hashes), as computed by Hudi's formula on the JVM.
@pytest.mark.parametrize("num_entries, fpp, bits, hashes", [
    (60000, 1e-9, 2587966, 30), (1000, 0.05, 6236, 5), (10, 0.01, 96, 7),
    (123457, 1e-4, 2366686, 14),
])
def test_geometry_matches_hudi(num_entries, fpp, bits, hashes):
    bloom = create_bloom_filter(num_entries, fpp)
    assert (bloom.vector_size, bloom.num_hashes, bloom.type_code) == (bits, hashes, DYNAMIC_V0)


def test_footer_filter_contains_every_record_key(base_files):
    for path in base_files:
        value, code, keys = _footer(path)
        assert code == DYNAMIC_V0
        bloom = deserialize_bloom_filter(value, code)
        assert bloom.might_contain_many(keys).all()
        assert all(bloom.might_contain(key) for key in keys)


def test_footer_filter_rejects_absent_keys(base_files):
    absent = _random_keys(random.Random(11), 2000, "abcdefxyz0123456789:,-_é日")
    for path in base_files:
        value, code, keys = _footer(path)
        probe = [key for key in absent if key not in set(keys)]
        hits = deserialize_bloom_filter(value, code).might_contain_many(probe)
        assert hits.sum() <= 2, f"{hits.sum()} false positives in {path.name}"


def test_fresh_filter_serializes_exactly_like_hudi(base_files):
    for path in base_files:
        value, _, keys = _footer(path)
        bloom = create_bloom_filter(60000, 1e-9, DYNAMIC_V0, 100000)
        bloom.add_keys(keys)
        assert bloom.serialize() == value, path.name


@pytest.mark.parametrize("filter_type", [SIMPLE, DYNAMIC_V0])
def test_round_trip(filter_type):
    keys = _random_keys(random.Random(3), 500, "abc日本ü0123")
    bloom = create_bloom_filter(200, 1e-4, filter_type, max_entries=1000)
    bloom.add_keys(keys)
    text = bloom.serialize()
    copy = deserialize_bloom_filter(text, filter_type.lower())
    assert copy.type_code == filter_type
    assert copy.serialize() == text
    assert copy.might_contain_many(keys).all()
    assert deserialize_bloom_filter(text.encode(), filter_type.encode()).serialize() == text


def test_simple_matches_hadoop_bytes_for_non_ascii_keys():
    bloom = create_bloom_filter(100, 0.01, SIMPLE)
    assert (bloom.vector_size, bloom.num_hashes) == (959, 7)
    bloom.add_keys(ODD_KEYS)
    assert bloom.type_code == SIMPLE
    assert bloom.serialize() == HADOOP_SIMPLE_100_001


def test_dynamic_matches_hadoop_bytes_while_below_bound():
    # Below max_entries Hudi's bounded filter grows exactly like Hadoop's DynamicBloomFilter.
    bloom = create_bloom_filter(5, 0.01, DYNAMIC_V0, max_entries=1000)
    bloom.add_keys(ODD_KEYS)
    assert bloom.serialize() == HADOOP_DYNAMIC_5_001


def _java_rows(count: int, per_row: int, max_entries: int) -> list[int]:
    """Row of each key as Hudi's InternalDynamicBloomFilter picks it, one key at a time."""
    rows, active, reached, cursor, picked = 1, 0, False, 0, []
    for _ in range(count):
        if reached:
            row, cursor = cursor % rows, cursor + 1
        elif active >= per_row and rows * per_row < max_entries:
            rows, active, row = rows + 1, 0, rows
        elif active >= per_row:
            reached, row = True, 0  # the first overflow key does not advance the cursor
        else:
            row = rows - 1
        picked.append(row)
        active += 1
    return picked


def test_dynamic_grows_rows_then_stops_at_bound():
    keys = [f"key-{i}" for i in range(100)]
    bloom = create_bloom_filter(10, 0.001, DYNAMIC_V0, max_entries=30)
    bloom.add_keys(keys)
    raw = base64.b64decode(bloom.serialize())
    # 3 rows of 10 keys, then keys spill round-robin: the active count keeps counting.
    assert struct.unpack(">iii", raw[13:25]) == (10, 80, 3)
    assert bloom.might_contain_many(keys).all()

    rows = [create_bloom_filter(10, 0.001, SIMPLE) for _ in range(3)]
    for key, row in zip(keys, _java_rows(len(keys), 10, 30)):
        rows[row].add(key)
    assert raw[25:] == b"".join(base64.b64decode(row.serialize()) for row in rows)

    one_by_one = create_bloom_filter(10, 0.001, DYNAMIC_V0, max_entries=30)
    for key in keys:
        one_by_one.add(key)
    assert one_by_one.serialize() == bloom.serialize()


def test_dynamic_unbounded_growth_keeps_all_keys():
    keys = _random_keys(random.Random(5), 1000, "qwerty€")
    bloom = create_bloom_filter(50, 1e-6, DYNAMIC_V0, max_entries=100000)
    bloom.add_keys(keys[:400])
    bloom.add_keys(keys[400:])
    assert struct.unpack(">iii", base64.b64decode(bloom.serialize())[13:25]) == (50, 50, 20)
    assert bloom.might_contain_many(keys).all()
    assert not create_bloom_filter(50, 1e-6).might_contain_many(keys).any()


def test_vectorized_path_matches_scalar_path():
    rng = random.Random(42)
    keys = _random_keys(rng, 1000, "abcXYZ019:,-é日本語ключ€😀ÿ")
    batch = create_bloom_filter(300, 1e-7, DYNAMIC_V0, max_entries=800)
    batch.add_keys(pa.chunked_array([keys[:123], keys[123:]], pa.large_string()))
    single = create_bloom_filter(300, 1e-7, DYNAMIC_V0, max_entries=800)
    for key in keys:
        single.add(key)
    assert batch.serialize() == single.serialize()

    probes = keys[::7] + _random_keys(rng, 300, "mnop€ß")
    assert batch.might_contain_many(iter(probes)).tolist() == [batch.might_contain(k) for k in probes]


def test_hash_positions_match_plain_python_reference():
    for key in _random_keys(random.Random(9), 60, "az09é日ключ€😀ÿ") + ODD_KEYS:
        bloom = create_bloom_filter(60000, 1e-9, SIMPLE)
        bloom.add(key)
        assert _set_bits(bloom.serialize()) == set(_reference_positions(key, 30, 2587966)), key


@pytest.mark.parametrize("suffix", ["", "é", "ÿ€", "😀"])  # every tail length, signed tail bytes
def test_equal_length_arrow_keys_match_plain_python_reference(suffix):
    # Equal-length keys are hashed straight off the Arrow buffer; a slice starts mid-buffer.
    keys = [f"{i:08d}{suffix}" for i in range(200)]
    array = pa.array(["not-a-key", *keys], pa.string()).slice(1)
    bloom = create_bloom_filter(60000, 1e-9, SIMPLE)
    bloom.add_keys(array)
    expected = set().union(*(_reference_positions(key, 30, 2587966) for key in keys))
    assert _set_bits(bloom.serialize()) == expected


def test_rejects_bad_input():
    bloom = create_bloom_filter(10, 0.01)
    with pytest.raises(HoodieValidationError):
        bloom.add_keys(["ok", None])
    with pytest.raises(HoodieValidationError):
        bloom.add("")
    with pytest.raises(HoodieConfigError):
        create_bloom_filter(10, 0.01, "BOGUS")
    with pytest.raises(HoodieError):
        deserialize_bloom_filter(bloom.serialize(), "BOGUS")
    with pytest.raises(HoodieError):
        deserialize_bloom_filter(bloom.serialize()[:-8], DYNAMIC_V0)
    with pytest.raises(HoodieError):
        deserialize_bloom_filter("not base64!", SIMPLE)


@pytest.mark.slow
def test_a_million_keys_added_at_once_are_all_found():
    """(Their speed is the bloom-filter bucket of ``benchmarks.profile_write``, not a timed test.)"""
    keys = pa.array([f"k{i:09d}" for i in range(1_000_000)])
    bloom = create_bloom_filter(60000, 1e-9)
    bloom.add_keys(keys)
    assert bloom.might_contain_many(keys[::97]).all()


def test_a_rewrite_continues_the_stored_filter_only_when_it_is_the_one_it_would_make():
    stored = create_bloom_filter(100, 0.01, DYNAMIC_V0, 1000)
    stored.add_keys([f"k{i}" for i in range(250)])
    continued = continued_stored_filter(stored.serialize(), DYNAMIC_V0, 100, 0.01, DYNAMIC_V0, 1000).decoded()
    assert continued.max_entries == 1000      # the bound is not serialized
    continued.add_keys([f"n{i}" for i in range(600)])                  # grows rows up to the bound again
    assert continued.might_contain_many([f"k{i}" for i in range(250)] + [f"n{i}" for i in range(600)]).all()
    assert len(continued._rows) == 9
    for other in ((200, 0.01, DYNAMIC_V0, 1000), (100, 0.001, DYNAMIC_V0, 1000), (100, 0.01, SIMPLE, 1000)):
        assert continued_stored_filter(stored.serialize(), DYNAMIC_V0, *other) is None


@pytest.mark.parametrize("filter_type", [SIMPLE, DYNAMIC_V0])
def test_a_stored_filter_is_written_back_as_it_was_until_a_key_is_added(filter_type):
    """A rewrite that adds no key writes the footer value it read; adding keys gives what the
    decoded filter continued with them gives, up to the writer's bound again."""
    stored = create_bloom_filter(100, 0.01, filter_type, 1000)
    stored.add_keys([f"k{i}" for i in range(250)])
    value = stored.serialize()
    kept = continued_stored_filter(value.encode(), filter_type.encode(), 100, 0.01, filter_type, 1000)
    assert kept is not None and kept.type_code == filter_type
    kept.add_keys(pa.array([], pa.string()))
    assert kept.serialize() == value
    added = continued_stored_filter(value, filter_type, 100, 0.01, filter_type, 1000)
    added.add_keys(pa.array([f"n{i}" for i in range(600)]))
    expected = deserialize_bloom_filter(value, filter_type)      # the filter decoded, continued with the keys
    if filter_type == DYNAMIC_V0:
        expected.max_entries = 1000
    expected.add_keys([f"n{i}" for i in range(600)])
    assert added.serialize() == expected.serialize() != value
    assert deserialize_bloom_filter(added.serialize(), filter_type).might_contain_many(
        [f"k{i}" for i in range(250)] + [f"n{i}" for i in range(600)]).all()
    for other in ((200, 0.01, filter_type, 1000), (100, 0.001, filter_type, 1000)):
        assert continued_stored_filter(value, filter_type, *other) is None


def test_a_stored_filter_that_is_not_one_is_refused_before_it_is_written_back():
    value = create_bloom_filter(100, 0.01, DYNAMIC_V0, 1000).serialize()
    for bad in (value[:-8], "not base64!", value + "AAAA"):
        with pytest.raises(HoodieError):
            continued_stored_filter(bad, DYNAMIC_V0, 100, 0.01, DYNAMIC_V0, 1000)
    with pytest.raises(HoodieError, match="type code"):
        continued_stored_filter(value, "BOGUS", 100, 0.01, DYNAMIC_V0, 1000)
