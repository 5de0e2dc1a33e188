"""Record-index lookups: where incoming keys live, from the metadata table's record index, in this
process or one Spark task per record-index file group; either way a file group's keys read only
the base-file blocks they fall in (many keys end up reading every block once)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..storage import Storage

LOCATION_SCHEMA = pa.schema([("_k", pa.string()), ("_p", pa.string()), ("_fid", pa.string())])


@dataclass(frozen=True)
class _AddFileGroup:
    count: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from .keys import file_group_indexes

        for batch in batches:
            keys = batch.column(0)
            yield pa.RecordBatch.from_arrays([keys, pa.array(file_group_indexes(keys, self.count), pa.int32())],
                                             names=["_k", "_fg"])


@dataclass(frozen=True)
class _LookUp:
    """One task per record-index file group: where its share of the incoming keys live."""
    reader: object            # SliceReader
    slices: tuple

    def __call__(self, key, data: pa.Table) -> pa.Table:
        return self.look_up(int(key[0].as_py()), data.column("_k").to_pylist())

    def look_up(self, index: int, keys: list[str], stats=None) -> pa.Table:
        from .merge import is_live
        from .records import record_location_of

        found = self.reader.read(self.slices[index], keys=keys, stats=stats)
        rows = {"_k": [], "_p": [], "_fid": []}
        for k, value in found.items():
            if is_live(value):
                loc = record_location_of(value)
                rows["_k"].append(k)
                rows["_p"].append("" if loc.partition == "." else loc.partition)
                rows["_fid"].append(loc.file_id)
        return pa.table(rows, schema=LOCATION_SCHEMA)


def _record_index(storage: Storage) -> _LookUp:
    from ..errors import HoodieConfigError
    from ..table.meta_client import HoodieTable
    from .layout import RECORD_INDEX
    from .reader import MetadataReader

    reader = MetadataReader(HoodieTable.load(storage))
    if not reader.has(RECORD_INDEX):
        raise HoodieConfigError(f"table at {storage.base_uri} has no complete record index in its metadata "
                                "table; write once with hoodie.metadata.enable=true to build it")
    return _LookUp(reader.slice_reader, tuple(reader.file_slices(RECORD_INDEX)))


def record_index_lookup(storage: Storage, keys: pa.Array, stats=None) -> pa.Table:
    """``LOCATION_SCHEMA`` rows of the ``keys`` the record index knows, looked up in this process:
    only the record-index file groups the keys hash to are read, each on a thread, and in their
    base files only the blocks that may hold the keys. ``stats`` (a ``reader.ReadStats``) adds up
    what was read."""
    from ..threads import parallel_map
    from .keys import file_group_indexes

    lookup = _record_index(storage)
    keys = pc.unique(keys)
    groups = file_group_indexes(keys, len(lookup.slices))
    wanted = sorted(set(groups.tolist()))
    found = parallel_map(lambda i: lookup.look_up(i, keys.filter(pa.array(groups == i)).to_pylist(), stats), wanted)
    return pa.concat_tables(found) if found else LOCATION_SCHEMA.empty_table()


def record_index_locations(spark, storage: Storage, keys, target: str):
    """(``_k``, ``_p``, ``target``) of the incoming keys (a one-column ``_k`` DataFrame) that the
    record index knows; each record-index file group is read by one task, for its keys only."""
    lookup = _record_index(storage)
    with_group = keys.distinct().mapInArrow(_AddFileGroup(len(lookup.slices)), "_k string, _fg int")
    found = with_group.groupBy("_fg").applyInArrow(lambda key, data: lookup(key, data),
                                                   "_k string, _p string, _fid string")
    return found.withColumnRenamed("_fid", target)