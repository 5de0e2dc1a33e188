"""Commit metadata for table version 6 (HoodieCommitMetadata / HoodieReplaceCommitMetadata JSON)."""
from __future__ import annotations

from collections import defaultdict


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
