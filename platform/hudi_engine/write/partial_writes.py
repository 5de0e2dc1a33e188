"""Upserts whose updates carry only some columns (``hoodie.write.partial.update.schema``, which
Hudi's MERGE INTO sets on merge-on-read tables): which columns a partial update carries, the
writes Hudi refuses them for, and the Avro schema of the log blocks that hold them."""
from __future__ import annotations

import json

import pyarrow as pa

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..index.tagging import GLOBAL_INDEXES
from ..keygen import KeyGenerator
from ..merge.keep_values import updated_columns
from ..schema.avro import to_json
from ..schema.meta_fields import META_FIELDS


def carried_columns(cfg: HoodieConfig, keygen: KeyGenerator, ordering: tuple[str, ...],
                    table_columns: list[str]) -> frozenset[str] | None:
    """The data columns a partial update writes: the updated ones, and what identifies and orders
    a record (its key and partition fields, the ordering fields), which merging compares and the
    input always has. None for full-record writes."""
    updated = updated_columns(cfg)
    if updated is None:
        return None
    unknown = [n for n in updated if n not in table_columns]
    if unknown:
        raise HoodieConfigError(f"{C.WRITE_PARTIAL_UPDATE_SCHEMA.key} names column(s) {', '.join(unknown)} the "
                                f"table does not have (its columns: {', '.join(table_columns)})")
    ids = {f.split(".")[0] for f in (*keygen.record_key_fields, *keygen.partition_fields, *ordering)}
    return frozenset(updated) | frozenset(n for n in ids if n in table_columns)


def check_partial_write(cfg: HoodieConfig, table_version: int, operation: str, index: str,
                        custom: str | None, ignore_defaults: bool) -> None:
    """Hudi's limits on partial updates (CommonClientUtils, MergeIntoHoodieTableCommand)."""
    key = C.WRITE_PARTIAL_UPDATE_SCHEMA.key
    if table_version < 8:
        raise HoodieConfigError(f"Partial updates are not supported for table versions < 8 (this table is version "
                                f"{table_version}): unset {key}, or upgrade the table (hudictl table upgrade)")
    if operation != "upsert":
        raise HoodieConfigError(f"{key} applies to upserts only, not {operation}")
    if index in GLOBAL_INDEXES:
        raise HoodieConfigError(f"{key} is not supported with the global index {index} (an update that moves a "
                                "record to another partition needs all its columns), as in Hudi")
    if custom or ignore_defaults:
        raise HoodieConfigError(f"{key} cannot be combined with a CUSTOM merger or "
                                f"{C.PARTIAL_UPDATE_MODE.key}: those decide the columns themselves")


def partial_block_schema(avro_schema_json: str, carried: frozenset[str]) -> str:
    """The writer schema of a partial block: the meta fields and the carried columns, as the
    table's schema defines them and in its order (Hudi's projection of the table schema)."""
    schema = json.loads(avro_schema_json)
    schema["fields"] = [f for f in schema["fields"] if f["name"] in META_FIELDS or f["name"] in carried]
    return to_json(schema)


def partial_rows(rows: pa.Table, carried: frozenset[str]) -> pa.Table:
    """A partial block's rows: the meta and carried columns."""
    return rows.select([n for n in rows.column_names if n in META_FIELDS or n in carried])
