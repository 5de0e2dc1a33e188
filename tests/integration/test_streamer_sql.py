"""Pipelines whose SQL reads other Hudi tables by name: silver joins its incremental batch from
bronze with a table it enriches from (views), and gold is a SqlSource aggregate refreshed only for
the groups silver's commits touched, deleting groups that emptied. Both checked against the same
aggregate computed straight from bronze."""
import pytest
from pyspark.sql import functions as F

from hudi_engine import read, write
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer

pytestmark = pytest.mark.spark
CDC = ["--hoodie-conf", "hoodie.table.cdc.enabled=true"]
ENRICH = ("SELECT o.id, o.day, o.amount, o.ts, c.category, o._hoodie_is_deleted FROM <SRC> o "
          "JOIN products c ON o.product = c.product")
# Groups the latest silver commits touched, recomputed in full; a group left with no rows is deleted.
# (day is a date: the change feed's JSON spells it as a day number, as Hudi's does.)
REVENUE = """
SELECT concat(CAST(k.day AS STRING), '/', k.category) AS id, k.day, k.category, coalesce(r.revenue, 0) AS revenue,
       r.revenue IS NULL AS _hoodie_is_deleted
FROM (SELECT DISTINCT day, category FROM lines_changes) k
LEFT JOIN (SELECT day, category, sum(amount) AS revenue FROM lines GROUP BY day, category) r
  ON k.day = r.day AND k.category = r.category
"""


def bronze_orders(spark, base, rows, operation="upsert"):
    frame = spark.createDataFrame(rows, "id string, day string, product string, amount long, ts long").withColumn(
        "day", F.to_date(F.concat(F.lit("2026-11-"), F.substring("day", 2, 1))))        # d1 → 2026-11-01
    write(frame, str(base), {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
                             "hoodie.datasource.write.precombine.field": "ts", "hoodie.table.cdc.enabled": "true",
                             "hoodie.datasource.write.operation": operation})


def run(spark, args):
    streamer = Streamer(spark, build_config(args))
    try:
        return streamer.sync_once()
    finally:
        streamer.close()


def revenue_from_bronze(spark, root):
    read(spark, str(root / "bronze")).createOrReplaceTempView("b")
    read(spark, str(root / "products")).createOrReplaceTempView("p")
    return sorted((str(r["day"]), r["category"], r["revenue"]) for r in spark.sql(
        "SELECT day, category, sum(amount) AS revenue FROM b JOIN p USING (product) GROUP BY day, category"
    ).collect())


def gold_rows(spark, root):
    return sorted((str(r["day"]), r["category"], r["revenue"]) for r in read(spark, str(root / "gold")).collect())


def test_silver_joins_views_and_gold_refreshes_only_what_changed(spark, tmp_path):
    products = spark.createDataFrame([("apple", "fruit"), ("leek", "veg"), ("pear", "fruit")],
                                     "product string, category string")
    write(products, str(tmp_path / "products"), {"hoodie.table.name": "products",
                                                 "hoodie.datasource.write.recordkey.field": "product"})
    bronze_orders(spark, tmp_path / "bronze", [("o1", "d1", "apple", 10, 1), ("o2", "d1", "leek", 5, 1),
                                               ("o3", "d2", "pear", 7, 1)])
    silver = ["--target-base-path", str(tmp_path / "silver"), "--target-table", "lines",
              "--source-class", "HoodieIncrSource", "--source-ordering-field", "ts",
              "--transformer-class", "SqlQueryBasedTransformer", *CDC,
              "--hoodie-conf", f"hoodie.streamer.source.hoodieincr.path={tmp_path / 'bronze'}",
              "--hoodie-conf", f"hoodie.streamer.sql.view.products={tmp_path / 'products'}",
              "--hoodie-conf", f"hoodie.streamer.transformer.sql={ENRICH}",
              "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id"]
    gold = ["--target-base-path", str(tmp_path / "gold"), "--target-table", "revenue",
            "--source-class", "SqlSource",
            "--hoodie-conf", f"hoodie.streamer.sql.view.lines={tmp_path / 'silver'}",
            "--hoodie-conf", f"hoodie.streamer.source.sql.sql.query={REVENUE}",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id"]

    assert run(spark, gold).instant is None                 # silver has no commit yet: gold waits
    assert run(spark, silver).records_written == 3
    assert sorted((r["id"], r["category"]) for r in read(spark, str(tmp_path / "silver")).collect()) == [
        ("o1", "fruit"), ("o2", "veg"), ("o3", "fruit")]
    assert run(spark, gold).records_written == 3
    assert gold_rows(spark, tmp_path) == revenue_from_bronze(spark, tmp_path)
    assert run(spark, gold).instant is None                 # nothing new upstream: no batch

    # d1's leek order goes (its group empties), d2 grows: only d1 and d2 groups are recomputed.
    bronze_orders(spark, tmp_path / "bronze", [("o2", "d1", "leek", 5, 2)], operation="delete")
    bronze_orders(spark, tmp_path / "bronze", [("o3", "d2", "pear", 9, 2), ("o4", "d2", "apple", 1, 2)])
    assert run(spark, silver).instant
    assert run(spark, gold).records_written == 2
    assert gold_rows(spark, tmp_path) == revenue_from_bronze(spark, tmp_path) == [
        ("2026-11-01", "fruit", 10), ("2026-11-02", "fruit", 10)]
