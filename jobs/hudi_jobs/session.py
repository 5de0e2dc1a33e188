"""The SparkSession a job runs in: spark-submit (the Spark operator) gives it its master; on a
laptop (``hudictl run``, a plain ``hudi-streamer``) it is a local one."""
from __future__ import annotations

import os

from pyspark.sql import SparkSession


def job_spark_session(app_name: str) -> SparkSession:
    from hudi_engine.spark import local_spark, register

    if os.environ.get("PYSPARK_GATEWAY_PORT") or SparkSession.getActiveSession() is not None:
        spark = SparkSession.builder.getOrCreate()
        register(spark)
        return spark
    return local_spark(app_name)
