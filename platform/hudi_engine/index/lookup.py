"""Where incoming keys are stored, found in this process (a small change needs no Spark stage):
the same answers as ``tagging`` gives through Spark, per index type, from the same files.

SIMPLE / GLOBAL_SIMPLE read the key column of the candidate base files; BLOOM / GLOBAL_BLOOM
check key ranges and bloom filters in the footers first, and read keys of the files they let
through; RECORD_INDEX reads the metadata table's record-index file groups the keys hash to.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..file_group.base_file import read_base_file
from ..file_group.fs_view import FileSlice
from ..merge.record_merger import DELETE, OP_COLUMN
from ..schema.arrow import split_by_value
from ..schema.meta_fields import PARTITION_PATH, RECORD_KEY
from ..storage import Storage
from ..threads import parallel_map
from .bloom import BaseFileRef, existing_keys
from .tagging import BLOOM, GLOBAL_BLOOM, GLOBAL_INDEXES, RECORD_INDEX, index_type, updates_partition_path

_FOUND = pa.schema([("_k", pa.string()), ("_p", pa.string()), ("_fid", pa.string())])


def stored_keys(storage: Storage, slices: list[FileSlice], prepared: pa.Table, cfg: HoodieConfig) -> pa.Table:
    """(``_k``, ``_p``, ``_fid``): the incoming keys the index finds in the latest base files of
    ``slices`` (already narrowed to the input's partitions for a non-global index)."""
    keys = prepared[RECORD_KEY].combine_chunks()
    kind = index_type(cfg)
    if kind == RECORD_INDEX:
        from ..metadata_table.record_index import record_index_lookup

        found = record_index_lookup(storage, keys)
        # Entries of file groups a replace retired (insert_overwrite, delete_partition) no longer hold the key.
        live = pa.array(sorted({f"{s.partition}\x00{s.file_id}" for s in slices}), pa.string())
        return found.filter(pc.is_in(pc.binary_join_element_wise(found["_p"], found["_fid"], "\x00"), value_set=live))
    refs = [BaseFileRef(s.partition, s.file_id, s.base_file.path) for s in slices if s.base_file]
    by_partition = kind not in GLOBAL_INDEXES
    partitions = prepared[PARTITION_PATH].combine_chunks()

    if by_partition:
        wanted = {r.partition for r in refs}
        per_partition = {p: pc.unique(rows) for p, rows in split_by_value(keys, partitions) if p in wanted}
        empty = pa.array([], keys.type)
        candidates = lambda ref: per_partition.get(ref.partition, empty)
    else:
        everywhere = pc.unique(keys)
        candidates = lambda ref: everywhere

    if kind in (BLOOM, GLOBAL_BLOOM):
        prune = cfg.get(C.BLOOM_INDEX_PRUNE_BY_RANGES)
        def look(ref: BaseFileRef) -> pa.Array:
            wanted = candidates(ref)
            return existing_keys(storage, ref, wanted, by_range=prune) if len(wanted) else wanted
    else:
        def look(ref: BaseFileRef) -> pa.Array:
            wanted = candidates(ref)
            if len(wanted) == 0:
                return wanted
            stored = read_base_file(storage, ref.path, columns=[RECORD_KEY])[RECORD_KEY].combine_chunks()
            return stored.filter(pc.is_in(stored, value_set=wanted))
    found = parallel_map(look, refs)
    # Each ref's partition and file id once, repeated per found key by one ``take``.
    at = pa.array(np.repeat(np.arange(len(refs)), [len(f) for f in found]).astype(np.int64))
    return pa.table({
        "_k": pa.concat_arrays([f.cast(pa.string()) for f in found]) if found else pa.array([], pa.string()),
        "_p": pa.array([r.partition for r in refs], pa.string()).take(at),
        "_fid": pa.array([r.file_id for r in refs], pa.string()).take(at),
    }, schema=_FOUND)


def tag_rows(storage: Storage, slices: list[FileSlice], prepared: pa.Table, cfg: HoodieConfig,
             target: str) -> pa.Table:
    """``prepared`` with ``target`` as ``tagging.tag`` makes it: the file group where each key is
    stored, null for a new key; under a global index a key that moves partition becomes a delete
    from its old file group and an insert in the new partition, or stays where it is stored."""
    is_global = index_type(cfg) in GLOBAL_INDEXES
    if not is_global:
        wanted = set(pc.unique(prepared[PARTITION_PATH]).to_pylist())
        slices = [s for s in slices if s.partition in wanted]
    found = stored_keys(storage, slices, prepared, cfg)
    if not is_global:
        return prepared.append_column(target, found["_fid"].take(_found_in_partition(prepared, found)))
    at = pc.index_in(prepared[RECORD_KEY], value_set=found["_k"].combine_chunks())
    tagged = prepared.append_column(target, found["_fid"].take(at))
    stored_partition = found["_p"].take(at)
    moved = pc.fill_null(pc.not_equal(stored_partition, tagged[PARTITION_PATH]), False)
    where = tagged.schema.get_field_index(PARTITION_PATH)
    if not updates_partition_path(cfg):
        return tagged.set_column(where, PARTITION_PATH, pc.coalesce(stored_partition, tagged[PARTITION_PATH]))
    stay = tagged.filter(pc.invert(moved))
    movers = tagged.filter(moved)
    old_copy = movers.set_column(where, PARTITION_PATH, stored_partition.filter(moved))
    old_copy = old_copy.set_column(old_copy.schema.get_field_index(OP_COLUMN), OP_COLUMN,
                                   pa.array(np.full(old_copy.num_rows, DELETE, object), pa.string()))
    new_copy = movers.set_column(movers.schema.get_field_index(target), target,
                                 pa.nulls(movers.num_rows, pa.string()))
    return pa.concat_tables([stay, old_copy, new_copy])


def _found_in_partition(prepared: pa.Table, found: pa.Table) -> pa.Array:
    """For each prepared row, the row of ``found`` with its key in its partition (null if none):
    looked up partition by partition, as a key is unique only within its partition."""
    keys = prepared[RECORD_KEY].combine_chunks().cast(pa.string())
    found_keys = found["_k"].combine_chunks()
    stored = dict(split_by_value(pa.array(np.arange(found.num_rows)), found["_p"]))
    at = np.full(prepared.num_rows, -1, np.int64)
    for partition, rows in split_by_value(pa.array(np.arange(prepared.num_rows)), prepared[PARTITION_PATH]):
        candidates = stored.get(partition)
        if candidates is None:
            continue
        hit = pc.fill_null(pc.index_in(keys.take(rows), value_set=found_keys.take(candidates)), -1).to_numpy()
        at[rows.to_numpy()[hit >= 0]] = candidates.to_numpy()[hit[hit >= 0]]
    return pa.array(at, mask=at < 0)
