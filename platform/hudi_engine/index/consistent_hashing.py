"""The consistent-hashing bucket engine's pure logic, as Hudi 1.x keeps it.

A partition's buckets are nodes on a ring of hash values 0..Integer.MAX_VALUE. A node holds the
end (inclusive) of its hash range and the file id prefix (a UUID) of its one file group, whose id is
``<prefix>-0``. A key's hash is xxHash32 (seed 0) of the UTF-8 bytes of its hash-field values
joined with "", masked to a non-negative int; the key belongs to the first node whose value is at
least the hash, wrapping to the first node past the last. A partition's ring lives in JSON files
``<instant>.hashing_meta`` (HoodieConsistentHashingMetadata); the first one (instant
``00000000000000``) has ``num.buckets`` evenly spaced nodes with name-based UUIDs of the range and
the partition. Clustering resizes: a big bucket is split at the middle of its range into two new
nodes, adjacent small ones are merged into the last of them, and each node of a resize is a "child"
tagged REPLACE or DELETE that the committed metadata applies (turning them NORMAL).

No I/O and no Spark here: see ``consistent_meta`` for the files and the writer for tagging.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieError
from .bucket import key_parts

HASH_VALUE_MASK = 0x7FFFFFFF           # Integer.MAX_VALUE: the ring's upper bound
INIT_INSTANT = "00000000000000"         # HoodieTimeline.INIT_INSTANT_TS: the initial metadata's instant
METADATA_SUFFIX = ".hashing_meta"
COMMIT_SUFFIX = ".commit"
NORMAL, REPLACE, DELETE = "NORMAL", "REPLACE", "DELETE"
# Keys of a clustering group's extraMetadata (BaseConsistentHashingBucketClusteringPlanStrategy).
PARTITION_KEY = "clustering.group.partition"
CHILD_NODE_KEY = "clustering.group.child.node"
SEQUENCE_NUMBER_KEY = "clustering.group.sequence.no"


CONSISTENT_HASHING = "CONSISTENT_HASHING"


def is_consistent_hashing(cfg: HoodieConfig) -> bool:
    """``hoodie.index.type=BUCKET`` with ``hoodie.index.bucket.engine=CONSISTENT_HASHING``."""
    return (cfg.get_str(C.INDEX_TYPE).upper() == "BUCKET"
            and cfg.get_str(C.BUCKET_INDEX_ENGINE).upper() == CONSISTENT_HASHING)


def check_engine(cfg: HoodieConfig, table_type: str) -> None:
    """Hudi keeps the consistent-hashing engine to merge-on-read tables (its buckets' updates are
    logged, and resizing rewrites them through clustering)."""
    if is_consistent_hashing(cfg) and table_type != "MERGE_ON_READ":
        raise HoodieConfigError(
            f"{C.BUCKET_INDEX_ENGINE.key}=CONSISTENT_HASHING supports MERGE_ON_READ tables only, as in Hudi "
            f"(\"Consistent hash bucket index doesn't support CoW table\"); this table is {table_type}. Use "
            f"{C.TABLE_TYPE.alternatives[0]}=MERGE_ON_READ for a new table, or the SIMPLE bucket engine")


def bucket_limits(cfg: HoodieConfig) -> tuple[int, int]:
    """(min, max) buckets a resize keeps a partition within. As HoodieIndexConfig does, each
    defaults to num.buckets, and a max below it or a min above it is raised or lowered to it."""
    num = cfg.get(C.BUCKET_INDEX_NUM_BUCKETS)
    values = []
    for prop in (C.BUCKET_INDEX_MIN_NUM_BUCKETS, C.BUCKET_INDEX_MAX_NUM_BUCKETS):
        raw = cfg.get_str(prop)
        try:
            values.append(int(raw) if raw not in (None, "") else num)
        except ValueError:
            raise HoodieConfigError(f"{prop.key}={raw!r} is not a valid int") from None
    low, high = values
    return min(low, num), max(high, num)


def ring_lookup(values: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Index of the first node value >= each hash (``values`` sorted), wrapping to 0."""
    idx = np.searchsorted(values, np.asarray(hashes, np.int64), side="left")
    idx[idx == len(values)] = 0
    return idx.astype(np.int32)


