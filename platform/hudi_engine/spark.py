"""A local SparkSession set up for the engine: Python workers run this interpreter (so they can
import the engine and pyarrow) and the ``hudi`` data source is registered. ``register`` does the
latter (and takes the session's ``spark.hadoop.fs.*`` storage settings) for any other session;
``spark_opens`` and ``parquet_frame`` read files on storage Spark's Hadoop layer cannot open."""
from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from .read.datasource import register
from .spark_files import parquet_frame, spark_opens, task_indexes

__all__ = ["local_spark", "parquet_frame", "register", "spark_opens", "task_indexes"]


def local_spark(app_name: str = "hudi-engine", cores: int | None = None, memory: str = "2g",
                extra_conf: dict[str, str] | None = None) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (SparkSession.builder.appName(app_name)
               .master(f"local[{cores or '*'}]")
               .config("spark.driver.memory", memory)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(max(4, 2 * (cores or os.cpu_count() or 2))))
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "50000")
               .config("spark.python.worker.reuse", "true"))
    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
