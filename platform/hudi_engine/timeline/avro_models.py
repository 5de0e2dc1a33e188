"""Avro models of the timeline's instant files, and one reader for commit metadata in both layouts.

Hudi (Java) stores several instant files as a one-record Avro object container file; the Java side
reads them with its own generated classes as reader schema, so what matters for interoperability is
that our writer schemas carry the same record full names, field names, types and defaults.

Which files hold what (observed in Hudi 0.14/0.15 and 1.x tables):

* table version 6 (``.hoodie/``): ``<ts>.commit``/``.deltacommit``/``.replacecommit`` and
  ``<ts>.inflight``/``.replacecommit.inflight`` are JSON; ``.commit.requested`` is empty;
  ``.replacecommit.requested`` is Avro ``HoodieRequestedReplaceMetadata``; ``.rollback.requested``
  is Avro ``HoodieRollbackPlan``, ``.rollback.inflight`` is empty, ``.rollback`` is Avro
  ``HoodieRollbackMetadata``.
* table versions 8 and 9 (``.hoodie/timeline/``, completed files ``<ts>_<completion ts>.<action>``):
  everything non-empty is Avro, commits included (``HoodieCommitMetadata``,
  ``HoodieReplaceCommitMetadata``).
* every version: ``.indexing.requested`` is Avro ``HoodieIndexPlan``, ``.indexing.inflight`` is
  empty, the completed ``.indexing`` is Avro ``HoodieIndexCommitMetadata``.
* every version: ``.compaction.requested`` is Avro ``HoodieCompactionPlan``, ``.compaction.inflight``
  is empty, and the completed compaction is a ``commit`` (JSON or Avro commit metadata as above).
"""
from __future__ import annotations

import copy
import io
import json
import os
from typing import Any

import fastavro
from fastavro.validation import ValidationError as _ValidationError
from fastavro.validation import validate as _fastavro_validate

from ..errors import HoodieTimelineError

NAMESPACE = "org.apache.hudi.avro.model"
AVRO_MAGIC = b"Obj\x01"
SYNC_SIZE = 16

_NO_DEFAULT = object()


# --- schema building blocks --------------------------------------------------------------------

def _string() -> dict:
    # Java's generated classes tag strings this way; mirroring it keeps our files like theirs.
    return {"type": "string", "avro.java.string": "String"}


def _array(items: Any) -> dict:
    return {"type": "array", "items": items}


def _map(values: Any) -> dict:
    return {"type": "map", "values": values, "avro.java.string": "String"}


def _field(name: str, type_: Any, default: Any = _NO_DEFAULT) -> dict:
    field = {"name": name, "type": type_}
    if default is not _NO_DEFAULT:
        field["default"] = default
    return field


def _optional(name: str, type_: Any) -> dict:
    """A nullable field that defaults to null, the shape most Hudi metadata fields have."""
    return _field(name, ["null", type_], None)


def _version() -> dict:
    # Hudi puts "int" first so the default can be 1 (a union default must match its first branch).
    return _field("version", ["int", "null"], 1)


def _record(name: str, fields: list, top_level: bool = False) -> dict:
    record = {"type": "record", "name": name}
    if top_level:
        record["namespace"] = NAMESPACE
    record["fields"] = fields
    return record


# --- rollback ----------------------------------------------------------------------------------

def _instant_info() -> dict:
    return _record("HoodieInstantInfo", [
        _field("commitTime", _string()),
        _field("action", _string()),
    ])


def rollback_plan_schema() -> dict:
    """``HoodieRollbackPlan``: content of ``<ts>.rollback.requested``."""
    rollback_request = _record("HoodieRollbackRequest", [
        _field("partitionPath", _string()),
        _optional("fileId", _string()),
        _optional("latestBaseInstant", _string()),
        _field("filesToBeDeleted", _array(_string()), []),
        _optional("logBlocksToBeDeleted", _map("long")),
    ])
    return _record("HoodieRollbackPlan", [
        _optional("instantToRollback", _instant_info()),
        _optional("RollbackRequests", _array(rollback_request)),
        _version(),
    ], top_level=True)


