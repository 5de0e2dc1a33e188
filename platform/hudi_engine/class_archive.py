"""Makes the local Spark driver's class-data archive (``local_jvm``): a session started with
``-XX:ArchiveClassesAtExit`` does what a Hudi session does first, in a process of its own, and its
JVM writes the classes it loaded as it exits.

    python -m hudi_engine.class_archive        # make env runs it; about 30 s, once
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .api import read, write
from .local_jvm import DUMP_ENV, archive_path
from .spark import local_spark, local_spark_conf

log = logging.getLogger(__name__)


def build() -> Path:
    """Make the archive of the sessions ``local_spark()`` starts, unless it exists."""
    archive = archive_path(local_spark_conf({}).get("spark.driver.extraClassPath", ""))
    if archive.exists():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    log.info("making the Spark driver's class-data archive %s (once per pyspark, Java and class path)", archive)
    with tempfile.TemporaryDirectory(dir=archive.parent, prefix=".build-") as work:
        dumped = Path(work) / archive.name
        env = {**os.environ, DUMP_ENV: str(dumped)}
        done = subprocess.run([sys.executable, "-m", "hudi_engine.class_archive", "--workload", work], env=env,
                              capture_output=True, text=True)
        if done.returncode != 0 or not dumped.exists():
            raise RuntimeError(f"making the class-data archive failed ({done.returncode}):\n{done.stderr[-4000:]}")
        os.replace(dumped, archive)
    return archive


def _workload(folder: str) -> None:
    """What a Hudi session does first: SQL, a table written through Spark's stages, read back."""
    spark = local_spark("hudi-class-archive", cores=2)
    rows = spark.range(2000).selectExpr("CAST(id AS STRING) AS key", "id AS ts", "id % 3 AS part",
                                        "CAST(id AS DOUBLE) * 1.5 AS value")
    path = os.path.join(folder, "table")
    options = {"hoodie.table.name": "archive", "hoodie.datasource.write.recordkey.field": "key",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.write.in.process.max.records": "0"}
    write(rows, path, options)
    write(rows.limit(100), path, {**options, "hoodie.datasource.write.operation": "upsert"})
    read(spark, path).groupBy("part").count().collect()
    spark.sql("SELECT count(*) FROM range(10)").collect()
    spark.stop()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    if sys.argv[1:2] == ["--workload"]:
        _workload(sys.argv[2])
    else:
        log.info("%s", build())
