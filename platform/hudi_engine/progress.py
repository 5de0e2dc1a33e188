"""Progress of long work (a write's, compaction's or clustering's Spark tasks), reported to one
sink: none by default, a progress bar on the terminal once ``logs.show_progress`` installs one."""
from __future__ import annotations

import sys
import threading
import time
from typing import Protocol, TextIO


class Sink(Protocol):
    """Told how far a piece of work is: tasks done of the tasks known so far (stages appear as a
    job runs, so the total can grow); ``final`` once the work is over."""

    def __call__(self, what: str, done: int, total: int, final: bool = False) -> None: ...


_sink: Sink | None = None


def set_sink(sink: Sink | None) -> Sink | None:
    """Install ``sink`` (None: report nothing); returns the one it replaces."""
    global _sink
    previous, _sink = _sink, sink
    return previous


def sink() -> Sink | None:
    return _sink


def before_message() -> None:
    """A log message is about to be printed: end a bar drawn halfway, so the two do not share a line."""
    if isinstance(_sink, TerminalBar):
        _sink.break_line()


class TerminalBar:
    """``[hudi] upsert 20261125...: [#########...........]  18/40 tasks``, redrawn in place; a
    line is finished when its work is over, another one starts, or a log message comes."""

    def __init__(self, stream: TextIO | None = None, width: int = 30):
        self._stream = stream
        self.width = width
        self._current: str | None = None
        self._lock = threading.Lock()

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def __call__(self, what: str, done: int, total: int, final: bool = False) -> None:
        with self._lock:
            if self._current is not None and self._current != what:
                self.stream.write("\n")
            filled = self.width * done // total if total else 0
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[hudi] {what}: [{bar}] {done:>4}/{total} tasks")
            self._current = what
            if final:
                self.stream.write("\n")
                self._current = None
            self.stream.flush()

    def break_line(self) -> None:
        with self._lock:
            if self._current is not None:
                self.stream.write("\n")
                self.stream.flush()
                self._current = None


class SparkTaskProgress:
    """Polls Spark's status tracker for the tasks of one job group and reports them to the sink,
    from a daemon thread, until stopped; then once more as final (every task done, unless the work
    failed)."""

    def __init__(self, spark, group: str, what: str, report: Sink, interval_s: float = 0.5):
        self.tracker = spark.sparkContext.statusTracker()
        self.group, self.what, self.report, self.interval_s = group, what, report, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"progress-{group}", daemon=True)
        self._last: tuple[int, int] | None = None

    def __enter__(self) -> "SparkTaskProgress":
        self._thread.start()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self._stop.set()
        self._thread.join()
        self._poll(final=True, failed=exc is not None)

    def counts(self) -> tuple[int, int]:
        """(tasks completed, tasks) over every stage of the group's jobs so far."""
        done = total = 0
        for job_id in self.tracker.getJobIdsForGroup(self.group):
            info = self.tracker.getJobInfo(job_id)
            for stage_id in (info.stageIds if info else []):
                stage = self.tracker.getStageInfo(stage_id)
                if stage is not None:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
        return done, total

    def _poll(self, final: bool = False, failed: bool = False) -> None:
        done, total = self.counts()
        if final and not failed:
            done = total       # skipped stages never run their tasks
        if total and (final or (done, total) != self._last):
            self._last = (done, total)
            self.report(self.what, done, total, final)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._poll()
            except Exception:       # the tracker is best effort; the work itself must not fail
                time.sleep(self.interval_s)
