"""Hudi's Spark SQL through plain ``spark.sql`` (issue 21), in the shape of the book's walkthroughs:
create copy-on-write and merge-on-read tables, insert, update, delete, merge (with a delete
clause), read by name, by time travel and through ``hudi_table_changes``, drop. Every step is
checked on the rows our reader and hudi-rs give back, and each DML statement is one commit."""
from pathlib import Path

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException

from hudi_engine import write
from hudi_engine.errors import HoodieConfigError, HoodieValidationError
from hudi_engine.table.meta_client import HoodieTable
from tests.support.book_sql import commits, walk_the_book
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_the_books_walkthrough_in_sql(spark, tmp_path, kind):
    walk_the_book(spark, spark, tmp_path, kind)


def test_ctas_managed_table_and_drop(spark):
    spark.sql("""CREATE TABLE riders USING hudi TBLPROPERTIES (primaryKey = 'rider', preCombineField = 'ts')
                 AS SELECT 'rider-' || CAST(id AS STRING) AS rider, id AS ts, id * 1.5 AS fare FROM range(5)""")
    ddl = spark.sql("SHOW CREATE TABLE riders").first()[0]
    assert "LOCATION" not in ddl and "'primaryKey' = 'rider'" in ddl, "a managed table"
    path = str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")) / "riders")
    assert HoodieTable.load(path).timeline.completed_writes()[0].action == "commit"
    assert sorted(r.rider for r in spark.sql("SELECT rider FROM riders").collect()) == [f"rider-{i}" for i in range(5)]
    assert sorted(rows(hudi_rs_read(path), ["rider", "ts"])) == [(f"rider-{i}", i) for i in range(5)]
    spark.sql("DROP TABLE riders")
    assert not HoodieTable.exists(path), "a managed table's files go with it"


def test_a_table_over_an_existing_location(spark, tmp_path):
    """CREATE TABLE ... LOCATION over a table written with write(): its schema and keys come from
    the table; SQL reads and writes it like any other."""
    path = str(tmp_path / "fruit")
    data = spark.createDataFrame([("k1", "apple", "eu", 1), ("k2", "pear", "us", 1)], "name string, fruit string, "
                                 "region string, ts long")
    write(data, path, {"hoodie.table.name": "fruit", "hoodie.datasource.write.recordkey.field": "name",
                       "hoodie.datasource.write.partitionpath.field": "region",
                       "hoodie.datasource.write.precombine.field": "ts"})
    spark.sql(f"CREATE TABLE fruit USING hudi LOCATION '{path}'")
    try:
        ddl = spark.sql("SHOW CREATE TABLE fruit").first()[0]
        assert "primaryKey" in ddl and "'name'" in ddl and "PARTITIONED BY (region)" in ddl.replace("`", "")
        described = [r.col_name for r in spark.sql("DESCRIBE TABLE fruit").collect()]
        assert {"name", "fruit", "ts", "_hoodie_commit_time"} <= set(described)
        spark.sql("INSERT INTO fruit VALUES ('k3', 'plum', 2, 'eu')")       # partition column last, as DESCRIBE shows
        spark.sql("ALTER TABLE fruit ADD COLUMNS (price DOUBLE)")
        spark.sql("UPDATE fruit SET price = 2.5 WHERE name = 'k1'")
        got = sorted(tuple(r) for r in spark.sql("SELECT name, fruit, region, price FROM fruit").collect())
        assert got == [("k1", "apple", "eu", 2.5), ("k2", "pear", "us", None), ("k3", "plum", "eu", None)]
        assert sorted(rows(hudi_rs_read(path), ["name", "price"])) == [("k1", 2.5), ("k2", None), ("k3", None)]
    finally:
        spark.sql("DROP TABLE IF EXISTS fruit")


def test_insert_overwrite(spark, tmp_path):
    path = tmp_path / "ow"
    spark.sql(f"""CREATE TABLE ow (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
                  TBLPROPERTIES (primaryKey = 'id') LOCATION '{path}'""")
    try:
        spark.sql("INSERT INTO ow VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'y')")
        spark.sql("INSERT OVERWRITE ow PARTITION (p = 'y') SELECT 4, 'd'")
        assert sorted(tuple(r) for r in spark.sql("SELECT id, v, p FROM ow").collect()) == [(1, "a", "x"), (4, "d", "y")]
        spark.sql("INSERT OVERWRITE ow SELECT 5, 'e', 'z'")
        assert [tuple(r) for r in spark.sql("SELECT id, v, p FROM ow").collect()] == [(5, "e", "z")]
        assert rows(hudi_rs_read(path), ["id", "v", "p"]) == [(5, "e", "z")]
    finally:
        spark.sql("DROP TABLE IF EXISTS ow PURGE")
    assert not HoodieTable.exists(str(path)), "DROP TABLE ... PURGE removes an external table's files"


