"""A write as users call it: one transaction, then what Hudi runs after a commit (inline
compaction, clustering, clean, archival) and the catalog sync, in Hudi's order."""
from __future__ import annotations

from pyspark.sql import DataFrame

from .. import config as C
from ..config import HoodieConfig
from ..services.compaction import compact_inline
from ..services.inline import table_services_after_commit
from ..spark_jobs import storage_scope
from ..sync import sync_after_commit
from ..table.meta_client import HoodieTable
from ..write.writer import write_operation


def write(df: DataFrame, base_path: str, options: dict | None = None,
          extra_metadata: dict[str, str] | None = None) -> str:
    """Write ``df`` to the Hudi table at ``base_path`` (``hoodie.*`` options); returns the
    committed instant time."""
    spark = df.sparkSession
    with storage_scope(spark, options):
        committed = write_operation(df, base_path, options, extra_metadata)
        table = HoodieTable.load(base_path)
        cfg = HoodieConfig({**(options or {}), **table.props})
        if table.table_type == "MERGE_ON_READ" and (cfg.get(C.COMPACT_INLINE) or cfg.get(C.COMPACT_SCHEDULE_INLINE)):
            compact_inline(spark, table, cfg.raw(), execute=cfg.get(C.COMPACT_INLINE))
        table_services_after_commit(spark, table.reload(), cfg.raw())
        sync_after_commit(base_path, cfg.raw())
    return committed
