"""The record index's file-group count at build time, by Hudi's estimateFileGroupCount rule."""
import pytest

from hudi_engine import config as C
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.metadata_table.sizing import estimate_file_group_count

GIB = 1024 * 1024 * 1024


def test_defaults_floor_at_ten_until_the_expected_entries_fill_ten_file_groups():
    cfg = HoodieConfig({})
    args = (cfg.get(C.METADATA_RECORD_INDEX_MIN_FILE_GROUPS), cfg.get(C.METADATA_RECORD_INDEX_MAX_FILE_GROUPS),
            cfg.get(C.METADATA_RECORD_INDEX_GROWTH_FACTOR), cfg.get(C.METADATA_RECORD_INDEX_MAX_FILE_GROUP_BYTES))
    assert args == (10, 10000, 2.0, GIB)
    # 22,369,621 entries of 48 bytes fill a file group: 2 x 2^27 records' entries fill 12
    assert estimate_file_group_count(5_000_000, *args) == 10
    assert estimate_file_group_count(20_000_000, *args) == 10
    assert estimate_file_group_count(2**27, *args) == 12
    assert estimate_file_group_count(10**12, *args) == 10000


def test_growth_factor_size_and_bounds():
    assert estimate_file_group_count(1_000_000, 1, 100, 2.0, 48 * 100_000) == 20
    # Java divides longs: 9,998 expected entries in file groups of 1,000 are 9, not rounded up
    assert estimate_file_group_count(4_999, 1, 100, 2.0, 48 * 1000) == 9
    assert estimate_file_group_count(1_000_000, 1, 100, 1.0, 48 * 100_000) == 10
    assert estimate_file_group_count(1_000_000, 1, 100, 1.0, 48 * 1_000_000) == 1
    assert estimate_file_group_count(0, 1, 100, 2.0, GIB) == 1
    assert estimate_file_group_count(1_000_000, 1, 8, 2.0, 48 * 1000) == 8
    # min == max pins the count, whatever the records
    assert estimate_file_group_count(10**12, 4, 4, 2.0, GIB) == 4
    # Java multiplies in float: 16,777,217 x 1.0 is 16,777,216
    assert estimate_file_group_count(16_777_217, 0, 10**9, 1.0, 48) == 16_777_216


def test_a_file_group_smaller_than_an_entry_is_refused():
    with pytest.raises(HoodieConfigError, match="max.filegroup.size=10 is smaller than one record-index entry"):
        estimate_file_group_count(100, 1, 10, 2.0, 10)
