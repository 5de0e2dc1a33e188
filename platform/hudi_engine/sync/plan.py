"""What a sync changes, decided from the Hudi table's state and the metastore's answers alone (no
I/O here): the table definition wanted, whether an existing table may be touched, how it must be
altered, and which partitions to add, re-point or drop."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

import pyarrow as pa

from ..schema.meta_fields import without_meta_fields
from .errors import HiveSyncError, TableOwnershipError
from .hive_schema import (
    INPUT_FORMAT,
    OUTPUT_FORMAT,
    REALTIME_INPUT_FORMAT,
    SERDE,
    SPARK_PROVIDER,
    SPARK_SCHEMA_PREFIX,
    Column,
    hive_columns,
    spark_serde_properties,
    spark_table_properties,
    split_partition_keys,
)
from .settings import SyncSettings, TargetTable

LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
LAST_COMMIT_COMPLETION_TIME_SYNC = "last_commit_completion_time_sync"
EXTERNAL_TABLE, MANAGED_TABLE, VIRTUAL_VIEW = "EXTERNAL_TABLE", "MANAGED_TABLE", "VIRTUAL_VIEW"
_HUDI_INPUT_FORMAT_PACKAGES = ("org.apache.hudi.", "com.uber.hoodie.")


@dataclass(frozen=True)
class HiveTable:
    """A metastore table as far as sync cares: the one wanted, or the one the metastore holds."""
    database: str
    name: str
    location: str
    columns: tuple[Column, ...]
    partition_keys: tuple[Column, ...]
    input_format: str
    output_format: str
    serde: str
    serde_params: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    table_type: str = EXTERNAL_TABLE

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"


@dataclass(frozen=True)
class HivePartition:
    values: tuple[str, ...]
    location: str


@dataclass(frozen=True)
class TableUpdate:
    table: HiveTable
    cascade: bool       # columns changed on a partitioned table: existing partitions follow


@dataclass(frozen=True)
class PartitionChanges:
    add: tuple[HivePartition, ...] = ()
    update: tuple[HivePartition, ...] = ()     # same values, new location
    drop: tuple[tuple[str, ...], ...] = ()


def desired_table(settings: SyncSettings, target: TargetTable, schema: pa.Schema, location: str) -> HiveTable:
    if settings.omit_metadata_fields:
        schema = without_meta_fields(schema)
    columns, keys = split_partition_keys(
        hive_columns(schema, settings.support_timestamp, settings.sync_comment), settings.partition_fields)
    params = dict(settings.table_properties)
    serde_params = {**settings.serde_properties, "serialization.format": "1"}
    if settings.as_datasource:
        params.update(spark_table_properties(schema, settings.partition_fields, settings.schema_length_threshold))
        serde_params.update(spark_serde_properties(location, target.read_optimized))
    if not settings.managed:
        params["EXTERNAL"] = "TRUE"
    return HiveTable(settings.database, target.name, location, tuple(columns), tuple(keys),
                     REALTIME_INPUT_FORMAT if target.realtime else INPUT_FORMAT, OUTPUT_FORMAT, SERDE,
                     serde_params, params, MANAGED_TABLE if settings.managed else EXTERNAL_TABLE)


def check_ownership(existing: HiveTable, desired: HiveTable, take_over: bool) -> bool:
    """Only this Hudi table's own entry (a Hudi table at its base path) is changed without asking;
    a view or a table partitioned differently is never changed. True when the table is someone
    else's and ``take_over`` allows changing it."""
    name = existing.qualified_name
    if existing.table_type == VIRTUAL_VIEW:
        raise TableOwnershipError(f"{name} is a view in the metastore; sync the Hudi table at "
                                  f"{desired.location} under another name (hoodie.datasource.hive_sync.table)")
    if _key_names(existing.partition_keys) != _key_names(desired.partition_keys):
        raise TableOwnershipError(
            f"{name} is partitioned by {_key_names(existing.partition_keys) or 'nothing'} but the Hudi table at "
            f"{desired.location} by {_key_names(desired.partition_keys) or 'nothing'}, and Hive cannot change "
            "partition columns; drop the table or sync under another name (hoodie.datasource.hive_sync.table), "
            "or fix hoodie.datasource.hive_sync.partition_fields")
    is_hudi = (existing.input_format or "").startswith(_HUDI_INPUT_FORMAT_PACKAGES) or \
        existing.params.get(SPARK_PROVIDER, "").lower() == "hudi"
    if is_hudi and same_location(existing.location, desired.location):
        return False
    if take_over:
        return True
    what = (f"the Hudi table at {existing.location}" if is_hudi else
            f"not a Hudi table (input format {existing.input_format}, location {existing.location})")
    raise TableOwnershipError(
        f"{name} already exists in the metastore and is {what}, not the Hudi table at {desired.location}; "
        "refusing to change it. Sync under another name (hoodie.datasource.hive_sync.table), drop it, "
        "or take it over (hudictl hive-sync --take-over)")


