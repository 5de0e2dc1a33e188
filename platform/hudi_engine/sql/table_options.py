"""A SQL table's ``TBLPROPERTIES`` and ``OPTIONS`` as the engine's ``hoodie.*`` options, with Hudi's
own short names (``primaryKey``, ``preCombineField`` / ``orderingFields``, ``type``, ...) and the
defaults Hudi gives tables made by SQL (hive-style partition paths). Pure."""
from __future__ import annotations

import difflib
from typing import Mapping

from .. import config as C
from ..errors import HoodieConfigError

# Hudi's SQL names (HoodieOptionConfig) → the write option each stands for.
SQL_NAMES = {
    "primarykey": C.RECORDKEY_FIELDS.key,
    "precombinefield": C.PRECOMBINE_FIELD.key,
    "orderingfields": C.PRECOMBINE_FIELD.key,
    "type": C.TABLE_TYPE.key,
    "recordmergemode": C.RECORD_MERGE_MODE.key,
    "payloadclass": C.PAYLOAD_CLASS.key,
}
_TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
# Properties Spark itself keeps on catalog tables: not Hudi's, left alone.
_SPARK_OWNED = ("comment", "owner", "provider", "location", "external", "transient_lastddltime", "spark.sql.")


def hoodie_options(properties: Mapping[str, str], table: str, database: str | None,
                   partitioned_by: tuple[str, ...] = (), creating: bool = True) -> dict[str, str]:
    """The write options a SQL table's properties declare. Creating a table, an unknown property is
    refused (naming the nearest known one) and SQL's defaults apply; an existing table's catalog
    entry may carry other properties (e.g. hive-sync's bookkeeping), which are not Hudi options."""
    options = {C.TABLE_NAME.key: table}
    if creating:
        options[C.HIVE_STYLE_PARTITIONING.key] = "true"
    if database:
        options[C.DATABASE_NAME.key] = database
    if partitioned_by:
        options[C.PARTITION_FIELDS.key] = ",".join(partitioned_by)
    for name, value in properties.items():
        key = SQL_NAMES.get(name.lower())
        if key == C.TABLE_TYPE.key:
            value = _table_type(value)
        if key is not None:
            options[key] = value
        elif name in C.REGISTRY or any(name in p.alternatives for p in C.REGISTRY.values()):
            options[name] = value
        elif creating and not name.lower().startswith(_SPARK_OWNED):
            raise HoodieConfigError(_unknown(name))
    return C.canonical_keys(options)


def catalog_options(properties: Mapping[str, str], table: str, database: str) -> dict[str, str]:
    """The options a catalog entry's properties give its writes."""
    return hoodie_options(properties, table, database, creating=False)


def _table_type(value: str) -> str:
    kind = _TABLE_TYPES.get(value.lower(), value.upper())
    if kind not in _TABLE_TYPES.values():
        raise HoodieConfigError(f"TBLPROPERTIES type = {value!r}: use 'cow' (copy-on-write) or 'mor' (merge-on-read)")
    return kind


def _unknown(name: str) -> str:
    known = sorted({*SQL_NAMES_SPELLED, *C.REGISTRY})
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return (f"unknown table property {name!r}{hint} A Hudi table takes {', '.join(SQL_NAMES_SPELLED)} "
            "and the hoodie.* options this engine defines (see hudi_engine/config.py)")


SQL_NAMES_SPELLED = ("primaryKey", "preCombineField", "orderingFields", "type", "recordMergeMode", "payloadClass")
