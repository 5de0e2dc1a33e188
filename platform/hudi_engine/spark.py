"""A local SparkSession set up for the engine: Python workers run this interpreter (so they can
import the engine and pyarrow) and the ``hudi`` data source (``spark.read`` and ``df.write``) is
registered. ``register`` does the latter (and takes the session's ``spark.hadoop.fs.*`` storage
settings) for any other session; ``spark_opens`` and ``parquet_frame`` read files on storage
Spark's Hadoop layer cannot open."""
from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from . import local_jvm, storage
from .spark_files import parquet_frame, spark_opens, task_indexes
from .sql import jvm_extension, jvm_router
from .sql.jvm_extension import session_conf as sql_extension_conf
from .sql.router import install as install_sql
from .sql.sessions import session_source

__all__ = ["connect_server", "local_spark", "parquet_frame", "register", "spark_opens", "sql_extension_conf",
           "task_indexes"]

CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"


def local_spark_conf(extra_conf: dict[str, str] | None = None, cores: int | None = None,
                     memory: str = "2g") -> dict[str, str]:
    """The settings ``local_spark`` starts a session with: the engine's, then ``extra_conf``, the SQL
    extension and the driver's class-data archive (``local_jvm``) when it was made."""
    conf = {"spark.master": f"local[{cores or '*'}]",
            "spark.driver.memory": memory,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": str(max(4, 2 * (cores or os.cpu_count() or 2))),
            "spark.sql.execution.arrow.maxRecordsPerBatch": "50000",
            "spark.python.worker.reuse": "true",
            # A Python worker that dies in native code (pyarrow, the OS) reports its stack in the
            # task's error instead of only "Python worker exited unexpectedly (crashed)"; the SQL
            # workers' own setting (spark.sql.execution.pyspark.udf.faulthandler.enabled) follows it.
            "spark.python.worker.faulthandler.enabled": "true",
            **(extra_conf or {})}
    return local_jvm.with_archive(local_jvm.dump_option(sql_extension_conf(conf)))


def local_spark(app_name: str = "hudi-engine", cores: int | None = None, memory: str = "2g",
                extra_conf: dict[str, str] | None = None) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    for key, value in local_spark_conf(extra_conf, cores, memory).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def connect_server(port: int = 15002, host: str = "127.0.0.1", cores: int | None = None, memory: str = "2g",
                   extra_conf: dict[str, str] | None = None) -> SparkSession:
    """A local Spark Connect server (Spark's own plugin, in this process's driver) whose client
    sessions have Hudi's SQL and ``format("hudi")``: statements and writes run here, in the Python
    process that started it. Returns the server's own session; the server stops with it."""
    conf = dict(extra_conf or {})
    conf["spark.plugins"] = ",".join(p for p in (conf.get("spark.plugins"), CONNECT_PLUGIN) if p)
    conf.setdefault("spark.connect.grpc.binding.port", str(port))
    conf.setdefault("spark.connect.grpc.binding.address", host)
    return local_spark("hudi-spark-connect", cores, memory, conf)


def register(spark: SparkSession) -> None:
    """``format("hudi")`` in ``spark`` (``spark.read`` and ``df.write``) and Hudi's SQL through
    ``spark.sql`` (``sql/router.py``). Call it again after changing
    the session's ``spark.hadoop.fs.*`` storage settings, and in each thread of your own that
    writes. Writes run in this process (the source's commit hands them here), so call it from the
    driver's Python process."""
    # The reader prunes slices with the filters Spark pushes; Spark refuses a reader that can take
    # filters while Python filter pushdown is off (its default).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    conf = spark.conf.getAll
    storage.configure(conf)
    spark.dataSource.register(session_source(spark, storage.storage_settings(conf)))
    install_sql(spark)
    if jvm_extension.active(spark):     # every other session of the application too
        jvm_router.install(spark)
    # Spark 4.1's df.write looks a Python data source up in the calling thread's active session
    # only, which a Python thread other than the session's maker lacks (DATA_SOURCE_NOT_FOUND);
    # spark.read finds it either way. Spark Connect sessions have no JVM session here.
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is not None:
        spark._jvm.org.apache.spark.sql.classic.SparkSession.setActiveSession(jsession)
