"""A Hudi table engine on PySpark + Arrow: tables that Apache Hudi's own readers accept.

    from hudi_engine import write, read
    instant = write(df, "/data/trips", {"hoodie.table.name": "trips", ...})
    df = read(spark, "/data/trips", {"hoodie.datasource.query.type": "snapshot"})
"""
from .errors import (HoodieConfigError, HoodieError, HoodieTableNotFoundError, HoodieTimelineError,
                     HoodieValidationError)
from .read.reader import read
from .write.writer import write

__all__ = ["write", "read", "HoodieError", "HoodieConfigError", "HoodieValidationError",
           "HoodieTableNotFoundError", "HoodieTimelineError"]
