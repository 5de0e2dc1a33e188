"""The consistent-hashing bucket engine's pure logic against Hudi's: xxHash32 key hashes, ring
lookup with wrap-around, the initial metadata's nodes and name-based file id prefixes, the JSON
Hudi's Jackson writes, and split/merge/sort resize planning."""
import itertools

import numpy as np
import pyarrow as pa
import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieError
from hudi_engine.file_group.fs_view import BaseFile, FileSlice
from hudi_engine.index import consistent_hashing as ch
from hudi_engine.metadata_table.hashing import xxh32
from hudi_engine.services.clustering_plan import (CONSISTENT_BUCKET_STRATEGY, SINGLE_JOB_CONSISTENT_EXECUTION,
                                                  SIZE_BASED_STRATEGY, SORT_AND_SIZE_EXECUTION, strategies)
from hudi_engine.services.consistent_clustering_plan import plan_consistent_clustering

# What Hudi's Jackson ObjectMapper (JsonUtils: fields visible, default pretty printer) and Java's
# UUID.nameUUIDFromBytes produce for the initial metadata of partition "2024/01/é" with 3
# buckets, run on the JVM with the jackson jars pyspark ships.
HUDI_INITIAL_3 = """{
  "version" : 0,
  "partitionPath" : "2024/01/é",
  "instant" : "00000000000000",
  "numBuckets" : 3,
  "seqNo" : 0,
  "nodes" : [ {
    "value" : 715827883,
    "fileIdPrefix" : "9909875c-c0c4-332e-bb38-321c0945269c",
    "tag" : "NORMAL"
  }, {
    "value" : 1431655766,
    "fileIdPrefix" : "86fdcfe6-ab99-3d5c-a5f8-d26c6ae4a2a3",
    "tag" : "NORMAL"
  }, {
    "value" : 2147483647,
    "fileIdPrefix" : "237d1283-595c-3e88-ada3-53800efe3e3a",
    "tag" : "NORMAL"
  } ]
}"""
HUDI_CHILDREN = """[ {
  "value" : 5,
  "fileIdPrefix" : null,
  "tag" : "DELETE"
}, {
  "value" : 9,
  "fileIdPrefix" : "x",
  "tag" : "REPLACE"
} ]"""


@pytest.mark.parametrize("value, expected", [
    ("", 0x02CC5D05), ("abc", 0x32D153FF),                     # xxHash's published test vectors
    ("hello", 4211111929), ("é", 866461991), ("ab", 1234828371), ("abcdefghijklmnopq", 3015209953),
    ("0e3f8a1c-7b2d-4c5e-9f60-123456789abc", 2889033675), ("key-42" * 20, 4218694301),
])
def test_xxhash32_matches_the_reference(value, expected):
    assert xxh32(value.encode()) == expected
    # Vectorized over mixed lengths, as the executors hash a batch.
    got = ch.xxhash32_utf8(pa.array([value, "other", value, ""]))
    assert got[0] == got[2] == expected and got[3] == 0x02CC5D05


def test_vectorized_xxhash32_equals_the_scalar_one():
    rng = np.random.default_rng(7)
    alphabet = list("abcxyz0123456789-:_ é中\U0001F600")
    values = ["".join(rng.choice(alphabet, size=int(n))) for n in rng.integers(0, 70, size=500)]
    sliced = pa.array(["skip"] + values)[1:]                    # a sliced array (non-zero offset)
    assert ch.xxhash32_utf8(sliced).tolist() == [xxh32(v.encode()) for v in values]


def test_key_hashes_mask_and_join_the_hash_fields():
    assert ch.key_hashes(pa.array(["hello"]), ["id"]).tolist() == [4211111929 & 0x7FFFFFFF]
    # A composite key hashes its hash fields' values joined with "" (Hudi: String.join("", keys)).
    composite = ch.key_hashes(pa.array(["id:ab,ts:c", "ts:c,id:ab"]), ["id"])
    assert composite.tolist() == [1234828371 & 0x7FFFFFFF] * 2
    assert ch.key_hashes(pa.array(["id:a,ts:bc"]), ["id", "ts"]).tolist() == [0x32D153FF & 0x7FFFFFFF]


