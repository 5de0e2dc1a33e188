"""What every local service shares (the demo's PostgreSQL, metastore and Prometheus, the pipelines'
metrics endpoints, the tests' servers): a free port, waiting until a started server
answers, and stopping a process group."""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


# Where ports are picked: below the kernel's ephemeral range (Linux's default starts at 32768).
# A port the kernel hands out for port 0 comes from that range, and once released it can become the
# local end of any outgoing connection before the service binds it ("address already in use").
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
PICK_SPAN = 12_000
_picked: set[int] = set()          # handed out by this process: never twice
_random = random.SystemRandom()    # processes started alike (test workers) do not pick alike


def free_port() -> int:
    """A port nothing is bound to now, on any address, for a service to bind: drawn at random
    below the ephemeral range, so only another picker could take it first."""
    low = _ephemeral_low()
    if low - PICK_SPAN >= 1024:
        for _ in range(200):
            port = _random.randrange(low - PICK_SPAN, low)
            if port not in _picked and _bindable(port):
                _picked.add(port)
                return port
    while True:                     # no room below the range (or all taken): the kernel's choice
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _picked:
            _picked.add(port)
            return port


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))     # fails while any address holds the port
        except OSError:
            return False
    return True


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
