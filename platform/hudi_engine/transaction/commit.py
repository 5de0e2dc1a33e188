"""Completing an instant: the one function that does it, for every action on every table.

Listeners (the metadata table) are kept in step first, so a reader that trusts the completed
instant finds everything it names; the markers go last, once nothing can roll the instant back.
A listener sees the timeline as it is now, not as the caller loaded it: with several writers
other instants completed since (their metadata records must be trusted when it compacts). The
``guard`` runs last before the instant becomes visible: with several writers it checks that the
table lock the conflict check ran under is still held (keeping the metadata table in step can take
seconds, and a lock can expire in them).
"""
from __future__ import annotations

from typing import Callable, Protocol

from ..file_group.markers import marker_dir
from ..table.meta_client import HoodieTable
from ..timeline.commit_metadata import encode_completed
from ..timeline.instant import FILE_WRITING_ACTIONS, Instant


class CommitListener(Protocol):
    """Told of an instant just before it completes (the metadata table's writer is one)."""

    def before_complete(self, table: HoodieTable, instant: Instant, metadata: dict) -> None: ...


def complete(table: HoodieTable, instant: Instant, metadata: dict,
             listener: CommitListener | None = None, guard: Callable[[], None] | None = None) -> Instant:
    """Complete the pending ``instant`` with ``metadata`` (its action's record, as a dict)."""
    if listener is not None:
        listener.before_complete(table.reload(), instant, metadata)
    if guard is not None:
        guard()
    done = table.timeline.complete(instant, encode_completed(instant.action, metadata, table.layout_version))
    if instant.action in FILE_WRITING_ACTIONS:
        table.storage.delete_dir(marker_dir(instant.timestamp))
    return done
