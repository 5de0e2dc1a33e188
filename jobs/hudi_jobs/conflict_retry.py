"""Bounded retry of a batch that lost a write conflict (Hudi's
``hoodie.write.num.retries.on.conflict.failures``): under optimistic concurrency control the losing
writer's instant is rolled back and nothing of it stays, so running the whole batch again, from the
table as the winner left it, is what a user would do by hand. A short, growing, jittered pause
between attempts keeps two writers from colliding again in lockstep. A batch whose table lock was
lost while it committed was rolled back the same way, and is retried the same way."""
from __future__ import annotations

import logging
import random
import time
from typing import Callable, Mapping, TypeVar

from hudi_engine import config as C
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieClusteringUpdateError, HoodieLockLostError, HoodieWriteConflictError

T = TypeVar("T")
FIRST_PAUSE_SECONDS = 1.0
MAX_PAUSE_SECONDS = 30.0
CLUSTERING_WAIT_SECONDS = 900.0      # a clustering in the way is waited for this long at most
CLUSTERING_POLL_SECONDS = 2.0
log = logging.getLogger("hudi_jobs")


def conflict_retries(props: Mapping[str, str]) -> int:
    """The retries the job's options ask for."""
    return max(HoodieConfig(dict(props)).get(C.NUM_RETRIES_ON_CONFLICT_FAILURES), 0)


def pause_seconds(attempt: int, jitter: float) -> float:
    """The pause after failed attempt ``attempt`` (1-based): doubling from FIRST_PAUSE_SECONDS up to
    MAX_PAUSE_SECONDS, times ``jitter`` in [0.5, 1]."""
    return min(FIRST_PAUSE_SECONDS * 2 ** (attempt - 1), MAX_PAUSE_SECONDS) * jitter


def retry_on_conflict(batch: Callable[[], T], retries: int, what: str,
                      sleep: Callable[[float], object] = time.sleep,
                      clustering_wait_seconds: float = CLUSTERING_WAIT_SECONDS) -> T:
    """``batch()``, run again up to ``retries`` times while it loses a write conflict; then the
    last conflict is raised, saying how often it was tried (its message names the other instant
    and the file groups both changed). Updates refused because a pending clustering is rewriting
    their file groups (Hudi's reject-update strategy) count as a conflict too: the retry waits for
    that clustering to complete first (up to ``clustering_wait_seconds``). Other errors are never
    retried here."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return batch()
        except (HoodieWriteConflictError, HoodieClusteringUpdateError, HoodieLockLostError) as exc:
            lost = "lost its table lock while committing" if isinstance(exc, HoodieLockLostError) \
                else "lost a write conflict"
            if attempt > retries:
                if retries == 0:
                    raise
                raise type(exc)(
                    f"{what} {lost} on each of {attempt} attempts "
                    f"({C.NUM_RETRIES_ON_CONFLICT_FAILURES.key}={retries}); the last: {exc}") from exc
            if isinstance(exc, HoodieClusteringUpdateError):
                log.warning(f"{what} updates file groups a pending clustering rewrites (attempt {attempt} of "
                            f"{retries + 1}); retrying once clustering {', '.join(exc.clusterings)} completes")
                if not _wait_for_clusterings(exc, clustering_wait_seconds):
                    raise
                continue
            pause = pause_seconds(attempt, random.uniform(0.5, 1.0))
            log.warning(f"{what} {lost} (attempt {attempt} of {retries + 1}); retrying in {pause:.1f}s: {exc}")
            sleep(pause)


def _wait_for_clusterings(exc: HoodieClusteringUpdateError, limit_seconds: float) -> bool:
    """Whether the clusterings ``exc`` names left the pending timeline (completed, or rolled back)
    within ``limit_seconds``. Not cut short by a stop request: the batch commits once they are done."""
    from hudi_engine.api import HoodieTable

    deadline = time.monotonic() + limit_seconds
    while time.monotonic() < deadline:
        pending = {i.timestamp for i in HoodieTable.load(exc.base_path).timeline.pending()}
        if not pending & set(exc.clusterings):
            return True
        time.sleep(CLUSTERING_POLL_SECONDS)
    return False
