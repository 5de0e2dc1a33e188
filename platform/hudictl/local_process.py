"""What every local service shares (the demo's PostgreSQL, metastore and Prometheus, the pipelines'
metrics endpoints, the tests' servers): a free loopback port, waiting until a started server
answers, and stopping a process group."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    """A loopback port nothing listens on now, for a service to bind."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(process: subprocess.Popen, timeout_s: float) -> None:
    """Stop a service started with ``start_new_session=True`` and every process it started:
    SIGTERM to its process group, then SIGKILL when it has not exited within ``timeout_s``."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_until(process: subprocess.Popen, ready: Callable[[], bool], what: str, log: Path, timeout_s: float,
               pause_s: float = 0.2) -> None:
    """Until ``ready()`` (which may raise OSError while the server boots) holds; RuntimeError naming
    ``what`` and its ``log`` when the process exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}; see {log}")
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(pause_s)
    raise RuntimeError(f"{what} did not answer within {timeout_s:.0f}s; see {log}")
