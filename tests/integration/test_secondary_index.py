"""Secondary indexes with real Spark, as Hudi 1.x's book shows them: CREATE INDEX on a version 9
table with the record index; the index's entries (decoded from the metadata table) equal the
table's (value, key) pairs after inserts, upserts that change and keep the value, deletes, a
compaction, a clustering and a failed write's rollback; a filter on the column reads fewer file
slices and the same rows as without the index; hudi-rs reads the table; DROP INDEX removes it;
Hudi's refusals; and real Hudi 1.1's indexes answer our reads."""
import json
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import read, write
from hudi_engine.api import create_index
from hudi_engine.errors import HoodieConfigError
from hudi_engine.metadata_table.keys import split_secondary_index_key
from hudi_engine.metadata_table.layout import MDT_DIR
from hudi_engine.metadata_table.reader import MetadataReader
from hudi_engine.read.in_process import read_arrow
from hudi_engine.read.plan import plan_read
from hudi_engine.services.clean import run_clean
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudictl.cli import main
from tests.conftest import unzip_fixture
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.metadata_failures import dying_after_metadata_commit

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


@pytest.mark.spark
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_created_in_sql_kept_in_step_used_by_reads_and_dropped(spark, tmp_path, table_type, monkeypatch):
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
        upsert = {**opts, "hoodie.datasource.write.operation": "upsert"}
        write(changed, path, upsert)
        assert_in_step(spark, path)
        write(batch(spark, [1, 2, 11, 44], "x", 3), path, {**opts, "hoodie.datasource.write.operation": "delete"})
        assert_in_step(spark, path)
        if table_type == "MERGE_ON_READ":
            assert schedule_compaction(HoodieTable.load(path), opts, force=True) is not None
            run_compactions(spark, HoodieTable.load(path), options=opts)
            assert any(i.action == "commit" for i in HoodieTable.load(path).timeline.completed_writes())
            assert_in_step(spark, path)

        if table_type == "COPY_ON_WRITE":
            with dying_after_metadata_commit(monkeypatch):      # rolled back in both tables by the next write
                write(batch(spark, range(20, 25), "ny", 4), path, upsert)
            assert_in_step(spark, path)
            write(batch(spark, [20], "la", 5), path, upsert)
            assert_in_step(spark, path)
            # Clustering moves every row to new file groups (the record index follows); no value changes.
            before = index_pairs(path)
            planned = schedule_clustering(HoodieTable.load(path), opts, force=True)
            assert run_clusterings(spark, HoodieTable.load(path), options=opts) == [planned.timestamp]
            run_clean(HoodieTable.load(path), opts, spark)
            assert index_pairs(path) == before
            assert_in_step(spark, path)
            refusals(spark, path)
        else:
            # Off for one write: the partition goes (the definition stays); back on: built again.
            write(batch(spark, [5], "la", 4), path, {**upsert, "hoodie.metadata.index.secondary.enable": "false"})
            assert PARTITION not in HoodieTable.load(path).props["hoodie.table.metadata.partitions"]
            write(batch(spark, [6], "la", 5), path, upsert)
            assert PARTITION in HoodieTable.load(path).props["hoodie.table.metadata.partitions"]
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


