"""What every lock provider is (the base class of the providers in ``locks``, ``hms_lock`` and
``lease_lock``) and how a holder describes itself; apart from ``locks`` so that the providers in
their own modules and ``locks.lock_provider`` that picks one do not import each other in a circle."""
from __future__ import annotations

import datetime as _dt
import os
import socket
import threading
import uuid


def _owner_info(purpose: str) -> dict:
    now = _dt.datetime.now()
    return {"owner": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid(),
            "lockThreadName": threading.current_thread().name, "purpose": purpose,
            "lockCreateTime": now.strftime("%Y-%m-%d %H:%M:%S.") + f"{now.microsecond // 1000:03d}"}


def describe_owner(info: dict | None) -> str:
    if not info:
        return "unknown (the holder left no description)"
    return (f"host {info.get('host')} pid {info.get('pid')} thread {info.get('lockThreadName')} "
            f"({info.get('purpose') or 'no purpose given'}) since {info.get('lockCreateTime')}")


class LockProvider:
    """One lock; ``try_lock`` waits up to ``timeout`` seconds."""
    kind = "lock"

    def __init__(self, name: str, purpose: str):
        self.name = name                  # what is locked: a path or a znode
        self.info = _owner_info(purpose)

    def try_lock(self, timeout: float) -> bool:
        raise NotImplementedError

    def unlock(self) -> None:
        raise NotImplementedError

    def holder(self) -> str:
        """Who holds the lock now, for error messages."""
        raise NotImplementedError

    def stale_hint(self) -> str:
        """How the lock of a holder that died goes away (or what to do about it), for the message of a
        wait that timed out: each kind frees it its own way."""
        raise NotImplementedError

    def check_held(self) -> None:
        """Raise HoodieLockLostError if the lock was lost while held (expired, session ended)."""

    def close(self) -> None:
        pass
