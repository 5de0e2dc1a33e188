"""JdbcSource's pure parts: options, the queries it builds, the checkpoint it moves to and the
types it reads PostgreSQL columns as. No Spark, no database."""
import pytest
from pyspark import StorageLevel
from pyspark.sql.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, IntegerType, LongType,
                               StringType, TimestampType)

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.keys import jdbc as K
from hudi_jobs.sources import jdbc
from hudi_jobs.sources.jdbc import JdbcSource, PostgresReader, SparkJdbcReader
from hudi_jobs.sources.postgres_types import spark_type
from hudi_jobs.streamer.cli import build_config

PG = {K.URL.key: "jdbc:postgresql://db:5432/shop", K.TABLE_NAME.key: "public.orders",
      K.IS_INCREMENTAL.key: "true", K.INCREMENTAL_COLUMN.key: "updated_at"}


def test_postgres_urls_are_read_without_a_driver_and_keep_the_login(tmp_path):
    secret = tmp_path / "password"
    secret.write_text("s3cret\nignored\n")
    source = JdbcSource({**PG, "hoodie.deltastreamer.jdbc.user": "reader", K.PASSWORD_FILE.key: str(secret),
                         "hoodie.deltastreamer.jdbc.extra.options.fetchsize": "500"})
    assert isinstance(source.reader, PostgresReader)
    settings = source.reader.settings
    assert (settings.host, settings.port, settings.dbname, settings.user, settings.password) == \
        ("db", 5432, "shop", "reader", "s3cret")
    assert source.reader.fetch_size == 500
    assert source.storage_level == StorageLevel.MEMORY_AND_DISK
    assert isinstance(JdbcSource({**PG, K.URL.key: "postgresql://db/shop"}).reader, PostgresReader)


def test_other_databases_go_to_sparks_reader_with_the_driver_and_extra_options():
    source = JdbcSource({**PG, K.URL.key: "jdbc:mysql://db:3306/shop", K.DRIVER_CLASS.key: "com.mysql.cj.jdbc.Driver",
                         K.USER.key: "reader", K.PASSWORD.key: "pw", K.EXTRA_OPTIONS_PREFIX + "fetchsize": "100",
                         "hoodie.deltastreamer.jdbc.extra.options.fetchsize": "7"})
    assert isinstance(source.reader, SparkJdbcReader)
    assert source.reader.driver == "com.mysql.cj.jdbc.Driver"
    assert source.reader.options == {"fetchsize": "100", "user": "reader", "password": "pw"}


@pytest.mark.parametrize("missing, named", [(K.URL.key, K.URL.key), (K.TABLE_NAME.key, K.TABLE_NAME.key),
                                            (K.IS_INCREMENTAL.key, K.IS_INCREMENTAL.key),
                                            (K.INCREMENTAL_COLUMN.key, K.INCREMENTAL_COLUMN.key)])
def test_required_options_are_named(missing, named):
    props = {k: v for k, v in PG.items() if k != missing}
    with pytest.raises(HoodieConfigError, match=named.replace(".", r"\.")):
        JdbcSource(props)


def test_without_incremental_pull_no_column_is_needed():
    source = JdbcSource({**{k: v for k, v in PG.items() if k != K.INCREMENTAL_COLUMN.key},
                         K.IS_INCREMENTAL.key: "false"})
    assert not source.incremental and source.column is None


@pytest.mark.parametrize("props, message", [
    ({K.URL.key: "jdbc:mysql://db/shop"}, K.DRIVER_CLASS.key),
    ({K.URL.key: "mysql://db/shop"}, "not a JDBC URL"),
    ({K.URL.key: "jdbc:postgresql://db:5432/"}, "names no database"),
    ({K.IS_INCREMENTAL.key: "yes"}, K.IS_INCREMENTAL.key),
    ({K.STORAGE_LEVEL.key: "IN_A_DRAWER"}, K.STORAGE_LEVEL.key),
    ({K.EXTRA_OPTIONS_PREFIX + "fetchsize": "lots"}, "fetchsize"),
    ({K.PASSWORD_FILE.key: "/no/such/file"}, K.PASSWORD_FILE.key),
])
def test_bad_options_say_which_and_what_to_do(props, message):
    with pytest.raises(HoodieConfigError, match=message.replace(".", r"\.")):
        JdbcSource({**PG, **props})


