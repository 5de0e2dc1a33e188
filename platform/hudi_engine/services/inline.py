"""Table services a write runs after it commits, in Hudi's order: clustering, clean, archive
(compaction of merge-on-read tables runs first, in the writer)."""
from __future__ import annotations

from ..table.meta_client import HoodieTable
from .archive import archive_inline
from .clean import clean_inline
from .clustering import cluster_inline


def table_services_after_commit(spark, table: HoodieTable, options: dict) -> None:
    cluster_inline(spark, table, options)
    clean_inline(spark, table.reload(), options)
    archive_inline(table.reload(), options)
