"""Plans of pending table services, read from the timeline: which file groups a pending
compaction or clustering holds, so writers, cleaning and new plans keep away from them."""
from __future__ import annotations

from ..errors import HoodieTimelineError
from ..table.meta_client import HoodieTable
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import CLUSTERING, COMPACTION, REPLACE_COMMIT, Instant, State
from ..timeline.timeline import Timeline
from .clustering_plan import is_clustering
from .compaction_plan import planned_file_groups


def requested_plan(timeline: Timeline, instant: Instant) -> dict:
    """The Avro record of an instant's ``.requested`` file ({} when the file is empty)."""
    data = timeline.read_details(Instant(instant.timestamp, instant.action, State.REQUESTED))
    return decode_instant_avro(data) if data else {}


def pending_clusterings(table: HoodieTable) -> list[tuple[Instant, dict]]:
    """Pending replacecommits that are clusterings (not insert-overwrites), oldest first, with
    their requested replace metadata."""
    found = []
    for instant in table.timeline.pending([REPLACE_COMMIT, CLUSTERING]):
        try:
            plan = requested_plan(table.timeline, instant)
        except HoodieTimelineError:   # requested file gone: an insert-overwrite being rolled back
            continue
        if is_clustering(plan):
            found.append((instant, plan))
    return found


def pending_clustering_groups(table: HoodieTable) -> dict[tuple[str, str], str]:
    """(partition, file id) → instant of every file group a pending clustering is rewriting."""
    return {group: instant.timestamp for instant, plan in pending_clusterings(table)
            for group in planned_file_groups(plan)}


def pending_compaction_groups(table: HoodieTable) -> dict[tuple[str, str], str]:
    """(partition, file id) → instant of every file group a pending compaction is rewriting."""
    return {group: instant.timestamp for instant in table.timeline.pending([COMPACTION])
            for group in planned_file_groups(requested_plan(table.timeline, instant))}
