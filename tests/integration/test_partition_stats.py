"""The partition_stats index with real Spark on version 9 tables: its records say what the data
says after inserts, an upsert, a delete, compaction, clustering, clean and a dropped partition;
filtered reads skip whole partitions by it and return the rows a read without data skipping
returns; hudi-rs reads every table; its records have the shape real Hudi's have."""
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_engine import read, write
from hudi_engine.expr.skipping import predicates
from hudi_engine.metadata_table.reader import MetadataReader
from hudi_engine.metadata_table.records import column_stats_of, decode, encode
from hudi_engine.metadata_table.schema import metadata_record_schema
from hudi_engine.read import pruning
from hudi_engine.read.plan import plan_read
from hudi_engine.services.clean import run_clean
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.transaction.metadata import partition_stats as ps
from tests.conftest import unzip_fixture
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
INDEXED = ["_hoodie_record_key", "id", "p", "ts", "x", "v"]
NARROW = [("x", ">=", 2000), ("x", "<", 2300)]       # x of partition p2 only


def options(table_type, **extra):
    return {"hoodie.table.name": "pstats", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "9",
            "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.metadata.index.partition.stats.enable": "true", "hoodie.cleaner.commits.retained": "1",
            "hoodie.clustering.plan.strategy.small.file.limit": str(10 << 20), **extra}


def batch(spark, ids, ts, operation):
    """x is 1000 * partition number + 10 * id: each partition's x range is its own."""
    data = [(str(i), f"p{i % 3}", ts, (i % 3) * 1000 + i * 10, None if i % 4 == 0 else f"v{ts}-{i}") for i in ids]
    return spark.createDataFrame(data, "id string, p string, ts long, x long, v string"), operation


def stored(path) -> dict[tuple[str, str], object]:
    records = MetadataReader(HoodieTable.load(path)).records("partition_stats")
    return {(s.file_name, s.column_name): s for s in map(column_stats_of, records.values())}


def assert_stats(spark, path, exact: bool):
    """Per partition and column: the stored range bounds the live rows; ``exact`` (no log file
    left), it is their min, max, null and value counts."""
    data = read(spark, path).toArrow()
    assert rows(hudi_rs_read(path), ["id", "p", "x", "v"]) == rows(data, ["id", "p", "x", "v"])
    got = stored(path)
    assert {p for p, _ in got} == set(data.column("p").to_pylist())
    for p in set(data.column("p").to_pylist()):
        part = data.filter(pc.equal(data.column("p"), p))
        for column in INDEXED:
            s, values = got[(p, column)], part.column(column)
            assert s.is_tight_bound and not s.is_deleted and s.file_name == p
            lo, hi = pc.min(values).as_py(), pc.max(values).as_py()
            if exact:
                assert (s.min_value, s.max_value, s.null_count, s.value_count) == (
                    lo, hi, values.null_count, len(values)), (p, column)
            else:
                assert s.min_value <= lo and s.max_value >= hi and s.value_count >= len(values), (p, column)


def assert_pruned_reads(spark, path):
    table = HoodieTable.load(path)
    latest = plan_read(table).slices
    preds = predicates(NARROW, pa.schema([("x", pa.int64())]))
    pruned = pruning._by_partition_stats(MetadataReader(table), list(latest), preds)
    assert {s.partition for s in pruned} == {"p2"} and {s.partition for s in latest} == {"p0", "p1", "p2"}
    assert {s.partition for s in plan_read(table, None, NARROW).slices} == {"p2"}
    assert len(plan_read(table, {"hoodie.enable.data.skipping": "false"}, NARROW).slices) == len(latest)
    skipping = rows(read(spark, path, filters=NARROW).toArrow(), ["id", "x", "v"])
    plain = rows(read(spark, path, {"hoodie.enable.data.skipping": "false"}, filters=NARROW).toArrow(),
                 ["id", "x", "v"])
    assert skipping == plain and skipping


# Merge-on-read on Spark's executors: its log files' ranges come from Spark's tasks.
@pytest.mark.parametrize("table_type, write_plane", [("COPY_ON_WRITE", "in-process"),
                                                     ("MERGE_ON_READ", "spark-stages")], indirect=["write_plane"])
def test_partition_stats_follow_writes_and_services_and_prune_reads(spark, table_path, table_type, write_plane):
    opts = options(table_type)
    for df, operation in [batch(spark, range(0, 40), 1, "insert"), batch(spark, range(30, 50), 2, "upsert"),
                          batch(spark, [3, 31, 44], 3, "delete")]:
        write(df, table_path, {**opts, "hoodie.datasource.write.operation": operation})
    table = HoodieTable.load(table_path)
    assert "partition_stats" in table.props["hoodie.table.metadata.partitions"].split(",")
    cow = table_type == "COPY_ON_WRITE"
    assert_stats(spark, table_path, exact=cow)
    assert_pruned_reads(spark, table_path)
    if not cow:
        schedule_compaction(HoodieTable.load(table_path), opts, force=True)
        assert run_compactions(spark, HoodieTable.load(table_path), options=opts)
        assert_stats(spark, table_path, exact=True)
    planned = schedule_clustering(HoodieTable.load(table_path), opts, force=True)
    assert run_clusterings(spark, HoodieTable.load(table_path), options=opts) == [planned.timestamp]
    run_clean(HoodieTable.load(table_path), opts, spark, force=True)
    assert [i for i in HoodieTable.load(table_path).timeline.instants if i.action == "clean" and i.is_completed]
    assert_stats(spark, table_path, exact=True)
    assert_pruned_reads(spark, table_path)
    # A dropped partition's stats are tombstoned: no range is left to prune (or keep) it by.
    df, _ = batch(spark, [1], 4, "delete_partition")
    write(df, table_path, {**opts, "hoodie.datasource.write.operation": "delete_partition"})
    assert {p for p, _ in stored(table_path)} == {"p0", "p2"}
    assert_stats(spark, table_path, exact=True)


@pytest.mark.parametrize("fixture", ["sample_table/cow/v9_txns_simple_meta.zip",
                                     "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"])
def test_records_have_the_shape_real_hudi_writes(spark, tmp_path, fixture):
    """Real Hudi's partition_stats of a table, and ours over the same data files, field by field."""
    theirs_path = unzip_fixture(fixture, tmp_path / "theirs")
    theirs_table = HoodieTable.load(str(theirs_path))
    theirs = MetadataReader(theirs_table).records("partition_stats")
    assert theirs
    columns = sorted({column_stats_of(r).column_name for r in theirs.values()})
    ours = {r["key"]: r for r in ps.initial_records(theirs_table, columns, "00000000000000004", spark)}
    assert set(ours) == set(theirs)
    for key, record in theirs.items():
        # through the bytes of the table's version, as real Hudi's were read
        written = encode(ours[key], table_version=theirs_table.version)
        mine = decode(written, metadata_record_schema(theirs_table.version, meta_fields=True), key=key)
        s = record["ColumnStatsMetadata"]
        assert mine["type"] == record["type"] == 6
        assert set(mine["ColumnStatsMetadata"]) == set(s)
        m = mine["ColumnStatsMetadata"]
        assert (m["fileName"], m["columnName"], m["isTightBound"], m["isDeleted"]) == (
            s["fileName"], s["columnName"], True, False)
        assert (m["nullCount"], m.get("valueType")) == (s["nullCount"], s.get("valueType")), key
        assert (column_stats_of(mine).min_value, column_stats_of(mine).max_value) == (
            column_stats_of(record).min_value, column_stats_of(record).max_value), key
