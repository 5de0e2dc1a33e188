"""Where a streamer resumes: the checkpoint stored in the newest commit that carries one.

Hudi Streamer keeps the source position in the commit's extra metadata, so the data and the
position commit together: a batch that dies before its commit is simply fetched again. A
``--checkpoint`` or ``--ignore-checkpoint`` override is recorded in every commit it applies to
(``reset_key`` / ``ignore_key``), so it takes effect once, not on every restart.

Several streamers writing one table each have an id
(``hoodie.streamer.multiwriter.source.checkpoint.id``): a commit's checkpoint is then a JSON map
``{"<id>": "<checkpoint>"}`` of the streamer that made it, and each resumes from the newest commit
holding its own id, so no streamer ever continues from another one's source position.
"""
from __future__ import annotations

import json
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
                       ignore: str | None, writer_id: str | None = None) -> str | None:
    """The position to fetch from (None: the source's beginning), as Hudi's
    StreamerCheckpointUtils resolves it. ``commits`` are oldest first; with ``writer_id`` only
    that streamer's commits count."""
    commits = list(commits)
    if table_type == "MERGE_ON_READ" and any(c.action == "deltacommit" for c in commits):
        # Compaction commits carry no checkpoint; the delta commits do.
        commits = [c for c in commits if c.action == "deltacommit"]
    commits = _of_writer(commits, writer_id)
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


def _checkpoint_map(value: str | None) -> dict[str, str] | None:
    if not value or not value.startswith("{"):
        return None
    try:
        found = json.loads(value)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def writer_ids(commits: Iterable[CommitInfo]) -> list[str]:
    """The ids of the streamers whose checkpoints the commits hold (none: plain checkpoints)."""
    return sorted({k for c in commits for k in (_checkpoint_map(c.extra.get(CHECKPOINT_KEY)) or {})})


def _of_writer(commits: list[CommitInfo], writer_id: str | None) -> list[CommitInfo]:
    """The commits that hold ``writer_id``'s checkpoint, with it as their checkpoint; without an id,
    the commits as they are - refused when other streamers' checkpoint maps are among them."""
    if writer_id is None:
        ids = writer_ids(commits)
        if ids:
            raise HoodieError(
                f"the table's commits hold the checkpoints of several streamers ({', '.join(ids)}): give this "
                "one its own hoodie.streamer.multiwriter.source.checkpoint.id (the operator sets it to the "
                "pipeline's name when pipelines share a table)")
        return commits
    mine = []
    for commit in commits:
        checkpoints = _checkpoint_map(commit.extra.get(CHECKPOINT_KEY)) or {}
        if writer_id in checkpoints:
            mine.append(CommitInfo(commit.instant, commit.action,
                                   {**commit.extra, CHECKPOINT_KEY: checkpoints[writer_id]}))
    return mine


def checkpoint_metadata(checkpoint: str | None, override: str | None, ignore: str | None,
                        writer_id: str | None = None) -> dict[str, str]:
    """The extra metadata a batch's commit carries."""
    meta = {CHECKPOINT_KEY: json.dumps({writer_id: checkpoint or ""}) if writer_id else checkpoint or ""}
    if override is not None:
        meta[CHECKPOINT_RESET_KEY] = override
    if ignore is not None:
        meta[CHECKPOINT_IGNORE_KEY] = ignore
    return meta