@pytest.mark.spark
def test_kept_in_step_by_writes_on_spark_executors(spark, tmp_path, monkeypatch):
    """Writes whose data steps run on Spark's executors read the slices they touch in Spark tasks."""
    import dataclasses

    from hudi_engine import config as C

    monkeypatch.setattr(C, "IN_PROCESS_MAX_RECORDS", dataclasses.replace(C.IN_PROCESS_MAX_RECORDS, default=0))
    path = str(tmp_path / "trips")
    opts = {**options("MERGE_ON_READ"), "hoodie.datasource.write.operation": "upsert"}
    write(batch(spark, range(0, 20), "sf", 1), path, opts)
    create_index(spark, path, "idx_city", "city")
    write(batch(spark, range(0, 8), "ny", 2).union(batch(spark, range(8, 10), "sf", 2)), path, opts)
    write(batch(spark, [3, 12], "x", 3), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    assert_in_step(spark, path)
    assert ("ny0", "4") in index_pairs(path) and ("sf0", "4") not in index_pairs(path)


def refusals(spark, path):
    with pytest.raises(HoodieConfigError, match="no such column; its columns are id, p, ts, city, fare"):
        create_index(spark, path, "idx", "town")
    with pytest.raises(HoodieConfigError, match="index type 'bitmap' is not supported"):
        create_index(spark, path, "idx", "city", index_type="bitmap")
    with pytest.raises(HoodieConfigError, match="expression index function 'soundex' is not supported"):
        create_index(spark, path, "idx", "city", index_type="bloom_filters", index_options={"expr": "soundex"})
    with pytest.raises(HoodieConfigError, match="index idx_city already exists.*DROP INDEX idx_city"):
        create_index(spark, path, "idx_city", "fare")
    before = index_pairs(path)
    create_index(spark, path, "idx_city", "city", if_not_exists=True)
    assert index_pairs(path) == before


@pytest.mark.spark
@pytest.mark.spark
def test_defined_by_writer_options_as_hudi_1_0_1_does(spark, tmp_path):
    """``hoodie.metadata.index.secondary.column`` (and ``hoodie.index.name``) on a write with the
    record index: the index CREATE INDEX would make, built and kept in step; once per column."""
    path = str(tmp_path / "trips")
    opts = options("COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "upsert"})
    named = {"hoodie.metadata.index.secondary.column": "city", "hoodie.index.name": "idx_city"}
    write(batch(spark, range(0, 8), "sf", 1), path, {**opts, **named})
    defs = json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
    assert defs[PARTITION]["sourceFields"] == ["city"] and defs[PARTITION]["indexType"] == "secondary_index"
    assert PARTITION in HoodieTable.load(path).props["hoodie.table.metadata.partitions"].split(",")
    assert_in_step(spark, path)
    write(batch(spark, range(4, 12), "ny", 2), path, {**opts, "hoodie.metadata.index.secondary.column": "city"})
    assert list(json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]) == [
        PARTITION]
    assert_in_step(spark, path)


def test_dropped_by_writer_option_as_hudi_1_0_1_does(spark, tmp_path):
    """``hoodie.metadata.index.drop`` on a write drops the named index before the write, as DROP
    INDEX does (partition, listing, definition); repeated on the next write it is passed over; a
    write that also keeps or defines it is refused, the table unchanged."""
    path = str(tmp_path / "trips")
    opts = options("COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "upsert"})
    named = {"hoodie.metadata.index.secondary.column": "city", "hoodie.index.name": "idx_city"}
    write(batch(spark, range(0, 8), "sf", 1), path, {**opts, **named})
    assert PARTITION in HoodieTable.load(path).props["hoodie.table.metadata.partitions"].split(",")
    with pytest.raises(HoodieConfigError, match="hoodie.metadata.index.drop=idx_city drops secondary_index_idx_city.*"
                                                "define"):
        write(batch(spark, range(8, 10), "la", 2), path, {**opts, **named, "hoodie.metadata.index.drop": "idx_city"})
    with pytest.raises(HoodieConfigError, match="record_index.*hoodie.metadata.global.record.level.index.enable=false"):
        write(batch(spark, range(8, 10), "la", 2), path, {**opts, "hoodie.metadata.index.drop": "record_index"})
    with pytest.raises(HoodieConfigError, match="files partition is the metadata table itself.*hoodie.metadata.enable=false"):
        write(batch(spark, range(8, 10), "la", 2), path, {**opts, "hoodie.metadata.index.drop": "files"})
    assert sorted(r.id for r in read(spark, path).select("id").collect()) == sorted(str(i) for i in range(8))
    assert_in_step(spark, path)

    dropping = {**opts, "hoodie.metadata.index.drop": "idx_city"}
    write(batch(spark, range(4, 12), "ny", 2), path, dropping)
    table = HoodieTable.load(path)
    assert PARTITION not in table.props["hoodie.table.metadata.partitions"].split(",")
    assert "record_index" in table.props["hoodie.table.metadata.partitions"].split(",")
    assert PARTITION not in json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
    assert not (Path(path) / MDT_DIR / PARTITION).exists()
    write(batch(spark, range(12, 14), "ny", 3), path, dropping)         # nothing left to drop: passed over
    got = sorted((r.id, r.city, r.ts) for r in read(spark, path).select("id", "city", "ts").collect())
    assert got == sorted([(str(i), f"sf{i % 4}", 1) for i in range(4)] + [(str(i), f"ny{i % 4}", 2) for i in range(4, 12)]
                         + [(str(i), f"ny{i % 4}", 3) for i in range(12, 14)])
    assert rows(hudi_rs_read(path), ["id", "city", "ts"]) == got


def test_refused_without_the_record_index_or_before_version_8(spark, tmp_path):
    rows_ = pa.table({"id": ["1", "2"], "p": ["0", "1"], "ts": [1, 1], "city": ["sf", "ny"]})
    no_rli = str(tmp_path / "no_rli")
    write(rows_, no_rli, {**options("COPY_ON_WRITE"), "hoodie.metadata.record.index.enable": "false"})
    with pytest.raises(HoodieConfigError, match="record index.*hoodie.metadata.global.record.level.index.enable=true"):
        create_index(spark, no_rli, "idx_city", "city")
    v6 = str(tmp_path / "v6")
    write(rows_, v6, {**options("COPY_ON_WRITE"), "hoodie.write.table.version": "6",
                      "hoodie.metadata.record.index.enable": "false"})
    with pytest.raises(HoodieConfigError, match="table version 8 or later.*upgrade"):
        create_index(spark, v6, "idx_city", "city")


def test_real_hudis_secondary_indexes_prune_reads_and_hudictl_lists_and_drops_them(tmp_path, capsys):
    """The indexes real Hudi 1.1 built (a string and a date column) answer our reads; hudictl lists
    them as SHOW INDEXES does and drops one."""
    base = str(unzip_fixture("sample_table/cow/v9_txns_simple_meta.zip", tmp_path))
    table = HoodieTable.load(base)
    every = len(plan_read(table).slices)
    off = {"hoodie.metadata.enable": "false"}
    for filters in ([("merchant_name", "=", "Uber")], [("txn_date", "IN", ["2024-01-15", "2024-01-16"])]):
        assert 0 < len(plan_read(table, None, filters).slices) < every
        got = read_arrow(base, filters=filters).select(["txn_id", "merchant_name", "txn_date"])
        expected = read_arrow(base, off, filters=filters).select(["txn_id", "merchant_name", "txn_date"])
        assert got.num_rows > 0 and sorted(got.to_pylist(), key=str) == sorted(expected.to_pylist(), key=str)
    assert main(["table", "index", "list", "--base-path", base, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"index_name": "secondary_index_merchant_idx", "col_name": "merchant_name",
            "index_type": "secondary_index"} in listed
    assert main(["table", "index", "drop", "--base-path", base, "--name", "merchant_idx"]) == 0
    table = HoodieTable.load(base)
    assert "secondary_index_merchant_idx" not in table.props["hoodie.table.metadata.partitions"]
    assert "secondary_index_merchant_idx" not in (Path(base) / ".hoodie/.index_defs/index.json").read_text()
    assert "secondary_index_txn_date_idx" in (Path(base) / ".hoodie/.index_defs/index.json").read_text()
    assert not (Path(base) / MDT_DIR / "secondary_index_merchant_idx").exists()
