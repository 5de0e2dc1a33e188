"""Table services a write runs after it commits, in Hudi's order: clean, then archive."""
from __future__ import annotations

from ..table.meta_client import HoodieTable
from .archive import archive_inline
from .clean import clean_inline


def table_services_after_commit(spark, table: HoodieTable, options: dict) -> None:
    clean_inline(spark, table, options)
    archive_inline(table.reload(), options)