@pytest.mark.parametrize("n, values", [
    (1, [2147483647]),
    (3, [715827883, 1431655766, 2147483647]),
    (4, [536870912, 1073741824, 1610612736, 2147483647]),
    (7, [306783379, 613566758, 920350137, 1227133516, 1533916895, 1840700274, 2147483647]),
])
def test_initial_metadata_has_hudis_node_values(n, values):
    meta = ch.initial_metadata("p", n)
    assert [node.value for node in meta.nodes] == values
    assert meta.instant == "00000000000000" and meta.seq_no == 0 and meta.num_buckets == n
    assert all(node.tag == ch.NORMAL for node in meta.nodes)
    # Name-based: every writer creating a partition's first metadata writes the same file.
    assert ch.initial_metadata("p", n) == meta and ch.initial_metadata("q", n).nodes[0] != meta.nodes[0]


def test_metadata_json_is_byte_for_byte_hudis_and_round_trips():
    meta = ch.initial_metadata("2024/01/é", 3)
    assert meta.to_json() == HUDI_INITIAL_3 and meta.filename == "00000000000000.hashing_meta"
    assert ch.HashingMetadata.from_json(meta.to_bytes()) == meta
    children = [ch.Node(5, None, ch.DELETE), ch.Node(9, "x", ch.REPLACE)]
    assert ch.nodes_to_json(children) == HUDI_CHILDREN and ch.nodes_from_json(HUDI_CHILDREN) == children
    # Unknown fields are ignored and a node without a tag is NORMAL, as Hudi reads older files.
    old = '{"version":0,"partitionPath":"","instant":"1","numBuckets":1,"seqNo":2,"extra":1,' \
          '"nodes":[{"value":7,"fileIdPrefix":"u"}]}'
    assert ch.HashingMetadata.from_json(old).nodes == (ch.Node(7, "u", ch.NORMAL),)
    with pytest.raises(HoodieError, match="unreadable"):
        ch.HashingMetadata.from_json("{")


def test_lookup_takes_the_first_node_at_or_after_the_hash_and_wraps():
    ring = ch.Ring(ch.HashingMetadata("", "0", 3, 0, (ch.Node(100, "a"), ch.Node(200, "b"), ch.Node(300, "c"))))
    assert ring.lookup(np.array([0, 100, 101, 200, 250, 300, 301, 2147483647])).tolist() == [0, 0, 1, 1, 2, 2, 0, 0]
    assert ring.node_of_file("b-0") == 1 and ring.node_of_file("b") is None


def test_children_replace_and_delete_nodes():
    meta = ch.HashingMetadata("", "0", 3, 4, (ch.Node(100, "a"), ch.Node(200, "b"), ch.Node(300, "c")))
    ring = ch.Ring(meta, [ch.Node(150, "b1", ch.REPLACE), ch.Node(200, "b2", ch.REPLACE), ch.Node(300, None, ch.DELETE)])
    assert [(n.value, n.file_id_prefix) for n in ring.nodes] == [(100, "a"), (150, "b1"), (200, "b2")]
    assert ring.lookup(np.array([250])).tolist() == [0]       # c's range now wraps to a
    committed = ch.committed_metadata(meta, [ch.Node(150, "b1", ch.REPLACE), ch.Node(200, "b2", ch.REPLACE)], "20240101")
    assert committed.seq_no == 5 and committed.instant == "20240101" and committed.num_buckets == 3
    assert [(n.value, n.tag) for n in committed.nodes] == [(100, "NORMAL"), (150, "NORMAL"), (200, "NORMAL"), (300, "NORMAL")]
    with pytest.raises(HoodieError, match="REPLACE or DELETE"):
        ch.Ring(meta, [ch.Node(1, "x", ch.NORMAL)])