# --- xxHash32 ---------------------------------------------------------------------------------------
_P1, _P2, _P3, _P4, _P5 = (np.uint64(v) for v in (2654435761, 2246822519, 3266489917, 668265263, 374761393))
_M32 = np.uint64(0xFFFFFFFF)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _M32


def _words(block: np.ndarray, at: int) -> np.ndarray:
    """Little-endian uint32 at byte ``at`` of every row."""
    b = block[:, at:at + 4].astype(np.uint64)
    return b[:, 0] | (b[:, 1] << np.uint64(8)) | (b[:, 2] << np.uint64(16)) | (b[:, 3] << np.uint64(24))


def _xxh32_same_length(block: np.ndarray, seed: int = 0) -> np.ndarray:
    """xxHash32 of each row of an (n, L) uint8 matrix (all inputs L bytes long), as uint64."""
    n, length = block.shape
    s = np.uint64(seed % (1 << 32))
    at = 0
    if length >= 16:
        v = [np.full(n, np.uint64(v0 % (1 << 32))) for v0 in
             (seed + int(_P1) + int(_P2), seed + int(_P2), seed, seed - int(_P1))]
        while at + 16 <= length:
            for i in range(4):
                v[i] = (_rotl((v[i] + _words(block, at + 4 * i) * _P2) & _M32, 13) * _P1) & _M32
            at += 16
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = np.full(n, (s + _P5) & _M32)
    h = (h + np.uint64(length)) & _M32
    while at + 4 <= length:
        h = (_rotl((h + _words(block, at) * _P3) & _M32, 17) * _P4) & _M32
        at += 4
    while at < length:
        h = (_rotl((h + block[:, at].astype(np.uint64) * _P5) & _M32, 11) * _P1) & _M32
        at += 1
    h ^= h >> np.uint64(15)
    h = (h * _P2) & _M32
    h ^= h >> np.uint64(13)
    h = (h * _P3) & _M32
    h ^= h >> np.uint64(16)
    return h


def xxhash32_utf8(values: pa.Array) -> np.ndarray:
    """xxHash32 (seed 0) of each string's UTF-8 bytes, as uint64: the vectorized form of
    ``metadata_table.hashing.xxh32`` (inputs grouped by length, so a batch hashes as a few array
    operations)."""
    values = pc.cast(values, pa.large_string())
    if values.null_count:
        values = pc.fill_null(values, "null")
    n = len(values)
    out = np.zeros(n, np.uint64)
    if n == 0:
        return out
    offsets = np.frombuffer(values.buffers()[1], np.int64)[values.offset:values.offset + n + 1]
    data = (np.frombuffer(values.buffers()[2], np.uint8) if values.buffers()[2] is not None
            else np.zeros(1, np.uint8))
    starts, lengths = offsets[:-1], offsets[1:] - offsets[:-1]
    for length in np.unique(lengths):
        rows = np.nonzero(lengths == length)[0]
        block = data[starts[rows, None] + np.arange(int(length))[None, :]] if length else \
            np.zeros((len(rows), 0), np.uint8)
        out[rows] = _xxh32_same_length(block)
    return out


def key_hashes(record_keys: pa.Array, hash_fields: Sequence[str]) -> np.ndarray:
    """Each record key's ring position: xxHash32 of its hash-field values joined with "" (a
    missing value is Java's "null"), masked with Integer.MAX_VALUE; int64."""
    if pc.any(pc.match_substring(record_keys, ":")).as_py():
        joined = pa.array(["".join("null" if v is None else v for v in key_parts(k, list(hash_fields)))
                           for k in record_keys.to_pylist()], pa.large_string())
    else:   # a plain key is hashed whole
        joined = record_keys
    return (xxhash32_utf8(joined) & np.uint64(HASH_VALUE_MASK)).astype(np.int64)


