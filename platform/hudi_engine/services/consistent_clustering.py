"""Running a consistent-hashing bucket resize: the I/O around ``consistent_clustering_plan``.

Scheduling is refused while delta commits are pending (Hudi's precondition: a writer routing by
the old ring must finish first) and skips partitions another resize holds. Execution reads each
group's slices as a query does, routes every record to its child bucket on the ring with the
group's child nodes applied, and writes each child bucket as one new file group ``<prefix>-0``
(records keep their commit times). Before the replacecommit completes each resized partition gets
``<instant>.hashing_meta`` (children applied, all NORMAL, sequence number + 1); after it completes,
the ``<instant>.commit`` marker, from which on writers route keys to the new buckets. A resize
that dies before completing leaves a metadata file no loader takes (its instant is not completed),
and its re-run overwrites it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieError
from ..file_group.base_file import BaseFileWriter, WriteContext
from ..file_group.fs_view import FileSlice
from ..file_group.tasks import STAT_SCHEMA, stats_batch, task_identity
from ..index.consistent_hashing import (
    CHILD_NODE_KEY,
    PARTITION_KEY,
    REPLACE,
    SEQUENCE_NUMBER_KEY,
    HashingMetadata,
    Ring,
    committed_metadata,
    key_hashes,
    nodes_from_json,
    ring_lookup,
)
from ..index.consistent_meta import commit_marker, load_metadata, save_metadata
from ..metadata_table.reader import table_view
from ..read.file_slice import SliceMerge
from ..read.plan import ReadPlan
from ..read.reader import scan
from ..schema.meta_fields import RECORD_KEY
from ..table.meta_client import HoodieTable
from ..table.pending import pending_clustering_groups
from ..timeline.instant import DELTA_COMMIT
from .consistent_clustering_plan import plan_consistent_clustering

log = logging.getLogger(__name__)

BUCKET_FILE_ID = "_hoodie_bucket_file_id"


def schedule_resize(table: HoodieTable, cfg: HoodieConfig, excluded: set[tuple[str, str]],
                    extra_metadata: dict[str, str] | None) -> dict | None:
    """The requested replace metadata of a resize, or None (nothing to do, or writers pending)."""
    pending = table.timeline.pending([DELTA_COMMIT])
    if pending:
        log.info("not scheduling a consistent-hashing bucket resize: delta commits "
                  f"{', '.join(i.timestamp for i in pending)} are pending; a resize waits for writers to finish")
        return None
    latest = table_view(table).latest_file_slices()
    metadata = {}
    for partition in sorted({s.partition for s in latest}):
        found = load_metadata(table, partition)
        if found is not None:
            metadata[partition] = found
    busy = {p for p, _ in pending_clustering_groups(table)}
    return plan_consistent_clustering(latest, metadata, cfg, table.storage.uri, excluded, busy, extra_metadata)


@dataclass(frozen=True)
class Resize:
    """What executing a resize plan does to each partition's hashing metadata."""
    current: dict[str, HashingMetadata]       # partition → the metadata the plan was made from
    children: dict[str, list]                 # partition → the plan's child nodes


def prepare_resize(table: HoodieTable, groups: list[dict]) -> Resize:
    """The plan's child nodes per partition, checked against the committed metadata: a plan made
    from an older ring than the current one is refused (Hudi: non serialized update)."""
    children: dict[str, list] = {}
    seq: dict[str, int] = {}
    for group in groups:
        extra = group.get("extraMetadata") or {}
        if CHILD_NODE_KEY not in extra:
            raise HoodieError("a consistent-bucket clustering group has no child nodes in its extraMetadata")
        partition = extra.get(PARTITION_KEY) or ""
        children.setdefault(partition, []).extend(nodes_from_json(extra[CHILD_NODE_KEY]))
        seq[partition] = int(extra.get(SEQUENCE_NUMBER_KEY) or 0)
    current = {}
    for partition, planned_seq in seq.items():
        meta = load_metadata(table, partition)
        if meta is None:
            raise HoodieError(f"partition '{partition}' has no consistent hashing metadata to resize")
        if meta.seq_no != planned_seq:
            raise HoodieError(f"Non serialized update to hashing metadata of partition '{partition}': the plan was "
                              f"made from sequence {planned_seq}, the committed metadata is at {meta.seq_no}")
        current[partition] = meta
    return Resize(current, children)


