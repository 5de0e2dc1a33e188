"""A Hudi table engine on PySpark + Arrow: tables that Apache Hudi's own readers accept.

    from hudi_engine import write, read
    instant = write(df, "/data/trips", {"hoodie.table.name": "trips", ...})
    df = read(spark, "/data/trips", {"hoodie.datasource.query.type": "snapshot"})

``write`` and ``read`` are imported on first use, so the options and errors (and so the job-config
contract built on them) import without PySpark.
"""
import sys
import types

from .errors import HoodieConfigError, HoodieError, HoodieTableNotFoundError, HoodieTimelineError, HoodieValidationError
from .worker_imports import lazy_zip_invalidation

lazy_zip_invalidation()

__all__ = ["write", "read", "HoodieError", "HoodieConfigError", "HoodieValidationError",
           "HoodieTableNotFoundError", "HoodieTimelineError"]


class _Engine(types.ModuleType):
    """``hudi_engine.write``/``read`` are the functions, though subpackages of the same names exist:
    the import system binds each subpackage here when it loads, and the setters ignore that."""

    @property
    def write(self):
        from .api.writes import write
        return write

    @write.setter
    def write(self, _subpackage):
        pass

    @property
    def read(self):
        from .read.reader import read
        return read

    @read.setter
    def read(self, _subpackage):
        pass


sys.modules[__name__].__class__ = _Engine
