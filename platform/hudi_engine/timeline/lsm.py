"""The LSM history of a layout-2 timeline (table versions 8+), as Hudi 1.x's ``LSMTimeline`` and
``LSMTimelineWriter`` lay it out; pure (names, manifests, records, compaction choices), no I/O.

``.hoodie/timeline/history/`` holds parquet files of ``HoodieLSMTimelineInstant`` records, one per
archived action, named ``<min instant>_<max instant>_<layer>.parquet``. A file is part of the
history only once a manifest lists it: ``manifest_<n>`` (JSON, Jackson's pretty printing) names the
files of snapshot ``n`` and ``_version_`` holds the newest ``n``, so a writer killed between the
parquet file and the manifest leaves nothing a reader sees. When a layer holds
``hoodie.timeline.compaction.batch.size`` files, its oldest are merged into one file of the next
layer (a new manifest swaps them), and manifests beyond the retained snapshots are cleaned.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterable

import pyarrow as pa

from .instant import CLEAN, CLUSTERING, COMPACTION, LOG_COMPACTION, REPLACE_COMMIT, Instant, State

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
LSM_INSTANT_VERSION = 1
# Hudi 1.0 stops gathering files to merge once they pass 1 GiB (a constant there).
COMPACTION_MAX_BYTES = 1024 ** 3

_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")
_MANIFEST = re.compile(rf"^{MANIFEST_PREFIX}(\d+)$")

# HoodieLSMTimelineInstant.avsc, as Avro's Java classes print it (the footer's parquet.avro.schema).
_STRING = {"type": "string", "avro.java.string": "String"}
AVRO_SCHEMA = {"type": "record", "name": "HoodieLSMTimelineInstant", "namespace": "org.apache.hudi.avro.model",
               "fields": [*({"name": n, "type": ["null", _STRING], "default": None}
                            for n in ("instantTime", "completionTime", "action")),
                          *({"name": n, "type": ["null", "bytes"], "default": None} for n in ("metadata", "plan")),
                          {"name": "version", "type": "int", "default": LSM_INSTANT_VERSION}]}
AVRO_SCHEMA_JSON = json.dumps(AVRO_SCHEMA, separators=(",", ":"))
# The same schema as parquet-avro converts it: optional strings and bytes, a required int.
ARROW_SCHEMA = pa.schema([pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()),
                          pa.field("action", pa.string()), pa.field("metadata", pa.binary()),
                          pa.field("plan", pa.binary()), pa.field("version", pa.int32(), nullable=False)])
# What a record says of its instant, without the metadata and plan bytes.
INSTANT_COLUMNS = ("instantTime", "completionTime", "action")
FOOTER = {"parquet.avro.schema": AVRO_SCHEMA_JSON, "writer.model.name": "avro"}


@dataclass(frozen=True, order=True)
class HistoryFile:
    """One parquet file of the history, as its name and a manifest entry describe it."""
    min_instant: str
    max_instant: str
    layer: int
    size: int = 0

    @property
    def name(self) -> str:
        return file_name(self.min_instant, self.max_instant, self.layer)


@dataclass(frozen=True)
class LSMRecord:
    """One archived action: its instant and completion times, completed action, the completed
    file's bytes (``metadata``) and its plan's (``plan``), each as the active timeline held them."""
    instant_time: str
    completion_time: str | None
    action: str
    metadata: bytes | None = None
    plan: bytes | None = None


def record_for(files: dict[Instant, bytes]) -> LSMRecord:
    """The record of one completed action from its instant files' contents (completed, and the
    requested and inflight ones still on the timeline), as Hudi's ``MetadataConversionUtils`` fills
    it: the plan of a clean, compaction or log compaction is its requested (else inflight) file; a
    replace commit's or clustering's is its inflight file's workload profile, else its requested plan."""
    completed = next(i for i in files if i.is_completed)
    pending = sorted((i for i in files if not i.is_completed), key=lambda i: i.state)
    plan = None
    if pending and pending[0].action in (CLEAN, COMPACTION, LOG_COMPACTION):
        plan = files[pending[0]] or None
    elif pending and pending[0].action in (REPLACE_COMMIT, CLUSTERING):
        by_state = {i.state: files[i] for i in pending}
        plan = by_state.get(State.INFLIGHT) or by_state.get(State.REQUESTED) or None
    return LSMRecord(completed.timestamp, completed.completion_time, completed.action,
                     files[completed] or None, plan)


