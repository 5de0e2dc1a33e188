"""Where the metadata table lives and what it is: a merge-on-read Hudi table under
``.hoodie/metadata`` whose partitions index the data table (Hudi's HoodieBackedTableMetadata).

Its instants carry the data table's instant times, so a reader trusts a metadata instant only when
the data instant of the same time completed; the metadata table's own instants (initialization,
compaction) are a completed data instant's time (or the zero time) plus a three-digit suffix. From
table version 8 on the metadata table is of the data table's version: initialization instants are
the zero time plus the partition's index, compactions take a new instant time, and its timeline
orders them by completion time.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable
from functools import cached_property

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..storage import Storage
from ..table.meta_client import PROPERTIES_FILE, HoodieTable, make_timeline_folders, timeline_properties
from ..table.properties import table_checksum, write_properties_text
from ..timeline.index_plan import indexing_partitions
from ..timeline.timeline import META_DIR

MDT_DIR = f"{META_DIR}/metadata"
FILES, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX = "files", "column_stats", "bloom_filters", "record_index"
PARTITION_STATS = "partition_stats"
PARTITION_STATS_MIN_VERSION = 8    # Hudi 1.x's version-6 metadata writer leaves partition_stats out
ZERO_TIME = "00000000000000"       # Hudi's SOLO_COMMIT_TIMESTAMP (table version 6)
INIT_SUFFIX = 10                   # initialization instants: <time>010, <time>011, ...
COMPACTION_SUFFIX = "001"          # a compaction of the metadata table: <last delta commit>001
PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"
KEYGEN = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
KEYGEN_TYPE = "HOODIE_TABLE_METADATA"     # as hoodie.table.keygenerator.type (version 8+)
PAYLOAD_MERGE_STRATEGY = "00000000-0000-0000-0000-000000000000"   # Hudi's payload-based merging

log = logging.getLogger(__name__)


def mdt_storage(table: HoodieTable) -> Storage:
    return table.storage.child(MDT_DIR)


def wanted_partitions(cfg: HoodieConfig, table_version: int) -> list[str]:
    """The metadata partitions a write's options ask for (files is the one every other needs)."""
    index_needs_it = cfg.get_str(C.INDEX_TYPE).upper() == "RECORD_INDEX"
    if not cfg.get(C.METADATA_ENABLE):
        if index_needs_it:
            raise HoodieConfigError(f"{C.INDEX_TYPE.key}=RECORD_INDEX looks keys up in the metadata table's "
                                    f"record index: set {C.METADATA_ENABLE.key}=true, or use another index")
        return []
    wanted = [FILES]
    if cfg.get(C.METADATA_COLUMN_STATS_ENABLE):
        wanted.append(COLUMN_STATS)
    if cfg.get(C.METADATA_BLOOM_FILTER_ENABLE):
        wanted.append(BLOOM_FILTERS)
    if cfg.get(C.METADATA_RECORD_INDEX_ENABLE) or index_needs_it:
        wanted.append(RECORD_INDEX)
    if cfg.get(C.METADATA_PARTITION_STATS_ENABLE) and _partition_stats_possible(cfg, table_version):
        wanted.append(PARTITION_STATS)
    return wanted


def _partition_stats_possible(cfg: HoodieConfig, table_version: int) -> bool:
    """Partition stats are folded from column stats and exist from table version 8 on. Asked for
    by name without either, they are skipped with a warning, as Hudi 1.0 does; otherwise they
    simply follow column stats, as in Hudi 1.1."""
    asked = cfg.contains(C.METADATA_PARTITION_STATS_ENABLE)
    if table_version < PARTITION_STATS_MIN_VERSION:
        if asked:
            log.warning(f"{C.METADATA_PARTITION_STATS_ENABLE.key}=true is ignored: table version {table_version} "
                        f"has no partition_stats index; set {C.WRITE_TABLE_VERSION.key} to "
                        f"{PARTITION_STATS_MIN_VERSION} or more (or upgrade the table) to keep it")
        return False
    if not cfg.get(C.METADATA_COLUMN_STATS_ENABLE):
        if asked:
            log.warning(f"{C.METADATA_PARTITION_STATS_ENABLE.key}=true is ignored: partition stats are built from "
                        f"column stats; set {C.METADATA_COLUMN_STATS_ENABLE.key}=true as well")
        return False
    return True


def table_partitions(table: HoodieTable) -> list[str]:
    """The metadata partitions the data table says are complete and in step."""
    value = table.props.get(C.TABLE_METADATA_PARTITIONS.key, "")
    return [p for p in value.split(",") if p]