def resize_frame(spark: SparkSession, table: HoodieTable, ctx: WriteContext, group: dict, slices: tuple[FileSlice, ...],
                 merge: SliceMerge | None, resize: Resize, hash_fields: list[str], columns: list[str]) -> DataFrame:
    """One resize group: its slices read, each record routed to its child bucket, each child
    bucket written as one new file group by one task."""
    extra = group["extraMetadata"]
    partition = extra.get(PARTITION_KEY) or ""
    children = nodes_from_json(extra[CHILD_NODE_KEY])
    ring = Ring(resize.current[partition], children)
    mine = {c.file_id_prefix for c in children if c.tag == REPLACE}
    targets = {i: n.file_id for i, n in enumerate(ring.nodes) if n.file_id_prefix in mine}
    rows = scan(spark, table, ReadPlan(slices, ctx.file_schema, None, merge))
    keyed = ctx.file_schema.append(pa.field(BUCKET_FILE_ID, pa.string()))
    routed = rows.mapInArrow(RouteToChild(tuple(hash_fields), tuple(int(v) for v in ring.values), targets),
                             from_arrow_schema(keyed))
    write = WriteBucket(ctx, partition, tuple(columns))
    return routed.groupBy(BUCKET_FILE_ID).applyInArrow(lambda key, data: write(key, data), STAT_SCHEMA)


@dataclass(frozen=True)
class RouteToChild:
    """Executor side: the file id of each record's child bucket (an error for a record that hashes
    outside the group's buckets, which would mean the plan does not match the data)."""
    hash_fields: tuple[str, ...]
    values: tuple[int, ...]
    targets: dict

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        values = np.array(self.values, np.int64)
        for batch in batches:
            idx = ring_lookup(values, key_hashes(batch.column(RECORD_KEY), self.hash_fields))
            missing = [i for i in set(idx.tolist()) if i not in self.targets]
            if missing:
                raise HoodieError(f"records of a resized bucket hash to node {missing[0]}, outside the "
                                  "clustering group's child buckets; the plan does not match the data")
            yield batch.append_column(BUCKET_FILE_ID, pa.array([self.targets[i] for i in idx.tolist()], pa.string()))


@dataclass(frozen=True)
class WriteBucket:
    """Executor side: one child bucket's records (sorted by the sort columns, if any) into its new
    file group; commit times and sequence numbers are kept."""
    ctx: WriteContext
    partition: str
    columns: tuple[str, ...]

    def __call__(self, key: tuple, rows: pa.Table) -> pa.Table:
        file_id = key[0].as_py() if hasattr(key[0], "as_py") else key[0]
        rows = rows.drop_columns([BUCKET_FILE_ID])
        if self.columns:
            rows = rows.sort_by([(c, "ascending") for c in self.columns])
        task_partition, token = task_identity()
        writer = BaseFileWriter(self.ctx, self.partition, file_id, token, "CREATE", None)
        writer.write(rows, stamp=False, task_partition=task_partition)
        return pa.Table.from_batches([stats_batch([writer.close(writer.num_written, 0, 0)])])


def resized_metadata(resize: Resize, instant: str) -> list[HashingMetadata]:
    return [committed_metadata(resize.current[p], children, instant) for p, children in resize.children.items()]


def save_resized(table: HoodieTable, metadata: list[HashingMetadata]) -> None:
    """Before the replacecommit completes: the new metadata files (not yet taken by loaders)."""
    for meta in metadata:
        save_metadata(table.storage, meta)


def commit_resized(table: HoodieTable, metadata: list[HashingMetadata]) -> None:
    """After the replacecommit completed: the commit markers."""
    for meta in metadata:
        commit_marker(table.storage, meta.partition_path, meta.instant)


def hash_fields_of(cfg: HoodieConfig) -> list[str]:
    return cfg.get_list(C.BUCKET_INDEX_HASH_FIELD) or cfg.get_list(C.RECORDKEY_FIELDS)

