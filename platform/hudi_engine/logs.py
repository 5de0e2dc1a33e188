"""The engine logs through ``logging`` (a logger per module, under ``hudi_engine``); command-line
programs call :func:`show_progress` so what long work reports reaches the terminal: its messages,
and a progress bar of Spark tasks when stderr is a terminal."""
from __future__ import annotations

import logging
import sys

from . import progress

ENGINE_LOGGER = "hudi_engine"


def show_progress(level: int = logging.INFO) -> None:
    """Print the engine's messages at ``level`` and above on stderr as ``[hudi] ...`` and, on a
    terminal, progress bars of long work; once."""
    logger = logging.getLogger(ENGINE_LOGGER)
    logger.setLevel(level)
    if not any(getattr(h, "_hudi_progress", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[hudi] %(message)s"))
        handler._hudi_progress = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    if sys.stderr.isatty() and progress.sink() is None:
        progress.set_sink(progress.TerminalBar(sys.stderr))