def rollback_metadata_schema() -> dict:
    """``HoodieRollbackMetadata``: content of the completed ``.rollback`` file.

    Same in 0.14/0.15 and 1.x files (no ``extraMetadata`` in what either writes).
    """
    partition_metadata = _record("HoodieRollbackPartitionMetadata", [
        _field("partitionPath", _string()),
        _field("successDeleteFiles", _array(_string())),
        _field("failedDeleteFiles", _array(_string())),
        _optional("rollbackLogFiles", _map("long")),
        _optional("logFilesFromFailedCommit", _map("long")),
    ])
    return _record("HoodieRollbackMetadata", [
        _field("startRollbackTime", _string()),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("commitsRollback", _array(_string())),
        _field("partitionMetadata", _map(partition_metadata)),
        _version(),
        _field("instantsRollback", _array(_instant_info()), []),
    ], top_level=True)


# --- replace -----------------------------------------------------------------------------------

def _clustering_plan() -> dict:
    # The 0.14/0.15 shape; 1.x appends missingSchedulePartitions, which readers default.
    slice_info = _record("HoodieSliceInfo", [
        _optional("dataFilePath", _string()),
        _optional("deltaFilePaths", _array(_string())),
        _field("fileId", ["null", _string()]),  # Hudi gives this one no default
        _optional("partitionPath", _string()),
        _optional("bootstrapFilePath", _string()),
        _version(),
    ])
    group = _record("HoodieClusteringGroup", [
        _optional("slices", _array(slice_info)),
        _optional("metrics", _map("double")),
        _field("numOutputFileGroups", ["int", "null"], 1),
        _optional("extraMetadata", _map(_string())),
        _version(),
    ])
    strategy = _record("HoodieClusteringStrategy", [
        _optional("strategyClassName", _string()),
        _optional("strategyParams", _map(_string())),
        _version(),
    ])
    return _record("HoodieClusteringPlan", [
        _optional("inputGroups", _array(group)),
        _optional("strategy", strategy),
        _optional("extraMetadata", _map(_string())),
        _version(),
        _optional("preserveHoodieMetadata", "boolean"),
    ])


def requested_replace_metadata_schema() -> dict:
    """``HoodieRequestedReplaceMetadata``: content of ``.replacecommit.requested`` (and, in 1.x,
    ``.clustering.requested``). For insert-overwrite the plan is null."""
    return _record("HoodieRequestedReplaceMetadata", [
        _optional("operationType", _string()),
        _optional("clusteringPlan", _clustering_plan()),
        _optional("extraMetadata", _map(_string())),
        _version(),
    ], top_level=True)


# --- compaction --------------------------------------------------------------------------------

def compaction_plan_schema() -> dict:
    """``HoodieCompactionPlan``: content of ``<ts>.compaction.requested`` (and ``.logcompaction.requested``).

    The 1.x shape, the one real plans carry; 0.x readers resolve it against their shorter schema.
    """
    operation = _record("HoodieCompactionOperation", [
        _field("baseInstantTime", ["null", _string()]),  # Hudi gives this one no default
        _optional("deltaFilePaths", _array(_string())),
        _optional("dataFilePath", _string()),
        _field("fileId", ["null", _string()]),  # nor this one
        _optional("partitionPath", _string()),
        _optional("metrics", _map("double")),
        _optional("bootstrapFilePath", _string()),
    ])
    strategy = _record("HoodieCompactionStrategy", [
        _optional("compactorClassName", _string()),
        _optional("strategyParams", _map(_string())),
        _version(),
    ])
    return _record("HoodieCompactionPlan", [
        _optional("operations", _array(operation)),
        _optional("extraMetadata", _map(_string())),
        _version(),
        _optional("strategy", strategy),
        _field("preserveHoodieMetadata", ["boolean", "null"], False),
        _optional("missingSchedulePartitions", _array(_string())),
    ], top_level=True)


