"""Expression indexes with real Spark, as Hudi 1.x's docs show them: ``CREATE INDEX ... USING
column_stats(ts) OPTIONS(expr='from_unixtime', format='yyyy-MM-dd')`` and ``USING bloom_filters(driver)
OPTIONS(expr='lower')`` on version 9 tables. The functions give Spark SQL's own values; the index's
decoded records equal, file by file, what Spark SQL computes over each file's rows after inserts,
an upsert, a delete, a compaction (MOR) or a clustering and a clean (COW); filters on the same
expression (read, read_arrow, SQL WHERE) read fewer file slices and the same rows as without the
index and as hudi-rs; SHOW INDEXES lists them, DROP INDEX removes them; Hudi's refusals."""
import datetime as dt
import json
import posixpath
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine import read, write
from hudi_engine.api import create_index
from hudi_engine.errors import HoodieConfigError
from hudi_engine.expr.functions import evaluate
from hudi_engine.file_group.log_file import BlockType, data_block_records, read_log_file
from hudi_engine.file_group.log_scanner import Visibility, valid_blocks
from hudi_engine.metadata_table.keys import bloom_filter_key
from hudi_engine.metadata_table.layout import MDT_DIR
from hudi_engine.metadata_table.reader import MetadataReader, table_view
from hudi_engine.metadata_table.records import bloom_filter_of, column_stats_of
from hudi_engine.bloom import deserialize_bloom_filter
from hudi_engine.read import reader as reader_module
from hudi_engine.read.in_process import read_arrow
from hudi_engine.read.plan import plan_read
from hudi_engine.services.clean import run_clean
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.table.meta_client import HoodieTable
from hudictl.cli import main
from tests.support.hudi_rs import hudi_rs_read, rows

DAY, DRIVER = "expr_index_idx_day", "expr_index_idx_driver"
COLS = ["id", "ts", "driver", "fare"]
START = 1_700_000_000            # 2023-11-14 22:13:20 UTC


def options(table_type):
    return {"hoodie.table.name": "rides", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "v",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "9",
            "hoodie.parquet.small.file.limit": "0",
            "hoodie.metadata.compact.max.delta.commits": "3"}           # the metadata table compacts too


def batch(spark, ids, day, v, driver="Ann"):
    """Rows ``ids``: partition id % 3, ``ts`` on day ``day`` after START (+id minutes), driver
    ``<driver>-<id % 4>`` in mixed case."""
    data = [(str(i), str(i % 3), START + day * 86400 + i * 60, v, f"{driver}-{'ABCD'[i % 4]}", float(i)) for i in ids]
    return spark.createDataFrame(data, "id string, p string, ts long, v long, driver string, fare double")


def file_rows(table: HoodieTable, path: str) -> pa.Table:
    """A data file's own rows (a log file: its data blocks of completed instants)."""
    if path.endswith(".parquet"):
        return pq.read_table(Path(table.base_path) / path, columns=["ts", "driver"])
    visible = Visibility(frozenset(i.timestamp for i in table.timeline.completed_writes()), table.timeline.start)
    blocks = [data_block_records(b).select(["ts", "driver"]) for b in valid_blocks(read_log_file(table.storage, path), visible)
              if b.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK)]
    return pa.concat_tables(blocks) if blocks else pa.table({"ts": pa.array([], pa.int64()),
                                                              "driver": pa.array([], pa.string())})


