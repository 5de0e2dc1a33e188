"""Record keys and partition paths made by Spark expressions (``keygen.spark_columns``) against the
Python generator, on real Spark: the same text for every edge value, the same refusals, and the
types where they could differ left to the Python pass."""
import datetime as dt
import itertools
import re
from decimal import Decimal

import pytest
from pyspark.sql import functions as F

from hudi_engine import HoodieValidationError, read, write
from hudi_engine.keygen import KeyGenerator
from hudi_engine.keygen.spark_columns import key_columns
from hudi_engine.schema.meta_fields import PARTITION_PATH, RECORD_KEY
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.write.writer import _collect
from tests.support.hudi_rs import hudi_rs_read

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc
TEXT = [None, "", "a", "ünïcødé ✓", "😀 emoji", "a/b", "k=v", "50%", "%2F", " sp ace ", "#?*:[]^{", "'\"\\",
        "\x01ctl\x1f\x7f", "__HIVE_DEFAULT_PARTITION__", "default", "x.y", ",:", "__null__"]
LONGS = [None, 0, -1, 1, -(2 ** 63), 2 ** 63 - 1, 10_000_000_000, -123456789012]
INTS = [None, 0, -(2 ** 31), 2 ** 31 - 1, 7]
SHORTS = [None, -(2 ** 15), 2 ** 15 - 1, 0]
BYTES = [None, -128, 127, 5]
BOOLS = [None, True, False]
STAMPS = [None, dt.datetime(2023, 4, 1, 17, 1, tzinfo=UTC), dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
          dt.datetime(1, 1, 1, tzinfo=UTC), dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
          dt.datetime(1970, 1, 1, tzinfo=UTC)]
SCHEMA = ("s string, k string, l long, id long, i int, sh smallint, b tinyint, bo boolean, ts timestamp, "
          "n struct<a: string, b: long>")


