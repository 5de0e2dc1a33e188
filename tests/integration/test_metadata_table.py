"""The metadata table (``.hoodie/metadata``) with real Spark: its files, column_stats, bloom_filters
and record_index partitions stay in step with writes, failures, compaction, clustering, cleaning
and restore; it is rebuilt when missing and dropped when turned off; reads prune with it; and it
reads the metadata tables real Hudi wrote. Every table is also read by hudi-rs."""
import posixpath
import shutil

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_engine import read, write
from hudi_engine.bloom import FOOTER_KEY
from hudi_engine.errors import HoodieConfigError
from hudi_engine.file_group.fs_view import FileSystemView
from hudi_engine.metadata_table.codec import split
from hudi_engine.metadata_table.keys import bloom_filter_key
from hudi_engine.metadata_table.layout import MDT_DIR
from hudi_engine.metadata_table.reader import MetadataReader
from hudi_engine.metadata_table.records import bloom_filter_of
from hudi_engine.read.plan import plan_read
from hudi_engine.services.clean import run_clean
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.services.savepoint import create_savepoint, restore_to_savepoint
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from tests.conftest import unzip_fixture
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.metadata_failures import dying_after_metadata_commit

pytestmark = pytest.mark.spark
COLS = ["id", "p", "v"]
ALL = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
       "hoodie.metadata.index.bloom.filter.enable": "true", "hoodie.metadata.record.index.enable": "true"}


def options(table_type="COPY_ON_WRITE", **extra):
    return {"hoodie.table.name": "mdt", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, **ALL, **extra}


def batch(spark, ids, value, ts):
    return spark.range(0, 1).selectExpr("explode(array(" + ",".join(str(i) for i in ids) + ")) as n").selectExpr(
        "cast(n as string) as id", "cast(n % 3 as string) as p", f"cast({ts} as long) as ts",
        f"'{value}' as v", "cast(n as double) as x")


def state(spark, path):
    mine = rows(read(spark, path).toArrow(), COLS)
    assert rows(hudi_rs_read(path), COLS) == mine
    return mine


def assert_in_step(spark, path):
    """Every metadata partition says what the table's files and rows say."""
    table = HoodieTable.load(path)
    reader = MetadataReader(table)
    partition_stats = {"partition_stats"} if table.version >= 8 else set()   # on with column stats from 8
    assert set(reader.available) == {"files", "column_stats", "bloom_filters", "record_index", *partition_stats}
    listed = FileSystemView(table.storage, table.timeline)
    from_mdt = FileSystemView(table.storage, table.timeline, reader.file_listing())
    slices = [(s.partition, s.file_id, s.base_file and s.base_file.path, [f.path for f in s.log_files])
              for s in listed.latest_file_slices()]
    assert [(s.partition, s.file_id, s.base_file and s.base_file.path, [f.path for f in s.log_files])
            for s in from_mdt.latest_file_slices()] == slices
    existing = {f.path for f in listed.data_files()}
    assert {f.path for f in reader.file_listing()} <= existing
    bases = [s.base_file.path for s in listed.latest_file_slices() if s.base_file]
    ranges = reader.column_ranges(["x", "v"], {posixpath.dirname(b) for b in bases})
    for base in bases:
        data = pq.read_table(table.storage.full(base), columns=["x", "v"], filesystem=table.storage.fs)
        got = ranges[posixpath.basename(base)]
        assert (got["x"].min, got["x"].max) == (pc.min(data["x"]).as_py(), pc.max(data["x"]).as_py())
        assert (got["v"].min, got["v"].max, got["v"].value_count) == (
            pc.min(data["v"]).as_py(), pc.max(data["v"]).as_py(), data.num_rows)
        footer = pq.read_metadata(table.storage.full(base), filesystem=table.storage.fs).metadata[FOOTER_KEY.encode()]
        key = bloom_filter_key(posixpath.dirname(base), posixpath.basename(base))
        assert bloom_filter_of(reader.records("bloom_filters", keys=[key])[key]).bloom_filter == footer
    live = read(spark, path).select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name").collect()
    located = reader.record_locations([r[0] for r in live] + ["no-such-key"])
    assert located == {r[0]: (r[1], r[2].lstrip(".").split("_")[0]) for r in live}


