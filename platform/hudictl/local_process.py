"""What every local service shares (the demo's PostgreSQL, metastore and Prometheus, the pipelines'
metrics endpoints, the tests' servers): a free loopback port, and stopping a process group."""
from __future__ import annotations

import os
import signal
import socket
import subprocess


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