# --- clean, savepoint, restore ------------------------------------------------------------------

def cleaner_plan_schema() -> dict:
    """``HoodieCleanerPlan``: content of ``<ts>.clean.requested`` (and ``.clean.inflight``)."""
    action_instant = _record("HoodieActionInstant", [
        _field("timestamp", _string()), _field("action", _string()), _field("state", _string()),
    ])
    clean_file_info = _record("HoodieCleanFileInfo", [
        _optional("filePath", _string()), _optional("isBootstrapBaseFile", "boolean"),
    ])
    return _record("HoodieCleanerPlan", [
        _optional("earliestInstantToRetain", action_instant),
        _field("policy", _string()),
        _optional("filesToBeDeletedPerPartition", _map(_array(_string()))),
        _version(),
        _optional("filePathsToBeDeletedPerPartition", _map(_array(clean_file_info))),
        _optional("partitionsToBeDeleted", _array(_string())),
    ], top_level=True)


def _clean_partition_metadata() -> dict:
    return _record("HoodieCleanPartitionMetadata", [
        _field("partitionPath", _string()), _field("policy", _string()),
        _field("deletePathPatterns", _array(_string())), _field("successDeleteFiles", _array(_string())),
        _field("failedDeleteFiles", _array(_string())), _optional("isPartitionDeleted", "boolean"),
    ])


def clean_metadata_schema() -> dict:
    """``HoodieCleanMetadata``: content of the completed ``.clean`` file."""
    return _record("HoodieCleanMetadata", [
        _field("policy", _string(), ""),
        _field("startCleanTime", _string()),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("earliestCommitToRetain", _string()),
        _field("lastCompletedCommitTimestamp", _string(), ""),
        _field("partitionMetadata", _map(_clean_partition_metadata())),
        _version(),
        _optional("bootstrapPartitionMetadata", _map("HoodieCleanPartitionMetadata")),
    ], top_level=True)


def savepoint_metadata_schema() -> dict:
    """``HoodieSavepointMetadata``: content of the completed ``.savepoint`` file."""
    partition = _record("HoodieSavepointPartitionMetadata", [
        _field("partitionPath", _string()), _field("savepointDataFile", _array(_string())),
    ])
    return _record("HoodieSavepointMetadata", [
        _field("savepointedBy", _string()),
        _field("savepointedAt", "long"),
        _field("comments", _string()),
        _field("partitionMetadata", _map(partition)),
    ], top_level=True)


def restore_plan_schema() -> dict:
    """``HoodieRestorePlan``: content of ``<ts>.restore.requested``."""
    return _record("HoodieRestorePlan", [
        _field("instantsToRollback", _array(_instant_info()), []),
        _field("version", ["int", "null"], 2),
        _optional("savepointToRestoreTimestamp", _string()),
    ], top_level=True)


def restore_metadata_schema() -> dict:
    """``HoodieRestoreMetadata``: content of the completed ``.restore`` file; embeds each rollback."""
    rollback = rollback_metadata_schema()
    del rollback["namespace"]
    return _record("HoodieRestoreMetadata", [
        _field("startRestoreTime", _string()),
        _field("timeTakenInMillis", "long"),
        _field("instantsToRollback", _array(_string())),
        _field("hoodieRestoreMetadata", _map(_array(["null", rollback]))),
        _version(),
        _field("restoreInstantInfo", _array("HoodieInstantInfo"), []),
        _optional("extraMetadata", _map(_string())),
    ], top_level=True)


# --- indexing (the asynchronous indexer) -------------------------------------------------------

def _index_partition_info() -> dict:
    return _record("HoodieIndexPartitionInfo", [
        _version(),
        _optional("metadataPartitionPath", _string()),
        _optional("indexUptoInstant", _string()),
        _optional("extraMetadata", _map(_string())),
    ])


