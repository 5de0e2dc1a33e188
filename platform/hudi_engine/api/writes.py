"""A write as users call it: one transaction, then what Hudi runs after a commit (inline
compaction, clustering, clean, archival) and the catalog sync, in Hudi's order."""
from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..services.compaction import compact_inline
from ..services.inline import table_services_after_commit
from ..services.table_version import upgrade_for_write
from ..spark_jobs import storage_scope
from ..storage.options import scoped
from ..sync import sync_after_commit
from ..table.meta_client import HoodieTable
from ..write.writer import write_operation

# Services that rewrite many file groups: they run on Spark's executors only.
_SPARK_SERVICES = (C.COMPACT_INLINE, C.CLUSTERING_INLINE)


def write(df: DataFrame | pa.Table, base_path: str, options: dict | None = None,
          extra_metadata: dict[str, str] | None = None) -> str:
    """Write ``df`` to the Hudi table at ``base_path`` (``hoodie.*`` options); returns the
    committed instant time. ``df`` is a Spark DataFrame, or an Arrow table for a table that fits
    this machine: written in this process with no Spark at all (inline compaction and clustering
    then need Spark; cleaning, archival and catalog sync run as usual)."""
    C.report_unknown(options)
    spark = None if isinstance(df, pa.Table) else df.sparkSession
    if spark is None:
        wanted = [p.key for p in _SPARK_SERVICES if HoodieConfig(options).get(p)]
        if wanted:
            raise HoodieConfigError(f"{', '.join(wanted)} run on Spark: write a Spark DataFrame, or leave them "
                                    "off and run the service with hudictl (a table service job)")
    with storage_scope(spark, options) if spark is not None else scoped(options):
        upgrade_for_write(base_path, options, spark)
        committed = write_operation(df, base_path, options, extra_metadata)
        table = HoodieTable.load(base_path)
        cfg = HoodieConfig({**(options or {}), **table.props})
        if table.table_type == "MERGE_ON_READ" and (cfg.get(C.COMPACT_INLINE) or cfg.get(C.COMPACT_SCHEDULE_INLINE)):
            compact_inline(spark, table, cfg.raw(), execute=cfg.get(C.COMPACT_INLINE))
        table_services_after_commit(spark, table.reload(), cfg.raw())
        sync_after_commit(base_path, cfg.raw())
    return committed
