"""Which metadata-table instants readers trust, how its own instants are named, and its
hoodie.properties: pure rules, no Spark."""
from hudi_engine.config import HoodieConfig
from hudi_engine.metadata_table.layout import (init_instant, mdt_properties, valid_instants,
                                               wanted_partitions)
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.storage import Storage


def test_trusted_instants_are_completed_data_instants_and_the_tables_own():
    valid = valid_instants({"20240101000000000", "20240102000000000"})
    assert valid("20240101000000000")
    assert not valid("20240103000000000")                    # a data write not (yet) completed
    assert valid("00000000000000010")                        # initialization on an empty table
    assert valid("20240102000000000011")                     # initialization after a data instant
    assert valid("20240102000000000001")                     # a compaction of the metadata table
    assert not valid("20240103000000000001")                 # made from an instant that never completed
    archived = valid_instants({"20240102000000000"}, data_start="20240102000000000")
    assert archived("20240101000000000")                     # archived after it completed


def test_initialization_instants_follow_hudi_0_14():
    assert init_instant(None, 0) == "00000000000000010"
    assert init_instant("20240102000000000", 2) == "20240102000000000012"


def test_version_8_builds_count_past_the_zero_time_instants_taken():
    """A partition built on an existing metadata table (or built again after it was dropped)
    never reuses a build instant: a secondary index at …004, then partition stats at …005."""
    assert init_instant(None, 4, 9) == "00000000000000004"
    assert init_instant(None, 2, 9, ["00000000000000000", "00000000000000001"]) == "00000000000000002"
    taken = ["00000000000000000", "00000000000000001", "00000000000000004", "20240102000000000"]
    assert init_instant("20240102000000000", 4, 9, taken) == "00000000000000005"
    assert init_instant(None, 1, 8, taken) == "00000000000000005"


def test_which_partitions_a_write_asks_for():
    assert wanted_partitions(HoodieConfig({}), 6) == ["files"]                       # on by default
    assert wanted_partitions(HoodieConfig({"hoodie.metadata.enable": "false",
                                           "hoodie.metadata.record.index.enable": "true"}), 6) == []
    assert wanted_partitions(HoodieConfig({"hoodie.metadata.index.column.stats.enable": "true",
                                           "hoodie.metadata.record.index.enable": "true"}), 6) == [
        "files", "column_stats", "record_index"]


def test_partition_stats_follow_column_stats_from_table_version_8():
    """As Hudi 1.1: wherever column stats are kept on a version 8+ table; Hudi 1.0's key turns them off."""
    stats = {"hoodie.metadata.index.column.stats.enable": "true"}
    assert wanted_partitions(HoodieConfig(stats), 8) == ["files", "column_stats", "partition_stats"]
    assert wanted_partitions(HoodieConfig(stats), 9)[-1] == "partition_stats"
    off = {**stats, "hoodie.metadata.index.partition.stats.enable": "false"}
    assert wanted_partitions(HoodieConfig(off), 9) == ["files", "column_stats"]
    asked = {**stats, "hoodie.metadata.index.partition.stats.enable": "true"}
    assert wanted_partitions(HoodieConfig(asked), 6) == ["files", "column_stats"]     # none at version 6
    alone = {"hoodie.metadata.index.partition.stats.enable": "true"}
    assert wanted_partitions(HoodieConfig(alone), 9) == ["files"]                    # nothing to fold


def test_metadata_table_properties_are_hudis(tmp_path):
    table = HoodieTable(Storage(str(tmp_path)), {"hoodie.table.name": "trips", "hoodie.database.name": "lake"})
    props = mdt_properties(table)
    assert props["hoodie.table.name"] == "trips_metadata"
    assert props["hoodie.table.type"] == "MERGE_ON_READ"
    assert props["hoodie.table.base.file.format"] == "HFILE"
    assert props["hoodie.populate.meta.fields"] == "false"
    assert props["hoodie.compaction.payload.class"] == "org.apache.hudi.metadata.HoodieMetadataPayload"
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
    assert props["hoodie.table.recordkey.fields"] == "key"


def test_a_record_index_value_leaves_its_key_out():
    """The writer encodes one value per file group and reuses it for every key stored there."""
    from hudi_engine.metadata_table.records import decode, encode, record_index_record, record_location_of

    fid = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9-0"
    one = encode(record_index_record("key-1", "2024/01/01", fid, "20240101000000000"))
    assert one == encode(record_index_record("key-2", "2024/01/01", fid, "20240101000000000"))
    assert record_location_of(decode(one, key="key-2")).file_id == fid
