"""Partial updates written with real Spark: a batch with some of the table's columns (and
``hoodie.write.set.null.for.missing.columns=true``, as Hudi needs) and nulls keeps the stored values
under Hudi 1.1's ``hoodie.table.partial.update.mode=IGNORE_DEFAULTS`` (version 9) or
``PartialUpdateAvroPayload`` (version 6), on copy-on-write and merge-on-read tables and both write
planes; read back by our reader, ``read_arrow`` and, once compacted or from base files, hudi-rs.

hudi-rs 0.5 has no partial-update merging: it lets a logged record's nulls overwrite the base row,
so a merge-on-read table is held to hudi-rs only after compaction has merged the logs."""
import pytest

from hudi_engine import write
from hudi_engine.errors import HoodieValidationError
from hudi_engine.table.properties import read_properties_text
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.merge_checks import check_rows, snapshot, spark_merges

pytestmark = pytest.mark.spark
COLS = ["id", "ts", "name", "city"]
PAYLOAD = "org.apache.hudi.common.model.PartialUpdateAvroPayload"


def options(kind: str, version: str, **extra) -> dict:
    return {"hoodie.table.name": "partial", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "", "hoodie.table.ordering.fields": "ts",
            "hoodie.datasource.write.table.type": kind, "hoodie.write.table.version": version,
            "hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline": "false", **extra}


def partial_setting(version: str) -> dict:
    return ({"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"} if version == "9"
            else {"hoodie.datasource.write.payload.class": PAYLOAD})


@pytest.mark.parametrize("write_plane,kind", [("in-process", "MERGE_ON_READ"), ("in-process", "COPY_ON_WRITE"),
                                              ("spark-stages", "COPY_ON_WRITE")], indirect=["write_plane"])
def test_a_batch_of_some_columns_keeps_the_others(spark, table_path, write_plane, kind):
    check_partial_updates(spark, table_path, kind, "9")


def test_partial_update_payload_on_a_version_6_table(spark, table_path):
    check_partial_updates(spark, table_path, "MERGE_ON_READ", "6")


def check_partial_updates(spark, table_path, kind, version):
    opts = options(kind, version, **partial_setting(version))
    write(spark.createDataFrame([("k1", 1, "ann", "oslo"), ("k2", 1, "bob", "rome"), ("k3", 1, "cy", "nice")],
                                "id string, ts long, name string, city string"), table_path, opts)
    with open(f"{table_path}/.hoodie/hoodie.properties") as f:
        props = read_properties_text(f.read())
    if version == "9":
        assert props["hoodie.table.partial.update.mode"] == "IGNORE_DEFAULTS"
    else:
        assert props["hoodie.compaction.payload.class"] == PAYLOAD

    narrow = spark.createDataFrame([("k1", 2, "ann-2"), ("k2", 0, "late"), ("k4", 2, "dee")],
                                   "id string, ts long, name string")
    with pytest.raises(HoodieValidationError, match="lacks column"):
        write(narrow, table_path, opts)          # as today without Hudi's setting for missing columns
    nulls = {"hoodie.write.set.null.for.missing.columns": "true"}
    write(narrow, table_path, {**opts, **nulls})
    # A null is a default too: k3's name stays, its city changes.
    write(spark.createDataFrame([("k3", 3, None, "lyon")], "id string, ts long, name string, city string"),
          table_path, opts)
    assert not spark_merges(spark, table_path)      # the Arrow merge has the base rows' columns
    check_rows(spark, table_path, COLS, [("k1", 2, "ann-2", "oslo"), ("k2", 1, "bob", "rome"),
                                         ("k3", 3, "cy", "lyon"), ("k4", 2, "dee", None)], kind == "MERGE_ON_READ")


def test_without_a_partial_setting_nulls_overwrite(spark, table_path):
    opts = options("MERGE_ON_READ", "9")
    write(spark.createDataFrame([("k1", 1, "ann", "oslo")], "id string, ts long, name string, city string"),
          table_path, opts)
    write(spark.createDataFrame([("k1", 2, "ann-2")], "id string, ts long, name string"), table_path,
          {**opts, "hoodie.write.set.null.for.missing.columns": "true"})
    assert snapshot(spark, table_path, COLS) == rows(hudi_rs_read(table_path), COLS) == [("k1", 2, "ann-2", None)]
