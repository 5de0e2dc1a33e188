"""Progress of long work (a write's, compaction's or clustering's Spark tasks), reported to one
sink: none by default, a progress bar on the terminal once ``logs.show_progress`` installs one."""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

# what, tasks done, tasks known so far (stages appear as the job runs, so the total can grow)
Sink = Callable[[str, int, int], None]

_sink: Sink | None = None


def set_sink(sink: Sink | None) -> Sink | None:
    """Install ``sink`` (None: report nothing); returns the one it replaces."""
    global _sink
    previous, _sink = _sink, sink
    return previous


def sink() -> Sink | None:
    return _sink


class TerminalBar:
    """``[hudi] upsert 20261125...: [#########...........]  18/40 tasks``, redrawn in place; a
    line is finished when its work is done or another one starts."""

    def __init__(self, stream: TextIO | None = None, width: int = 30):
        self._stream = stream
        self.width = width
        self._current: str | None = None
        self._lock = threading.Lock()

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def __call__(self, what: str, done: int, total: int) -> None:
        with self._lock:
            if self._current is not None and self._current != what:
                self.stream.write("\n")
            filled = self.width * done // total if total else 0
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[hudi] {what}: [{bar}] {done:>4}/{total} tasks")
            self._current = what
            if total and done >= total:
                self.stream.write("\n")
                self._current = None
            self.stream.flush()


class SparkTaskProgress:
    """Polls Spark's status tracker for the tasks of one job group and reports them to the sink,
    from a daemon thread, until stopped (then once more, with the final count)."""

    def __init__(self, spark, group: str, what: str, report: Sink, interval_s: float = 0.5):
        self.tracker = spark.sparkContext.statusTracker()
        self.group, self.what, self.report, self.interval_s = group, what, report, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"progress-{group}", daemon=True)
        self._last: tuple[int, int] | None = None

    def __enter__(self) -> "SparkTaskProgress":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._poll(final=True)

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

    def _poll(self, final: bool = False) -> None:
        done, total = self.counts()
        if final:
            done = total       # skipped stages never run their tasks
        if total and (done, total) != self._last:
            self._last = (done, total)
            self.report(self.what, done, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._poll()
            except Exception:       # the tracker is best effort; the work itself must not fail
                time.sleep(self.interval_s)
