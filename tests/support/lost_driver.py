"""A writer whose driver is lost after its files are on storage, before its commit: what a crash
leaves for the next writer to roll back."""
from __future__ import annotations

from hudi_engine.timeline.instant import DELTA_COMMIT
from hudi_engine.timeline.timeline import Timeline
from hudi_engine.transaction.transaction import Transaction


def lose_the_driver_before_delta_commits(monkeypatch) -> None:
    """Delta commits fail to complete with RuntimeError("driver lost"), and no rollback runs."""
    real_complete = Timeline.complete

    def die_on_delta_commit(self, instant, content):
        if instant.action == DELTA_COMMIT:
            raise RuntimeError("driver lost")
        return real_complete(self, instant, content)
    monkeypatch.setattr(Timeline, "complete", die_on_delta_commit)
    monkeypatch.setattr(Transaction, "abort", lambda self: False)