def test_a_merge_on_the_record_key_is_one_upsert(spark, tmp_path):
    """MERGE ... ON the key WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *: the
    source's rows upserted (no read of the table), one commit of one update and one insert."""
    path = tmp_path / "m"
    spark.sql(f"""CREATE TABLE m (id INT, v STRING, ts BIGINT) USING hudi
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor') LOCATION '{path}'""")
    try:
        spark.sql("INSERT INTO m VALUES (1, 'a', 1), (2, 'b', 1)")
        spark.sql("""MERGE INTO m USING (SELECT 2 AS id, 'B' AS v, 2L AS ts UNION ALL SELECT 3, 'c', 1) s
                     ON m.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
        instant = commits(path)[-1]
        timeline = HoodieTable.load(str(path)).timeline
        meta = timeline.commit_metadata(timeline.get(instant))
        stats = [st for sts in meta["partitionToWriteStats"].values() for st in sts]
        assert (sum(st["numUpdateWrites"] for st in stats), sum(st["numInserts"] for st in stats)) == (1, 1)
        want = [(1, "a", 1), (2, "B", 2), (3, "c", 1)]
        assert sorted(tuple(r) for r in spark.sql("SELECT id, v, ts FROM m").collect()) == want
        assert rows(hudi_rs_read(path), ["id", "v", "ts"]) == want
        with pytest.raises(HoodieValidationError, match=r"2 source rows share the record key \{'id': 3\}"):
            spark.sql("""MERGE INTO m USING (SELECT 3 AS id, 'x' AS v, 5L AS ts UNION ALL SELECT 3, 'y', 6) s
                         ON m.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
        assert commits(path)[-1] == instant
    finally:
        spark.sql("DROP TABLE IF EXISTS m")


def test_bad_statements_are_refused_with_hudis_meaning(spark, tmp_path):
    path = tmp_path / "bad"
    with pytest.raises(HoodieConfigError, match="record key"):
        spark.sql(f"CREATE TABLE nokey (id INT, v STRING) USING hudi LOCATION '{tmp_path / 'nokey'}'")
    assert not spark.catalog.tableExists("nokey")
    with pytest.raises(HoodieConfigError, match="'primaryKee'.*'primaryKey'"):
        spark.sql(f"CREATE TABLE typo (id INT) USING hudi TBLPROPERTIES (primaryKee = 'id') LOCATION '{tmp_path / 't'}'")
    spark.sql(f"""CREATE TABLE bad (id INT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        spark.sql("INSERT INTO bad VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x')")
        with pytest.raises(HoodieConfigError, match="'id', the record key"):
            spark.sql("UPDATE bad SET id = 3 WHERE id = 1")
        with pytest.raises(HoodieConfigError, match="'p', the partition field"):
            spark.sql("UPDATE bad SET p = 'y' WHERE id = 1")
        with pytest.raises(HoodieValidationError, match=r"2 source rows match the target record under ON t.id = s.id \{'id': 1\}"):
            spark.sql("""MERGE INTO bad t USING (SELECT 1 AS id, 'n' AS v, 2L AS ts, 'x' AS p UNION ALL
                                                SELECT 1, 'm', 3L, 'x') s ON t.id = s.id
                         WHEN MATCHED THEN UPDATE SET *""")
        with pytest.raises(HoodieConfigError, match="no column 'nope'"):
            spark.sql("UPDATE bad SET nope = 1")
        assert len(commits(path)) == 1, "a refused statement commits nothing"
        assert sorted(tuple(r) for r in spark.sql("SELECT id, v FROM bad").collect()) == [(1, "a"), (2, "b")]
    finally:
        spark.sql("DROP TABLE IF EXISTS bad")


def test_other_statements_reach_spark_unchanged(spark):
    spark.range(3).createOrReplaceTempView("plain")
    assert spark.sql("SELECT sum(id) AS s FROM plain").first().s == 3
    assert spark.sql("SELECT :x + 1 AS y", args={"x": 1}).first().y == 2
    with pytest.raises(AnalysisException):
        spark.sql("SELECT * FROM no_such_table")


def test_sessions_register_never_saw_are_routed_too(spark, tmp_path):
    """``spark.newSession()`` (as Spark Connect makes one per client): Hudi's SQL reaches the engine
    through the session extension, with the engine's message when it refuses a statement."""
    other = spark.newSession()
    path = tmp_path / "other"
    other.sql(f"""CREATE TABLE other (id INT, v STRING, ts BIGINT) USING hudi
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        other.sql("INSERT INTO other VALUES (1, 'a', 1), (2, 'b', 1)")
        other.sql("UPDATE other SET v = 'z' WHERE id = 1")
        assert sorted(tuple(r) for r in other.sql("SELECT id, v FROM other").collect()) == [(1, "z"), (2, "b")]
        assert rows(hudi_rs_read(path), ["id", "v"]) == [(1, "z"), (2, "b")]
        with pytest.raises(Py4JJavaError, match="HoodieConfigError: UPDATE cannot change 'id', the record key"):
            other.sql("UPDATE other SET id = 3 WHERE id = 1")
        assert len(commits(path)) == 2
    finally:
        other.sql("DROP TABLE IF EXISTS other")
