"""Hudi tables a pipeline's SQL reads by name (``hoodie.streamer.sql.view.<name>=<base path>``):
silver joins its incremental batch with the tables it enriches from, gold aggregates over silver.

Each view is the table's data columns (no ``_hoodie_*`` meta columns) as of one commit, so one batch
sees one consistent state of every table it reads.
"""
from __future__ import annotations

import re
from typing import Mapping

from pyspark.sql import DataFrame, SparkSession

from hudi_engine import config as C
from hudi_engine.api import META_FIELDS, OPERATION_FIELD, HoodieTable, read
from hudi_engine.errors import HoodieConfigError

from ..keys import streamer as K

_VIEW_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def declared_views(props: Mapping[str, str]) -> dict[str, str]:
    """View name → base path, from the options."""
    views = {}
    for key, path in sorted(props.items()):
        if not key.startswith(K.SQL_VIEW_PREFIX):
            continue
        name = key[len(K.SQL_VIEW_PREFIX):]
        if not _VIEW_NAME.fullmatch(name):
            raise HoodieConfigError(f"{key}: a view name is lower-case letters, digits and '_', not starting "
                                    "with a digit")
        if not path.strip():
            raise HoodieConfigError(f"{key} is empty; give the base path of the Hudi table read as view {name}")
        views[name] = path.strip()
    return views


def load_tables(views: Mapping[str, str]) -> tuple[dict[str, HoodieTable], list[str]]:
    """The views' tables, and the views whose table has no commit yet (its pipeline has not written
    it): a batch waits for those."""
    tables, missing = {}, []
    for name, path in views.items():
        table = HoodieTable.load(path) if HoodieTable.exists(path) else None
        if table is None or table.timeline.last_completed_write() is None:
            missing.append(name)
        else:
            tables[name] = table
    return tables, missing


def register(spark: SparkSession, name: str, path: str, as_of: str | None = None) -> DataFrame:
    """The table (as of commit ``as_of``; None: its latest) as temporary view ``name``."""
    options = {C.AS_OF_INSTANT.key: as_of} if as_of else {}
    return register_frame(spark, name, read(spark, path, options))


def register_frame(spark: SparkSession, name: str, frame: DataFrame) -> DataFrame:
    data = frame.drop(*[c for c in (*META_FIELDS, OPERATION_FIELD) if c in frame.columns])
    data.createOrReplaceTempView(name)
    return data
