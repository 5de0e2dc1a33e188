"""The archived timeline of table version 6: ``.hoodie/archived/.commits_.archive.<n>_<write token>``.

Each file is a Hudi log file (file id ``commits``, empty base instant, extension ``.archive``) of
Avro data blocks whose records are ``HoodieArchivedMetaEntry``: one per instant file archived
(requested, inflight and completed states each), carrying the file's content in the field for its
kind (commit metadata as Avro, cleaner plan, clean metadata, ...). Object stores cannot append, so
every archival writes the next file version, as our log writer does.
"""
from __future__ import annotations

import copy
import io
import json
import posixpath
import struct

import fastavro

from ..file_group.log_file import UNKNOWN_WRITE_TOKEN, BlockType, HeaderKey, LogBlock, encode_block, read_log_file
from ..file_group.log_file.format import BLOCK_CONTENT_VERSION
from ..storage import Storage
from ..timeline import avro_models as am
from ..timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)

ARCHIVE_PREFIX = ".commits_.archive."
_INT = struct.Struct(">i")


def _compaction_metadata_schema() -> dict:
    """``HoodieCompactionMetadata`` (deprecated, always null) still has a place in the union."""
    stat = {"type": "record", "name": "HoodieCompactionWriteStat", "fields": [
        {"name": "partitionPath", "type": ["null", am._string()]},
        {"name": "totalLogRecords", "type": ["null", "long"]},
        {"name": "totalLogFiles", "type": ["null", "long"]},
        {"name": "totalUpdatedRecordsCompacted", "type": ["null", "long"]},
        {"name": "hoodieWriteStat", "type": ["null", "HoodieWriteStat"]},
    ]}
    return {"type": "record", "name": "HoodieCompactionMetadata", "fields": [
        {"name": "partitionToCompactionWriteStats",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": stat}}]}]}


def _dedupe(schema, seen: set):
    """A schema where each named type is defined once and referred to by name afterwards, as Avro
    requires when several Hudi models share one (HoodieWriteStat, HoodieInstantInfo, ...)."""
    if isinstance(schema, list):
        return [_dedupe(s, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "record":
        name = schema["name"]
        if name in seen:
            return name
        seen.add(name)
        out = {k: v for k, v in schema.items() if k != "fields"}
        out["fields"] = [{**f, "type": _dedupe(f["type"], seen)} for f in schema["fields"]]
        return out
    if kind == "array":
        return {**schema, "items": _dedupe(schema["items"], seen)}
    if kind == "map":
        return {**schema, "values": _dedupe(schema["values"], seen)}
    return schema


# Entry field → (model kind or schema, Hudi's field order). The order is HoodieArchivedMetaEntry's.
_ENTRY_FIELDS = (
    ("hoodieCommitMetadata", am.COMMIT_METADATA), ("hoodieCleanMetadata", am.CLEAN_METADATA),
    ("hoodieCompactionMetadata", None), ("hoodieRollbackMetadata", am.ROLLBACK_METADATA),
    ("hoodieSavePointMetadata", am.SAVEPOINT_METADATA), ("commitTime", "string"), ("actionType", "string"),
    ("version", "version"), ("hoodieCompactionPlan", am.COMPACTION_PLAN), ("hoodieCleanerPlan", am.CLEANER_PLAN),
    ("actionState", "string"), ("hoodieReplaceCommitMetadata", am.REPLACE_COMMIT_METADATA),
    ("hoodieRequestedReplaceMetadata", am.REQUESTED_REPLACE_METADATA),
)


def archived_entry_schema() -> dict:
    fields = []
    for name, kind in _ENTRY_FIELDS:
        if kind == "string":
            fields.append({"name": name, "type": ["null", am._string()], "default": None})
        elif kind == "version":
            fields.append({"name": name, "type": ["int", "null"], "default": 1})
        else:
            model = _compaction_metadata_schema() if kind is None else am.schema_for(kind)
            model.pop("namespace", None)
            fields.append({"name": name, "type": ["null", model], "default": None})
    return _dedupe({"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": am.NAMESPACE,
                    "fields": fields}, set())


ENTRY_SCHEMA = archived_entry_schema()
ENTRY_SCHEMA_JSON = json.dumps(ENTRY_SCHEMA, separators=(",", ":"))
_PARSED = fastavro.parse_schema(copy.deepcopy(ENTRY_SCHEMA))


def _avro_commit(kind: str, metadata: dict) -> dict:
    """JSON commit metadata (table version 6) as the Avro model, keeping the fields it has."""
    stat_fields = {f["name"] for f in am.schema_for(am.COMMIT_METADATA)["fields"][0]["type"][1]["values"]
                   ["items"]["fields"]}
    record = {
        "partitionToWriteStats": {p: [{k: v for k, v in s.items() if k in stat_fields} for s in stats]
                                  for p, stats in (metadata.get("partitionToWriteStats") or {}).items()},
        "compacted": bool(metadata.get("compacted")),
        "extraMetadata": {k: str(v) for k, v in (metadata.get("extraMetadata") or {}).items()},
        "operationType": metadata.get("operationType"),
    }
    if kind == am.REPLACE_COMMIT_METADATA:
        record["partitionToReplaceFileIds"] = metadata.get("partitionToReplaceFileIds") or {}
    for stats in record["partitionToWriteStats"].values():
        for s in stats:
            s["prevCommit"] = None if s.get("prevCommit") is None else str(s["prevCommit"])
    return am.complete_record(kind, record)


def entry_for(instant: Instant, content: bytes) -> dict:
    """The archived record of one instant file (its state and its content)."""
    entry = {name: None for name, _ in _ENTRY_FIELDS}
    entry.update(commitTime=instant.timestamp, actionType=instant.action, actionState=instant.state.name,
                 version=1)
    field = content_field(instant)
    if field is not None and content.strip():
        name, kind = field
        if kind in (am.COMMIT_METADATA, am.REPLACE_COMMIT_METADATA):
            entry[name] = _avro_commit(kind, am.parse_commit_metadata(content))
        else:
            entry[name] = am.complete_record(kind, am.decode_instant_avro(content))
    return entry


def content_field(instant: Instant) -> tuple[str, str] | None:
    action, state = instant.action, instant.state
    if state == State.COMPLETED:
        return {COMMIT: ("hoodieCommitMetadata", am.COMMIT_METADATA),
                DELTA_COMMIT: ("hoodieCommitMetadata", am.COMMIT_METADATA),
                REPLACE_COMMIT: ("hoodieReplaceCommitMetadata", am.REPLACE_COMMIT_METADATA),
                CLEAN: ("hoodieCleanMetadata", am.CLEAN_METADATA),
                ROLLBACK: ("hoodieRollbackMetadata", am.ROLLBACK_METADATA),
                SAVEPOINT: ("hoodieSavePointMetadata", am.SAVEPOINT_METADATA)}.get(action)
    if state == State.REQUESTED:
        return {COMPACTION: ("hoodieCompactionPlan", am.COMPACTION_PLAN),
                CLEAN: ("hoodieCleanerPlan", am.CLEANER_PLAN),
                REPLACE_COMMIT: ("hoodieRequestedReplaceMetadata", am.REQUESTED_REPLACE_METADATA)}.get(action)
    return None


def archive_block(entries: list[dict]) -> bytes:
    """One Avro data block of archived entries, framed as a log block."""
    content = io.BytesIO()
    content.write(struct.pack(">ii", BLOCK_CONTENT_VERSION, len(entries)))
    for entry in entries:
        datum = io.BytesIO()
        fastavro.schemaless_writer(datum, _PARSED, entry)
        content.write(_INT.pack(len(datum.getvalue())) + datum.getvalue())
    return encode_block(LogBlock(BlockType.AVRO_DATA_BLOCK, {HeaderKey.SCHEMA: ENTRY_SCHEMA_JSON},
                                 content=content.getvalue()))


def archive_log(entries: list[dict], batch: int) -> bytes:
    """An archive file's bytes: the entries in blocks of ``batch`` (hoodie.commits.archival.batch)."""
    return b"".join(archive_block(entries[i:i + batch]) for i in range(0, len(entries), batch))


def archive_files(storage: Storage, folder: str) -> list[str]:
    return sorted((f.path for f in storage.list(folder)
                   if posixpath.basename(f.path).startswith(ARCHIVE_PREFIX)),
                  key=lambda p: int(posixpath.basename(p)[len(ARCHIVE_PREFIX):].split("_")[0]))


def next_archive_file(storage: Storage, folder: str) -> str:
    versions = [int(posixpath.basename(p)[len(ARCHIVE_PREFIX):].split("_")[0])
                for p in archive_files(storage, folder)]
    return f"{folder}/{ARCHIVE_PREFIX}{max(versions, default=0) + 1}_{UNKNOWN_WRITE_TOKEN}"


def read_archived_entries(storage: Storage, folder: str) -> list[dict]:
    """Every record of the archived timeline, oldest file first (torn blocks skipped)."""
    entries = []
    for path in archive_files(storage, folder):
        for block in read_log_file(storage, path):
            if block.block_type != BlockType.AVRO_DATA_BLOCK:
                continue
            schema = fastavro.parse_schema(json.loads(block.schema))
            count = struct.unpack_from(">i", block.content, 4)[0]
            pos = 8
            for _ in range(count):
                (length,) = _INT.unpack_from(block.content, pos)
                entries.append(fastavro.schemaless_reader(
                    io.BytesIO(block.content[pos + 4:pos + 4 + length]), schema, None))
                pos += 4 + length
    return entries


def archived_instants(storage: Storage, folder: str) -> list[Instant]:
    """Completed instants of the archived timeline, in time order."""
    return sorted({Instant(e["commitTime"], e["actionType"], State.COMPLETED)
                   for e in read_archived_entries(storage, folder) if e.get("actionState") == "COMPLETED"})