def table_update(existing: HiveTable, desired: HiveTable) -> TableUpdate | None:
    """The table to write back when the metastore's differs from what is wanted: columns replaced
    by the latest schema (only type widenings Hive can read are accepted), wanted properties
    added, everything else the owner set kept."""
    columns_changed = not _same_columns(existing.columns, desired.columns)
    if columns_changed:
        _check_type_changes(existing, desired)
    stale_spark_schema = SPARK_SCHEMA_PREFIX + "numParts" in desired.params
    params = {k: v for k, v in existing.params.items()
              if not (stale_spark_schema and k.startswith(SPARK_SCHEMA_PREFIX) and k not in desired.params)}
    params.update(desired.params)
    location = existing.location if same_location(existing.location, desired.location) else desired.location
    merged = replace(
        existing, location=location, input_format=desired.input_format,
        output_format=desired.output_format, serde=desired.serde,
        columns=desired.columns if columns_changed else existing.columns,
        serde_params={**existing.serde_params, **desired.serde_params}, params=params,
        table_type=EXTERNAL_TABLE if params.get("EXTERNAL", "").upper() == "TRUE" else existing.table_type)
    if merged == existing:
        return None
    return TableUpdate(merged, cascade=columns_changed and bool(existing.partition_keys))


def partition_changes(paths: Iterable[str], live: set[str], in_metastore: Sequence[HivePartition],
                      values_of: Callable[[str], tuple[str, ...]], location_of: Callable[[str], str],
                      full: bool) -> PartitionChanges:
    """Storage partitions in ``paths`` that hold live file groups are added or re-pointed; the
    others are dropped. A full sync also drops every metastore partition no live path matches."""
    known = {p.values: p.location for p in in_metastore}
    wanted: dict[tuple[str, ...], str] = {}
    gone: set[tuple[str, ...]] = set()
    for path in sorted(paths):
        if path in live:
            wanted[values_of(path)] = location_of(path)
        else:
            gone.add(values_of(path))
    if full:
        gone = set(known)
    return PartitionChanges(
        add=tuple(HivePartition(v, loc) for v, loc in wanted.items() if v not in known),
        update=tuple(HivePartition(v, loc) for v, loc in wanted.items()
                     if v in known and not same_location(known[v], loc)),
        drop=tuple(sorted(v for v in gone if v in known and v not in wanted)))


def sync_marker_update(params: Mapping[str, str], last_synced: str, last_completion: str | None,
                       force: bool) -> dict[str, str] | None:
    """Table parameters recording the newest synced commit; None when the metastore holds them
    already, or holds a newer commit from a sync that ran concurrently (unless ``force``: a full
    sync, which may follow a restore that took the recorded commit away)."""
    recorded = params.get(LAST_COMMIT_TIME_SYNC)
    if not force and recorded is not None and recorded > last_synced:
        return None
    marker = {LAST_COMMIT_TIME_SYNC: last_synced}
    if last_completion is not None:
        marker[LAST_COMMIT_COMPLETION_TIME_SYNC] = last_completion
    return None if all(params.get(k) == v for k, v in marker.items()) else marker


def same_location(a: str, b: str) -> bool:
    """Locations equal up to how a local path is spelled (``/p``, ``file:/p``, ``file:///p``) and a
    trailing slash: the metastore rewrites them."""
    return _normal_location(a) == _normal_location(b)


def _normal_location(location: str) -> str:
    location = (location or "").rstrip("/")
    if location.startswith("file:"):
        location = "/" + location[len("file:"):].lstrip("/")
    return location


def _key_names(keys: Sequence[Column]) -> list[str]:
    return [k.name.lower() for k in keys]


def _normal_type(hive_type: str) -> str:
    return "".join(hive_type.split()).lower()


def _same_columns(existing: Sequence[Column], desired: Sequence[Column]) -> bool:
    def shape(cols: Sequence[Column], with_comments: bool) -> list[tuple]:
        return [(c.name.lower(), _normal_type(c.type)) + (((c.comment or ""),) if with_comments else ())
                for c in cols]
    with_comments = any(c.comment is not None for c in desired)
    return shape(existing, with_comments) == shape(desired, with_comments)


def _check_type_changes(existing: HiveTable, desired: HiveTable) -> None:
    """HiveSyncTool's rule: a column may only keep its type, widen int->bigint or float->double,
    or change inside a struct."""
    old = {c.name.lower(): _normal_type(c.type) for c in existing.columns}
    for c in desired.columns:
        before, after = old.get(c.name.lower()), _normal_type(c.type)
        if before is None or before == after or (before, after) in (("int", "bigint"), ("float", "double")) \
                or ("struct" in before and "struct" in after):
            continue
        raise HiveSyncError(
            f"column {c.name!r} of {existing.qualified_name} is {before} in the metastore but {after} in the "
            "table's latest schema, a change Hive cannot read; recreate the Hive table (drop it and sync "
            "again) or sync under another name")
