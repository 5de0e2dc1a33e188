"""Which instants archival moves off the active timeline, by Hudi's rules; pure.

When more than ``hoodie.keep.max.commits`` completed commits are active, the oldest go until
``hoodie.keep.min.commits`` remain, but never: a commit at or after the first savepoint, the
earliest pending write, the earliest commit the last clean retains (replaced file groups are only
gone from disk once the cleaner passed their replacecommit, and incremental cleaning starts there),
or, for merge-on-read, the last compaction and the delta commits since (the trigger counts them:
Hudi's getEarliestInstantToRetainForCompaction); a
metadata table keeps what its table's active timeline may still need.
Completed cleans and rollbacks older than the newest commit archived go with them.
"""
from __future__ import annotations

from typing import Iterable

from ..timeline.instant import (CLEAN, CLUSTERING, COMPACTION, DELTA_COMMIT, LOG_COMPACTION, ROLLBACK, SAVEPOINT,
                                Instant)
from .clean_plan import COMMIT_ACTIONS


def instants_to_archive(instants: Iterable[Instant], min_commits: int, max_commits: int,
                        clean_retains: str | None = None, merge_on_read: bool = False,
                        compacted: Iterable[str] = (), retain_from: str | None = None) -> list[Instant]:
    """Completed instants to archive, oldest first. ``compacted``: times of completed compactions;
    ``retain_from``: a further bound (the metadata table's, set by its table's timeline)."""
    instants = sorted(instants)
    commits = [i for i in instants if i.is_completed and i.action in COMMIT_ACTIONS]
    if len(commits) <= max_commits:
        return []
    pending_writes = COMMIT_ACTIONS + (COMPACTION, LOG_COMPACTION, CLUSTERING)
    bounds = [i.timestamp for i in instants if not i.is_completed and i.action in pending_writes][:1]
    bounds += [i.timestamp for i in instants if i.action == SAVEPOINT and i.is_completed][:1]
    bounds += [b for b in (clean_retains, retain_from) if b]
    if merge_on_read:
        compacted = set(compacted)
        last_compaction = max((c.timestamp for c in commits if c.timestamp in compacted), default=None)
        bounds += [last_compaction] if last_compaction else [c.timestamp for c in commits if c.action == DELTA_COMMIT][:1]
    bound = min(bounds, default=None)
    eligible = [c for c in commits if bound is None or c.timestamp < bound]
    chosen = eligible[:max(0, len(commits) - min_commits)]
    if not chosen:
        return []
    newest = chosen[-1].timestamp
    others = [i for i in instants if i.is_completed and i.action in (CLEAN, ROLLBACK) and i.timestamp < newest]
    return sorted(chosen + others)