def _index_partitions_record(name: str, *fields: dict) -> dict:
    """A version, ``fields``, then the partitions: the shape both indexing records have."""
    infos = _optional("indexPartitionInfos", _array(_index_partition_info()))
    return _record(name, [_version(), *fields, infos], top_level=True)


def index_plan_schema() -> dict:
    """``HoodieIndexPlan``: content of ``<ts>.indexing.requested``."""
    return _index_partitions_record("HoodieIndexPlan")


def index_commit_metadata_schema() -> dict:
    """``HoodieIndexCommitMetadata``: content of the completed ``.indexing`` file."""
    return _index_partitions_record("HoodieIndexCommitMetadata", _optional("operationType", _string()))


# --- commit metadata (Hudi 1.x) ----------------------------------------------------------------

# Write-stat fields only a delta (log) write fills; the 0.x JSON omits them for base-file writes.
DELTA_ONLY_STAT_FIELDS = ("logVersion", "logOffset", "baseFile", "logFiles")


def _write_stat() -> dict:
    runtime_stats = _record("HoodieRuntimeStats", [
        _optional("totalScanTime", "long"),
        _optional("totalCreateTime", "long"),
        _optional("totalUpsertTime", "long"),
    ])
    l = "long"
    return _record("HoodieWriteStat", [
        _optional("fileId", _string()), _optional("path", _string()), _optional("prevCommit", _string()),
        _optional("numWrites", l), _optional("numDeletes", l), _optional("numUpdateWrites", l),
        _optional("totalWriteBytes", l), _optional("totalWriteErrors", l),
        _optional("partitionPath", _string()),
        _optional("totalLogRecords", l), _optional("totalLogFiles", l),
        _optional("totalUpdatedRecordsCompacted", l), _optional("numInserts", l),
        _optional("totalLogBlocks", l), _optional("totalCorruptLogBlock", l),
        _optional("totalRollbackBlocks", l), _optional("fileSizeInBytes", l),
        _optional("logVersion", "int"), _optional("logOffset", l),
        _optional("baseFile", _string()), _optional("logFiles", _array(_string())),
        _optional("cdcStats", _map("long")), _optional("prevBaseFile", _string()),
        _optional("minEventTime", l), _optional("maxEventTime", l),
        _optional("runtimeStats", runtime_stats),
        _optional("totalLogFilesCompacted", l), _optional("totalLogReadTimeMs", l),
        _optional("totalLogSizeCompacted", l), _optional("tempPath", _string()),
        _optional("numUpdates", l),
    ])


def _commit_fields() -> list:
    return [
        _optional("partitionToWriteStats", _map(_array(_write_stat()))),
        _optional("compacted", "boolean"),
        _optional("extraMetadata", _map(_string())),
        _version(),
        _optional("operationType", _string()),
    ]


def commit_metadata_schema() -> dict:
    """``HoodieCommitMetadata`` as Hudi 1.x writes it (commit, deltacommit, inflight files)."""
    return _record("HoodieCommitMetadata", _commit_fields(), top_level=True)


def replace_commit_metadata_schema() -> dict:
    """``HoodieReplaceCommitMetadata`` as Hudi 1.x writes it (completed replacecommit)."""
    fields = _commit_fields()
    fields.append(_optional("partitionToReplaceFileIds", _map(_array(_string()))))
    return _record("HoodieReplaceCommitMetadata", fields, top_level=True)