# --- metadata model --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    """A ConsistentHashingNode: the end of its hash range, its file group's id prefix, its tag."""
    value: int
    file_id_prefix: str | None
    tag: str = NORMAL

    @property
    def file_id(self) -> str:
        return f"{self.file_id_prefix}-0"

    def to_dict(self) -> dict:
        return {"value": self.value, "fileIdPrefix": self.file_id_prefix, "tag": self.tag}

    @classmethod
    def from_dict(cls, d: dict) -> "Node":
        return cls(int(d["value"]), d.get("fileIdPrefix"), d.get("tag") or NORMAL)


@dataclass(frozen=True)
class HashingMetadata:
    """A partition's HoodieConsistentHashingMetadata."""
    partition_path: str
    instant: str
    num_buckets: int
    seq_no: int
    nodes: tuple[Node, ...]
    version: int = 0
    children: tuple[Node, ...] = field(default=(), compare=False)   # not serialized, as in Hudi

    @property
    def filename(self) -> str:
        return self.instant + METADATA_SUFFIX

    def to_json(self) -> str:
        """The file's text, byte for byte as Hudi's Jackson pretty printer writes it."""
        return jackson_pretty({"version": self.version, "partitionPath": self.partition_path,
                               "instant": self.instant, "numBuckets": self.num_buckets, "seqNo": self.seq_no,
                               "nodes": [n.to_dict() for n in self.nodes]})

    def to_bytes(self) -> bytes:
        return self.to_json().encode("utf-8")

    @classmethod
    def from_json(cls, text: str | bytes) -> "HashingMetadata":
        try:
            d = json.loads(text)
            return cls(d.get("partitionPath") or "", d["instant"], int(d["numBuckets"]), int(d.get("seqNo") or 0),
                       tuple(Node.from_dict(n) for n in d.get("nodes") or []), int(d.get("version") or 0))
        except (ValueError, KeyError, TypeError) as exc:
            raise HoodieError(f"unreadable consistent hashing metadata: {exc}") from None


def timestamp_of(filename: str) -> str:
    """The instant a metadata or commit-marker file name starts with."""
    return filename.split(".")[0]


def _name_uuid(partition: str, start: int, end: int) -> str:
    """Java's UUID.nameUUIDFromBytes of (start as 8 bytes, end as 8 bytes, partition in UTF-8)."""
    data = start.to_bytes(8, "big", signed=True) + end.to_bytes(8, "big", signed=True) + partition.encode("utf-8")
    return str(uuid.UUID(bytes=hashlib.md5(data).digest(), version=3))


def initial_metadata(partition: str, num_buckets: int) -> HashingMetadata:
    """The first metadata of a partition: ``num_buckets`` nodes evenly spaced over the ring (the
    last at Integer.MAX_VALUE), each file id prefix a name-based UUID of its range and the
    partition, so concurrent writers creating it write the same file."""
    if num_buckets < 1:
        raise HoodieError(f"hoodie.bucket.index.num.buckets must be at least 1, got {num_buckets}")
    step = (HASH_VALUE_MASK + num_buckets - 1) // num_buckets
    nodes, start = [], 0
    for i in range(1, num_buckets + 1):
        end = min(step * i, HASH_VALUE_MASK)
        nodes.append(Node(end, _name_uuid(partition, start, end)))
        start = end
    return HashingMetadata(partition, INIT_INSTANT, num_buckets, 0, tuple(nodes))


def nodes_to_json(nodes: Iterable[Node]) -> str:
    """ConsistentHashingNode.toJsonString: a clustering group's child nodes."""
    return jackson_pretty([n.to_dict() for n in nodes])


def nodes_from_json(text: str) -> list[Node]:
    return [Node.from_dict(d) for d in json.loads(text)] if text else []


