"""Sync decisions from the table's and the metastore's state: settings inference, the table
definition, ownership, alterations, partition changes and the sync marker."""
from dataclasses import replace

import pyarrow as pa
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.sync.errors import HiveSyncError, TableOwnershipError
from hudi_engine.sync.hive_schema import INPUT_FORMAT, REALTIME_INPUT_FORMAT, Column
from hudi_engine.sync.plan import (HivePartition, check_ownership, desired_table, partition_changes,
                                   same_location, sync_marker_update, table_update)
from hudi_engine.sync.settings import resolve_settings

PROPS = {"hoodie.table.name": "Fruit", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.database.name": "default",
         "hoodie.table.partition.fields": "region", "hoodie.datasource.write.hive_style_partitioning": "false"}
SCHEMA = pa.schema([pa.field("_hoodie_commit_time", pa.string()), pa.field("name", pa.string()),
                    pa.field("qty", pa.int32()), pa.field("region", pa.string())])
LOCATION = "file:///lake/fruit"


def settings(**options):
    return resolve_settings(options, PROPS)


def table(**options):
    s = settings(**options)
    return desired_table(s, s.targets[0], SCHEMA, LOCATION)


def test_settings_inferred_from_the_table():
    s = settings()
    assert (s.database, s.table, s.partition_fields, s.extractor.name) == \
        ("default", "fruit", ("region",), "MultiPartKeysValueExtractor")
    hive_style = resolve_settings({}, {**PROPS, "hoodie.datasource.write.hive_style_partitioning": "true",
                                       "hoodie.database.name": "lake"})
    assert (hive_style.database, hive_style.extractor.name) == ("lake", "HiveStylePartitionValueExtractor")
    explicit = settings(**{"hoodie.datasource.hive_sync.database": "Sales", "hoodie.datasource.hive_sync.table": "t",
                           "hoodie.datasource.hive_sync.partition_fields": "year,month"})
    assert (explicit.database, explicit.table, explicit.partition_fields) == ("sales", "t", ("year", "month"))


def test_only_hms_mode_is_accepted():
    with pytest.raises(HoodieConfigError, match="hms"):
        settings(**{"hoodie.datasource.hive_sync.mode": "jdbc"})


@pytest.mark.parametrize("options, expected", [
    ({}, [("fruit_ro", False, True), ("fruit_rt", True, False)]),
    ({"hoodie.datasource.hive_sync.skip_ro_suffix": "true"}, [("fruit", False, True), ("fruit_rt", True, False)]),
    ({"hoodie.meta.sync.sync_snapshot_with_table_name": "true"},
     [("fruit_ro", False, True), ("fruit_rt", True, False), ("fruit", True, False)]),
    ({"hoodie.meta.sync.sync_snapshot_with_table_name": "true", "hoodie.datasource.hive_sync.skip_ro_suffix": "true"},
     [("fruit", False, True), ("fruit_rt", True, False)]),
    ({"hoodie.datasource.hive_sync.table.strategy": "RO"}, [("fruit", False, True)]),
    ({"hoodie.datasource.hive_sync.table.strategy": "rt"}, [("fruit", True, False)]),
])
def test_merge_on_read_tables(options, expected):
    s = resolve_settings(options, {**PROPS, "hoodie.table.type": "MERGE_ON_READ"})
    assert [(t.name, t.realtime, t.read_optimized) for t in s.targets] == expected


def test_table_and_serde_properties_are_key_value_lines():
    s = settings(**{"hoodie.datasource.hive_sync.table_properties": "owner = data-team\n\n  tier=gold\nflag"})
    assert s.table_properties == {"owner": "data-team", "tier": "gold", "flag": ""}
    with pytest.raises(HoodieConfigError, match="one 'key=value' per line"):
        settings(**{"hoodie.datasource.hive_sync.serde_properties": "a=b=c"})


def test_desired_table_is_an_external_hudi_table_spark_can_read():
    t = table()
    assert (t.database, t.name, t.location, t.table_type) == ("default", "fruit", LOCATION, "EXTERNAL_TABLE")
    assert [(c.name, c.type) for c in t.columns] == [("_hoodie_commit_time", "string"), ("name", "string"),
                                                     ("qty", "int")]
    assert t.partition_keys == (Column("region", "string"),)
    assert t.input_format == INPUT_FORMAT
    assert t.serde_params == {"serialization.format": "1", "path": LOCATION, "hoodie.query.as.ro.table": "false"}
    assert t.params["EXTERNAL"] == "TRUE" and t.params["spark.sql.sources.provider"] == "hudi"


def test_desired_table_options():
    t = table(**{"hoodie.datasource.hive_sync.create_managed_table": "true",
                 "hoodie.datasource.hive_sync.omit_metadata_fields": "true",
                 "hoodie.datasource.hive_sync.sync_as_datasource": "false",
                 "hoodie.datasource.hive_sync.table_properties": "tier=gold"})
    assert t.table_type == "MANAGED_TABLE" and t.params == {"tier": "gold"}
    assert [c.name for c in t.columns] == ["name", "qty"] and t.serde_params == {"serialization.format": "1"}
    s = resolve_settings({}, {**PROPS, "hoodie.table.type": "MERGE_ON_READ"})
    ro, rt = (desired_table(s, target, SCHEMA, LOCATION) for target in s.targets)
    assert (ro.input_format, ro.serde_params["hoodie.query.as.ro.table"]) == (INPUT_FORMAT, "true")
    assert (rt.input_format, rt.serde_params["hoodie.query.as.ro.table"]) == (REALTIME_INPUT_FORMAT, "false")


