"""Bad input and killed writers: errors name the field and record, and the table stays readable
at its last commit."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hudi_engine import HoodieValidationError, read, write
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.instant import ROLLBACK
from hudi_engine.timeline.avro_models import decode_instant_avro
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.processes import kill_when
from tests.support.storage import connection_options, files

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def op(operation, **extra):
    return {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": operation, **extra}


def names(spark, path):
    return sorted(r["name"] for r in read(spark, path).collect())


def assert_clean(path):
    """No pending instant, no markers, no data file of an uncommitted instant."""
    table = HoodieTable.load(path)
    assert not table.timeline.pending()
    assert not files(path, under=".hoodie/.temp")
    committed = {i.timestamp for i in table.timeline.completed_writes()}
    for f in files(path, "*.parquet"):
        assert f.rsplit("_", 1)[1][:-len(".parquet")] in committed, f"{f} belongs to no commit"


@pytest.mark.parametrize("operation", ["upsert", "bulk_insert", "insert"])
def test_null_record_key_names_field_and_record_and_commits_nothing(spark, table_path, operation):
    write(spark.createDataFrame([("a", "x", "eu", 1)], FRUIT_SCHEMA), table_path, op("insert"))
    bad = spark.createDataFrame([("b", "y", "eu", 1), (None, "z", "eu", 2)], FRUIT_SCHEMA)
    with pytest.raises(HoodieValidationError) as err:
        write(bad, table_path, op(operation))
    message = str(err.value)
    assert "name" in message and "'z'" in message, message
    assert names(spark, table_path) == ["a"]
    assert rows(hudi_rs_read(table_path), ["name"]) == [("a",)]
    assert_clean(table_path)


def test_null_ordering_value_is_refused(spark, table_path):
    bad = spark.createDataFrame([("a", "x", "eu", None)], FRUIT_SCHEMA)
    with pytest.raises(HoodieValidationError, match="ordering field 'ts' is null in record"):
        write(bad, table_path, op("upsert"))


def test_missing_ordering_column_fails_before_any_instant(spark, table_path):
    write(spark.createDataFrame([("a", "x", "eu", 1)], FRUIT_SCHEMA), table_path, op("insert"))
    no_ts = spark.createDataFrame([("b", "y", "eu")], "name string, fruit string, region string")
    with pytest.raises(HoodieValidationError, match="ordering field 'ts'.*not in the input"):
        write(no_ts, table_path, op("upsert"))
    assert len(HoodieTable.load(table_path).timeline.instants) == 1


def test_incompatible_schema_is_refused(spark, table_path):
    write(spark.createDataFrame([("a", "x", "eu", 1)], FRUIT_SCHEMA), table_path, op("insert"))
    bad = spark.createDataFrame([("b", 7, "eu", 2)], "name string, fruit int, region string, ts long")
    with pytest.raises(HoodieValidationError, match="fruit"):
        write(bad, table_path, op("upsert"))
    assert names(spark, table_path) == ["a"]



WRITER = textwrap.dedent("""
    import json, sys
    from hudi_engine import write
    from hudi_engine.spark import local_spark
    from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
    spark = local_spark("killed-writer", cores=1, memory="1g")
    rows = [(f"k{i}", "late", "eu", 5) for i in range(200000)]
    df = spark.createDataFrame(rows, FRUIT_SCHEMA).repartition(8)
    write(df, sys.argv[1], {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "upsert",
                            "hoodie.parquet.max.file.size": "200000", **json.loads(sys.argv[2])})
""")


def test_killed_writer_leaves_last_commit_and_next_write_rolls_back(spark, base_path):
    """A real writer process is SIGKILLed once its instant is inflight (on S3: mid-upload)."""
    table_path = base_path
    write(spark.createDataFrame([("a", "x", "eu", 1)], FRUIT_SCHEMA), table_path, op("insert"))
    inflight = f"{HoodieTable.load(table_path).timeline.timeline_dir}/*.inflight"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, table_path, json.dumps(connection_options(table_path))],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    kill_when(proc, lambda: files(table_path, inflight) and files(table_path, "eu/*_*.parquet")[1:],
              "writer")
    [failed] = HoodieTable.load(table_path).timeline.pending()
    # Readers see the last commit only, ours and hudi-rs.
    assert names(spark, table_path) == ["a"]
    assert rows(hudi_rs_read(table_path), ["name"]) == [("a",)]

    write(spark.createDataFrame([("b", "y", "eu", 1)], FRUIT_SCHEMA), table_path, op("upsert"))
    table = HoodieTable.load(table_path)
    [rb] = table.timeline.filter([ROLLBACK], completed=True)
    assert decode_instant_avro(table.timeline.read_details(rb))["commitsRollback"] == [failed.timestamp]
    assert not files(table_path, f"*_{failed.timestamp}.parquet")
    assert names(spark, table_path) == ["a", "b"]
    assert_clean(table_path)