def jackson_pretty(value, indent: int = 0) -> str:
    """Jackson's DefaultPrettyPrinter: objects one field a line ("key" : value, two-space
    indent), arrays inline ("[ a, b ]", objects inside them opening on the same line)."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{ }"
        inner = ",\n".join(f"{pad}  {json.dumps(k, ensure_ascii=False)} : {jackson_pretty(v, indent + 1)}"
                           for k, v in value.items())
        return "{\n" + inner + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, indent) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


# --- the ring --------------------------------------------------------------------------------------
class Ring:
    """ConsistentBucketIdentifier: the nodes of a metadata with its children applied (REPLACE
    takes the place of the node with the same value, DELETE removes it)."""

    def __init__(self, metadata: HashingMetadata, children: Iterable[Node] = ()):
        ring = {n.value: n for n in metadata.nodes}
        for c in list(metadata.children) + list(children):
            if c.tag == REPLACE:
                ring[c.value] = c
            elif c.tag == DELETE:
                ring.pop(c.value, None)
            else:
                raise HoodieError(f"a child hashing node must be tagged REPLACE or DELETE: {c}")
        if not ring:
            raise HoodieError(f"consistent hashing metadata of partition '{metadata.partition_path}' has no nodes")
        self.metadata = metadata
        self.nodes: list[Node] = [ring[v] for v in sorted(ring)]
        self.values = np.array([n.value for n in self.nodes], np.int64)
        self._by_file_id = {n.file_id: i for i, n in enumerate(self.nodes)}

    def __len__(self) -> int:
        return len(self.nodes)

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """Index (into ``nodes``) of the first node with value >= each hash, wrapping to 0."""
        return ring_lookup(self.values, hashes)

    def node_of_file(self, file_id: str) -> int | None:
        return self._by_file_id.get(file_id)

    def former(self, i: int) -> int:
        return (i - 1) % len(self.nodes)

    def latter(self, i: int) -> int:
        return (i + 1) % len(self.nodes)

    def split(self, i: int, new_prefix: Callable[[], str]) -> list[Node] | None:
        """Two REPLACE children splitting node ``i`` at the middle of its range (None when its
        range is too small to split)."""
        node, former = self.nodes[i], self.nodes[self.former(i)]
        mid = former.value + node.value + (0 if former.value < node.value else HASH_VALUE_MASK + 1)
        mid = (mid >> 1) & HASH_VALUE_MASK
        if mid in (former.value, node.value):
            return None
        return [Node(mid, new_prefix(), REPLACE), Node(node.value, new_prefix(), REPLACE)]

    def merge(self, indexes: Sequence[int], new_prefix: Callable[[], str]) -> list[Node]:
        """Children merging contiguous nodes (in ring order) into one: DELETE all but the last,
        which is REPLACEd by a new file group."""
        if len(indexes) < 2:
            raise HoodieError("at least two buckets are needed for a merge")
        for a, b in zip(indexes, indexes[1:]):
            if self.former(b) != a:
                raise HoodieError("cannot merge buckets with discontinuous hash ranges")
        nodes = [self.nodes[i] for i in indexes]
        return [Node(n.value, None, DELETE) for n in nodes[:-1]] + [Node(nodes[-1].value, new_prefix(), REPLACE)]


def committed_metadata(metadata: HashingMetadata, children: Iterable[Node], instant: str) -> HashingMetadata:
    """The metadata a resize commits: the children applied, every node NORMAL, the sequence
    number one up; ``numBuckets`` keeps the partition's initial count, as Hudi does."""
    nodes = tuple(Node(n.value, n.file_id_prefix, NORMAL) for n in Ring(metadata, children).nodes)
    return replace(metadata, instant=instant, seq_no=metadata.seq_no + 1, nodes=nodes, children=())


def new_file_id_prefix() -> str:
    """FSUtils.createNewFileIdPfx: a random UUID."""
    return str(uuid.uuid4())


# --- resize planning -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SliceSize:
    file_id: str
    size: int          # FileSlice.getTotalFileSize: base file plus log files


