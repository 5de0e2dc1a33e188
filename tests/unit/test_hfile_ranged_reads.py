"""HFile point lookups read by range: the trailer and load-on-open section once, then one data
block per block the keys fall in, so what a lookup reads grows with its keys, not the file; the
answers are those of the whole-file reader (for the fixtures Hudi wrote: test_hfile.py)."""
import random
import pytest

from hudi_engine.errors import HoodieCorruptFileError
from hudi_engine.hfile import HFileReader, write_hfile
from hudi_engine.metadata_table.file_groups import KEYED_BLOCK_SIZE, block_size
from hudi_engine.storage import Storage


def _items(n: int) -> list[tuple[bytes, bytes]]:
    rng = random.Random(3)
    return [(f"key-{i:08d}".encode(), rng.randbytes(20 + i % 40)) for i in range(n)]


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    items = _items(60_000)
    root = tmp_path_factory.mktemp("hfile")
    (root / "big.hfile").write_bytes(write_hfile(items, block_size=KEYED_BLOCK_SIZE))
    return Storage(str(root)), dict(items)


def test_lookups_read_blocks_in_proportion_to_keys(big_file):
    storage, stored = big_file
    size = storage.size("big.hfile")
    whole = HFileReader(storage.read_bytes("big.hfile"))
    assert whole.block_count > 50
    keys = sorted(stored)
    reads = {}
    for n in (1, 4, 16):
        wanted = random.Random(n).sample(keys, n) + [b"key-absent", b"zzz"]
        reader = HFileReader.open(storage, "big.hfile")
        opened = reader.bytes_read
        got = dict(reader.get_many(wanted))
        assert got == {k: stored[k] for k in wanted if k in stored}
        assert got == dict(whole.get_many(wanted))
        assert 1 <= reader.blocks_read <= n + 1          # an absent key may fall in one more block
        reads[n] = (reader.blocks_read, reader.bytes_read - opened)
    # A block's bytes: at most the largest block; the whole file is many times that.
    largest = max(size for _, size in whole._blocks)
    for n, (blocks, data_bytes) in reads.items():
        assert data_bytes <= blocks * largest
    assert reads[1][1] * 20 < size
    assert reads[16][1] > reads[1][1]


def test_a_ranged_reader_scans_and_seeks_as_the_whole_file_reader(big_file):
    storage, stored = big_file
    reader = HFileReader.open(storage, "big.hfile")
    assert reader.get(b"key-00012345") == stored[b"key-00012345"]
    assert reader.get(b"key-0001234") is None
    assert list(reader.scan_prefix(b"key-0000100")) == [(k, stored[k]) for k in sorted(stored)
                                                       if k.startswith(b"key-0000100")]
    assert list(reader.items()) == sorted(stored.items())
    assert reader.blocks_read > reader.block_count     # the scans above read blocks again
    assert reader.bytes_read >= storage.size("big.hfile") - 4096


def test_a_truncated_file_is_refused_by_range_too(big_file, tmp_path):
    storage, _ = big_file
    data = storage.read_bytes("big.hfile")
    (tmp_path / "cut.hfile").write_bytes(data[:len(data) // 2])
    with pytest.raises(HoodieCorruptFileError, match="cut.hfile: no HFile trailer magic"):
        HFileReader.open(Storage(str(tmp_path)), "cut.hfile")
    (tmp_path / "tiny.hfile").write_bytes(data[-100:])
    with pytest.raises(HoodieCorruptFileError, match="shorter than an HFile trailer"):
        HFileReader.open(Storage(str(tmp_path)), "tiny.hfile")


def test_keyed_partitions_get_small_blocks():
    assert block_size("record_index") == KEYED_BLOCK_SIZE == 64 * 1024
    assert block_size("secondary_index_rider") == KEYED_BLOCK_SIZE
    assert block_size("files") == block_size("column_stats") == 1024 * 1024
