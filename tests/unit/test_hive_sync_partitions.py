"""Partition value extractors (Hudi's classes, by name) and the window of commits a sync reads."""
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.sync.errors import HiveSyncError
from hudi_engine.sync.partitions import (CompletedWrite, extractor_for, infer_extractor_name,
                                         partition_values, writes_to_sync)


@pytest.mark.parametrize("name, path, values", [
    ("MultiPartKeysValueExtractor", "2024/01/31", ["2024", "01", "31"]),
    ("MultiPartKeysValueExtractor", "year=2024/month=01", ["2024", "01"]),
    ("MultiPartKeysValueExtractor", "", []),
    ("HiveStylePartitionValueExtractor", "region=eu", ["eu"]),
    ("SlashEncodedDayPartitionValueExtractor", "2024/1/31", ["2024-01-31"]),
    ("SlashEncodedDayPartitionValueExtractor", "y=2024/m=02/d=29", ["2024-02-29"]),
    ("SlashEncodedDayPartitionValueExtractor", "__HIVE_DEFAULT_PARTITION__", ["__HIVE_DEFAULT_PARTITION__"]),
    ("SlashEncodedHourPartitionValueExtractor", "2024/01/31/07", ["2024-01-31-07"]),
    ("SinglePartPartitionValueExtractor", "americas/brazil", ["americas/brazil"]),
    ("NonPartitionedExtractor", "whatever", []),
])
def test_extractors(name, path, values):
    assert extractor_for(f"org.apache.hudi.hive.{name}").extract(path) == values
    assert extractor_for(name).extract(path) == values


@pytest.mark.parametrize("name, path", [
    ("SlashEncodedDayPartitionValueExtractor", "2024/01"),
    ("SlashEncodedDayPartitionValueExtractor", "2024/02/30"),
    ("HiveStylePartitionValueExtractor", "eu"),
    ("MultiPartKeysValueExtractor", "a=b=c"),
])
def test_extractors_refuse_paths_of_another_shape(name, path):
    with pytest.raises(HiveSyncError, match="partition"):
        extractor_for(name).extract(path)


def test_unknown_extractor_lists_the_supported_ones():
    with pytest.raises(HoodieConfigError, match="MultiPartKeysValueExtractor"):
        extractor_for("com.example.MyExtractor")


def test_inference_follows_hudi():
    assert infer_extractor_name((), False) == "NonPartitionedExtractor"
    assert infer_extractor_name(("region",), True) == "HiveStylePartitionValueExtractor"
    assert infer_extractor_name(("region",), False) == "MultiPartKeysValueExtractor"
    assert infer_extractor_name(("a", "b"), True) == "MultiPartKeysValueExtractor"


def test_values_must_match_the_partition_columns_and_can_be_decoded():
    multi = extractor_for("MultiPartKeysValueExtractor")
    assert partition_values(multi, "a%2Fb/x", ("p", "q"), decode=True) == ("a/b", "x")
    assert partition_values(multi, "a%2Fb/x", ("p", "q"), decode=False) == ("a%2Fb", "x")
    with pytest.raises(HiveSyncError, match=r"partitioned by \['day'\].*SlashEncodedDay"):
        partition_values(multi, "2024/01/31", ("day",), decode=False)


W = [CompletedWrite("100", "101"), CompletedWrite("200", "205"), CompletedWrite("300", "301")]


def test_window_starts_after_the_last_synced_commit():
    assert writes_to_sync(W, "200", "205") == [W[2]]
    assert writes_to_sync(W, "300", "301") == []


def test_hollow_commit_that_completed_after_the_last_sync_is_included():
    # 200 started before 300 but completed (at 305) after the sync that recorded 300/301
    writes = [W[0], CompletedWrite("200", "305"), W[2]]
    assert writes_to_sync(writes, "300", "301") == [writes[1]]
    assert writes_to_sync(writes, "300", None) == []     # no completion time recorded: Hudi 0.x marker


def test_full_listing_when_never_synced_or_the_synced_commit_is_gone():
    assert writes_to_sync(W, None, None) is None
    assert writes_to_sync(W, "150", "151") is None      # archived or restored away
