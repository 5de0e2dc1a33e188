"""The active timeline: a snapshot of ``.hoodie`` instants, and the only writer of instant files."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Iterable

from ..errors import HoodieTimelineError
from ..storage import Storage
from .avro_models import parse_commit_metadata
from .instant import (FILE_WRITING_ACTIONS, PENDING_FORMS, WRITE_ACTIONS, Instant, State, new_instant_time,
                      parse_instant_file_name)

META_DIR = ".hoodie"


@dataclass(frozen=True)
class Timeline:
    storage: Storage
    instants: tuple[Instant, ...]
    layout_version: int = 1
    timeline_dir: str = META_DIR

    @classmethod
    def load(cls, storage: Storage, layout_version: int = 1, timeline_path: str = "timeline") -> "Timeline":
        timeline_dir = f"{META_DIR}/{timeline_path}" if layout_version >= 2 else META_DIR
        # Keyed by time and completed action: a savepoint shares its commit's time.
        latest: dict[tuple[str, str], Instant] = {}
        for info in storage.list(timeline_dir):
            instant = parse_instant_file_name(info.path.rsplit("/", 1)[-1])
            if instant is None:
                continue
            key = (instant.timestamp, instant.with_state(State.COMPLETED).action)
            seen = latest.get(key)
            if seen is None or instant.state > seen.state:
                latest[key] = instant
        return cls(storage, tuple(sorted(latest.values())), layout_version, timeline_dir)

    # --- queries ---------------------------------------------------------------------------------
    def filter(self, actions: Iterable[str] | None = None, completed: bool | None = None,
               after: str | None = None, until: str | None = None) -> list[Instant]:
        """Instants by action and state, in the range (after, until] of instant times."""
        actions = set(actions) if actions is not None else None
        return [i for i in self.instants
                if (actions is None or i.action in actions)
                and (completed is None or i.is_completed == completed)
                and (after is None or i.timestamp > after)
                and (until is None or i.timestamp <= until)]

    def completed_instant(self, action: str, timestamp: str) -> Instant | None:
        """The completed ``action`` at ``timestamp``, with its completion time (version 8+ files name it)."""
        return next((i for i in self.filter([action], completed=True) if i.timestamp == timestamp), None)

    def completed_writes(self, after: str | None = None, until: str | None = None) -> list[Instant]:
        return self.filter(WRITE_ACTIONS, completed=True, after=after, until=until)

    def pending(self, actions: Iterable[str] | None = None) -> list[Instant]:
        return self.filter(actions, completed=False)

    @property
    def start(self) -> str | None:
        """Where the active timeline starts: its first write or table service that writes files.
        Files of older instants completed and were archived (Hudi's isBeforeTimelineStarts);
        cleans, rollbacks, restores and savepoints do not count."""
        return next((i.timestamp for i in self.instants if i.action in FILE_WRITING_ACTIONS), None)

    @property
    def last_instant_time(self) -> str | None:
        return self.instants[-1].timestamp if self.instants else None

    def last_completed_write(self, until: str | None = None) -> Instant | None:
        writes = self.completed_writes(until=until)
        return writes[-1] if writes else None

    @cached_property
    def _by_ts(self) -> dict[str, Instant]:
        by_ts: dict[str, Instant] = {}
        for i in self.instants:  # a write before the savepoint sharing its time
            by_ts.setdefault(i.timestamp, i)
        return by_ts

    def get(self, timestamp: str) -> Instant | None:
        return self._by_ts.get(timestamp)

    def is_completed(self, timestamp: str) -> bool:
        instant = self._by_ts.get(timestamp)
        return instant is not None and instant.is_completed

    # --- instant contents ------------------------------------------------------------------------
    def path_of(self, instant: Instant) -> str:
        return f"{self.timeline_dir}/{instant.file_name(self.layout_version)}"

    def read_details(self, instant: Instant) -> bytes:
        try:
            return self.storage.read_bytes(self.path_of(instant))
        except FileNotFoundError:
            raise HoodieTimelineError(f"instant file of {instant} is missing") from None

    def files_of(self, instant: Instant) -> list[Instant]:
        """The instant's files on storage, requested, inflight, then completed (those that exist; a
        completed instant's pending files may carry the name of the action it completed from)."""
        actions = PENDING_FORMS.get(instant.action, (instant.action,)) if instant.is_completed else (instant.action,)
        found = [Instant(instant.timestamp, action, state) for action in actions
                 for state in (State.REQUESTED, State.INFLIGHT)
                 if self.storage.exists(self.path_of(Instant(instant.timestamp, action, state)))]
        return found + ([instant] if instant.is_completed else [])

    @cached_property
    def _metadata(self) -> dict[Instant, dict]:
        return {}

    def commit_metadata(self, instant: Instant) -> dict:
        """Commit/replacecommit metadata in the table-version-6 JSON shape, for either layout.

        Read once per timeline snapshot: a completed instant's file never changes, and one write
        asks for the same commits several times (schema, record size, replaced file groups)."""
        if instant not in self._metadata:
            self._metadata[instant] = parse_commit_metadata(self.read_details(instant))
        return self._metadata[instant]

    def latest_schema(self, until: str | None = None) -> str | None:
        """The Avro schema of the newest completed write that recorded one."""
        for instant in reversed(self.completed_writes(until=until)):
            schema = self.commit_metadata(instant).get("extraMetadata", {}).get("schema")
            if schema:
                return schema
        return None

    def with_completed(self, instant: Instant, metadata: dict) -> "Timeline":
        """This snapshot as it will read once the pending ``instant`` completes with ``metadata``
        (its action's record, as :meth:`commit_metadata` gives it): what the metadata table must
        index just before the instant completes. Nothing is written."""
        done = instant.with_state(State.COMPLETED, new_instant_time(self.last_completion_time))
        after = replace(self, instants=tuple(sorted([i for i in self.instants if i != instant] + [done])))
        after._metadata[done] = metadata
        return after

    @property
    def last_completion_time(self) -> str | None:
        return max((i.completion_time for i in self.instants if i.completion_time), default=None)

    # --- writing ---------------------------------------------------------------------------------
    def _write(self, instant: Instant, content: bytes) -> None:
        self.storage.write_bytes(self.path_of(instant), content)

    def create_requested(self, instant: Instant, content: bytes = b"") -> Instant:
        requested = Instant(instant.timestamp, instant.action, State.REQUESTED)
        self._write(requested, content)
        return requested

    def transition_to_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        inflight = instant.with_state(State.INFLIGHT)
        self._write(inflight, content)
        return inflight

    def complete(self, instant: Instant, content: bytes) -> Instant:
        """The completed instant; in layout 2 its file name carries a completion time taken now,
        later than every instant and completion time on the timeline (writers complete under the
        table lock, so completion times order completions)."""
        completion = None
        if self.layout_version >= 2:
            latest = max(filter(None, (self.last_instant_time, self.last_completion_time, instant.timestamp)))
            completion = new_instant_time(latest)
        done = instant.with_state(State.COMPLETED, completion)
        self._write(done, content)
        return done

    def delete_pending_files(self, instant: Instant) -> None:
        """Remove the requested/inflight files of an instant being rolled back (inflight first, so
        a crash in between leaves a requested instant that is rolled back again)."""
        for state in (State.INFLIGHT, State.REQUESTED):
            self.storage.delete(self.path_of(Instant(instant.timestamp, instant.action, state)))
