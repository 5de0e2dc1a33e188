"""What a completed instant's file holds: commit metadata for table version 6
(HoodieCommitMetadata / HoodieReplaceCommitMetadata JSON) and the Avro records of the other actions."""
from __future__ import annotations

import json
from collections import defaultdict

from .avro_models import CLEAN_METADATA, RESTORE_METADATA, SAVEPOINT_METADATA, encode_instant_avro
from .instant import CLEAN, RESTORE, ROLLBACK, SAVEPOINT

# Actions whose completed file is an Avro record (the rest hold commit metadata JSON).
_AVRO_RECORDS = {CLEAN: CLEAN_METADATA, ROLLBACK: "HoodieRollbackMetadata", SAVEPOINT: SAVEPOINT_METADATA,
                 RESTORE: RESTORE_METADATA}


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


def encode_completed(action: str, metadata: dict) -> bytes:
    """The bytes of a completed instant of ``action`` (a pending action's name, as it completes)."""
    record = _AVRO_RECORDS.get(action)
    return encode_instant_avro(record, metadata) if record else commit_metadata_json(metadata)
