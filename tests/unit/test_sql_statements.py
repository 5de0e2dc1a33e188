"""Hudi's SQL statements read into plain values, and reads of Hudi tables planned as views: no Spark."""
import pytest
import sqlglot

from hudi_engine.errors import HoodieConfigError
from hudi_engine.sql.queries import plan_reads
from hudi_engine.sql.statements import (AddColumns, Call, Column, CreateTable, Delete, DropTable, Insert, Merge,
                                        MergeClause, Update, parse)
from hudi_engine.sql.table_options import catalog_options, hoodie_options


def test_create_table_as_the_book_writes_it():
    stmt = parse("""CREATE TABLE IF NOT EXISTS db.trips (ts BIGINT, uuid STRING COMMENT 'trip id', city STRING)
                    USING HUDI PARTITIONED BY (city)
                    TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'mor',
                                   'hoodie.index.type' = 'BUCKET') LOCATION 's3://bucket/trips'""")
    assert stmt == CreateTable("db.trips", (Column("ts", "BIGINT"), Column("uuid", "STRING", "trip id"),
                                            Column("city", "STRING")), ("city",),
                               {"primaryKey": "uuid", "preCombineField": "ts", "type": "mor",
                                "hoodie.index.type": "BUCKET"}, {}, "s3://bucket/trips", None, True)
    ctas = parse("CREATE TABLE t USING hudi TBLPROPERTIES (primaryKey = 'id') AS SELECT 1 AS id")
    assert ctas.query == "SELECT 1 AS id" and ctas.columns == ()
    assert parse("CREATE TABLE t (id INT) USING parquet") is None


def test_dml_statements():
    assert parse("UPDATE trips t SET fare = fare * 10, rider = 'x' WHERE rider = 'rider-A'") == Update(
        "trips", "t", (("fare", "fare * 10"), ("rider", "'x'")), "rider = 'rider-A'")
    assert parse("DELETE FROM trips") == Delete("trips", None, None)
    assert parse("INSERT OVERWRITE trips PARTITION (city = 'sf') SELECT 1, 'a'") == Insert(
        "trips", "SELECT 1, 'a'", True, {"city": "sf"})
    assert parse("INSERT INTO trips (a, b) VALUES (1, 'x')") == Insert("trips", "VALUES (1, 'x')", False, {}, ("a", "b"))
    assert parse("ALTER TABLE t ADD COLUMNS (x INT)") == AddColumns("t", (Column("x", "INT"),))
    assert parse("DROP TABLE IF EXISTS t PURGE") == DropTable("t", True, True)
    assert parse("SELECT 1") is None


def test_merge_clauses_in_order():
    stmt = parse("""MERGE INTO trips AS t USING changes s ON t.uuid = s.uuid
                    WHEN MATCHED AND s.op = 'd' THEN DELETE
                    WHEN MATCHED THEN UPDATE SET fare = s.fare
                    WHEN NOT MATCHED THEN INSERT *""")
    assert stmt == Merge("trips", "t", "SELECT * FROM changes", "s", "t.uuid = s.uuid", (
        MergeClause(True, "delete", "s.op = 'd'"), MergeClause(True, "update", None, (("fare", "s.fare"),)),
        MergeClause(False, "insert")))
    with pytest.raises(HoodieConfigError, match="NOT MATCHED BY SOURCE"):
        parse("MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE")


def test_call_arguments():
    assert parse("CALL show_commits(table => 'trips', limit => 10);") == Call("show_commits",
                                                                              {"table": "trips", "limit": 10})
    assert parse("CALL system.show_commits(table => 't')") == Call("show_commits", {"table": "t"})
    assert parse("call run_clean('trips', true, -1.5)") == Call("run_clean", {}, ("trips", True, -1.5))
    with pytest.raises(HoodieConfigError, match="positional argument"):
        parse("CALL show_commits(table => 't', 5)")


def test_table_properties_become_hoodie_options():
    options = hoodie_options({"primaryKey": "id", "preCombineField": "ts", "type": "mor",
                              "hoodie.index.type": "BUCKET"}, "t", "db", ("p",))
    assert options["hoodie.table.recordkey.fields"] == "id" and options["hoodie.table.type"] == "MERGE_ON_READ"
    assert options["hoodie.table.precombine.field"] == "ts" and options["hoodie.index.type"] == "BUCKET"
    assert options["hoodie.table.partition.fields"] == "p"
    assert options["hoodie.datasource.write.hive_style_partitioning"] == "true"
    with pytest.raises(HoodieConfigError, match="'hoodie.index.typ'.*'hoodie.index.type'"):
        hoodie_options({"hoodie.index.typ": "BLOOM"}, "t", None)
    with pytest.raises(HoodieConfigError, match="'cow'.*'mor'"):
        hoodie_options({"type": "columnar"}, "t", None)
    assert catalog_options({"last_commit_time_sync": "1", "primaryKey": "id"}, "t", "db") == {
        "hoodie.table.name": "t", "hoodie.database.name": "db", "hoodie.table.recordkey.fields": "id"}


def test_reads_of_hudi_tables_become_views():
    locate = {"trips": "/t", "db.riders": "/r"}.get

    def planned(text):
        return plan_reads(sqlglot.parse_one(text, read="spark"), locate, "v")

    assert planned("SELECT * FROM other") is None
    assert planned("WITH trips AS (SELECT 1) SELECT * FROM trips") is None
    sql, views = planned("SELECT t.fare FROM trips t JOIN db.riders ON t.r = riders.r")
    assert sql == "SELECT t.fare FROM v0 AS t JOIN v1 AS riders ON t.r = riders.r"
    assert {v: r.path for v, r in views.items()} == {"v0": "/t", "v1": "/r"}
    _, views = planned("SELECT * FROM trips TIMESTAMP AS OF '2024-01-01 00:00:00'")
    assert views["v0"].options == {"as.of.instant": "2024-01-01 00:00:00"}
    _, views = planned("SELECT * FROM hudi_table_changes('db.riders', 'cdc', 'earliest', '20240101000000000')")
    assert views["v0"].path == "/r" and views["v0"].options["hoodie.datasource.query.incremental.format"] == "cdc"
    assert views["v0"].options["hoodie.datasource.read.end.instanttime"] == "20240101000000000"
    with pytest.raises(HoodieConfigError, match="time travel reads Hudi tables only"):
        planned("SELECT * FROM other VERSION AS OF 3")
    with pytest.raises(HoodieConfigError, match="'latest_state' | 'cdc'"):
        planned("SELECT * FROM hudi_table_changes('trips', 'snapshot', 'earliest')")