def test_storage_levels_accept_hudis_serialized_names():
    assert jdbc.storage_level("MEMORY_AND_DISK_SER") == StorageLevel.MEMORY_AND_DISK
    assert jdbc.storage_level("memory_only_ser_2") == StorageLevel.MEMORY_ONLY_2
    assert jdbc.storage_level("DISK_ONLY") == StorageLevel.DISK_ONLY


def test_checkpoint_is_the_largest_value_read_or_stays():
    assert jdbc.next_checkpoint(True, "42", "7") == "42"
    assert jdbc.next_checkpoint(True, None, "7") == "7"          # rows without a value: keep the checkpoint
    assert jdbc.next_checkpoint(True, None, None) == ""
    assert jdbc.next_checkpoint(False, "42", "7") == ""         # no incremental pull: a full fetch every run


def test_upper_bound_of_the_next_rows():
    assert jdbc.upper_query("public.orders", "id", "41", 100) == (
        'SELECT max("id")::text FROM (SELECT "id" FROM public.orders WHERE "id" > %s ORDER BY "id" LIMIT 100) '
        'AS next_rows', ("41",))
    assert jdbc.upper_query('"Odd"', "Up At", None, 0) == ('SELECT max("Up At")::text FROM "Odd"', ())


def test_rows_are_bounded_by_the_planned_window():
    names = ["id", "note"]
    assert jdbc.rows_statement("t", names, "id", "41", "99", 10) == (
        'COPY (SELECT "id", "note" FROM t WHERE "id" > %s AND "id" <= %s) TO STDOUT', ("41", "99"))
    assert jdbc.rows_statement("t", names, "id", None, "99", 10) == (
        'COPY (SELECT "id", "note" FROM t WHERE "id" <= %s OR "id" IS NULL) TO STDOUT', ("99",))
    assert jdbc.rows_statement("t", names, None, None, None, 10) == ('COPY (SELECT "id", "note" FROM t LIMIT 10) '
                                                                     'TO STDOUT', ())
    assert jdbc.rows_statement("t", names, None, None, None, 0) == ('COPY (SELECT "id", "note" FROM t) TO STDOUT', ())


def test_spark_query_is_hudis():
    assert jdbc.spark_query("orders", "id", "4'1", 10, "jdbc:mysql://db/shop") == \
        "(SELECT * FROM orders WHERE id > '4''1' ORDER BY id LIMIT 10) rdbms_table"
    assert jdbc.spark_query("orders", None, None, 10, "jdbc:derby:memory:shop") == "(SELECT * FROM orders) rdbms_table"


def test_incremental_column_is_found_as_postgres_folds_it_or_the_columns_are_listed():
    assert jdbc.find_column("UPDATED_AT", ["id", "updated_at"], "orders") == "updated_at"
    assert jdbc.find_column("Mixed", ["id", "Mixed"], "orders") == "Mixed"
    with pytest.raises(HoodieConfigError, match=r"table\.incr\.column\.name=changed: orders has no such column; "
                                                r"its columns: id, updated_at"):
        jdbc.find_column("changed", ["id", "updated_at"], "orders")


def test_postgres_types_as_spark_types():
    numeric_10_2 = ((10 << 16) | 2) + 4
    assert [spark_type(oid, mod) for oid, mod in [(21, -1), (23, -1), (20, -1), (1700, numeric_10_2), (701, -1),
                                                  (16, -1), (25, -1), (1082, -1), (1114, -1), (1184, -1),
                                                  (17, -1), (2950, -1), (3802, -1), (1700, -1)]] == [
        IntegerType(), IntegerType(), LongType(), DecimalType(10, 2), DoubleType(), BooleanType(), StringType(),
        DateType(), TimestampType(), TimestampType(), BinaryType(), StringType(), StringType(), StringType()]


def test_the_streamer_knows_jdbc_source_and_what_it_needs():
    base = ["--target-base-path", "/tmp/t", "--target-table", "t",
            "--source-class", "org.apache.hudi.utilities.sources.JdbcSource"]
    with pytest.raises(HoodieConfigError, match=r"JdbcSource needs hoodie\.streamer\.jdbc\.url .* and "
                                                r"hoodie\.streamer\.jdbc\.table\.name"):
        build_config(base)
    cfg = build_config([*base, "--hoodie-conf", "hoodie.deltastreamer.jdbc.url=jdbc:postgresql://db/shop",
                        "--hoodie-conf", "hoodie.deltastreamer.jdbc.table.name=orders"])
    assert cfg.source_class == "JdbcSource"