ROLLBACK_PLAN = "rollback_plan"
ROLLBACK_METADATA = "rollback_metadata"
REQUESTED_REPLACE_METADATA = "requested_replace_metadata"
COMMIT_METADATA = "commit_metadata"
REPLACE_COMMIT_METADATA = "replace_commit_metadata"
COMPACTION_PLAN = "compaction_plan"
CLEANER_PLAN = "cleaner_plan"
CLEAN_METADATA = "clean_metadata"
SAVEPOINT_METADATA = "savepoint_metadata"
RESTORE_PLAN = "restore_plan"
RESTORE_METADATA = "restore_metadata"
INDEX_PLAN = "index_plan"
INDEX_COMMIT_METADATA = "index_commit_metadata"

_SCHEMA_FACTORIES = {
    ROLLBACK_PLAN: rollback_plan_schema,
    ROLLBACK_METADATA: rollback_metadata_schema,
    REQUESTED_REPLACE_METADATA: requested_replace_metadata_schema,
    COMMIT_METADATA: commit_metadata_schema,
    REPLACE_COMMIT_METADATA: replace_commit_metadata_schema,
    COMPACTION_PLAN: compaction_plan_schema,
    CLEANER_PLAN: cleaner_plan_schema,
    CLEAN_METADATA: clean_metadata_schema,
    SAVEPOINT_METADATA: savepoint_metadata_schema,
    RESTORE_PLAN: restore_plan_schema,
    RESTORE_METADATA: restore_metadata_schema,
    INDEX_PLAN: index_plan_schema,
    INDEX_COMMIT_METADATA: index_commit_metadata_schema,
}
SCHEMAS: dict[str, dict] = {kind: factory() for kind, factory in _SCHEMA_FACTORIES.items()}
# Callers may also name a kind by Hudi's record name, short or full.
_KIND_ALIASES = {alias: kind for kind, schema in SCHEMAS.items()
                 for alias in (schema["name"], f"{NAMESPACE}.{schema['name']}")}
_PARSED = {kind: fastavro.parse_schema(copy.deepcopy(schema)) for kind, schema in SCHEMAS.items()}
_SCHEMA_JSON = {kind: json.dumps(schema, separators=(",", ":")).encode("utf-8")
                for kind, schema in SCHEMAS.items()}


def schema_for(kind: str) -> dict:
    """The schema dict of a kind; a copy, so callers cannot corrupt the shared one."""
    return copy.deepcopy(SCHEMAS[_resolve_kind(kind)])


def _resolve_kind(kind: str) -> str:
    if kind in SCHEMAS:
        return kind
    if kind in _KIND_ALIASES:
        return _KIND_ALIASES[kind]
    raise ValueError(f"unknown instant Avro kind {kind!r}; expected one of {sorted(SCHEMAS)}")


def full_names(schema: Any, namespace: str | None = None) -> list[str]:
    """Full names of every named type a raw schema defines, in definition order.

    Java resolves writer against reader records by full name, so this is what must match Hudi.
    """
    names: list[str] = []

    def walk(node: Any, ns: str | None) -> None:
        if isinstance(node, list):
            for branch in node:
                walk(branch, ns)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind in ("record", "error", "enum", "fixed"):
            name = node["name"]
            if "." in name:
                full = name
            else:
                own_ns = node.get("namespace", ns)
                full = f"{own_ns}.{name}" if own_ns else name
            names.append(full)
            child_ns = full.rsplit(".", 1)[0] if "." in full else None
            for field in node.get("fields", []):
                walk(field["type"], child_ns)
        elif kind == "array":
            walk(node["items"], ns)
        elif kind == "map":
            walk(node["values"], ns)
        elif isinstance(kind, (dict, list)):
            walk(kind, ns)

    walk(schema, namespace)
    return names


# --- encoding ----------------------------------------------------------------------------------

def _named_types(schema: Any, registry: dict) -> None:
    for_walk = [schema]
    while for_walk:
        node = for_walk.pop()
        if isinstance(node, list):
            for_walk.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == "record":
                registry[node["name"]] = node
                for field in node["fields"]:
                    for_walk.append(field["type"])
            elif node.get("type") == "array":
                for_walk.append(node["items"])
            elif node.get("type") == "map":
                for_walk.append(node["values"])


