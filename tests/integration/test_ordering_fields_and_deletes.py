"""Hudi 1.x merge rules written with real Spark and read back: several ordering fields
(``hoodie.table.ordering.fields=a,b``, compared in order) and deletes that respect ordering under
EVENT_TIME_ORDERING (a ``_hoodie_is_deleted`` record older than the stored one leaves it; the
delete operation's bare keys always win), on copy-on-write and merge-on-read tables of versions
6, 8 and 9, on both write planes, through our Spark reader, ``read_arrow``, compaction and hudi-rs.

hudi-rs 0.5 refuses to open a table with several ordering fields ("Multiple ordering fields 'a,b'
are not yet supported"; its merger also compares only ``ordering_fields[0]`` and its delete-block
schema has no ``ArrayWrapper``, the several-field ordering value Hudi 1.1 writes): those tables are
checked by our two readers, and the refusal is asserted so a hudi-rs that reads them shows up here.
Its delete rule for one field is Hudi's: a delete whose ordering value is larger wins, the natural
one (``IntWrapper(0)``) wins by commit time; the single-field cases hold it to our rows."""
import pytest

from hudi_engine import write
from hudi_engine.errors import HoodieValidationError
from hudi_engine.table.properties import read_properties_text
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.merge_checks import check_rows, spark_merges

pytestmark = pytest.mark.spark
SCHEMA = "id string, a long, b string, value string, part string, _hoodie_is_deleted boolean"
COLS = ["id", "a", "b", "value"]


def options(kind: str, version: str, fields: str, operation: str = "upsert") -> dict:
    return {"hoodie.table.name": "ordering", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.table.ordering.fields": fields,
            "hoodie.datasource.write.table.type": kind, "hoodie.write.table.version": version,
            "hoodie.datasource.write.operation": operation, "hoodie.compact.inline": "false",
            "hoodie.parquet.small.file.limit": "0"}


def put(spark, path, opts, batch):
    write(spark.createDataFrame([(i, a, b, v, "p", d) for i, a, b, v, d in batch], SCHEMA), path, opts)


# Each plane's own steps (Spark's dedup window, its merge tasks) once; merging and log writing are
# the same Arrow functions on both planes.
@pytest.mark.parametrize("write_plane,kind,version", [("in-process", "MERGE_ON_READ", "9"),
                                                      ("in-process", "COPY_ON_WRITE", "6"),
                                                      ("spark-stages", "COPY_ON_WRITE", "6")], indirect=["write_plane"])
def test_two_ordering_fields_decide_updates_dedup_and_deletes(spark, table_path, write_plane, kind, version):
    opts = options(kind, version, "a,b")
    put(spark, table_path, opts, [(f"k{i}", 5, "m", "first", False) for i in range(1, 6)])
    put(spark, table_path, opts, [
        ("k1", 5, "a", "older on b", False),       # loses: a ties, b is smaller
        ("k2", 5, "z", "newer on b", False),
        ("k3", 6, "a", "newer on a", False),
        ("k4", 7, "a", "dup 1", False), ("k4", 7, "c", "dup 2", False), ("k4", 7, "b", "dup 3", False)])
    put(spark, table_path, opts, [
        ("k1", 4, "z", None, True),                # an older delete: k1 stays
        ("k2", 5, "z", None, True)])               # as new as the stored record: deleted
    put(spark, table_path, options(kind, version, "a,b", "delete"), [("k5", 1, "a", None, False)])  # bare key: wins
    expected = [("k1", 5, "m", "first"), ("k3", 6, "a", "newer on a"), ("k4", 7, "c", "dup 2")]
    if kind == "MERGE_ON_READ":     # Spark merges the slices (ordering values compared as structs)
        assert spark_merges(spark, table_path)
    check_rows(spark, table_path, COLS, expected, kind == "MERGE_ON_READ", hudi_rs=False)
    with open(f"{table_path}/.hoodie/hoodie.properties") as f:
        props = read_properties_text(f.read())
    key = "hoodie.table.ordering.fields" if version == "9" else "hoodie.table.precombine.field"
    assert props[key] == "a,b"
    with pytest.raises(Exception, match="Multiple ordering fields"):
        hudi_rs_read(table_path)


@pytest.mark.parametrize("write_plane,kind", [("in-process", "MERGE_ON_READ"), ("in-process", "COPY_ON_WRITE"),
                                              ("spark-stages", "COPY_ON_WRITE")], indirect=["write_plane"])
def test_deletes_carrying_an_ordering_value_lose_to_newer_stored_records(spark, table_path, write_plane, kind):
    check_ordered_deletes(spark, table_path, kind, "9")


@pytest.mark.parametrize("kind,version", [("MERGE_ON_READ", "6"), ("COPY_ON_WRITE", "8")], ids=["mor-v6", "cow-v8"])
def test_ordered_deletes_on_older_table_versions(spark, table_path, kind, version):
    check_ordered_deletes(spark, table_path, kind, version)


def check_ordered_deletes(spark, table_path, kind, version):
    opts = options(kind, version, "a")
    put(spark, table_path, opts, [("k1", 10, "-", "base", False), ("k2", 10, "-", "base", False),
                                  ("k3", 10, "-", "base", False), ("k4", 10, "-", "base", False)])
    put(spark, table_path, opts, [("k1", 5, "-", None, True),      # older than stored: k1 stays
                                  ("k2", 20, "-", None, True),     # newer: deleted
                                  ("k4", 10, "-", None, True)])    # equal: the later write wins
    put(spark, table_path, options(kind, version, "a", "delete"), [("k3", 1, "-", None, False)])
    expected = [("k1", 10, "-", "base")]
    # hudi-rs merges the logs too: it is held to the rows before compaction as well.
    assert rows(hudi_rs_read(table_path), COLS) == expected
    assert spark_merges(spark, table_path) == (kind == "MERGE_ON_READ")
    check_rows(spark, table_path, COLS, expected, kind == "MERGE_ON_READ")


def test_a_missing_second_ordering_field_is_refused(spark, table_path):
    df = spark.createDataFrame([("k1", 1, "p")], "id string, a long, part string")
    with pytest.raises(HoodieValidationError, match="ordering field 'b'"):
        write(df, table_path, options("COPY_ON_WRITE", "9", "a,b"))
