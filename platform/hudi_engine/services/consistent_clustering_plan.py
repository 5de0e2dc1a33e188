"""Resizing consistent-hashing buckets through clustering, as Hudi's
SparkConsistentBucketClusteringPlanStrategy plans it.

Pure logic: the latest file slices and each partition's hashing metadata in, a
``HoodieRequestedReplaceMetadata`` out. Per partition: buckets whose slice (base plus logs) is
bigger than ``split.threshold`` x max file size are split in two (while the partition stays within
``max.num.buckets``), runs of ring-adjacent buckets each and together no bigger than
``merge.threshold`` x max file size are merged into one (while it stays within
``min.num.buckets``), and every other bucket is rewritten into a new file group. Each group's
``extraMetadata`` carries its partition, child nodes and the metadata's sequence number, from
which execution writes the new buckets and the committed metadata.
"""
from __future__ import annotations

from collections import defaultdict
from typing import AbstractSet, Callable, Iterable, Mapping

from .. import config as C
from ..config import HoodieConfig
from ..file_group.fs_view import FileSlice
from ..index.consistent_hashing import (HashingMetadata, Ring, SliceSize, bucket_limits, group_extra_metadata,
                                        new_file_id_prefix, plan_resize)
from .clustering_plan import filter_partitions, group_metrics, requested_replace, slice_info, strategies


def slice_size(s: FileSlice) -> int:
    """FileSlice.getTotalFileSize: the base file and every log file."""
    return (s.base_file.size if s.base_file is not None else 0) + sum(f.size for f in s.log_files)


def plan_consistent_clustering(file_slices: Iterable[FileSlice], metadata: Mapping[str, HashingMetadata],
                               cfg: HoodieConfig, uri, excluded: AbstractSet[tuple[str, str]] = frozenset(),
                               busy_partitions: AbstractSet[str] = frozenset(),
                               extra_metadata: Mapping[str, str] | None = None,
                               new_prefix: Callable[[], str] = new_file_id_prefix) -> dict | None:
    """The resize plan, or None when there is nothing to rewrite. ``metadata``: each partition's
    committed hashing metadata (partitions without one are not consistent buckets and are left
    alone); ``excluded``: file groups of pending compactions; ``busy_partitions``: partitions a
    pending clustering is resizing (their metadata must change one resize at a time)."""
    _, execution = strategies(cfg)
    low, high = bucket_limits(cfg)
    max_size = cfg.get(C.PARQUET_MAX_FILE_SIZE)
    split_size = int(max_size * cfg.get(C.BUCKET_SPLIT_THRESHOLD))
    merge_size = int(max_size * cfg.get(C.BUCKET_MERGE_THRESHOLD))
    by_partition: dict[str, list[FileSlice]] = defaultdict(list)
    for s in file_slices:
        if (s.partition, s.file_id) not in excluded:
            by_partition[s.partition].append(s)
    max_groups = cfg.get(C.CLUSTERING_MAX_NUM_GROUPS)
    default_size = cfg.get(C.PARQUET_MAX_FILE_SIZE)
    groups = []
    for partition in filter_partitions(by_partition, cfg):
        meta = metadata.get(partition)
        if meta is None or partition in busy_partitions:
            continue
        slices = {s.file_id: s for s in by_partition.get(partition, [])}
        ring = Ring(meta)
        planned = plan_resize(ring, [SliceSize(fid, slice_size(s)) for fid, s in slices.items()],
                              split_size, merge_size, high, low, new_prefix=new_prefix)
        for g in planned:
            if len(groups) >= max_groups:
                break
            members = [slices[fid] for fid in g.file_ids]
            groups.append({"slices": [slice_info(s, uri) for s in members],
                           "metrics": group_metrics(members, default_size),
                           "numOutputFileGroups": g.num_outputs,
                           "extraMetadata": group_extra_metadata(partition, g.children, meta.seq_no),
                           "version": 1})
    return requested_replace(groups, cfg, execution, extra_metadata)