def set_table_partitions(table: HoodieTable, partitions: list[str], inflight: Iterable[str] = ()) -> HoodieTable:
    """Record in the data table's hoodie.properties which partitions readers may use: a partition
    is listed only once it was built completely (while building it is 'inflight', as are the
    partitions pending indexing instants build, whoever rewrites the properties)."""
    props = dict(table.props)
    building = indexing_partitions(HoodieTable(table.storage, table.props).timeline)
    props[C.TABLE_METADATA_PARTITIONS.key] = ",".join(sorted(set(partitions)))
    props[C.TABLE_METADATA_PARTITIONS_INFLIGHT.key] = ",".join(sorted((set(inflight) | set(building)) - set(partitions)))
    table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
    return HoodieTable(table.storage, props)


def mdt_properties(table: HoodieTable) -> dict[str, str]:
    """hoodie.properties of the metadata table, as Hudi writes it for the data table's version."""
    name = f"{table.name}_metadata"
    database = table.props.get(C.DATABASE_NAME.key, C.DATABASE_NAME.default)
    props = {
        C.TABLE_NAME.key: name,
        C.TABLE_TYPE.key: "MERGE_ON_READ",
        **timeline_properties(table.version),
        C.ARCHIVELOG_FOLDER.key: C.ARCHIVELOG_FOLDER.default,
        C.BASE_FILE_FORMAT.key: "HFILE",
        C.RECORDKEY_FIELDS.key: "key",
        C.POPULATE_META_FIELDS.key: "false",
        C.PAYLOAD_CLASS.key: PAYLOAD,
        C.KEYGEN_CLASS.key: KEYGEN,
        C.DROP_PARTITION_COLUMNS.key: "false",
        C.TABLE_CHECKSUM.key: table_checksum(database, name),
    }
    if table.version >= 8:
        props.update({C.INITIAL_TABLE_VERSION.key: str(table.version),
                      C.ARCHIVELOG_FOLDER.key: C.TIMELINE_HISTORY_PATH.default, C.KEYGEN_TYPE.alternatives[0]: KEYGEN_TYPE,
                      C.RECORD_MERGE_MODE.key: "CUSTOM", C.RECORD_MERGE_STRATEGY_ID.key: PAYLOAD_MERGE_STRATEGY})
    return props


def open_mdt(table: HoodieTable) -> HoodieTable | None:
    storage = mdt_storage(table)
    return HoodieTable.load(storage) if storage.exists(PROPERTIES_FILE) else None


def create_mdt(table: HoodieTable) -> HoodieTable:
    storage = mdt_storage(table)
    props = mdt_properties(table)
    make_timeline_folders(storage, props)
    storage.write_text(PROPERTIES_FILE, write_properties_text(props))
    return HoodieTable(storage, props)


def delete_mdt(table: HoodieTable) -> HoodieTable:
    """Hudi drops the metadata table when a write turns it off; a later write with it on rebuilds it."""
    storage = mdt_storage(table)
    if storage.exists(""):
        storage.delete_dir("")
    return set_table_partitions(table, []) if table_partitions(table) or table.props.get(
        C.TABLE_METADATA_PARTITIONS_INFLIGHT.key) else table


def init_instant(data_time: str | None, index: int, table_version: int = 6, taken: Iterable[str] = ()) -> str:
    """The instant that builds metadata partition number ``index``: after the newest completed
    data instant (version 6), or from the zero time whenever it is built (version 8+: number
    ``index``, or past the zero-time instants the metadata table has ``taken``, as Hudi counts
    them, so that a partition built later, or built again, never reuses one)."""
    if table_version >= 8:
        used = [int(t[len(ZERO_TIME):]) for t in taken if t.startswith(ZERO_TIME) and len(t) == len(ZERO_TIME) + 3]
        return f"{ZERO_TIME}{max([index] + [n + 1 for n in used]):03d}"
    return f"{data_time or ZERO_TIME}{INIT_SUFFIX + index:03d}"


@dataclass(frozen=True)
class TrustedInstants:
    """Which metadata instants a reader may trust: a completed data instant's time (archived ones,
    older than the active timeline's start, completed too), or one of the metadata table's own
    instants made from one (or from the zero time). Picklable, built once per read."""
    data_completed: frozenset[str]
    data_start: str | None = None

    @cached_property
    def _anchors(self) -> frozenset[str]:
        return self.data_completed | {ZERO_TIME}

    def __call__(self, instant: str) -> bool:
        return (instant in self.data_completed or instant[:-3] in self._anchors
                or (self.data_start is not None and instant < self.data_start))


def valid_instants(data_completed, data_start: str | None = None) -> TrustedInstants:
    return TrustedInstants(frozenset(data_completed), data_start)