def file_name(min_instant: str, max_instant: str, layer: int) -> str:
    return f"{min_instant}_{max_instant}_{layer}.parquet"


def parse_file_name(name: str, size: int = 0) -> HistoryFile | None:
    """The history file a name stands for, or None for other files (manifests, ``_version_``)."""
    m = _FILE.match(name)
    return HistoryFile(m.group(1), m.group(2), int(m.group(3)), size) if m else None


def manifest_name(version: int) -> str:
    return f"{MANIFEST_PREFIX}{version}"


def manifest_version(name: str) -> int | None:
    m = _MANIFEST.match(name)
    return int(m.group(1)) if m else None


def encode_manifest(files: Iterable[HistoryFile]) -> bytes:
    """``HoodieLSMTimelineManifest`` as Jackson's default pretty printer writes it."""
    entries = [f'{{\n    "fileName" : {json.dumps(f.name)},\n    "fileLen" : {f.size}\n  }}' for f in files]
    body = "[ " + ", ".join(entries) + " ]" if entries else "[ ]"
    return f'{{\n  "files" : {body}\n}}'.encode()


def decode_manifest(content: bytes, where: str) -> list[HistoryFile]:
    if not content.strip():
        return []
    try:
        entries = json.loads(content)["files"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{where} is not an LSM timeline manifest ({exc}); delete it and its _version_ "
                         "points at the previous manifest") from exc
    found = []
    for entry in entries:
        parsed = parse_file_name(entry["fileName"], int(entry.get("fileLen") or 0))
        if parsed is None:
            raise ValueError(f"{where} lists {entry['fileName']!r}, not a history file name "
                             "(<min instant>_<max instant>_<layer>.parquet)")
        found.append(parsed)
    return found


def files_to_compact(files: Iterable[HistoryFile], layer: int, batch: int,
                     max_bytes: int = COMPACTION_MAX_BYTES) -> list[HistoryFile]:
    """The layer's files to merge into one of the next layer (oldest first), or none: at least two,
    at most ``batch``, consecutive, stopping once they pass ``max_bytes`` (a big file alone starts
    over), and only once the layer holds ``batch`` files, as Hudi 1.x's ``LSMTimelineWriter`` does."""
    in_layer = sorted((f for f in files if f.layer == layer), key=lambda f: f.name)
    if len(in_layer) < batch:
        return []
    chosen: list[HistoryFile] = []
    total = 0
    for f in in_layer:
        chosen.append(f)
        total += f.size
        if len(chosen) >= batch:
            break
        if total > max_bytes:
            if len(chosen) >= 2:
                break
            chosen, total = [], 0
    return chosen if len(chosen) >= 2 else []


def compacted_file(files: list[HistoryFile]) -> HistoryFile:
    """The next layer's file that replaces ``files``: their whole instant range."""
    return HistoryFile(min(f.min_instant for f in files), max(f.max_instant for f in files), files[0].layer + 1)


def versions_to_clean(versions: Iterable[int], keep: int) -> list[int]:
    """Snapshot versions beyond the newest ``keep``."""
    return sorted(versions, reverse=True)[keep:]


def records_table(records: Iterable[LSMRecord]) -> pa.Table:
    rows = list(records)
    return pa.table({"instantTime": [r.instant_time for r in rows],
                     "completionTime": [r.completion_time for r in rows],
                     "action": [r.action for r in rows], "metadata": [r.metadata for r in rows],
                     "plan": [r.plan for r in rows], "version": [LSM_INSTANT_VERSION] * len(rows)},
                    schema=ARROW_SCHEMA)


def table_records(table: pa.Table) -> list[LSMRecord]:
    """The records of a history file, whatever extra columns it has."""
    cols = {name: table.column(name).to_pylist() if name in table.column_names else [None] * table.num_rows
            for name in ("instantTime", "completionTime", "action", "metadata", "plan")}
    return [LSMRecord(*(cols[name][i] for name in ("instantTime", "completionTime", "action", "metadata", "plan")))
            for i in range(table.num_rows)]


def latest_records(records: Iterable[LSMRecord]) -> list[LSMRecord]:
    """One record per (instant, action), by instant time: a run killed after its manifest but
    before deleting the active files archives those instants again in a later file."""
    by_key: dict[tuple[str, str], LSMRecord] = {}
    for r in records:
        by_key[(r.instant_time, r.action)] = r
    return sorted(by_key.values(), key=lambda r: (r.instant_time, r.action))