def _prefixes():
    counter = itertools.count()
    return lambda: f"new{next(counter)}"


def test_split_halves_a_range_even_across_the_wrap():
    ring = ch.Ring(ch.initial_metadata("", 4))
    children = ring.split(1, _prefixes())
    assert [(c.value, c.tag) for c in children] == [(805306368, "REPLACE"), (1073741824, "REPLACE")]
    assert [c.file_id_prefix for c in children] == ["new0", "new1"]
    # The first node's range wraps from the last node: its middle is past MAX_VALUE, masked.
    wrapped = ch.Ring(ch.HashingMetadata("", "0", 2, 0, (ch.Node(100, "a"), ch.Node(2147483000, "b"))))
    mid = ((2147483000 + 100 + 2147483648) >> 1) & 0x7FFFFFFF
    assert wrapped.split(0, _prefixes())[0].value == mid
    tiny = ch.Ring(ch.HashingMetadata("", "0", 2, 0, (ch.Node(5, "a"), ch.Node(6, "b"))))
    assert tiny.split(1, _prefixes()) is None


def test_merge_keeps_the_last_node_and_needs_adjacent_ones():
    ring = ch.Ring(ch.initial_metadata("", 4))
    children = ring.merge([1, 2], _prefixes())
    assert [(c.value, c.file_id_prefix, c.tag) for c in children] == [
        (1073741824, None, "DELETE"), (1610612736, "new0", "REPLACE")]
    assert [c.tag for c in ring.merge([3, 0], _prefixes())] == ["DELETE", "REPLACE"]     # across the wrap
    with pytest.raises(HoodieError, match="discontinuous"):
        ring.merge([0, 2], _prefixes())


def sizes(ring, *mb):
    return [ch.SliceSize(n.file_id, s * 1024 * 1024) for n, s in zip(ring.nodes, mb)]


def test_plan_splits_big_buckets_within_the_max_and_rewrites_the_rest():
    ring = ch.Ring(ch.initial_metadata("", 4))
    groups = ch.plan_resize(ring, sizes(ring, 300, 50, 260, 50), split_size=240 << 20, merge_size=0,
                            max_buckets=5, min_buckets=4, new_prefix=_prefixes())
    kinds = [(g.kind, g.file_ids, g.num_outputs) for g in groups]
    # Only one split fits under max 5; the second big bucket is rewritten like the small ones.
    assert kinds[0] == ("split", (ring.nodes[0].file_id,), 2)
    assert [k for k, *_ in kinds] == ["split", "sort", "sort", "sort"]
    assert all(len(g.children) == 1 and g.children[0].tag == "REPLACE" for g in groups[1:])
    assert ch.plan_resize(ring, sizes(ring, 300, 50, 260, 50), 240 << 20, 0, 8, 4, sort_rest=False,
                          new_prefix=_prefixes())[1].kind == "split"


def test_plan_merges_adjacent_small_buckets_within_the_min():
    ring = ch.Ring(ch.initial_metadata("", 6))
    groups = ch.plan_resize(ring, sizes(ring, 5, 5, 100, 5, 5, 5), split_size=1 << 40, merge_size=24 << 20,
                            max_buckets=6, min_buckets=2, sort_rest=False, new_prefix=_prefixes())
    merged = [[ring.node_of_file(f) for f in g.file_ids] for g in groups if g.kind == "merge"]
    # From node 0: backward across the wrap to 5, 4, 3, then forward to 1; 4 slots (6 - min 2).
    # As in Hudi the size check comes before adding a neighbour, so the run may end past it.
    assert merged == [[3, 4, 5, 0, 1]]
    one_slot = ch.plan_resize(ring, sizes(ring, 5, 5, 100, 5, 5, 5), 1 << 40, 24 << 20, 6, 5, sort_rest=False,
                              new_prefix=_prefixes())
    assert [len(g.file_ids) for g in one_slot if g.kind == "merge"] == [2]
    # A run is cut when the total passes the threshold.
    capped = ch.plan_resize(ring, sizes(ring, 5, 5, 100, 5, 5, 5), 1 << 40, 12 << 20, 6, 1, sort_rest=False,
                            new_prefix=_prefixes())
    assert all(len(g.file_ids) <= 3 for g in capped)


