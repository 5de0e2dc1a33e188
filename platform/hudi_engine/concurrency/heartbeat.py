"""Writer heartbeats, as Hudi's HoodieHeartbeatClient: ``.hoodie/.heartbeat/<instant>``.

While its instant is in flight a writer rewrites the file every
``hoodie.client.heartbeat.interval_in_ms`` from a daemon thread; the file's modification time is
the heartbeat. An instant whose heartbeat is older than interval x
``hoodie.client.heartbeat.tolerable.misses`` (or has none) belongs to a writer that died, and
the LAZY failed-writes policy rolls it back; a live writer's instant is left alone.
"""
from __future__ import annotations

import logging
import threading
import time

from ..storage import Storage
from ..timeline.timeline import META_DIR

log = logging.getLogger(__name__)

HEARTBEAT_DIR = f"{META_DIR}/.heartbeat"


def heartbeat_path(instant: str) -> str:
    return f"{HEARTBEAT_DIR}/{instant}"


def last_heartbeat(storage: Storage, instant: str) -> float | None:
    """Seconds since the epoch of the instant's last heartbeat; None when it has none."""
    info = storage.fs.get_file_info(storage.full(heartbeat_path(instant)))
    if info.mtime_ns is None:
        return None
    return info.mtime_ns / 1e9


def heartbeat_expired(storage: Storage, instant: str, expiry_ms: int, now: float | None = None) -> bool:
    beat = last_heartbeat(storage, instant)
    now = time.time() if now is None else now
    return beat is None or (now - beat) * 1000 > expiry_ms


def delete_heartbeat(storage: Storage, instant: str) -> None:
    storage.delete(heartbeat_path(instant))


class Heartbeat:
    """The heartbeat of one in-flight instant; ``start`` before the instant exists, ``stop`` after
    it completed or was rolled back (the file goes with it)."""

    def __init__(self, storage: Storage, instant: str, interval_ms: int):
        self.storage, self.instant = storage, instant
        self.interval = interval_ms / 1000
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.beats = 0

    def start(self) -> "Heartbeat":
        self._beat()
        self._thread = threading.Thread(target=self._run, name=f"hudi-heartbeat-{self.instant}", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        self.storage.write_bytes(heartbeat_path(self.instant), b"")
        self.beats += 1

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._beat()
            except OSError as exc:  # one missed beat is tolerated; say why
                log.warning(f"heartbeat of {self.instant} failed: {exc}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        delete_heartbeat(self.storage, self.instant)
