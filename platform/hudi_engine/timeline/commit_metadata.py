"""What a completed instant's file holds: commit metadata (HoodieCommitMetadata /
HoodieReplaceCommitMetadata: JSON in timeline layout 1, table version 6; Avro in layout 2, versions
8+) and the Avro records of the other actions."""
from __future__ import annotations

import json
from collections import defaultdict

from .avro_models import (CLEAN_METADATA, COMMIT_METADATA, INDEX_COMMIT_METADATA, REPLACE_COMMIT_METADATA,
                          RESTORE_METADATA, SAVEPOINT_METADATA, encode_instant_avro, schema_for)
from .instant import CLEAN, CLUSTERING, INDEXING, REPLACE_COMMIT, RESTORE, ROLLBACK, SAVEPOINT

_AVRO_STAT_FIELDS = frozenset(
    f["name"] for f in next(t for t in schema_for(COMMIT_METADATA)["fields"]
                            if t["name"] == "partitionToWriteStats")["type"][1]["values"]["items"]["fields"])
_AVRO_FIELDS = {kind: frozenset(f["name"] for f in schema_for(kind)["fields"])
                for kind in (COMMIT_METADATA, REPLACE_COMMIT_METADATA)}
# Actions whose completed file is an Avro record (the rest hold commit metadata JSON).
_AVRO_RECORDS = {CLEAN: CLEAN_METADATA, ROLLBACK: "HoodieRollbackMetadata", SAVEPOINT: SAVEPOINT_METADATA,
                 RESTORE: RESTORE_METADATA, INDEXING: INDEX_COMMIT_METADATA}


def commit_metadata(stats: list[dict], operation: str, schema: str | None,
                    extra: dict[str, str] | None = None,
                    replaced: dict[str, list[str]] | None = None) -> dict:
    by_partition: dict[str, list[dict]] = defaultdict(list)
    for stat in sorted(stats, key=lambda s: (s["partitionPath"] or "", s["fileId"])):
        by_partition[stat["partitionPath"]].append(stat)
    extra_metadata = dict(extra or {})
    if schema:
        extra_metadata["schema"] = schema
    meta = {
        "partitionToWriteStats": dict(by_partition),
        "compacted": False,
        "extraMetadata": extra_metadata,
        "operationType": operation.upper(),
    }
    if replaced is not None:
        meta["partitionToReplaceFileIds"] = {p: sorted(ids) for p, ids in sorted(replaced.items())}
    return meta


def workload_profile(inserts: dict[str, int], updates: dict[tuple[str, str], int], operation: str) -> dict:
    """What the ``.inflight`` file holds: planned inserts per partition and updates per file group."""
    stats: dict[str, list[dict]] = defaultdict(list)
    for partition, count in sorted(inserts.items()):
        stats[partition].append(_planned(partition, "", num_inserts=count))
    for (partition, file_id), count in sorted(updates.items()):
        stats[partition].append(_planned(partition, file_id, num_updates=count))
    return {"partitionToWriteStats": dict(stats), "compacted": False, "extraMetadata": {},
            "operationType": operation.upper()}


def _planned(partition: str, file_id: str, num_inserts: int = 0, num_updates: int = 0) -> dict:
    return {"fileId": file_id, "path": None, "prevCommit": "null", "numWrites": 0,
            "numDeletes": 0, "numUpdateWrites": num_updates, "numInserts": num_inserts,
            "totalWriteBytes": 0, "totalWriteErrors": 0, "partitionPath": partition,
            "fileSizeInBytes": 0}


def totals(meta: dict) -> tuple[int, int]:
    """(bytes written, records written) of a commit, for record size estimation."""
    total_bytes = total_records = 0
    for stats in (meta.get("partitionToWriteStats") or {}).values():
        for stat in stats:
            total_bytes += stat.get("totalWriteBytes") or 0
            total_records += stat.get("numWrites") or 0
    return total_bytes, total_records


def commit_metadata_json(metadata: dict) -> bytes:
    """Serialize commit metadata the way Hudi 0.x does (Jackson pretty printer style)."""
    return json.dumps(metadata, indent=2, separators=(",", " : ")).encode("utf-8")


def encode_commit_metadata(metadata: dict, layout_version: int, replace: bool = False) -> bytes:
    """Commit metadata (a write's, or an ``.inflight`` file's workload profile) in the layout's form.
    The Avro record has no place for JSON-only fields (``recordsStats`` of a write stat, replaced
    file ids of a plain commit): they are left out, as Hudi's conversion leaves them."""
    if layout_version < 2:
        return commit_metadata_json(metadata)
    kind = REPLACE_COMMIT_METADATA if replace else COMMIT_METADATA
    stats = {partition: [{k: v for k, v in stat.items() if k in _AVRO_STAT_FIELDS} for stat in group]
             for partition, group in (metadata.get("partitionToWriteStats") or {}).items()}
    return encode_instant_avro(kind, {**{k: v for k, v in metadata.items() if k in _AVRO_FIELDS[kind]},
                                      "partitionToWriteStats": stats})


def encode_completed(action: str, metadata: dict, layout_version: int = 1) -> bytes:
    """The bytes of a completed instant of ``action`` (a pending action's name, as it completes)."""
    record = _AVRO_RECORDS.get(action)
    if record:
        return encode_instant_avro(record, metadata)
    return encode_commit_metadata(metadata, layout_version, replace=action in (REPLACE_COMMIT, CLUSTERING))
