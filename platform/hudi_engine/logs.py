"""The engine logs through ``logging`` (a logger per module, under ``hudi_engine``); command-line
programs call :func:`show_progress` so what long work reports reaches the terminal: its messages,
and a progress bar of Spark tasks when stderr is a terminal."""
from __future__ import annotations

import logging
import sys

from . import progress

ENGINE_LOGGER = "hudi_engine"


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a message comes (test runners swap it)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("[hudi] %(message)s"))

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass

    def emit(self, record: logging.LogRecord) -> None:
        progress.before_message()
        super().emit(record)


def show_progress(*loggers: str, level: int = logging.INFO) -> None:
    """Print the messages of the engine (and of ``loggers``, e.g. a job's package) at ``level``
    and above on stderr as ``[hudi] ...`` and, on a terminal, progress bars of long work; once."""
    for name in (ENGINE_LOGGER, *loggers):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
            logger.addHandler(_StderrHandler())
    if sys.stderr.isatty() and progress.sink() is None:
        progress.set_sink(progress.TerminalBar())