@dataclass(frozen=True)
class ResizeGroup:
    """One clustering group of a resize: the file groups it reads, how many it writes, and the
    child nodes that describe the new buckets."""
    file_ids: tuple[str, ...]
    num_outputs: int
    children: tuple[Node, ...]
    kind: str          # "split", "merge" or "sort"


def plan_resize(ring: Ring, slices: Sequence[SliceSize], split_size: int, merge_size: int,
                max_buckets: int, min_buckets: int, sort_rest: bool = True,
                new_prefix: Callable[[], str] = new_file_id_prefix) -> list[ResizeGroup]:
    """SparkConsistentBucketClusteringPlanStrategy for one partition: split every slice bigger
    than ``split_size`` while the bucket count stays within ``max_buckets``, then merge runs of
    ring-adjacent slices no bigger than ``merge_size`` (together too) while it stays within
    ``min_buckets``, then (``sort_rest``) rewrite every other slice into a new file group."""
    unknown = [s.file_id for s in slices if ring.node_of_file(s.file_id) is None]
    if unknown:
        raise HoodieError(f"file groups {unknown[:3]} of partition '{ring.metadata.partition_path}' are not "
                          "buckets of its consistent hashing metadata")
    groups: list[ResizeGroup] = []
    split_slot = max_buckets - len(ring)
    remaining, rest = split_slot, []
    for s in slices:
        if s.size <= split_size or remaining <= 0:
            rest.append(s)
            continue
        children = ring.split(ring.node_of_file(s.file_id), new_prefix)
        if children is None:
            rest.append(s)
            continue
        remaining -= 1
        groups.append(ResizeGroup((s.file_id,), 2, tuple(children), "split"))
    merge_slot = len(ring) - min_buckets + (split_slot - remaining)
    merged, rest = _merge_groups(ring, rest, merge_size, merge_slot, new_prefix)
    groups += merged
    if sort_rest:
        for s in rest:
            node = ring.nodes[ring.node_of_file(s.file_id)]
            groups.append(ResizeGroup((s.file_id,), 1, (Node(node.value, new_prefix(), REPLACE),), "sort"))
    return groups


def _merge_groups(ring: Ring, slices: list[SliceSize], merge_size: int, slot: int,
                  new_prefix: Callable[[], str]) -> tuple[list[ResizeGroup], list[SliceSize]]:
    if len(slices) <= 1:
        return [], list(slices)
    fs = sorted(slices, key=lambda s: ring.nodes[ring.node_of_file(s.file_id)].value)
    node = [ring.node_of_file(s.file_id) for s in fs]
    n, added, groups = len(fs), [False] * len(fs), []
    for i in range(n):
        if added[i] or fs[i].size > merge_size:
            continue
        bounds, total = [i, i], fs[i].size
        for k in (0, 1):                      # backward first, then forward
            forward = k == 1
            while True:
                nxt = (bounds[k] + 1) % n if forward else (bounds[k] - 1) % n
                neighbour = ring.latter(node[bounds[k]]) if forward else ring.former(node[bounds[k]])
                if (slot == 0 or added[nxt] or node[nxt] != neighbour or total > merge_size
                        or fs[nxt].size > merge_size or nxt == bounds[1 - k]):
                    break
                total += fs[nxt].size
                bounds[k] = nxt
                slot -= 1
                if bounds[k] == i:
                    break
        start, end = bounds
        if start == i and end == i:
            continue
        members = []
        while True:
            added[start] = True
            members.append(start)
            if start == end:
                break
            start = (start + 1) % n
        groups.append(ResizeGroup(tuple(fs[m].file_id for m in members), 1,
                                  tuple(ring.merge([node[m] for m in members], new_prefix)), "merge"))
    return groups, [fs[i] for i in range(n) if not added[i]]


def group_extra_metadata(partition: str, children: Iterable[Node], seq_no: int) -> dict[str, str]:
    """A resize group's extraMetadata, as Hudi records it in the clustering plan."""
    return {PARTITION_KEY: partition, CHILD_NODE_KEY: nodes_to_json(children), SEQUENCE_NUMBER_KEY: str(seq_no)}