def metastore_copy(t, **changes):
    """The table as the metastore answers: location respelled, a DDL time added."""
    return replace(t, **{"location": "file:/lake/fruit", "params": {**t.params, "transient_lastDdlTime": "1"},
                         **changes})


def test_own_table_is_accepted_and_foreign_ones_refused():
    ours = table()
    assert check_ownership(metastore_copy(ours), ours, take_over=False) is False
    foreign = metastore_copy(ours, input_format="org.apache.hadoop.mapred.TextInputFormat", params={})
    with pytest.raises(TableOwnershipError, match="not a Hudi table .*TextInputFormat.*--take-over"):
        check_ownership(foreign, ours, take_over=False)
    elsewhere = metastore_copy(ours, location="s3://other/fruit")
    with pytest.raises(TableOwnershipError, match="the Hudi table at s3://other/fruit"):
        check_ownership(elsewhere, ours, take_over=False)
    assert check_ownership(foreign, ours, take_over=True) and check_ownership(elsewhere, ours, take_over=True)


def test_views_and_other_partitioning_are_refused_even_when_taking_over():
    ours = table()
    with pytest.raises(TableOwnershipError, match="view"):
        check_ownership(metastore_copy(ours, table_type="VIRTUAL_VIEW"), ours, take_over=True)
    with pytest.raises(TableOwnershipError, match=r"partitioned by \['day'\]"):
        check_ownership(metastore_copy(ours, partition_keys=(Column("day", "string"),)), ours, take_over=True)


def test_nothing_to_alter_when_the_metastore_agrees():
    ours = table()
    assert table_update(metastore_copy(ours, columns=tuple(replace(c, comment="") for c in ours.columns)),
                        ours) is None


def test_new_column_replaces_the_columns_and_cascades_to_partitions():
    before = table()
    wider = desired_table(settings(), settings().targets[0],
                          SCHEMA.insert(3, pa.field("colour", pa.string())), LOCATION)
    update = table_update(metastore_copy(before, params={**before.params, "owner": "me"}), wider)
    assert update.cascade and [c.name for c in update.table.columns][-1] == "colour"
    assert update.table.params["owner"] == "me"                           # the owner's properties stay
    assert update.table.params["spark.sql.sources.schema.part.0"] == wider.params["spark.sql.sources.schema.part.0"]


def test_type_changes_follow_hives_widening_rules():
    ours = table()
    narrow = metastore_copy(ours, columns=tuple(replace(c, type="int") if c.name == "qty" else c for c in ours.columns))
    bigger = replace(ours, columns=tuple(replace(c, type="bigint") if c.name == "qty" else c for c in ours.columns))
    assert table_update(narrow, bigger) is not None
    text = replace(ours, columns=tuple(replace(c, type="string") if c.name == "qty" else c for c in ours.columns))
    with pytest.raises(HiveSyncError, match="'qty'.*int in the metastore but string"):
        table_update(narrow, text)


def test_stale_spark_schema_parts_are_removed_and_foreign_table_made_external():
    ours = table()
    old = metastore_copy(ours, table_type="MANAGED_TABLE", input_format="x",
                         params={"spark.sql.sources.schema.part.7": "stale", "keep": "me"})
    update = table_update(old, ours)
    assert "spark.sql.sources.schema.part.7" not in update.table.params and update.table.params["keep"] == "me"
    assert update.table.table_type == "EXTERNAL_TABLE" and update.table.input_format == INPUT_FORMAT


def values_of(path):
    return (path.split("=")[-1],)


def location_of(path):
    return f"{LOCATION}/{path}"


def test_incremental_partition_changes():
    metastore = [HivePartition(("eu",), "file:/lake/fruit/eu"), HivePartition(("us",), "file:/old/us"),
                 HivePartition(("asia",), "file:/lake/fruit/asia"), HivePartition(("mars",), "file:/x")]
    changes = partition_changes(["eu", "us", "asia", "africa", "gone"], {"eu", "us", "africa"}, metastore,
                                values_of, location_of, full=False)
    assert changes.add == (HivePartition(("africa",), f"{LOCATION}/africa"),)
    assert changes.update == (HivePartition(("us",), f"{LOCATION}/us"),)
    assert changes.drop == (("asia",),)                      # mars was not touched: left alone


def test_full_partition_sync_drops_whatever_storage_lacks():
    metastore = [HivePartition(("eu",), "file:/lake/fruit/eu"), HivePartition(("mars",), "file:/x")]
    changes = partition_changes(["eu", "us"], {"eu", "us"}, metastore, values_of, location_of, full=True)
    assert [p.values for p in changes.add] == [("us",)] and changes.update == ()
    assert changes.drop == (("mars",),)


def test_sync_marker():
    assert sync_marker_update({}, "300", "301", force=False) == \
        {"last_commit_time_sync": "300", "last_commit_completion_time_sync": "301"}
    assert sync_marker_update({"last_commit_time_sync": "300"}, "300", None, force=False) is None
    newer = {"last_commit_time_sync": "400", "last_commit_completion_time_sync": "401"}
    assert sync_marker_update(newer, "300", "301", force=False) is None      # a concurrent sync got further
    assert sync_marker_update(newer, "300", "301", force=True) == \
        {"last_commit_time_sync": "300", "last_commit_completion_time_sync": "301"}


def test_locations_compare_up_to_spelling():
    assert same_location("file:/a/b", "file:///a/b/") and same_location("/a/b", "file:/a/b")
    assert not same_location("s3://x/a", "s3://y/a")
