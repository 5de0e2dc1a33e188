"""Where a streamer resumes: the checkpoint stored in the newest commit that carries one.

Hudi Streamer keeps the source position in the commit's extra metadata, so the data and the
position commit together: a batch that dies before its commit is simply fetched again. A
``--checkpoint`` or ``--ignore-checkpoint`` override is recorded in every commit it applies to
(``reset_key`` / ``ignore_key``), so it takes effect once, not on every restart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from hudi_engine.errors import HoodieError

CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
CHECKPOINT_RESET_KEY = "deltastreamer.checkpoint.reset_key"
CHECKPOINT_IGNORE_KEY = "deltastreamer.checkpoint.ignore_key"
_KEYS = (CHECKPOINT_KEY, CHECKPOINT_RESET_KEY, CHECKPOINT_IGNORE_KEY)


@dataclass(frozen=True)
class CommitInfo:
    """A completed write of the target: its instant, action and extra metadata."""
    instant: str
    action: str
    extra: Mapping[str, str]


def resolve_checkpoint(commits: Iterable[CommitInfo], table_type: str, override: str | None,
                       ignore: str | None) -> str | None:
    """The position to fetch from (None: the source's beginning), as Hudi's
    StreamerCheckpointUtils resolves it. ``commits`` are oldest first."""
    commits = list(commits)
    if table_type == "MERGE_ON_READ" and any(c.action == "deltacommit" for c in commits):
        # Compaction commits carry no checkpoint; the delta commits do.
        commits = [c for c in commits if c.action == "deltacommit"]
    carrying = next((c for c in reversed(commits) if any(c.extra.get(k) for k in _KEYS)), None)
    if carrying is None:
        return override
    if ignore is not None and carrying.extra.get(CHECKPOINT_IGNORE_KEY) != ignore:
        return None
    if override is not None and carrying.extra.get(CHECKPOINT_RESET_KEY) != override:
        return override
    stored = carrying.extra.get(CHECKPOINT_KEY)
    if stored:
        return stored
    if ignore is not None:          # this very ignore request already started afresh, nothing since
        return None
    raise HoodieError(
        f"commit {carrying.instant} of the target records a checkpoint override but no checkpoint; "
        "pass --checkpoint with the position to resume from, or --ignore-checkpoint <any new value> "
        "to start from the source's beginning")


def checkpoint_metadata(checkpoint: str | None, override: str | None, ignore: str | None) -> dict[str, str]:
    """The extra metadata a batch's commit carries."""
    meta = {CHECKPOINT_KEY: checkpoint or ""}
    if override is not None:
        meta[CHECKPOINT_RESET_KEY] = override
    if ignore is not None:
        meta[CHECKPOINT_IGNORE_KEY] = ignore
    return meta
