"""The bounded retry of a batch that lost a write conflict."""
from __future__ import annotations

import pytest

from hudi_engine.errors import HoodieLockError, HoodieLockLostError, HoodieWriteConflictError
from hudi_jobs.conflict_retry import (MAX_PAUSE_SECONDS, conflict_retries, pause_seconds,
                                      retry_on_conflict)

CONFLICT = ("write 20250101120000500 to table orders conflicts with commit 20250101120000400: both changed "
            "file group(s) eu/f1-0 (commit 20250101120000400 completed since this write started 1 of them)")


class Batch:
    """Loses ``conflicts`` conflicts, then commits."""

    def __init__(self, conflicts: int):
        self.conflicts, self.calls = conflicts, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.conflicts:
            raise HoodieWriteConflictError(f"{CONFLICT} #{self.calls}")
        return "20250101120000900"


def test_a_batch_that_loses_conflicts_is_run_again_within_the_bound():
    pauses: list[float] = []
    batch = Batch(conflicts=2)
    assert retry_on_conflict(batch, 3, "the batch into orders", pauses.append) == "20250101120000900"
    assert batch.calls == 3 and len(pauses) == 2
    assert 0.5 <= pauses[0] <= 1.0 and 1.0 <= pauses[1] <= 2.0          # growing, jittered


def test_past_the_bound_the_job_fails_with_the_conflict_named():
    pauses: list[float] = []
    batch = Batch(conflicts=99)
    with pytest.raises(HoodieWriteConflictError) as failed:
        retry_on_conflict(batch, 2, "the compaction of orders", pauses.append)
    assert batch.calls == 3 and len(pauses) == 2
    message = str(failed.value)
    assert message.startswith("the compaction of orders lost a write conflict on each of 3 attempts "
                              "(hoodie.write.num.retries.on.conflict.failures=2); the last: ")
    assert "conflicts with commit 20250101120000400" in message and "eu/f1-0" in message and message.endswith("#3")


def test_no_retries_by_default_and_other_errors_are_never_retried():
    assert conflict_retries({}) == 0
    assert conflict_retries({"hoodie.write.num.retries.on.conflict.failures": "4"}) == 4
    batch = Batch(conflicts=1)
    with pytest.raises(HoodieWriteConflictError, match=r"#1$"):            # the engine's own message, as is
        retry_on_conflict(batch, 0, "the batch", lambda s: None)
    calls = []

    def lock_timeout():
        calls.append(1)
        raise HoodieLockError("lock not acquired in 60 s")
    with pytest.raises(HoodieLockError):
        retry_on_conflict(lock_timeout, 5, "the batch", lambda s: None)
    assert calls == [1]


def test_a_batch_whose_lock_was_lost_while_committing_is_run_again():
    """Its commit was refused and rolled back (nothing of it stays), as a lost conflict's is."""
    lost = ["the Hive Metastore lock on default.orders was lost while held"]

    def batch() -> str:
        if lost:
            raise HoodieLockLostError(lost.pop())
        return "committed"
    assert retry_on_conflict(batch, 1, "the batch into orders", lambda s: None) == "committed"

    def always_lost() -> str:
        raise HoodieLockLostError("the lock was lost while held")
    with pytest.raises(HoodieLockLostError, match="^the batch lost its table lock while committing on each of 2 "):
        retry_on_conflict(always_lost, 1, "the batch", lambda s: None)


def test_pauses_double_up_to_a_cap():
    assert [pause_seconds(n, 1.0) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert pause_seconds(20, 1.0) == MAX_PAUSE_SECONDS and pause_seconds(20, 0.5) == MAX_PAUSE_SECONDS / 2


def test_updates_refused_by_a_pending_clustering_are_retried_once_it_has_completed(tmp_path):
    """A real table (written by Apache Hudi) whose timeline holds a pending clustering: the retry
    waits for that instant to leave the pending timeline (here: its plan is finished by a thread),
    then runs the batch again."""
    import threading

    from hudi_engine.errors import HoodieClusteringUpdateError
    from tests.conftest import unzip_fixture

    base = unzip_fixture("sample_table/cow/v6_nonpartitioned.zip", tmp_path)
    clustering = "20990101000000000"
    requested = base / ".hoodie" / f"{clustering}.replacecommit.requested"
    requested.write_bytes(b"")
    calls: list[int] = []

    def batch() -> str:
        calls.append(1)
        if requested.exists():
            raise HoodieClusteringUpdateError("3 updates go to file groups a pending clustering rewrites",
                                              str(base), (clustering,))
        return "committed"

    threading.Timer(0.5, requested.unlink).start()       # the clustering leaves the pending timeline
    assert retry_on_conflict(batch, 3, "the batch into orders", lambda s: None) == "committed"
    assert len(calls) == 2

    requested.write_bytes(b"")
    with pytest.raises(HoodieClusteringUpdateError):      # still pending when the wait runs out
        retry_on_conflict(batch, 3, "the batch into orders", lambda s: None, clustering_wait_seconds=0.3)