def assert_in_step(spark, path, cleaned=False):
    """Every file of the latest slices has the records Spark SQL computes over its rows: the range
    of from_unixtime(ts, 'yyyy-MM-dd'), and a bloom filter holding every lower(driver). ``cleaned``:
    no older file is left, and neither are their records (a clean tombstones them)."""
    table = HoodieTable.load(path)
    reader = MetadataReader(table)
    records = list(reader.records(DAY).values())
    stats = {(s.file_name, s.column_name): s for s in map(column_stats_of, (r for r in records if r["type"] == 3))}
    per_partition = {s.file_name: s for s in map(column_stats_of, (r for r in records if r["type"] == 6))}
    blooms = reader.records(DRIVER)
    files = [f.path for s in table_view(table).latest_file_slices()
             for f in ([s.base_file] if s.base_file else []) + s.log_files]
    parts = []
    for f in files:
        t = file_rows(table, f)
        parts.append(t.append_column("file", pa.array([f] * t.num_rows, pa.string())))
    spark.createDataFrame(pa.concat_tables(parts).combine_chunks()).createOrReplaceTempView("expr_index_files")
    expected = spark.sql("SELECT file, min(from_unixtime(ts, 'yyyy-MM-dd')) lo, max(from_unixtime(ts, 'yyyy-MM-dd')) hi,"
                         " count(*) n, collect_set(lower(driver)) drivers FROM expr_index_files GROUP BY file").collect()
    assert len(expected) == sum(1 for p in parts if p.num_rows)
    if cleaned:
        assert {name for name, _ in stats} == {posixpath.basename(f) for f in files}
        assert len(blooms) == len(files)
    for empty in [posixpath.basename(f) for f, p in zip(files, parts) if not p.num_rows]:   # a log of deletes only
        assert stats[(empty, "ts")].value_count == 0
    folded: dict[str, list] = {}
    for r in expected:
        s = stats[(posixpath.basename(r.file), "ts")]
        assert (s.min_value, s.max_value, s.null_count, s.value_count) == (r.lo, r.hi, 0, r.n), r.file
        folded.setdefault(posixpath.dirname(r.file), []).append(r)
    # Hudi's partition-level records in the same partition: each data partition over its latest slices.
    assert set(folded) <= {p for p, s in per_partition.items() if not s.is_deleted}
    for partition, found in folded.items():
        s = per_partition[partition]
        assert (s.min_value, s.max_value, s.value_count) == (
            min(r.lo for r in found), max(r.hi for r in found), sum(r.n for r in found)), partition
        info = bloom_filter_of(blooms[bloom_filter_key(posixpath.dirname(r.file), posixpath.basename(r.file))])
        bloom = deserialize_bloom_filter(info.serialized, info.type)
        assert all(bloom.might_contain(d) for d in r.drivers), r.file
        assert not bloom.might_contain("no-such-driver")