def _registry(schema: Any) -> dict:
    registry: dict = {}
    _named_types(schema, registry)
    return registry


_REGISTRIES = {kind: _registry(schema) for kind, schema in SCHEMAS.items()}


def _complete(schema: Any, value: Any, registry: dict, where: str) -> Any:
    """Fill absent fields with their defaults and reject unknown ones.

    Java's builders fill defaults too, so a file we write holds what Hudi would have written; and a
    misspelt key would otherwise be dropped silently by the Avro encoder.
    """
    if isinstance(schema, str):
        if schema in registry:
            return _complete(registry[schema], value, registry, where)
        return value
    if isinstance(schema, list):
        if value is None:
            return None
        branches = [b for b in schema if b != "null"]
        if len(branches) == 1:
            return _complete(branches[0], value, registry, where)
        return value
    kind = schema.get("type")
    if kind == "record":
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected a dict for record {schema['name']}, "
                             f"got {type(value).__name__}")
        known = [f["name"] for f in schema["fields"]]
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown} for record {schema['name']}; "
                             f"fields are {known}")
        out = {}
        for field in schema["fields"]:
            name = field["name"]
            if name in value:
                out[name] = _complete(field["type"], value[name], registry, f"{where}.{name}")
            elif "default" in field:
                out[name] = copy.deepcopy(field["default"])
            else:
                raise ValueError(f"{where}: missing field {name!r} of record {schema['name']} "
                                 f"(it has no default)")
        return out
    if kind == "array" and isinstance(value, (list, tuple)):
        return [_complete(schema["items"], v, registry, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind == "map" and isinstance(value, dict):
        return {k: _complete(schema["values"], v, registry, f"{where}[{k!r}]") for k, v in value.items()}
    return value


def _long_bytes(n: int) -> bytes:
    """Avro's zig-zag varint, needed for the container framing we write by hand."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _bytes_field(b: bytes) -> bytes:
    return _long_bytes(len(b)) + b


def complete_record(kind: str, record: dict) -> dict:
    """``record`` with every absent field at its default, checked against the kind's schema."""
    kind = _resolve_kind(kind)
    full = _complete(SCHEMAS[kind], record, _REGISTRIES[kind], SCHEMAS[kind]["name"])
    # Validating with errors raised builds (and JSON-formats) an error for every union branch that
    # does not match, ten times the cost of the check: check first, explain only a bad record.
    if not _fastavro_validate(full, _PARSED[kind], raise_errors=False):
        try:
            _fastavro_validate(full, _PARSED[kind], raise_errors=True)
        except _ValidationError as exc:
            raise ValueError(f"record does not match {SCHEMAS[kind]['name']}: {exc}") from exc
    return full


def encode_instant_avro(kind: str, record: dict, sync_marker: bytes | None = None) -> bytes:
    """Serialize one record as the Avro object container file Hudi writes for an instant.

    Framing matches Java's ``DataFileWriter`` as Hudi drives it: magic, a metadata map holding only
    ``avro.schema`` (no ``avro.codec`` key, i.e. the null codec), a random 16-byte sync marker, then a
    single block of one record followed by the same marker. ``sync_marker`` is for reproducible
    tests only.
    """
    kind = _resolve_kind(kind)
    full = complete_record(kind, record)
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, _PARSED[kind], full)
    datum_bytes = datum.getvalue()

    sync = os.urandom(SYNC_SIZE) if sync_marker is None else bytes(sync_marker)
    if len(sync) != SYNC_SIZE:
        raise ValueError(f"sync marker must be {SYNC_SIZE} bytes, got {len(sync)}")
    header = (AVRO_MAGIC
              + _long_bytes(1) + _bytes_field(b"avro.schema") + _bytes_field(_SCHEMA_JSON[kind])
              + _long_bytes(0)
              + sync)
    block = _long_bytes(1) + _long_bytes(len(datum_bytes)) + datum_bytes + sync
    return header + block


# --- decoding ----------------------------------------------------------------------------------

def _reader(data: bytes):
    if not data:
        raise HoodieTimelineError("instant file is empty; it holds no Avro metadata")
    if not bytes(data[:4]) == AVRO_MAGIC:
        raise HoodieTimelineError(f"instant file is not an Avro container (starts with {bytes(data[:8])!r})")
    try:
        return fastavro.reader(io.BytesIO(data))
    except Exception as exc:  # fastavro raises several types for a corrupt header
        raise HoodieTimelineError(f"corrupt Avro instant file: {exc}") from exc


def writer_schema(data: bytes) -> dict:
    """The schema embedded in an instant file, as written (names not expanded)."""
    return json.loads(_reader(data).metadata["avro.schema"])


def decode_instant_avro(data: bytes) -> dict:
    """The single record of an Avro instant file, decoded with its own embedded schema."""
    reader = _reader(data)
    try:
        for record in reader:
            return record
    except Exception as exc:
        raise HoodieTimelineError(f"corrupt Avro instant file: {exc}") from exc
    raise HoodieTimelineError("Avro instant file holds no record")


# --- commit metadata in one shape ---------------------------------------------------------------

_COMMIT_RECORDS = ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata")


def empty_commit_metadata() -> dict:
    """What an empty instant file (e.g. ``.commit.requested``) means: nothing written yet."""
    return {
        "partitionToWriteStats": {},
        "partitionToReplaceFileIds": {},
        "extraMetadata": {},
        "operationType": None,
        "compacted": False,
    }


def _normalize(metadata: dict) -> dict:
    out = dict(metadata)
    for key in ("partitionToWriteStats", "partitionToReplaceFileIds", "extraMetadata"):
        if out.get(key) is None:
            out[key] = {}
    if out.get("compacted") is None:
        out["compacted"] = False
    out.setdefault("operationType", None)
    out["partitionToWriteStats"] = {p: list(stats or []) for p, stats in out["partitionToWriteStats"].items()}
    return out


def commit_metadata_from_avro(data: bytes) -> dict:
    """Turn 1.x Avro commit/replacecommit metadata into the 0.x JSON shape.

    The 0.x JSON has no ``version`` and leaves delta-only stat fields out of base-file stats; doing
    the same here lets callers test ``"baseFile" in stat`` whichever layout the table uses.
    """
    name = writer_schema(data).get("name", "")
    if name.rsplit(".", 1)[-1] not in _COMMIT_RECORDS:
        raise HoodieTimelineError(f"instant file holds {name}, not commit metadata")
    record = decode_instant_avro(data)
    record.pop("version", None)
    out = _normalize(record)
    for partition, stats in out["partitionToWriteStats"].items():
        out["partitionToWriteStats"][partition] = [
            {k: v for k, v in stat.items() if not (v is None and k in DELTA_ONLY_STAT_FIELDS)}
            for stat in stats
        ]
    return out


def parse_commit_metadata(data: bytes) -> dict:
    """Commit metadata of any table version, in the 0.x JSON shape.

    Table version 6 writes JSON, 8 and 9 write Avro; the content, not the table version, decides,
    because a table upgraded in place keeps its older files.
    """
    data = bytes(data)
    if data[:4] == AVRO_MAGIC:
        return commit_metadata_from_avro(data)
    stripped = data.lstrip()
    if not stripped:
        return empty_commit_metadata()
    if stripped[:1] == b"{":
        try:
            parsed = json.loads(stripped.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HoodieTimelineError(f"corrupt JSON commit metadata: {exc}") from exc
        if not isinstance(parsed, dict):
            raise HoodieTimelineError("JSON commit metadata is not an object")
        return _normalize(parsed)
    raise HoodieTimelineError(f"commit metadata is neither JSON nor Avro (starts with {data[:8]!r})")