def test_plan_refuses_file_groups_that_are_not_buckets():
    ring = ch.Ring(ch.initial_metadata("", 2))
    with pytest.raises(HoodieError, match="not buckets"):
        ch.plan_resize(ring, [ch.SliceSize("zzz-0", 1)], 1, 0, 2, 2)


def cfg(**extra):
    return HoodieConfig({"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
                         "hoodie.bucket.index.num.buckets": "2", **extra})


def test_strategy_defaults_switch_with_the_index_and_refuse_mismatches():
    assert strategies(cfg()) == (CONSISTENT_BUCKET_STRATEGY, SINGLE_JOB_CONSISTENT_EXECUTION)
    assert strategies(HoodieConfig({})) == (SIZE_BASED_STRATEGY, SORT_AND_SIZE_EXECUTION)
    with pytest.raises(HoodieConfigError, match="only supports clustering plan strategy"):
        strategies(cfg(**{"hoodie.clustering.plan.strategy.class": SIZE_BASED_STRATEGY}))
    with pytest.raises(HoodieConfigError, match="only applicable to a table with the consistent hash index"):
        strategies(HoodieConfig({"hoodie.clustering.plan.strategy.class": CONSISTENT_BUCKET_STRATEGY}))
    with pytest.raises(HoodieConfigError, match="MERGE_ON_READ tables only"):
        ch.check_engine(cfg(), "COPY_ON_WRITE")
    assert ch.bucket_limits(cfg()) == (2, 2)
    assert ch.bucket_limits(cfg(**{"hoodie.bucket.index.min.num.buckets": "1",
                                   "hoodie.bucket.index.max.num.buckets": "8"})) == (1, 8)
    # Hudi raises a max below num.buckets (and lowers a min above it) to num.buckets.
    assert ch.bucket_limits(cfg(**{"hoodie.bucket.index.max.num.buckets": "1",
                                   "hoodie.bucket.index.min.num.buckets": "5"})) == (2, 2)
    with pytest.raises(HoodieConfigError, match="not a valid int"):
        ch.bucket_limits(cfg(**{"hoodie.bucket.index.max.num.buckets": "many"}))


def test_plan_records_children_and_sequence_in_each_group():
    meta = ch.initial_metadata("p", 2)
    slices = [FileSlice("p", n.file_id, "001", BaseFile(f"p/{n.file_id}_1-0-1_001.parquet", n.file_id, "001", size))
              for n, size in zip(meta.nodes, (3000, 10))]
    plan = plan_consistent_clustering(slices, {"p": meta}, cfg(**{
        "hoodie.parquet.max.file.size": "1000", "hoodie.bucket.index.max.num.buckets": "4"}), lambda p: "/t/" + p)
    groups = plan["clusteringPlan"]["inputGroups"]
    assert plan["clusteringPlan"]["strategy"]["strategyClassName"] == SINGLE_JOB_CONSISTENT_EXECUTION
    assert [g["numOutputFileGroups"] for g in groups] == [2, 1]
    extra = groups[0]["extraMetadata"]
    assert extra[ch.PARTITION_KEY] == "p" and extra[ch.SEQUENCE_NUMBER_KEY] == "0"
    assert [c.tag for c in ch.nodes_from_json(extra[ch.CHILD_NODE_KEY])] == ["REPLACE", "REPLACE"]
    # A partition another resize holds is left alone.
    assert plan_consistent_clustering(slices, {"p": meta}, cfg(), str, busy_partitions={"p"}) is None
