"""Sync options resolved against the table: Hudi's inference rules (names, partition fields and
extractor come from ``hoodie.properties`` unless set) live here, so every caller agrees on them."""
from __future__ import annotations

from dataclasses import dataclass

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..keygen import partition_field_names
from .partitions import PartitionValueExtractor, extractor_for, infer_extractor_name

RO_SUFFIX = "_ro"
RT_SUFFIX = "_rt"


@dataclass(frozen=True)
class TargetTable:
    """One metastore table for the Hudi table: COW has one; MOR has a read-optimized and/or a
    snapshot (real-time) view."""
    name: str
    realtime: bool          # HoodieParquetRealtimeInputFormat (merges log files) vs the plain one
    read_optimized: bool    # serde hoodie.query.as.ro.table: tells Spark to read base files only


@dataclass(frozen=True)
class SyncSettings:
    metastore_uris: str
    database: str
    table: str
    partition_fields: tuple[str, ...]
    extractor: PartitionValueExtractor
    decode_partition: bool
    targets: tuple[TargetTable, ...]
    auto_create_database: bool
    as_datasource: bool
    schema_length_threshold: int
    managed: bool
    support_timestamp: bool
    sync_comment: bool
    omit_metadata_fields: bool
    batch_num: int
    table_properties: dict[str, str]
    serde_properties: dict[str, str]
    incremental: bool


def resolve_settings(options: dict | None, table_props: dict[str, str]) -> SyncSettings:
    cfg, table_cfg = HoodieConfig(options), HoodieConfig(table_props)
    mode = (cfg.get_str(C.HIVE_SYNC_MODE) or "hms").lower()
    if mode != "hms":
        raise HoodieConfigError(
            f"{C.HIVE_SYNC_MODE.key}={mode} is not supported: this engine syncs through the "
            "metastore's thrift API; set it to hms and point "
            f"{C.HIVE_SYNC_METASTORE_URIS.key} at the metastore")
    table = cfg.get_str(C.HIVE_SYNC_TABLE) or cfg.get_str(C.TABLE_NAME) or table_cfg.get_str(C.TABLE_NAME)
    if not table:
        raise HoodieConfigError(f"{C.HIVE_SYNC_TABLE.key} is required: the table records no name")
    database = (cfg.get_str(C.HIVE_SYNC_DATABASE) if cfg.contains(C.HIVE_SYNC_DATABASE)
                else table_cfg.get_str(C.DATABASE_NAME)) or C.HIVE_SYNC_DATABASE.default
    fields = partition_field_names(cfg.get_list(C.HIVE_SYNC_PARTITION_FIELDS) if cfg.contains(
        C.HIVE_SYNC_PARTITION_FIELDS) else table_cfg.get_list(C.PARTITION_FIELDS))
    extractor_name = cfg.get_str(C.HIVE_SYNC_PARTITION_EXTRACTOR) or infer_extractor_name(
        fields, table_cfg.get(C.HIVE_STYLE_PARTITIONING))
    decode = (cfg.get(C.META_SYNC_DECODE_PARTITION) if cfg.contains(C.META_SYNC_DECODE_PARTITION)
              else table_cfg.get(C.URL_ENCODE_PARTITIONING))
    return SyncSettings(
        metastore_uris=cfg.get_str(C.HIVE_SYNC_METASTORE_URIS), database=database.lower(),
        table=table.lower(), partition_fields=fields,
        extractor=extractor_for(extractor_name), decode_partition=decode,
        targets=target_tables(table.lower(), table_cfg.get_str(C.TABLE_TYPE).upper(), cfg),
        auto_create_database=cfg.get(C.HIVE_SYNC_AUTO_CREATE_DATABASE),
        as_datasource=cfg.get(C.HIVE_SYNC_AS_DATASOURCE),
        schema_length_threshold=cfg.get(C.HIVE_SYNC_SCHEMA_STRING_LENGTH_THRESHOLD),
        managed=cfg.get(C.HIVE_SYNC_CREATE_MANAGED_TABLE),
        support_timestamp=cfg.get(C.HIVE_SYNC_SUPPORT_TIMESTAMP),
        sync_comment=cfg.get(C.HIVE_SYNC_COMMENT),
        omit_metadata_fields=cfg.get(C.HIVE_SYNC_OMIT_METADATA_FIELDS),
        batch_num=max(1, cfg.get(C.HIVE_SYNC_BATCH_NUM)),
        table_properties=_key_values(cfg, C.HIVE_SYNC_TABLE_PROPERTIES),
        serde_properties=_key_values(cfg, C.HIVE_SYNC_SERDE_PROPERTIES),
        incremental=cfg.get(C.META_SYNC_INCREMENTAL),
    )


def target_tables(table: str, table_type: str, cfg: HoodieConfig) -> tuple[TargetTable, ...]:
    """HiveSyncTool's naming: COW is one table; MOR is ``_ro`` (or the bare name with
    skip_ro_suffix) plus ``_rt``, or just the bare name under the RO / RT strategies."""
    if table_type != "MERGE_ON_READ":
        return (TargetTable(table, realtime=False, read_optimized=False),)
    strategy = cfg.get_str(C.HIVE_SYNC_TABLE_STRATEGY).upper()
    if strategy == "RO":
        return (TargetTable(table, realtime=False, read_optimized=True),)
    if strategy == "RT":
        return (TargetTable(table, realtime=True, read_optimized=False),)
    skip_ro_suffix = cfg.get(C.HIVE_SYNC_SKIP_RO_SUFFIX)
    targets = [TargetTable(table if skip_ro_suffix else table + RO_SUFFIX, realtime=False, read_optimized=True),
               TargetTable(table + RT_SUFFIX, realtime=True, read_optimized=False)]
    # skip_ro_suffix already gave the bare name to the read-optimized view: never repurpose it.
    if cfg.get(C.META_SYNC_SNAPSHOT_WITH_TABLE_NAME) and not skip_ro_suffix:
        targets.append(TargetTable(table, realtime=True, read_optimized=False))
    return tuple(targets)


def _key_values(cfg: HoodieConfig, prop: C.ConfigProperty) -> dict[str, str]:
    """Hudi's ``k1=v1\\nk2=v2`` option format (blank lines skipped, a bare key means '')."""
    out: dict[str, str] = {}
    for line in (cfg.get_str(prop) or "").split("\n"):
        if not line.strip():
            continue
        parts = line.split("=")
        if len(parts) > 2:
            raise HoodieConfigError(f"{prop.key}: bad line {line!r}; write one 'key=value' per line")
        out[parts[0].strip()] = parts[1].strip() if len(parts) == 2 else ""
    return out

