"""Secondary indexes with real Spark, as Hudi 1.x's book shows them: CREATE INDEX on a version 9
table with the record index; the index's entries (decoded from the metadata table) equal the
table's (value, key) pairs after inserts, upserts that change and keep the value, deletes, a
compaction and a failed write's rollback; a filter on the column reads fewer file slices and the same rows as
without the index; hudi-rs reads the table; DROP INDEX removes it; Hudi's refusals."""
import importlib
import json
from pathlib import Path

import pytest

from hudi_engine import read, write
from hudi_engine.api import create_index
from hudi_engine.errors import HoodieConfigError
from hudi_engine.metadata_table.keys import split_secondary_index_key
from hudi_engine.metadata_table.layout import MDT_DIR
from hudi_engine.metadata_table.reader import MetadataReader
from hudi_engine.read.plan import plan_read
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.transaction.metadata import writer as mdt_writer
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
PARTITION = "secondary_index_idx_city"
COLS = ["id", "city", "fare"]


def options(table_type, **extra):
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.metadata.record.index.enable": "true",
            "hoodie.write.table.version": "9", "hoodie.parquet.small.file.limit": "0", **extra}


def batch(spark, ids, city, ts):
    """Rows ``ids``: partition id % 3, city ``<city><id % 4>`` (None for ``city=None``)."""
    data = [(str(i), str(i % 3), ts, None if city is None else f"{city}{i % 4}", float(i)) for i in ids]
    return spark.createDataFrame(data, "id string, p string, ts long, city string, fare double")


def _sorted(pairs):
    return sorted(pairs, key=lambda p: (p[0] is not None, p))


def index_pairs(path):
    reader = MetadataReader(HoodieTable.load(path))
    return _sorted(split_secondary_index_key(k) for k in reader.records(PARTITION))


def data_pairs(spark, path):
    return _sorted((r.city, r.id) for r in read(spark, path).select("city", "id").collect())