@pytest.mark.spark
def test_functions_give_spark_sqls_values(spark):
    """Each function over the same inputs, in Arrow and in Spark SQL (session time zone UTC)."""
    stamps = [0, -1, 1_700_000_000, 1_709_251_199, 951_782_400, None]
    strings = ["  Hello World ", "ÉCOLE", "abc", "", None]
    data = pa.table({"n": pa.array(stamps, pa.int64()),
                     "t": pa.array([None if s is None else dt.datetime.fromtimestamp(s, dt.timezone.utc) for s in stamps],
                                   pa.timestamp("us", "UTC")),
                     "d": pa.array([None if s is None else dt.date(1970, 1, 1) + dt.timedelta(days=s // 86400)
                                    for s in stamps], pa.date32()),
                     "s": pa.array(strings + [None], pa.string()),
                     "w": pa.array(["2024-02-29 13:45:00", "1999-12-31 23:59:59", "2024-01-01", None, "x", None])})
    calls = [("from_unixtime", "n", {"format": "yyyy-MM-dd"}), ("from_unixtime", "n", {}),
             ("from_unixtime", "n", {"format": "yy/MM/dd HH 'h'"}), ("date_format", "t", {"format": "yyyy-MM-dd HH:mm"}),
             ("date_format", "d", {"format": "DDD yyyy"}), ("year", "t", {}), ("month", "d", {}), ("day", "t", {}),
             ("hour", "t", {}), ("hour", "d", {}), ("to_date", "t", {}), ("to_date", "w", {"format": "yyyy-MM-dd HH:mm:ss"}),
             ("unix_timestamp", "t", {}), ("unix_timestamp", "d", {}), ("unix_timestamp", "w", {}),
             ("lower", "s", {}), ("upper", "s", {}), ("trim", "s", {}), ("ltrim", "s", {}), ("rtrim", "s", {}),
             ("trim", "s", {"trimString": " Hd"}), ("length", "s", {}), ("substring", "s", {"pos": "2", "len": "3"}),
             ("substring", "s", {"pos": "-3", "len": "2"}), ("substring", "s", {"pos": "0", "len": "2"}),
             ("substring", "s", {"pos": "-9", "len": "9"}), ("to_timestamp", "w", {}), ("to_timestamp", "d", {}),
             ("to_timestamp", "w", {"format": "yyyy-MM-dd HH:mm:ss"}), ("to_timestamp", "t", {}),
             ("date_add", "d", {"days": "3"}), ("date_sub", "t", {"days": "40"}), ("date_add", "t", {"days": "-1"}),
             ("regexp_replace", "s", {"pattern": "[aeiou]", "replacement": "<$0>"}),
             ("regexp_replace", "s", {"pattern": r"(\w+) (\w+)", "replacement": "$2 $1"}),
             ("regexp_replace", "s", {"pattern": r"\s+", "replacement": r"\$"}),
             ("regexp_extract", "s", {"pattern": r"(\w)(\w*)", "idx": "2"}),
             ("regexp_extract", "s", {"pattern": "x(y)?", "idx": "1"}),
             ("regexp_extract", "s", {"pattern": "(?<first>[A-Z])", "idx": "1"})]
    from hudi_engine.expr.functions import call_text

    # Unparsable text is null, as in Spark without ANSI mode (with it, Spark fails the query).
    confs = {"spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "false"}
    previous = {k: spark.conf.get(k) for k in confs}
    for k, v in confs.items():
        spark.conf.set(k, v)
    try:
        frame = spark.createDataFrame(data)
        selected = []
        for name, column, opts in calls:
            text = call_text(name, column, opts) if "trimString" not in opts else f"trim(BOTH ' Hd' FROM {column})"
            selected.append(text)
        got = frame.selectExpr(*[f"{t} AS c{i}" for i, t in enumerate(selected)]).toArrow()
    finally:
        for k, v in previous.items():
            spark.conf.set(k, v)
    for i, (name, column, opts) in enumerate(calls):
        ours = evaluate(name, opts, data.column(column)).to_pylist()
        theirs = got.column(f"c{i}").to_pylist()
        assert ours == theirs, (name, column, opts)


@pytest.mark.spark
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_built_kept_in_step_prunes_and_dropped(spark, tmp_path, table_type, monkeypatch, capsys):
    path = str(tmp_path / "rides")
    opts = options(table_type)
    write(batch(spark, range(0, 24), 0, 1), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    write(batch(spark, range(24, 36), 3, 1, "bob"), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    name = f"rides_{table_type[:3].lower()}"
    spark.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    try:
        spark.sql(f"CREATE INDEX idx_day ON {name} USING column_stats(ts) "
                  "OPTIONS(expr='from_unixtime', format='yyyy-MM-dd')")
        spark.sql(f"CREATE INDEX idx_driver ON {name} USING bloom_filters(driver) OPTIONS(expr='lower')")
        table = HoodieTable.load(path)
        assert {DAY, DRIVER} <= set(table.props["hoodie.table.metadata.partitions"].split(","))
        defs = json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
        assert defs[DAY] == {"indexName": DAY, "indexType": "column_stats", "indexFunction": "from_unixtime",
                             "sourceFields": ["ts"], "indexOptions": {"expr": "from_unixtime", "format": "yyyy-MM-dd"},
                             "version": "V1"}
        assert defs[DRIVER]["indexType"] == "bloom_filters" and defs[DRIVER]["indexFunction"] == "lower"
        assert [tuple(r) for r in spark.sql(f"SHOW INDEXES FROM {name}").collect()][-2:] == [
            (DAY, "ts", "column_stats"), (DRIVER, "driver", "bloom_filters")]
        capsys.readouterr()
        assert main(["table", "index", "list", "--base-path", path, "--json"]) == 0
        listed = {r["index_name"]: r for r in json.loads(capsys.readouterr().out)}
        assert listed[DRIVER] == {"index_name": DRIVER, "col_name": "driver", "index_type": "bloom_filters"}
        assert_in_step(spark, path)

        upsert = {**opts, "hoodie.datasource.write.operation": "upsert"}
        write(batch(spark, range(0, 6), 1, 2, "CAROL"), path, upsert)          # days 0 → 1
        assert_in_step(spark, path)
        write(batch(spark, [7, 30], 0, 3), path, {**opts, "hoodie.datasource.write.operation": "delete"})
        assert_in_step(spark, path)
        assert_pruned_reads(spark, path, name, monkeypatch, fewer=True)
        if table_type == "MERGE_ON_READ":
            assert schedule_compaction(HoodieTable.load(path), opts, force=True) is not None
            run_compactions(spark, HoodieTable.load(path), options=opts)
            assert_in_step(spark, path)
            write(batch(spark, [8, 9], 3, 4), path, upsert)                    # logs again, then read with them
            assert_in_step(spark, path)
        else:
            planned = schedule_clustering(HoodieTable.load(path), opts, force=True)
            assert run_clusterings(spark, HoodieTable.load(path), options=opts) == [planned.timestamp]
            run_clean(HoodieTable.load(path), {**opts, "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                                "hoodie.cleaner.fileversions.retained": "1"}, spark)
            assert_in_step(spark, path, cleaned=True)
            # The metadata table off for one write (it goes, the definitions stay), then on: rebuilt.
            write(batch(spark, [11], 3, 6), path, {**upsert, "hoodie.metadata.enable": "false"})
            assert not HoodieTable.load(path).props.get("hoodie.table.metadata.partitions")
            write(batch(spark, [12], 3, 7), path, upsert)
            assert {DAY, DRIVER} <= set(HoodieTable.load(path).props["hoodie.table.metadata.partitions"].split(","))
            assert_in_step(spark, path)

        # After the table services: still the rows an unpruned read gives.
        wanted = [("lower(driver)", "IN", ["bob-b", "carol-a"]), ("from_unixtime(ts, 'yyyy-MM-dd')", ">=", "2023-11-15")]
        where = "lower(driver) IN ('bob-b', 'carol-a') AND from_unixtime(ts, 'yyyy-MM-dd') >= '2023-11-15'"
        expected = sorted(tuple(r) for r in read(spark, path, {"hoodie.metadata.enable": "false"}).where(where)
                          .select(*COLS).collect())
        assert expected and sorted(rows(read_arrow(path, filters=wanted), COLS)) == expected

        refusals(spark, path, name)
        spark.sql(f"DROP INDEX idx_day ON {name}")
        table = HoodieTable.load(path)
        assert DAY not in table.props["hoodie.table.metadata.partitions"]
        assert not (Path(path) / MDT_DIR / DAY).exists()
        assert DAY not in (Path(path) / ".hoodie/.index_defs/index.json").read_text()
        write(batch(spark, [10], 6, 5), path, upsert)              # the other index stays in step
        assert DRIVER in HoodieTable.load(path).props["hoodie.table.metadata.partitions"]
        assert_regexp_index(spark, path, name)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def assert_pruned_reads(spark, path, name, monkeypatch, fewer):
    """Filters on the indexes' expressions read fewer slices (``fewer``: the data's layout allows
    it) and the rows an unpruned read, read_arrow, SQL and hudi-rs give."""
    table = HoodieTable.load(path)
    off = {"hoodie.metadata.enable": "false"}
    every = len(plan_read(table, off).slices)
    for column, day in (("from_unixtime(ts, 'yyyy-MM-dd')", "2023-11-17"), ("lower(driver)", "bob-b")):
        wanted = [(column, "=", day)]
        pruned = len(plan_read(table, None, wanted).slices)
        assert 0 < pruned and (pruned < every or not fewer), (column, pruned, every)
        expected = sorted(tuple(r) for r in read(spark, path, off).where(f"{column} = '{day}'").select(*COLS).collect())
        assert expected
        assert sorted(tuple(r) for r in read(spark, path, filters=wanted).select(*COLS).collect()) == expected
        assert sorted(rows(read_arrow(path, filters=wanted), COLS)) == expected
    # SQL: the WHERE's expression reaches the reader and prunes; Spark filters the rows.
    seen = []
    real_plan = reader_module.plan_read

    def spy(*args, **kwargs):
        plan = real_plan(*args, **kwargs)
        seen.append(len(plan.slices))
        return plan
    monkeypatch.setattr(reader_module, "plan_read", spy)
    via_sql = spark.sql(f"SELECT id, ts, driver, fare FROM {name} WHERE from_unixtime(ts, 'yyyy-MM-dd') = '2023-11-17'"
                        " AND fare >= 0").collect()
    monkeypatch.undo()
    assert seen and 0 < seen[-1] and (seen[-1] < every or not fewer)
    day_rows = sorted(tuple(r) for r in read(spark, path, off).where("from_unixtime(ts, 'yyyy-MM-dd') = '2023-11-17'")
                      .select(*COLS).collect())
    assert sorted(tuple(r) for r in via_sql) == day_rows
    theirs = [r for r in rows(hudi_rs_read(path), COLS)
              if dt.datetime.fromtimestamp(r[1], dt.timezone.utc).date() == dt.date(2023, 11, 17)]
    assert sorted(theirs) == day_rows
    assert len(plan_read(table, None, [("from_unixtime(ts, 'yyyy-MM-dd')", "=", "1999-01-01")]).slices) == 0



def assert_regexp_index(spark, path, name):
    """A Java regular expression in CREATE INDEX's options (parentheses, a comma and an escape in
    the SQL literal): each file's record is the range Spark SQL computes, and a filter on the
    function reads the rows an unpruned read gives."""
    literal = "'([A-Za-z,]+)-(\\\\w)'"                # SQL text; the pattern is ([A-Za-z,]+)-(\w)
    spark.sql(f"CREATE INDEX idx_letter ON {name} USING column_stats(driver) "
              f"OPTIONS(expr='regexp_extract', pattern={literal}, idx='2')")
    table = HoodieTable.load(path)
    stats = {s.file_name: s for s in map(column_stats_of, MetadataReader(table).records("expr_index_idx_letter").values())}
    files = [f.path for s in table_view(table).latest_file_slices() for f in ([s.base_file] if s.base_file else []) + s.log_files]
    for f in files:
        t = file_rows(table, f)
        if t.num_rows:
            spark.createDataFrame(t).createOrReplaceTempView("expr_index_file")
            lo, hi = spark.sql(f"SELECT min(regexp_extract(driver, {literal}, 2)), "
                               f"max(regexp_extract(driver, {literal}, 2)) FROM expr_index_file").first()
            s = stats[posixpath.basename(f)]
            assert (s.min_value, s.max_value, s.value_count) == (lo, hi, t.num_rows), f
    wanted = [("regexp_extract(driver, '([A-Za-z,]+)-(\\w)', 2)", "=", "B")]
    expected = sorted(tuple(r) for r in read(spark, path, {"hoodie.metadata.enable": "false"})
                      .where(f"regexp_extract(driver, {literal}, 2) = 'B'").select(*COLS).collect())
    assert expected and sorted(rows(read_arrow(path, filters=wanted), COLS)) == expected


def refusals(spark, path, name):
    def refused(stmt, words):
        with pytest.raises(Exception) as err:
            spark.sql(stmt)
        assert all(w in str(err.value) for w in words), str(err.value)
    refused(f"CREATE INDEX bad ON {name} USING column_stats(ts) OPTIONS(expr='no_such_fn')",
            ["no_such_fn", "is not supported", "from_unixtime"])
    refused(f"CREATE INDEX bad ON {name} USING column_stats(driver) OPTIONS(expr='year')",
            ["year", "timestamp or date", "driver"])
    refused(f"CREATE INDEX bad ON {name} USING column_stats(ts) OPTIONS(expr='from_unixtime', format='yyyy-QQ')",
            ["QQ", "not supported"])
    refused(f"CREATE INDEX bad ON {name} USING column_stats(ts) OPTIONS(expr='date_format')", ["needs option format"])
    refused(f"CREATE INDEX bad ON {name} USING bloom_filters(fare)", ["bloom_filters index holds strings", "double"])
    refused(f"CREATE INDEX idx_day ON {name} USING column_stats(ts) OPTIONS(expr='from_unixtime')", ["already exists"])
    with pytest.raises(HoodieConfigError, match="version 8 or later"):
        v6 = HoodieTable.load(path)
        v6 = HoodieTable(v6.storage, {**v6.props, "hoodie.table.version": "6"})
        create_index(spark, v6, "old", "ts", "column_stats", index_options={"expr": "lower"})
    assert not any("bad" in p for p in HoodieTable.load(path).props["hoodie.table.metadata.partitions"].split(","))


@pytest.mark.spark
def test_defined_by_writer_options_as_hudi_1_0_1_does(spark, tmp_path):
    """``hoodie.metadata.index.expression.enable`` with the column, options, type and
    ``hoodie.index.name``: the write defines the index CREATE INDEX would, builds it and keeps it in
    step; the same options again define nothing new, and the indexes stay when they are left out."""
    path = str(tmp_path / "rides")
    opts = {**options("COPY_ON_WRITE"), "hoodie.datasource.write.operation": "insert"}
    day = {"hoodie.metadata.index.expression.enable": "true", "hoodie.metadata.index.expression.column": "ts",
           "hoodie.metadata.index.expression.options": "expr='from_unixtime', format='yyyy-MM-dd'",
           "hoodie.index.name": "idx_day"}
    write(batch(spark, range(0, 12), 0, 1), path, {**opts, **day})
    driver = {**day, "hoodie.metadata.index.expression.column": "driver", "hoodie.index.name": "idx_driver",
              "hoodie.metadata.index.expression.options": "expr=lower", "hoodie.expression.index.type": "BLOOM_FILTERS"}
    write(batch(spark, range(12, 24), 2, 1, "bob"), path, {**opts, **driver})
    defs = json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
    assert defs[DAY] == {"indexName": DAY, "indexType": "column_stats", "indexFunction": "from_unixtime",
                         "sourceFields": ["ts"], "indexOptions": {"expr": "from_unixtime", "format": "yyyy-MM-dd"},
                         "version": "V1"}
    assert (defs[DRIVER]["indexType"], defs[DRIVER]["indexFunction"]) == ("bloom_filters", "lower")
    assert {DAY, DRIVER} <= set(HoodieTable.load(path).props["hoodie.table.metadata.partitions"].split(","))
    assert_in_step(spark, path)
    write(batch(spark, range(24, 30), 4, 1), path, {**opts, **day, "hoodie.index.name": "idx_day_again"})
    write(batch(spark, range(30, 36), 5, 1), path, opts)
    assert set(json.loads((Path(path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]) == {
        DAY, DRIVER}, "one index per column and function"
    assert_in_step(spark, path)
    with pytest.raises(HoodieConfigError, match="expr="):
        write(batch(spark, [40], 5, 1), path, {**opts, **day, "hoodie.metadata.index.expression.column": "fare",
                                               "hoodie.metadata.index.expression.options": "format=yyyy"})
