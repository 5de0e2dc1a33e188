"""Hudi 1.1's partial log blocks (``IS_PARTIAL``), written with real Spark: MERGE INTO on a
merge-on-read table of version 9 logs only the columns its UPDATE SET assigns (Hudi's
``hoodie.spark.sql.merge.into.partial.updates``), and an upsert given
``hoodie.write.partial.update.schema`` carries only those columns; every other column keeps its
value, by the merge mode's ordering, through our Spark reader, ``read_arrow`` and compaction.

hudi-rs 0.5 reads the block header but does not merge partial records, so the table is held to it
once compaction has merged the logs into base files."""
import json

import pytest

from hudi_engine import write
from hudi_engine.errors import HoodieConfigError
from hudi_engine.file_group.log_file import HeaderKey, read_log_file
from hudi_engine.schema.meta_fields import META_FIELDS
from hudi_engine.table.meta_client import HoodieTable
from tests.support.merge_checks import check_rows, snapshot

pytestmark = pytest.mark.spark
COLS = ["id", "name", "price", "ts", "note"]


def data_blocks(path: str, instant: str) -> list:
    """The data blocks the write at ``instant`` logged."""
    table = HoodieTable.load(path)
    blocks = []
    for s in table.fs_view().latest_file_slices():
        for f in s.log_files:
            blocks += [b for b in read_log_file(table.storage, f.path)
                       if b.instant_time == instant and b.schema and b.block_type.name.endswith("DATA_BLOCK")]
    return blocks


def data_fields(block) -> list[str]:
    return [f["name"] for f in json.loads(block.schema)["fields"] if f["name"] not in META_FIELDS]


def test_merge_into_logs_only_what_update_set_assigns(spark, tmp_path):
    path = str(tmp_path / "fruit")
    spark.sql(f"""CREATE TABLE fruit (id INT, name STRING, price DOUBLE, ts BIGINT, note STRING) USING hudi
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor',
                                 'hoodie.write.table.version' = '9', 'hoodie.compact.inline' = 'false',
                                 'hoodie.parquet.small.file.limit' = '0')
                  LOCATION '{path}'""")
    try:
        spark.sql("INSERT INTO fruit VALUES (1, 'apple', 1.0, 1, 'a'), (2, 'pear', 2.0, 1, 'b'), "
                  "(3, 'plum', 3.0, 1, 'c')")
        spark.sql("""MERGE INTO fruit t USING (SELECT 1 AS id, 1.5 AS price, 2L AS ts UNION ALL
                                             SELECT 4, 4.0, 1) s ON t.id = s.id
                     WHEN MATCHED THEN UPDATE SET price = s.price, ts = s.ts
                     WHEN NOT MATCHED THEN INSERT (id, name, price, ts, note) VALUES (s.id, 'fig', s.price, s.ts, 'd')""")
        merge1 = HoodieTable.load(path).timeline.completed_writes()[-1].timestamp
        partial = [b for b in data_blocks(path, merge1) if b.is_partial]
        assert partial and all(b.header[HeaderKey.IS_PARTIAL] == "true" for b in partial)
        assert {tuple(data_fields(b)) for b in partial} == {("id", "price", "ts")}, "key, assigned, ordering"
        # A second partial update of another column folds with the first; one with an older
        # ordering value loses to the base row under event-time ordering.
        spark.sql("""MERGE INTO fruit t USING (SELECT 1 AS id, 'ripe' AS note UNION ALL SELECT 2, 'late') s
                     ON t.id = s.id
                     WHEN MATCHED AND s.id = 1 THEN UPDATE SET note = s.note
                     WHEN MATCHED THEN UPDATE SET note = s.note, ts = 0""")
        merge2 = HoodieTable.load(path).timeline.completed_writes()[-1].timestamp
        assert {tuple(data_fields(b)) for b in data_blocks(path, merge2)} == {("id", "ts", "note")}
        check_rows(spark, path, COLS, [(1, "apple", 1.5, 2, "ripe"), (2, "pear", 2.0, 1, "b"),
                                       (3, "plum", 3.0, 1, "c"), (4, "fig", 4.0, 1, "d")], merge_on_read=True)
    finally:
        spark.sql("DROP TABLE IF EXISTS fruit")


def options(kind: str, version: str, **extra) -> dict:
    return {"hoodie.table.name": "partial_schema", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "", "hoodie.table.ordering.fields": "ts",
            "hoodie.datasource.write.table.type": kind, "hoodie.write.table.version": version,
            "hoodie.compact.inline": "false", **extra}


PRICE_ONLY = json.dumps({"type": "record", "name": "p", "fields": [{"name": "price", "type": ["null", "double"]}]})


@pytest.mark.parametrize("kind,index", [("MERGE_ON_READ", "BUCKET"), ("COPY_ON_WRITE", "SIMPLE")])
def test_an_upsert_with_a_partial_update_schema_keeps_the_columns_it_lacks(spark, tmp_path, kind, index):
    """The bucket index logs inserts too: a key the table lacks takes nulls for what it lacks."""
    path = str(tmp_path / kind)
    opts = options(kind, "9", **{"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2"})
    write(spark.createDataFrame([(1, "apple", 1.0, 1, "a"), (2, "pear", 2.0, 1, "b")],
                                "id int, name string, price double, ts long, note string"), path, opts)
    narrow = spark.createDataFrame([(1, None, 2), (2, 9.0, 0), (5, 5.0, 1)], "id int, price double, ts long")
    write(narrow, path, {**opts, "hoodie.write.partial.update.schema": PRICE_ONLY})
    if kind == "MERGE_ON_READ":
        last = HoodieTable.load(path).timeline.completed_writes()[-1].timestamp
        assert {tuple(data_fields(b)) for b in data_blocks(path, last) if b.is_partial} == {("id", "price", "ts")}
    # A null the update carries is a value; an older ordering value loses.
    check_rows(spark, path, COLS, [(1, "apple", None, 2, "a"), (2, "pear", 2.0, 1, "b"), (5, None, 5.0, 1, None)],
               merge_on_read=kind == "MERGE_ON_READ")


def test_partial_update_schemas_need_a_version_8_table(spark, tmp_path):
    path = str(tmp_path / "v6")
    opts = options("MERGE_ON_READ", "6")
    write(spark.createDataFrame([(1, "apple", 1.0, 1, "a")], "id int, name string, price double, ts long, note string"),
          path, opts)
    with pytest.raises(HoodieConfigError, match="not supported for table versions < 8"):
        write(spark.createDataFrame([(1, 2.0, 2)], "id int, price double, ts long"), path,
              {**opts, "hoodie.write.partial.update.schema": PRICE_ONLY})
    assert snapshot(spark, path, COLS) == [(1, "apple", 1.0, 1, "a")]