def assert_in_step(spark, path):
    assert index_pairs(path) == data_pairs(spark, path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_created_in_sql_kept_in_step_used_by_reads_and_dropped(spark, tmp_path, table_type):
    path = str(tmp_path / "trips")
    opts = options(table_type)
    write(batch(spark, range(0, 30), "sf", 1), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    write(batch(spark, range(30, 45), None, 1), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    name = f"trips_{table_type[:3].lower()}"
    spark.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    try:
        spark.sql(f"CREATE INDEX idx_city ON {name} (city)")
        table = HoodieTable.load(path)
        assert table.props["hoodie.table.index.defs.path"] == ".hoodie/.index_defs/index.json"
        assert PARTITION in table.props["hoodie.table.metadata.partitions"].split(",")
        definition = json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
        assert definition[PARTITION]["sourceFields"] == ["city"] and definition[PARTITION]["version"] == "V2"
        assert [tuple(r) for r in spark.sql(f"SHOW INDEXES FROM {name}").collect()] == [
            ("record_index", "", "record_index"), (PARTITION, "city", "secondary_index")]
        assert_in_step(spark, path)
        assert (None, "30") in index_pairs(path), "a null value is indexed (as NUL)"

        # One upsert: ids 0-9 change value, 10-13 keep theirs, 40-42 go from null to a value.
        changed = batch(spark, range(0, 10), "ny", 2).union(batch(spark, range(10, 14), "sf", 2)).union(
            batch(spark, range(40, 43), "la", 2))
        write(changed, path, {**opts, "hoodie.datasource.write.operation": "upsert"})
        assert_in_step(spark, path)
        write(batch(spark, [1, 2, 11, 44], "x", 3), path, {**opts, "hoodie.datasource.write.operation": "delete"})
        assert_in_step(spark, path)
        if table_type == "MERGE_ON_READ":
            assert schedule_compaction(HoodieTable.load(path), opts, force=True) is not None
            run_compactions(spark, HoodieTable.load(path), options=opts)
            assert any(i.action == "commit" for i in HoodieTable.load(path).timeline.completed_writes())
            assert_in_step(spark, path)

        table = HoodieTable.load(path)
        wanted = [("city", "IN", ["ny1", "la2"])]
        pruned, every = len(plan_read(table, None, wanted).slices), len(plan_read(table).slices)
        assert 0 < pruned < every
        off = {"hoodie.metadata.enable": "false"}
        assert len(plan_read(table, off, wanted).slices) == every
        expected = sorted(tuple(r) for r in read(spark, path, off).where("city IN ('ny1', 'la2')").select(*COLS).collect())
        assert expected and sorted(tuple(r) for r in read(spark, path, filters=wanted).select(*COLS).collect()) == expected
        via_sql = spark.sql(f"SELECT id, city, fare FROM {name} WHERE city = 'ny1' OR city = 'la2'").collect()
        assert sorted(tuple(r) for r in via_sql) == expected
        assert len(plan_read(table, None, [("city", "=", "no-such-city")]).slices) == 0
        assert sorted(rows(hudi_rs_read(path), COLS)) == sorted(rows(read(spark, path).toArrow(), COLS))

        spark.sql(f"DROP INDEX idx_city ON {name}")
        table = HoodieTable.load(path)
        assert PARTITION not in table.props["hoodie.table.metadata.partitions"]
        assert not (Path(path) / MDT_DIR / PARTITION).exists()
        assert PARTITION not in (Path(path) / ".hoodie/.index_defs/index.json").read_text()
        assert spark.sql(f"SHOW INDEXES FROM {name}").count() == 1
    finally:
        spark.sql(f"DROP TABLE {name}")


def test_rolled_back_with_a_failed_write_and_rebuilt_when_turned_back_on(spark, tmp_path, monkeypatch):
    """A write that dies after its metadata commit is rolled back in both tables; a write with
    hoodie.metadata.index.secondary.enable=false drops the partition (the definition stays) and
    the next write with it on builds it again."""
    path = str(tmp_path / "trips")
    opts = {**options("COPY_ON_WRITE"), "hoodie.datasource.write.operation": "upsert"}
    write(batch(spark, range(0, 20), "sf", 1), path, opts)
    create_index(spark, path, "idx_city", "city")

    def sync_then_die(*args, **kwargs):
        real_sync(*args, **kwargs)
        raise RuntimeError("killed between the metadata commit and the data commit")
    real_sync = mdt_writer.sync_commit
    monkeypatch.setattr(importlib.import_module("hudi_engine.transaction.metadata.listener"), "sync_commit", sync_then_die)
    with pytest.raises(RuntimeError, match="killed"):
        write(batch(spark, range(0, 10), "ny", 2), path, opts)
    monkeypatch.undo()
    assert_in_step(spark, path)
    assert {c for c, _ in index_pairs(path)} == {"sf0", "sf1", "sf2", "sf3"}

    write(batch(spark, range(5, 8), "la", 3), path, {**opts, "hoodie.metadata.index.secondary.enable": "false"})
    assert PARTITION not in HoodieTable.load(path).props["hoodie.table.metadata.partitions"]
    write(batch(spark, range(8, 9), "ny", 4), path, opts)
    assert PARTITION in HoodieTable.load(path).props["hoodie.table.metadata.partitions"]
    assert_in_step(spark, path)
    assert {c for c, _ in index_pairs(path)} == {"sf0", "sf1", "sf2", "sf3", "la1", "la2", "la3", "ny0"}


def test_refused_where_hudi_refuses(spark, tmp_path):
    no_rli = str(tmp_path / "no_rli")
    write(batch(spark, range(3), "sf", 1), no_rli, {**options("COPY_ON_WRITE"), "hoodie.metadata.record.index.enable": "false"})
    with pytest.raises(HoodieConfigError, match="record index.*hoodie.metadata.global.record.level.index.enable=true"):
        create_index(spark, no_rli, "idx_city", "city")
    v6 = str(tmp_path / "v6")
    write(batch(spark, range(3), "sf", 1), v6, {**options("COPY_ON_WRITE"), "hoodie.write.table.version": "6"})
    with pytest.raises(HoodieConfigError, match="table version 8 or later.*upgrade"):
        create_index(spark, v6, "idx_city", "city")
    path = str(tmp_path / "trips")
    write(batch(spark, range(3), "sf", 1), path, options("COPY_ON_WRITE"))
    with pytest.raises(HoodieConfigError, match="no such column; its columns are id, p, ts, city, fare"):
        create_index(spark, path, "idx", "town")
    with pytest.raises(HoodieConfigError, match="index type 'bloom_filters' is not supported"):
        create_index(spark, path, "idx", "city", index_type="bloom_filters")
    create_index(spark, path, "idx_city", "city")
    with pytest.raises(HoodieConfigError, match="index idx_city already exists.*DROP INDEX idx_city"):
        create_index(spark, path, "idx_city", "fare")
    create_index(spark, path, "idx_city", "city", if_not_exists=True)
    assert index_pairs(path) == [("sf0", "0"), ("sf1", "1"), ("sf2", "2")]
