"""A small upsert tagged by the record index of a table whose index has many blocks: updates land
in the file groups holding their keys, new keys are inserted once (our reader and hudi-rs agree),
and a lookup reads base-file blocks in proportion to its keys, not the index's size."""
import random

import pyarrow as pa
import pytest

from hudi_engine import read, write
from hudi_engine.file_group.log_file import read_log_file
from hudi_engine.hfile import HFileReader
from hudi_engine.metadata_table.codec import block_values
from hudi_engine.metadata_table.records import Delete
from hudi_engine.metadata_table.reader import MetadataReader, ReadStats
from hudi_engine.metadata_table.record_index import record_index_lookup
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
ROWS = 40_000
OPTS = {"hoodie.table.name": "rli", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.record.index.enable": "true",
        # two file groups (pinned: min == max), so each base HFile holds many 64 KiB blocks
        "hoodie.metadata.record.index.min.filegroup.count": "2",
        "hoodie.metadata.record.index.max.filegroup.count": "2"}


def frame(spark, ids, value, ts):
    return spark.createDataFrame([(f"k{i:06d}", str(i % 4), ts, value) for i in ids], "id string, p string, ts long, v string")


def file_ids(spark, path) -> dict[str, str]:
    return {r["id"]: r["_hoodie_file_name"].split("_")[0]
            for r in read(spark, path).select("id", "_hoodie_file_name").collect()}


def lookup(path, keys):
    stats = ReadStats()
    found = record_index_lookup(Storage(path), pa.array(keys + ["absent-key"]), stats)
    return dict(zip(found["_k"].to_pylist(), found["_fid"].to_pylist())), stats


def test_record_index_tags_a_small_upsert_reading_few_blocks(spark, table_path):
    # The first write into an empty table logs its keys in the record index (64 KiB HFile blocks).
    write(frame(spark, range(ROWS), "a", 1), table_path, {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
    before = file_ids(spark, table_path)
    slices = MetadataReader(HoodieTable.load(table_path)).file_slices("record_index")
    assert [s.file_id for s in slices] == ["record-index-0000-0", "record-index-0001-0"]
    keys = sorted(before)
    draws = {n: random.Random(n).sample(keys, n) for n in (4, 64)}
    blocks = {}
    for n, drawn in draws.items():
        found, stats = lookup(table_path, drawn)
        assert found == {k: before[k] for k in drawn}
        blocks[n] = stats.base_blocks + stats.log_blocks
        assert 1 <= blocks[n] <= n + 2                     # an absent key may fall in one more block per group
    assert blocks[64] > blocks[4]

    # 30 updates and 5 new keys, in this process, tagged by the record index; the metadata table is
    # compacted first, so the bulk insert's keys move into the index's base files.
    updated, new = draws[64][:30], [f"k{i:06d}" for i in range(ROWS, ROWS + 5)]
    upsert = frame(spark, [int(k[1:]) for k in updated], "b", 2).unionByName(frame(spark, range(ROWS, ROWS + 5), "n", 2))
    write(upsert, table_path, {**OPTS, "hoodie.datasource.write.operation": "upsert",
                               "hoodie.metadata.compact.max.delta.commits": "1"})
    after = file_ids(spark, table_path)
    assert {k: after[k] for k in updated} == {k: before[k] for k in updated}     # in their file groups
    want = sorted([(k, str(int(k[1:]) % 4), "a") for k in keys if k not in set(updated)]
                  + [(k, str(int(k[1:]) % 4), "b") for k in updated] + [(k, str(int(k[1:]) % 4), "n") for k in new])
    mine = rows(read(spark, table_path).toArrow(), ["id", "p", "v"])
    assert mine == want                                      # no duplicates: one row a key
    assert rows(hudi_rs_read(table_path), ["id", "p", "v"]) == mine

    # The index knows the new keys where they were written; a few keys read a few base-file blocks.
    slices = MetadataReader(HoodieTable.load(table_path)).file_slices("record_index")
    assert all(s.base_file is not None for s in slices)
    base_bytes = sum(s.base_file.size for s in slices)
    found, stats = lookup(table_path, new + draws[4])
    assert found == {k: after[k] for k in new + draws[4]}
    assert 1 <= stats.base_blocks <= len(new + draws[4]) + 2
    index_blocks = sum(HFileReader.open(Storage(table_path + "/.hoodie/metadata"), s.base_file.path).block_count
                       for s in slices)
    # (bytes: the trailer and block index of each file, then the blocks; test_hfile_ranged_reads.py
    # holds them to the blocks on a bigger file)
    assert stats.base_blocks * 3 < index_blocks and stats.base_bytes < base_bytes


def logged_index_keys(path: str, instant: str) -> dict[str, bool]:
    """key -> deleted, of the record-index entries the metadata delta commit ``instant`` logged."""
    mdt = Storage(path + "/.hoodie/metadata")
    found = {}
    for s in MetadataReader(HoodieTable.load(path)).file_slices("record_index"):
        for f in s.log_files:
            for block in read_log_file(mdt, f.path):
                if block.instant_time == instant:
                    found.update((k, isinstance(v, Delete)) for k, v in block_values(block))
    return found


@pytest.mark.parametrize("in_process", [True, False])
def test_updates_in_place_log_no_index_entries(spark, table_path, in_process):
    """As Hudi: a copy-on-write upsert logs record-index entries for the keys it adds to a file
    group and those it removes, none for keys updated where they are; lookups still find every key."""
    opts = {**OPTS, "hoodie.metadata.compact.max.delta.commits": "100",
            "hoodie.write.in.process.max.records": "100000" if in_process else "0"}
    write(frame(spark, range(200), "a", 1), table_path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    upsert = frame(spark, range(0, 200, 10), "b", 2).unionByName(frame(spark, range(200, 203), "n", 2))
    write(upsert, table_path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    instant = HoodieTable.load(table_path).timeline.completed_writes()[-1].timestamp
    assert logged_index_keys(table_path, instant) == {f"k{i:06d}": False for i in range(200, 203)}
    write(frame(spark, [5, 201], "d", 3), table_path, {**opts, "hoodie.datasource.write.operation": "delete"})
    instant = HoodieTable.load(table_path).timeline.completed_writes()[-1].timestamp
    assert logged_index_keys(table_path, instant) == {"k000005": True, "k000201": True}
    after = file_ids(spark, table_path)
    keys = [f"k{i:06d}" for i in range(203)]
    found, _ = lookup(table_path, keys)
    assert found == after and len(after) == 201
    want = sorted((f"k{i:06d}", str(i % 4), "n" if i >= 200 else "b" if i % 10 == 0 else "a")
                  for i in range(203) if i not in (5, 201))
    assert rows(read(spark, table_path).toArrow(), ["id", "p", "v"]) == want
    assert rows(hudi_rs_read(table_path), ["id", "p", "v"]) == want
