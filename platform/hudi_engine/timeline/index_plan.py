"""The asynchronous indexer's plan and commit metadata (Hudi's ``HoodieIndexPlan`` in
``<t>.indexing.requested``, ``HoodieIndexCommitMetadata`` in the completed ``.indexing``), and which
metadata partitions pending indexing instants are building.

Each partition's ``extraMetadata`` carries what writers need to keep it in step before its base
files exist: the number of file groups it is built with and the metadata-table instant of its base
files. Both are fixed when the indexing is scheduled.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import HoodieTimelineError
from .avro_models import INDEX_PLAN, decode_instant_avro, encode_instant_avro
from .instant import INDEXING, Instant, State

INDEX_OPERATION = "INDEX"          # WriteOperationType.INDEX, as Hudi records it
FILE_GROUPS_KEY = "fileGroupCount"
BUILD_INSTANT_KEY = "initInstant"


@dataclass(frozen=True)
class IndexPartition:
    """One metadata partition an indexing instant builds."""
    partition: str        # metadataPartitionPath
    upto: str             # indexUptoInstant: the newest completed data instant when scheduled
    file_groups: int
    build_instant: str    # the metadata-table instant its base files are written at


def _info(p: IndexPartition, upto: str | None = None) -> dict:
    return {"metadataPartitionPath": p.partition, "indexUptoInstant": upto or p.upto,
            "extraMetadata": {FILE_GROUPS_KEY: str(p.file_groups), BUILD_INSTANT_KEY: p.build_instant}}


def encode_plan(partitions: list[IndexPartition]) -> bytes:
    return encode_instant_avro(INDEX_PLAN, {"indexPartitionInfos": [_info(p) for p in partitions]})


def commit_record(partitions: list[IndexPartition], caught_up_to: str) -> dict:
    """The completed instant's ``HoodieIndexCommitMetadata``: each partition indexed up to the
    newest data instant the build and catch-up covered."""
    return {"operationType": INDEX_OPERATION,
            "indexPartitionInfos": [_info(p, caught_up_to) for p in partitions]}


def decode_partitions(data: bytes) -> list[IndexPartition]:
    """The partitions of a plan or of index commit metadata."""
    record = decode_instant_avro(data)
    out = []
    for info in record.get("indexPartitionInfos") or []:
        extra = info.get("extraMetadata") or {}
        path, upto = info.get("metadataPartitionPath"), info.get("indexUptoInstant")
        if not path or not upto or FILE_GROUPS_KEY not in extra or BUILD_INSTANT_KEY not in extra:
            raise HoodieTimelineError(
                f"indexing plan entry {info} lacks its partition, base instant, or the {FILE_GROUPS_KEY}/"
                f"{BUILD_INSTANT_KEY} this engine schedules with (another indexer's plan?): writers cannot keep "
                "its partitions in step; finish it with the indexer that scheduled it, or roll it back "
                "(hudictl table index build --mode rollback)")
        out.append(IndexPartition(path, upto, int(extra[FILE_GROUPS_KEY]), extra[BUILD_INSTANT_KEY]))
    return out


def planned_paths(timeline, instant: Instant) -> list[str]:
    """The partitions of a pending plan, whoever wrote it (only their paths)."""
    record = decode_instant_avro(timeline.read_details(Instant(instant.timestamp, INDEXING, State.REQUESTED)))
    return [i["metadataPartitionPath"] for i in record.get("indexPartitionInfos") or [] if i.get("metadataPartitionPath")]


def pending_indexing(timeline) -> list[Instant]:
    """Indexing instants not completed yet, oldest first."""
    return sorted(timeline.pending([INDEXING]), key=lambda i: i.timestamp)


def plan_of(timeline, instant: Instant) -> list[IndexPartition]:
    return decode_partitions(timeline.read_details(Instant(instant.timestamp, INDEXING, State.REQUESTED)))


def indexing_partitions(timeline) -> dict[str, IndexPartition]:
    """partition → its plan entry, for every partition a pending indexing instant builds."""
    return {p.partition: p for i in pending_indexing(timeline) for p in plan_of(timeline, i)}


def partitions_to_index(asked: list[str], completed: list[str], building: list[str]) -> list[str]:
    """Of the partitions asked for, the ones to schedule: not built, not being built already."""
    return [p for p in dict.fromkeys(asked) if p not in completed and p not in building]
