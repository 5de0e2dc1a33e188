"""A Hudi table engine on PySpark + Arrow: tables that Apache Hudi's own readers accept.

    from hudi_engine import write, read
    instant = write(df, "/data/trips", {"hoodie.table.name": "trips", ...})
    df = read(spark, "/data/trips", {"hoodie.datasource.query.type": "snapshot"})

``write`` and ``read`` are imported on first use, so the options and errors (and so the job-config
contract built on them) import without PySpark.
"""
from .errors import (HoodieConfigError, HoodieError, HoodieTableNotFoundError, HoodieTimelineError,
                     HoodieValidationError)

__all__ = ["write", "read", "HoodieError", "HoodieConfigError", "HoodieValidationError",
           "HoodieTableNotFoundError", "HoodieTimelineError"]


def __getattr__(name: str):
    if name not in ("write", "read"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .read.reader import read
    from .write.writer import write
    # Bind the functions over the same-named subpackages the imports just set as attributes.
    globals().update(write=write, read=read)
    return globals()[name]
