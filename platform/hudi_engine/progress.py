"""Progress of long work (a write's, compaction's or clustering's Spark tasks, followed by
``spark_jobs``), reported to one sink: none by default, a progress bar on the terminal once
``logs.show_progress`` installs one."""
from __future__ import annotations

import sys
import threading
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