def _rows(count: int = 60):
    """Every value of each list meets many of the others'; ``k`` and ``id`` are never null or empty."""
    def pick(values, i, salt):
        return values[(i * salt + i // len(values)) % len(values)]
    out = []
    for i in range(count):
        nested = None if i % 7 == 3 else (pick(TEXT, i, 5), pick(LONGS, i, 3))
        out.append((pick(TEXT, i, 1), pick([t for t in TEXT if t], i, 3) + str(i), pick(LONGS, i, 1),
                    pick([v for v in LONGS if v is not None], i, 5), pick(INTS, i, 1), pick(SHORTS, i, 3),
                    pick(BYTES, i, 1), pick(BOOLS, i, 1), pick(STAMPS, i, 1), nested))
    return out


@pytest.fixture(scope="module")
def edge_rows(spark):
    return spark.createDataFrame(_rows(), SCHEMA)


GENERATORS = [
    ("SIMPLE", ["k"], ["s"]),
    ("SIMPLE", ["id"], ["l"]),
    ("SIMPLE", ["k"], ["n.a"]),
    ("COMPLEX", ["s", "l", "bo"], ["s", "i", "ts"]),
    ("COMPLEX", ["k"], ["sh", "b", "bo"]),
    ("COMPLEX", ["n.a", "n.b", "ts"], ["ts", "n.b"]),
    ("NON_PARTITION", ["k"], []),
    ("NON_PARTITION", ["s", "i"], []),
    ("GLOBAL_DELETE", ["s", "l"], []),
]


def test_keys_and_paths_equal_the_python_generator(edge_rows):
    """Every generator above, hive-style or not, URL-encoded or not, single-field complex keys with
    and without the field name: one Spark job per generator."""
    data = _collect(edge_rows)
    for kind, keys, parts in GENERATORS:
        # Rows with a key to store (the refusals are the next test's); Spark skips the others'
        # expressions, which would refuse them.
        keyed = [F.coalesce(F.col(f).cast("string"), F.lit("")) != "" for f in keys]
        has_key = keyed[0] if len(keyed) == 1 else F.greatest(*keyed)
        mask = _collect(edge_rows.select(has_key.alias("m")))["m"]
        arrow = data.filter(mask)
        assert arrow.num_rows > 30
        generators, columns = [], []
        names = (True, False) if kind == "COMPLEX" and len(keys) == 1 else (True,)
        for (hive, url), single_name in itertools.product(((False, False), (True, False), (True, True)), names):
            keygen = KeyGenerator(kind, keys, parts, hive_style_partitioning=hive, url_encode_partitioning=url,
                                  encode_single_key_field_name=single_name)
            cols = key_columns(keygen, edge_rows.schema)
            assert cols is not None, keygen
            generators.append(keygen)
            columns += [F.when(has_key, cols.key), F.when(has_key, cols.path)]
        got = edge_rows.filter(has_key).select(*columns).collect()
        for i, keygen in enumerate(generators):
            assert [r[2 * i] for r in got] == keygen.record_keys(arrow).to_pylist(), keygen
            assert [r[2 * i + 1] for r in got] == keygen.partition_paths(arrow).to_pylist(), keygen


def test_a_key_field_that_is_null_or_empty_is_refused_as_the_python_generator_refuses_it(spark, edge_rows):
    simple = KeyGenerator("SIMPLE", ["s"], ["i"])
    arrow = _collect(edge_rows)
    with pytest.raises(HoodieValidationError) as python_error:
        simple.record_keys(arrow)
    for keygen, shown in ((simple, "Record key field 's' is null or empty; bad record: {'s': "),
                          (KeyGenerator("COMPLEX", ["s", "l"], ["i"]),
                           "All record key fields (s, l) are null or empty; bad record: {'s': ")):
        cols = key_columns(keygen, edge_rows.schema)
        with pytest.raises(Exception) as jvm_error:
            edge_rows.select(cols.path).collect()
        assert shown in str(jvm_error.value), str(jvm_error.value)
        assert "Every Hudi record needs a non-empty key: fill s" in str(jvm_error.value)
    assert "Every Hudi record needs a non-empty key: fill s" in str(python_error.value)
    # Neither refuses a composite key with one field filled.
    both = spark.createDataFrame([(None, 1), ("", 2), ("x", None)], "s string, l long")
    cols = key_columns(KeyGenerator("COMPLEX", ["s", "l"], []), both.schema)
    assert [r[0] for r in both.select(cols.key).collect()] == ["s:__null__,l:1", "s:__empty__,l:2", "s:x,l:__null__"]


@pytest.mark.parametrize("ddl,value", [("double", 1.0e10), ("float", 1.5), ("decimal(10,2)", Decimal("1.50")),
                                       ("date", dt.date(2024, 1, 2)), ("binary", b"x"),
                                       ("string collate UTF8_LCASE", "A")])
def test_types_whose_spark_text_can_differ_are_left_to_the_python_pass(spark, ddl, value):
    frame = spark.createDataFrame([("k", value)], f"k string, v {ddl}")
    assert key_columns(KeyGenerator("SIMPLE", ["k"], ["v"]), frame.schema) is None
    assert key_columns(KeyGenerator("COMPLEX", ["v", "k"], []), frame.schema) is None


def test_generators_and_settings_of_the_python_pass_only(spark, edge_rows):
    from hudi_engine.keygen import TimestampSpec

    spec = TimestampSpec("EPOCHMILLISECONDS", output_format="yyyy")
    for keygen in (KeyGenerator("TIMESTAMP", ["k"], ["l"], timestamp_spec=spec),
                   KeyGenerator("CUSTOM", ["k"], ["s"], partition_field_types=["SIMPLE"]),
                   KeyGenerator("SIMPLE", ["k"], ["ts"], consistent_logical_timestamp=True),
                   KeyGenerator("SIMPLE", ["k"], ["missing"]), KeyGenerator("SIMPLE", ["k"], ["n.missing"]),
                   KeyGenerator("SIMPLE", ["K"], ["s"])):
        assert key_columns(keygen, edge_rows.schema) is None, keygen


SPARK_PATH = {"hoodie.write.in.process.max.records": "0"}
OPTIONS = {"hoodie.table.name": "edges", "hoodie.datasource.write.recordkey.field": "k,l",
           "hoodie.datasource.write.partitionpath.field": "s,bo",
           "hoodie.datasource.write.precombine.field": "id",
           "hoodie.datasource.write.hive_style_partitioning": "true",
           "hoodie.datasource.write.partitionpath.urlencode": "true", **SPARK_PATH}


def test_a_write_through_spark_stages_stores_the_python_generators_keys(spark, edge_rows, tmp_path):
    """Insert, then upsert half of the rows again (index lookup of the JVM keys) and refuse bad ones:
    the table holds each record once, under the key and folder the Python generator makes."""
    path = str(tmp_path / "t")
    frame = edge_rows.filter(F.col("s").isNull() | F.col("s").isin("", "a/b", "50%", "k=v", "ünïcødé ✓")).cache()
    write(frame, path, {**OPTIONS, "hoodie.datasource.write.operation": "insert"})
    changed = frame.filter(F.col("id") % 2 == 0).withColumn("i", F.lit(-5))
    write(changed, path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    keygen = KeyGenerator("COMPLEX", ["k", "l"], ["s", "bo"], hive_style_partitioning=True,
                          url_encode_partitioning=True)
    arrow = _collect(frame)
    expected = sorted(zip(keygen.record_keys(arrow).to_pylist(), keygen.partition_paths(arrow).to_pylist()))
    stored = read(spark, path).select(RECORD_KEY, PARTITION_PATH, "i", "id")
    assert sorted((r[0], r[1]) for r in stored.collect()) == expected
    assert stored.filter("i = -5").count() == changed.count()
    by_rs = hudi_rs_read(path)
    assert sorted(zip(by_rs[RECORD_KEY].to_pylist(), by_rs[PARTITION_PATH].to_pylist())) == expected
    for file in (tmp_path / "t").rglob("*.parquet"):
        assert file.parent.relative_to(tmp_path / "t").as_posix() in {p for _, p in expected}

    commits = len(HoodieTable.load(path).timeline.completed_writes())
    bad = {
        "All record key fields (k, l) are null or empty; bad record: {'k': '', 'l': None": spark.createDataFrame([("", None, "eu", True, 1)], "k string, l long, s string, bo boolean, id long"),
        "ordering field 'id' is null in record {'k': 'z'": spark.createDataFrame(
            [("z", 1, "eu", True, None)], "k string, l long, s string, bo boolean, id long"),
    }
    for message, rows in bad.items():
        rows = rows.join(frame.drop("k", "l", "s", "bo", "id").limit(1), how="cross").cache()
        with pytest.raises(HoodieValidationError, match=re.escape(message)):
            write(rows, path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable.load(path)
    assert len(table.timeline.completed_writes()) == commits and not table.timeline.pending()
    assert read(spark, path).count() == len(expected)


def test_a_dot_dot_partition_is_refused_in_the_jvm(spark, tmp_path):
    rows = spark.createDataFrame([("a", "eu", 1), ("b", "x/../y", 2)], "k string, p string, ts long")
    with pytest.raises(HoodieValidationError, match=r"Partition path 'x/\.\./y' contains a '\.\.' segment.*'k': 'b'"):
        write(rows, str(tmp_path / "t"), {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                                          "hoodie.datasource.write.partitionpath.field": "p",
                                          "hoodie.datasource.write.precombine.field": "ts", **SPARK_PATH})
