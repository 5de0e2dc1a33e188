"""One action on a data table, from its requested instant to its completed one (delta-rs's
transaction, Hudi's write client): begin, conflict checks, commit, abort.

``begin`` takes the instant time under the table lock (several writers), after failed writes were
rolled back, and starts the instant's heartbeat before its requested file exists, so no writer
ever sees it pending without one. ``commit`` checks, under the lock, that nothing completed or
planned since ``begin`` changed the file groups this action changed, keeps the metadata table in
step and completes the instant. ``abort`` stops the action's Spark jobs and rolls it back; if that
fails the next writer does (with several writers, once the heartbeat expired).
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from ..concurrency.conflicts import (
    IN_FLIGHT,
    Conflict,
    GroupId,
    Touch,
    candidates,
    conflict_error,
    find_conflicts,
    markers_of,
    touch_of,
)
from ..concurrency.heartbeat import Heartbeat, heartbeat_expired
from ..concurrency.locks import locked_table, table_lock
from ..concurrency.settings import Concurrency, concurrency
from ..config import HoodieConfig
from ..spark_jobs import cancel_and_wait, job_group
from ..table.meta_client import HoodieTable
from ..timeline.commit_metadata import encode_commit_metadata
from ..timeline.instant import WRITE_ACTIONS, Instant, State, new_instant_time
from .commit import complete
from .metadata.listener import MetadataSync
from .recovery import rollback, rollback_failed_writes
from .restore import finish_pending_restore

log = logging.getLogger(__name__)


class Transaction:
    def __init__(self, table: HoodieTable, instant: Instant, cfg: HoodieConfig, spark=None,
                 known_at_start: dict[str, bool] | None = None, by_bucket: bool = False):
        self.table, self.instant, self.cfg, self.spark = table, instant, cfg, spark
        self.conc: Concurrency = concurrency(cfg)
        # The timeline this action starts from: what completes (or is planned) later may conflict.
        self.known_at_start = known_at_start if known_at_start is not None else {
            i.timestamp: i.is_completed for i in table.timeline.instants}
        # Conflicts under the simple bucket engine are by bucket number, not file id.
        self.by_bucket = by_bucket
        self.listener = MetadataSync(spark, cfg.raw())
        self.heartbeat: Heartbeat | None = None

    # --- begin -----------------------------------------------------------------------------------
    @classmethod
    def begin(cls, table: HoodieTable, action: str, cfg: HoodieConfig, spark=None,
              requested: bytes | Callable[[Instant], bytes] = b"",
              prepare: Callable[[HoodieTable], HoodieTable] | None = None,
              by_bucket: bool = False) -> "Transaction":
        """A new instant of ``action``: under the table lock, pending restores are finished and
        failed writes rolled back, ``prepare`` runs (e.g. building the metadata table), and the
        instant time is taken; then the heartbeat starts and the requested file is written."""
        conc = concurrency(cfg)
        with locked_table(table, cfg, f"starting a {action}") as table:
            table = rollback_failed_writes(finish_pending_restore(table), conc.failed_writes,
                                           conc.heartbeat_expiry_ms, spark)
            if prepare is not None:
                table = prepare(table)
            instant = Instant(new_instant_time(table.timeline.last_instant_time), action, State.REQUESTED)
            txn = cls(table, instant, cfg, spark, by_bucket=by_bucket)
            if conc.heartbeats:
                txn.heartbeat = Heartbeat(table.storage, instant.timestamp, conc.heartbeat_interval_ms).start()
            try:
                content = requested(instant) if callable(requested) else requested
                table.timeline.create_requested(instant, content)
            except BaseException:
                txn.stop_heartbeat()
                raise
        return txn

    @classmethod
    def resume(cls, table: HoodieTable, requested: Instant, cfg: HoodieConfig, spark=None) -> "Transaction":
        """The transaction of a plan already on the timeline (a compaction or clustering); whoever
        runs it keeps its heartbeat."""
        return cls(table, requested, cfg, spark)

    def inflight(self, content: bytes | dict = b"") -> Instant:
        if isinstance(content, dict):
            content = encode_commit_metadata(content, self.table.layout_version)
        self.instant = self.table.timeline.transition_to_inflight(self.instant, content)
        return self.instant

    def in_process(self) -> None:
        """This action's data steps run in this process: the metadata table's key locations are
        read here too (a Spark job costs more than the few files such a change writes)."""
        self.listener.keys_in_process = True

    @contextmanager
    def spark_jobs(self, description: str) -> Iterator[None]:
        """Spark jobs of this action, in one job group that ``abort`` can cancel."""
        with job_group(self.spark, self._job_group, description):
            yield

    @property
    def _job_group(self) -> str:
        return f"hudi-{self.instant.action}-{self.table.name}-{self.instant.timestamp}"

    # --- conflicts -------------------------------------------------------------------------------
    def check_early_conflicts(self, groups: Iterable[GroupId]) -> None:
        """Early conflict detection: before any data file is written, fail if a live writer's
        markers (or, with check.commit.conflict, a commit since this action began) name one of
        the existing file groups it is about to change."""
        groups = set(groups)
        if not self.conc.early_detection or self.conc.nbcc or not groups:
            return
        storage, ts = self.table.storage, self.instant.timestamp
        timeline = self.table.reload().timeline
        touches = [Touch(i, frozenset(markers_of(storage, i.timestamp)), IN_FLIGHT)
                   for i in timeline.pending(WRITE_ACTIONS)
                   if i.timestamp != ts and not heartbeat_expired(storage, i.timestamp, self.conc.heartbeat_expiry_ms)]
        if self.conc.early_check_commits:
            touches += self._touches_since_start(timeline)
        self._raise_on(find_conflicts(groups, touches, self.by_bucket))

    def _touches_since_start(self, timeline) -> list[Touch]:
        found = candidates(timeline.instants, self.known_at_start, self.instant.timestamp)
        return [t for t in (touch_of(timeline, i) for i in found) if t is not None]

    def _raise_on(self, conflicts: list[Conflict]) -> None:
        if conflicts:
            raise _Conflicted(conflicts)

    # --- commit and abort ------------------------------------------------------------------------
    def commit(self, metadata: dict, changed: Iterable[GroupId] | None = None) -> Instant:
        """Complete the instant with ``metadata``. With several writers, under the table lock and
        first: a conflict check of the file groups it ``changed`` against what completed or was
        planned since it began; the lock must still be held when the instant completes."""
        with table_lock(self.table.storage.base_uri, self.cfg, f"committing {self.instant.timestamp}",
                        self.table.name, self.conc.occ) as lock:
            if self.conc.occ and not self.conc.nbcc and changed is not None:
                self._raise_on(find_conflicts(set(changed), self._touches_since_start(self.table.reload().timeline),
                                              self.by_bucket))
            return complete(self.table, self.instant, metadata, self.listener,
                            guard=lock.check_held if lock is not None else None)

    def abort(self) -> bool:
        """Roll the failed instant back now (True when done); if even that fails the next writer
        will (with several writers: once its heartbeat expired)."""
        ts = self.instant.timestamp
        try:
            if self.spark is not None and not cancel_and_wait(self.spark, self._job_group):
                log.warning(f"tasks of {ts} are still running; leaving its rollback to the next write")
                return False
            with table_lock(self.table.storage.base_uri, self.cfg, f"rolling back {ts}",
                            self.table.name, self.conc.occ):
                table = self.table.reload()
                pending = table.timeline.get(ts)
                if pending is not None and not pending.is_completed:
                    rollback(table, pending, spark=self.spark)
            return True
        except Exception as exc:  # the original error matters more
            log.warning(f"could not roll back {ts} now ({exc}); the next write will")
            return False

    def stop_heartbeat(self) -> None:
        if self.heartbeat is not None:
            try:
                self.heartbeat.stop()
            except OSError as exc:  # an expired heartbeat does no harm once the instant is done
                log.warning(f"could not delete the heartbeat of {self.instant.timestamp}: {exc}")
            self.heartbeat = None

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        """A failed action is rolled back; a conflict is raised as the user's error, saying
        whether this action left anything behind."""
        try:
            if exc is not None:
                rolled_back = self.abort()
                if isinstance(exc, _Conflicted):
                    raise conflict_error(self.table.name, self.instant.timestamp, exc.conflicts,
                                         rolled_back) from None
        finally:
            self.stop_heartbeat()


class _Conflicted(Exception):
    """Internal: the conflicts found; raised to the user as HoodieWriteConflictError once the
    action was rolled back."""

    def __init__(self, conflicts: list[Conflict]):
        super().__init__(f"{len(conflicts)} conflicting instants")
        self.conflicts = conflicts
