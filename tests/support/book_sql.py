"""The SQL walkthrough of "Apache Hudi: The Definitive Guide" (create copy-on-write and
merge-on-read tables, insert, update, delete, merge with a delete clause, read by name, by time
travel and through ``hudi_table_changes``, drop), shared by the tests that send it to a classic
session and to a Spark Connect client. Every step is checked on the rows our reader and hudi-rs give
back, and each DML statement is one commit."""
from hudi_engine import read
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import window_ends
from tests.support.hudi_rs import hudi_rs_read, rows

COLS = ["uuid", "rider", "fare", "city"]
TRIPS = [
    (1695159649087, "u1", "rider-A", "driver-K", 19.10, "san_francisco"),
    (1695091554788, "u2", "rider-C", "driver-M", 27.70, "san_francisco"),
    (1695046462179, "u3", "rider-D", "driver-L", 33.90, "san_francisco"),
    (1695332066204, "u4", "rider-E", "driver-O", 93.50, "san_francisco"),
    (1695516137016, "u5", "rider-F", "driver-P", 34.15, "sao_paulo"),
    (1695376420876, "u6", "rider-G", "driver-Q", 43.40, "sao_paulo"),
    (1695173887231, "u7", "rider-I", "driver-S", 41.06, "chennai"),
    (1695115999911, "u8", "rider-J", "driver-T", 17.85, "chennai"),
]


def values(trips):
    return ", ".join(f"({ts}, '{u}', '{r}', '{d}', {f}, '{c}')" for ts, u, r, d, f, c in trips)


def by_name(spark, name, where=""):
    return sorted(tuple(r) for r in spark.sql(f"SELECT {', '.join(COLS)} FROM {name} {where}").collect())


def checked(session, spark, name, path):
    """The table's rows by name (from ``session``), the same from read() and from hudi-rs."""
    got = by_name(session, name)
    assert got == sorted(tuple(r) for r in read(spark, str(path)).select(*COLS).collect())
    assert rows(hudi_rs_read(path), COLS) == got, "hudi-rs disagrees"
    return got


def commits(path):
    return [i.timestamp for i in HoodieTable.load(str(path)).timeline.completed_writes()]


def model(trips):
    return sorted((u, r, f, c) for _, u, r, _, f, c in trips)


def walk_the_book(session, spark, tmp_path, kind: str) -> None:
    """The book's walkthrough, every statement sent to ``session`` (a classic session or a Spark
    Connect client); ``spark``, a classic session, reads the table back with ``read()``."""
    name, path = f"trips_{kind}", tmp_path / f"trips_{kind}"
    session.sql(f"""CREATE TABLE {name} (ts BIGINT, uuid STRING, rider STRING, driver STRING, fare DOUBLE, city STRING)
                  USING hudi PARTITIONED BY (city)
                  TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{kind}',
                                 'hoodie.table.cdc.enabled' = 'true')
                  LOCATION '{path}'""")
    table = HoodieTable.load(str(path))
    assert table.table_type == ("MERGE_ON_READ" if kind == "mor" else "COPY_ON_WRITE")
    assert by_name(session, name) == [] and commits(path) == []

    session.sql(f"INSERT INTO {name} VALUES {values(TRIPS)}")
    first = commits(path)
    assert len(first) == 1
    assert checked(session, spark, name, path) == model(TRIPS)
    assert sorted(p.name for p in path.iterdir() if not p.name.startswith(".")) == [
        "city=chennai", "city=san_francisco", "city=sao_paulo"]

    session.sql(f"UPDATE {name} SET fare = 25.0 WHERE rider = 'rider-D'")
    trips = [(ts, u, r, d, 25.0 if r == "rider-D" else f, c) for ts, u, r, d, f, c in TRIPS]
    assert checked(session, spark, name, path) == model(trips) and len(commits(path)) == 2

    session.sql(f"DELETE FROM {name} WHERE rider = 'rider-F'")
    trips = [t for t in trips if t[2] != "rider-F"]
    assert checked(session, spark, name, path) == model(trips) and len(commits(path)) == 3

    source = [(1695200000000, "u1", "rider-A", "driver-K", 99.0, "san_francisco"),       # update
              (1695200000000, "u7", "rider-I", "driver-S", -1.0, "chennai"),             # delete
              (1695200000000, "u9", "rider-Z", "driver-Z", 12.5, "sao_paulo"),           # insert
              (1695200000000, "u10", "rider-Y", "driver-Y", -3.0, "chennai")]            # not inserted
    session.createDataFrame(source, "ts BIGINT, uuid STRING, rider STRING, driver STRING, fare DOUBLE, city STRING"
                          ).createOrReplaceTempView("changes")
    session.sql(f"""MERGE INTO {name} AS t USING (SELECT * FROM changes) s ON t.uuid = s.uuid
                  WHEN MATCHED AND s.fare < 0 THEN DELETE
                  WHEN MATCHED THEN UPDATE SET *
                  WHEN NOT MATCHED AND s.fare > 0 THEN INSERT *""")
    trips = [t for t in trips if t[1] not in ("u1", "u7")] + [source[0], source[2]]
    assert checked(session, spark, name, path) == model(trips) and len(commits(path)) == 4

    # time travel to the first commit, by instant and by its time
    instant = first[0]
    at = f"{instant[:4]}-{instant[4:6]}-{instant[6:8]} {instant[8:10]}:{instant[10:12]}:{instant[12:14]}.{instant[14:]}"
    assert by_name(session, f"{name} VERSION AS OF '{instant}'") == model(TRIPS)
    assert by_name(session, f"{name} TIMESTAMP AS OF '{at}'") == model(TRIPS)

    [after_first] = window_ends(path, instant)          # its completion time from version 8 on
    latest = session.sql(f"SELECT uuid, fare FROM hudi_table_changes('{name}', 'latest_state', '{after_first}')").collect()
    assert sorted(r.uuid for r in latest) == ["u1", "u3", "u9"]
    cdc = session.sql(f"SELECT op, count(*) AS n FROM hudi_table_changes('{name}', 'cdc', 'earliest') GROUP BY op")
    assert {r.op: r.n for r in cdc.collect()} == {"i": 9, "u": 2, "d": 2}

    session.sql(f"DROP TABLE {name}")
    assert not session.catalog.tableExists(name)
    assert HoodieTable.exists(str(path)), "an external table's files stay after DROP TABLE"