@pytest.mark.parametrize("base_path, table_type", [("local", "COPY_ON_WRITE"), ("local", "MERGE_ON_READ"),
                                                   ("s3", "MERGE_ON_READ")], indirect=["base_path"])
def test_every_partition_follows_inserts_upserts_and_deletes(spark, base_path, table_type):
    opts = options(table_type)
    write(batch(spark, range(60), "a", 1), base_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    assert_in_step(spark, base_path)
    write(batch(spark, range(50, 80), "b", 2), base_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    write(batch(spark, [1, 2, 55, 999], "x", 3), base_path, {**opts, "hoodie.datasource.write.operation": "delete"})
    expected = sorted([(str(i), str(i % 3), "a") for i in range(50) if i not in (1, 2)]
                      + [(str(i), str(i % 3), "b") for i in range(50, 80) if i != 55])
    assert state(spark, base_path) == expected
    assert_in_step(spark, base_path)
    table = HoodieTable.load(base_path)
    stats = "partition_stats," if table.version >= 8 else ""                  # on with column stats from 8
    assert table.props["hoodie.table.metadata.partitions"] == f"bloom_filters,column_stats,files,{stats}record_index"
    mdt = HoodieTable.load(posixpath.join(base_path, MDT_DIR))
    assert mdt.props["hoodie.table.base.file.format"] == "HFILE" and mdt.table_type == "MERGE_ON_READ"
    # Compaction merges the record index without decoding values: the same entries as decoding gives.
    reader = MetadataReader(HoodieTable.load(base_path))
    for file_slice in reader.file_slices("record_index"):
        assert file_slice.log_files
        assert reader.slice_reader.read_replacing(file_slice) == split(reader.slice_reader.read(file_slice))[0]


def test_a_write_that_fails_after_its_metadata_commit_is_rolled_back_in_both(spark, table_path, monkeypatch):
    opts = options()
    write(batch(spark, range(30), "a", 1), table_path, opts)

    with dying_after_metadata_commit(monkeypatch):
        write(batch(spark, range(20, 40), "b", 2), table_path, opts)
    mdt = HoodieTable.load(posixpath.join(table_path, MDT_DIR))
    assert any(i.action == "rollback" for i in mdt.timeline.instants)
    assert state(spark, table_path) == sorted((str(i), str(i % 3), "a") for i in range(30))
    assert_in_step(spark, table_path)
    write(batch(spark, range(20, 40), "c", 3), table_path, opts)
    assert_in_step(spark, table_path)


def test_metadata_compaction_cleaning_and_clustering_keep_it_in_step(spark, table_path):
    opts = options("MERGE_ON_READ", **{"hoodie.metadata.compact.max.delta.commits": "3",
                                       "hoodie.cleaner.commits.retained": "1",
                                       "hoodie.clustering.plan.strategy.small.file.limit": str(10 << 20)})
    for i in range(5):
        write(batch(spark, range(i * 10, i * 10 + 15), f"v{i}", i + 1), table_path, opts)
    mdt = HoodieTable.load(posixpath.join(table_path, MDT_DIR))
    writes = mdt.timeline.completed_writes()
    compactions = [n for n, i in enumerate(writes) if i.action == "commit"]
    if mdt.version >= 8:   # Hudi 1.x: a compaction instant time of its own, after the delta commits it merges
        assert compactions and all(writes[n].timestamp > writes[n - 1].timestamp for n in compactions)
        assert all(len(writes[n].timestamp) == 17 for n in compactions)
    else:                  # Hudi 0.x: the last delta commit's time with the suffix 001
        assert compactions and all(writes[n].timestamp == writes[n - 1].timestamp + "001" for n in compactions)
    assert max(len(g.slices) for g in mdt.fs_view().file_groups()) <= 2
    assert_in_step(spark, table_path)
    before = state(spark, table_path)
    planned = schedule_clustering(HoodieTable.load(table_path), opts, force=True)
    assert run_clusterings(spark, HoodieTable.load(table_path), options=opts) == [planned.timestamp]
    assert state(spark, table_path) == before
    assert_in_step(spark, table_path)
    run_clean(HoodieTable.load(table_path), opts, spark)   # writes also clean as they go
    assert [i for i in HoodieTable.load(table_path).timeline.instants if i.action == "clean" and i.is_completed]
    assert state(spark, table_path) == before
    assert_in_step(spark, table_path)


def test_rebuilt_when_missing_dropped_when_off_and_after_restore(spark, table_path):
    opts = options()
    write(batch(spark, range(30), "a", 1), table_path, opts)
    shutil.rmtree(posixpath.join(table_path, MDT_DIR))
    write(batch(spark, range(25, 35), "b", 2), table_path, opts)
    assert_in_step(spark, table_path)
    expected = state(spark, table_path)
    write(batch(spark, [1], "c", 3), table_path, {**opts, "hoodie.metadata.enable": "false"})
    table = HoodieTable.load(table_path)
    assert not table.storage.exists(MDT_DIR) and table.props["hoodie.table.metadata.partitions"] == ""
    write(batch(spark, [2], "d", 4), table_path, opts)
    assert_in_step(spark, table_path)
    saved = HoodieTable.load(table_path).timeline.completed_writes()[-1].timestamp
    create_savepoint(HoodieTable.load(table_path), saved)
    write(batch(spark, [3, 100], "e", 5), table_path, opts)
    restore_to_savepoint(HoodieTable.load(table_path), saved)
    assert not HoodieTable.load(table_path).storage.exists(MDT_DIR)
    expected = [(k, p, "c" if k == "1" else "d" if k == "2" else v) for k, p, v in expected]
    assert state(spark, table_path) == expected
    write(batch(spark, [4], "f", 6), table_path, opts)
    assert_in_step(spark, table_path)


def test_filters_skip_files_by_column_stats_and_keys_by_record_index(spark, table_path):
    opts = options(**{"hoodie.parquet.small.file.limit": "0"})
    for i in range(6):   # one file per batch and partition: x ranges do not overlap between batches
        write(batch(spark, range(i * 1000, i * 1000 + 1000), "a", 1), table_path,
              {**opts, "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable.load(table_path)
    every = len(plan_read(table).slices)
    assert every == 18
    narrow = [("x", ">=", 2100), ("x", "<", 2200)]
    assert len(plan_read(table, None, narrow).slices) == 3
    assert len(plan_read(table, {"hoodie.enable.data.skipping": "false"}, narrow).slices) == every
    assert len(plan_read(table, None, narrow + [("p", "=", "1")]).slices) == 1
    assert len(plan_read(table, None, [("id", "=", "4321")]).slices) == 1
    assert len(plan_read(table, None, [("id", "IN", ["7", "4321"])]).slices) == 2
    assert len(plan_read(table, None, [("id", "=", "no-such-key")]).slices) == 0
    got = read(spark, table_path, filters=narrow).select("id").collect()
    assert sorted(int(r[0]) for r in got) == list(range(2100, 2200))
    assert read(spark, table_path, filters=[("id", "=", "4321")]).select("v").collect()[0][0] == "a"
    via_source = spark.read.format("hudi").load(table_path).where("x >= 2100 and x < 2200 and p = '1'")
    assert sorted(int(r[0]) for r in via_source.select("id").collect()) == [
        i for i in range(2100, 2200) if i % 3 == 1]
    # Time travel does not trust the record index (it answers for the latest state).
    first = table.timeline.completed_writes()[0].timestamp
    assert len(plan_read(table, {"as.of.instant": first}, [("id", "=", "4321")]).slices) == 3


@pytest.mark.parametrize("fixture", ["sample_table/cow/v9_txns_simple_meta.zip",
                                     "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"])
def test_reads_the_metadata_tables_real_hudi_wrote(spark, tmp_path, fixture):
    path = str(unzip_fixture(fixture, tmp_path))
    table = HoodieTable.load(path)
    reader = MetadataReader(table)
    assert {"files", "column_stats", "record_index"} <= set(reader.available)
    listed = FileSystemView(table.storage, table.timeline)
    from_mdt = FileSystemView(table.storage, table.timeline, reader.file_listing())
    assert ({(s.file_id, s.base_file and s.base_file.path) for s in from_mdt.latest_file_slices()}
            == {(s.file_id, s.base_file and s.base_file.path) for s in listed.latest_file_slices()})
    live = read(spark, path).select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name").collect()
    located = reader.record_locations([r[0] for r in live])
    assert {k: fid for k, (_, fid) in located.items()} == {r[0]: r[2].lstrip(".").split("_")[0] for r in live}
    key_column = table.props["hoodie.table.recordkey.fields"]
    bases = [s.base_file.path for s in listed.latest_file_slices() if s.base_file]
    ranges = reader.column_ranges([key_column], {posixpath.dirname(b) for b in bases})
    for base in bases:
        keys = pq.read_table(table.storage.full(base), columns=[key_column])[key_column]
        got = ranges[posixpath.basename(base)][key_column]
        assert (got.min, got.max) == (pc.min(keys).as_py(), pc.max(keys).as_py())


@pytest.mark.parametrize("base_path, table_type", [("local", "COPY_ON_WRITE"), ("local", "MERGE_ON_READ"),
                                                   ("s3", "COPY_ON_WRITE")], indirect=["base_path"])
def test_record_index_as_the_write_index(spark, base_path, table_type):
    """hoodie.index.type=RECORD_INDEX tags upserts through the record index (global: a key is
    unique across partitions), builds it when missing, and moves keys only when told to."""
    opts = options(table_type, **{"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "false"})
    write(batch(spark, range(40), "a", 1), base_path, {**opts, "hoodie.datasource.write.operation": "insert"})
    assert "record_index" in HoodieTable.load(base_path).props["hoodie.table.metadata.partitions"]
    write(batch(spark, range(30, 50), "b", 2), base_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    write(batch(spark, [3, 33], "x", 3), base_path, {**opts, "hoodie.datasource.write.operation": "delete"})
    # Key 7 arrives in another partition: without update.partition.path it is updated where it is.
    moved = batch(spark, [7], "m", 4).selectExpr("id", "regexp_replace(p, '.+', '2') as p", "ts", "v", "x")
    write(moved, base_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    expected = {(str(i), str(i % 3)): "a" for i in range(30)}
    expected.update({(str(i), str(i % 3)): "b" for i in range(30, 50)})
    for gone in ("3", "33"):
        expected.pop((gone, str(int(gone) % 3)))
    expected.pop(("7", "1"))
    expected[("7", "2")] = "m"
    assert state(spark, base_path) == sorted((k, p, v) for (k, p), v in expected.items())
    assert stored_partition(spark, base_path, "7") == "1"
    write(moved.selectExpr("id", "p", "ts + 1 as ts", "'n' as v", "x"), base_path,
          {**opts, "hoodie.record.index.update.partition.path": "true"})
    expected[("7", "2")] = "n"
    assert state(spark, base_path) == sorted((k, p, v) for (k, p), v in expected.items())
    assert stored_partition(spark, base_path, "7") == "2"
    assert_in_step(spark, base_path)
    Storage(base_path).delete_dir(MDT_DIR)     # rebuilt from the table before tagging
    write(batch(spark, [40, 60], "c", 5), base_path, opts)
    expected.update({("40", "1"): "c", ("60", "0"): "c"})
    assert state(spark, base_path) == sorted((k, p, v) for (k, p), v in expected.items())


def stored_partition(spark, path, key):
    return read(spark, path).filter(f"id = '{key}'").select("_hoodie_partition_path").collect()[0][0]


def test_record_index_needs_the_metadata_table(spark, table_path):
    with pytest.raises(HoodieConfigError, match="RECORD_INDEX.*hoodie.metadata.enable=true"):
        write(batch(spark, range(3), "a", 1), table_path,
              options(**{"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.enable": "false"}))


def test_record_index_written_by_hudi_is_compacted_by_decoding_its_values(tmp_path):
    """Real Hudi's record-index files carry its own schema text: the raw merge declines them (its
    values would be carried into a file declaring another schema) and compaction decodes them."""
    path = str(unzip_fixture("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", tmp_path))
    reader = MetadataReader(HoodieTable.load(path))
    slices = reader.file_slices("record_index")
    assert any(s.base_file for s in slices)
    for file_slice in slices:
        raw = reader.slice_reader.read_replacing(file_slice)
        decoded = split(reader.slice_reader.read(file_slice))[0]
        assert (raw is None) if file_slice.base_file else (raw == decoded)
