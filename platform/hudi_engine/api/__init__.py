"""The engine's public surface: what jobs, the CLI and the operator (and users) call.

    from hudi_engine.api import write, read, HoodieTable, run_compactions
    instant = write(df, "/data/trips", {"hoodie.table.name": "trips", ...})
    table = HoodieTable.load("/data/trips")          # properties, timeline, files
    run_compactions(spark, table)

Names load on first use, so importing the API (and so the job-config contract built on it) needs
no PySpark. Everything else under ``hudi_engine`` is internal; ``config``, ``errors``, ``storage``
and ``spark`` are public modules beside this one.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name → module that defines it
_EXPORTS = {
    # writing and reading
    "write": "hudi_engine.api.writes",
    "read": "hudi_engine.read.reader",
    "read_arrow": "hudi_engine.read.in_process",
    "read_cdc": "hudi_engine.read.cdc",
    "cdc_batches": "hudi_engine.read.cdc",
    # CUSTOM merge mode: the interface a Python merger implements, and what it returns
    "RecordMerger": "hudi_engine.merge.custom",
    "MergedRows": "hudi_engine.merge.custom",
    # a table: properties, timeline, files, schema, pending plans
    "HoodieTable": "hudi_engine.table.meta_client",
    "read_properties_text": "hudi_engine.table.properties",
    "table_view": "hudi_engine.metadata_table.reader",
    "table_schema": "hudi_engine.read.plan",
    "pending_clusterings": "hudi_engine.table.pending",
    "completed_clusterings": "hudi_engine.table.pending",
    "pending_clustering_groups": "hudi_engine.table.pending",
    "pending_compaction_groups": "hudi_engine.table.pending",
    "delta_commits_since_compaction": "hudi_engine.table.pending",
    "COMPACTION": "hudi_engine.timeline.instant",
    "parse_instant_time": "hudi_engine.timeline.instant",
    # the metadata table
    "MetadataReader": "hudi_engine.metadata_table.reader",
    "open_mdt": "hudi_engine.metadata_table.layout",
    "table_partitions": "hudi_engine.metadata_table.layout",
    # table services
    "schedule_compaction": "hudi_engine.services.compaction",
    "run_compactions": "hudi_engine.services.compaction",
    "compaction_due": "hudi_engine.services.compaction_plan",
    "NUM_COMMITS_AFTER_LAST_REQUEST": "hudi_engine.services.compaction_plan",
    "clustering_due": "hudi_engine.services.clustering_plan",
    "commits_since_clustering": "hudi_engine.services.clustering_plan",
    "clean_due": "hudi_engine.services.clean_plan",
    "schedule_clustering": "hudi_engine.services.clustering",
    "run_clusterings": "hudi_engine.services.clustering",
    "run_clean": "hudi_engine.services.clean",
    "archive": "hudi_engine.services.archive",
    "archive_inline": "hudi_engine.services.archive",
    "create_savepoint": "hudi_engine.services.savepoint",
    "delete_savepoint": "hudi_engine.services.savepoint",
    "list_savepoints": "hudi_engine.services.savepoint",
    "restore_to_savepoint": "hudi_engine.services.savepoint",
    "create_index": "hudi_engine.services.indexes",
    "drop_index": "hudi_engine.services.indexes",
    "show_indexes": "hudi_engine.services.indexes",
    "build_index": "hudi_engine.services.indexer",
    "indexing_due": "hudi_engine.services.indexer",
    "change_table_type": "hudi_engine.services.table_type",
    "table_type_named": "hudi_engine.services.table_type",
    "upgrade_table": "hudi_engine.services.table_version",
    "downgrade_table": "hudi_engine.services.table_version",
    "downgrade_compacts": "hudi_engine.services.table_version",
    # catalog sync
    "sync_hive": "hudi_engine.sync",
    # records: meta columns, schemas, keys
    "META_FIELDS": "hudi_engine.schema.meta_fields",
    "COMMIT_TIME": "hudi_engine.schema.meta_fields",
    "RECORD_KEY": "hudi_engine.schema.meta_fields",
    "PARTITION_PATH": "hudi_engine.schema.meta_fields",
    "OPERATION_FIELD": "hudi_engine.schema.meta_fields",
    "IS_DELETED": "hudi_engine.merge.record_merger",
    "avro_to_arrow": "hudi_engine.schema.avro",
    "arrow_to_avro": "hudi_engine.schema.avro",
    "to_json": "hudi_engine.schema.avro",
    "KeyGenerator": "hudi_engine.keygen",
    "key_generator_from_config": "hudi_engine.keygen",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # what type checkers (and readers) see
    from ..keygen import KeyGenerator, key_generator_from_config
    from ..merge.custom import MergedRows, RecordMerger
    from ..merge.record_merger import IS_DELETED
    from ..metadata_table.layout import open_mdt, table_partitions
    from ..metadata_table.reader import MetadataReader, table_view
    from ..read.cdc import cdc_batches, read_cdc
    from ..read.plan import table_schema
    from ..read.in_process import read_arrow
    from ..read.reader import read
    from ..schema.avro import arrow_to_avro, avro_to_arrow, to_json
    from ..schema.meta_fields import COMMIT_TIME, META_FIELDS, OPERATION_FIELD, PARTITION_PATH, RECORD_KEY
    from ..services.archive import archive, archive_inline
    from ..services.clean import run_clean
    from ..services.clean_plan import clean_due
    from ..services.clustering import run_clusterings, schedule_clustering
    from ..services.clustering_plan import clustering_due, commits_since_clustering
    from ..services.compaction import run_compactions, schedule_compaction
    from ..services.compaction_plan import NUM_COMMITS_AFTER_LAST_REQUEST, compaction_due
    from ..services.indexer import build_index, indexing_due
    from ..services.indexes import create_index, drop_index, show_indexes
    from ..services.savepoint import create_savepoint, delete_savepoint, list_savepoints, restore_to_savepoint
    from ..services.table_type import change_table_type, table_type_named
    from ..services.table_version import downgrade_compacts, downgrade_table, upgrade_table
    from ..sync import sync_hive
    from ..table.meta_client import HoodieTable
    from ..table.pending import (
        completed_clusterings,
        delta_commits_since_compaction,
        pending_clustering_groups,
        pending_clusterings,
        pending_compaction_groups,
    )
    from ..table.properties import read_properties_text
    from ..timeline.instant import COMPACTION, parse_instant_time
    from .writes import write
