"""What ``.mode("append" | "overwrite")`` means for a Hudi table, as Hudi's Spark datasource defines
it (``HoodieSparkSqlWriter.handleSaveModes``, Hudi 1.x). Pure: the caller looks at the table.

Append writes with the given operation; a table of another name at the path is refused. Overwrite of
an existing table deletes it and writes a new one, unless the operation is insert_overwrite_table,
which replaces every file group in one replacecommit and keeps the timeline. Deletes are Append
only. Spark hands a Python data source no other mode: it refuses ErrorIfExists (its default) and
Ignore itself, before the source sees the write.
"""
from __future__ import annotations

from ..errors import HoodieConfigError

APPEND_ONLY = ("delete", "delete_partition")
KEEPS_TABLE = "insert_overwrite_table"


def check_mode(operation: str, overwrite: bool) -> None:
    """Refuse what no table state makes valid, before any row is staged. Hudi's Overwrite with
    delete_partition would delete the table and then fail; this refuses it as it refuses delete."""
    if overwrite and operation in APPEND_ONLY:
        raise HoodieConfigError(f"Append is the only save mode applicable for the {operation} operation: "
                                'write .mode("append")')


def deletes_table(operation: str, overwrite: bool, base_path: str, name: str | None,
                  existing_name: str | None) -> bool:
    """Whether the table at ``base_path`` (named ``existing_name``, None when there is none) is
    deleted before this write of table ``name`` (None when not given)."""
    check_mode(operation, overwrite)
    if existing_name is None:
        return False
    if overwrite:
        return operation != KEEPS_TABLE
    if name and name.lower() != existing_name.lower():
        raise HoodieConfigError(f"hoodie table with name {existing_name} already exists at {base_path}, can not "
                                f"append data to the table with another name {name}")
    return False
