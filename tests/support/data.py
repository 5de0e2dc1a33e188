"""Small data sets used across tests."""
from __future__ import annotations

FRUIT_OPTIONS = {
    "hoodie.table.name": "fruit",
    "hoodie.datasource.write.recordkey.field": "name",
    "hoodie.datasource.write.partitionpath.field": "region",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
}
FRUIT_SCHEMA = "name string, fruit string, region string, ts long"


def three_commits(spark, write, path, options=None):
    """The three-commit example: insert three people, update jack, delete john."""
    opts = {**FRUIT_OPTIONS, **(options or {})}
    c1 = write(spark.createDataFrame([("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1),
                                      ("john", "pineapple", "eu", 1)], FRUIT_SCHEMA), path,
               {**opts, "hoodie.datasource.write.operation": "insert"})
    c2 = write(spark.createDataFrame([("jack", "banana", "eu", 2)], FRUIT_SCHEMA), path,
               {**opts, "hoodie.datasource.write.operation": "upsert"})
    c3 = write(spark.createDataFrame([("john", "pineapple", "eu", 3)], FRUIT_SCHEMA), path,
               {**opts, "hoodie.datasource.write.operation": "delete"})
    return c1, c2, c3


def window_ends(path, *instant_times: str) -> list[str]:
    """Where incremental windows that end with these commits end: their completion times from table
    version 8 on (Hudi 1.x and hudi-rs window on them), their instant times at version 6."""
    from hudi_engine.read.plan import window_position
    from hudi_engine.table.meta_client import HoodieTable

    table = HoodieTable.load(str(path))
    return [window_position(table, table.timeline.get(t)) for t in instant_times]
