"""The table lock of optimistic concurrency control, as Hudi's lock providers and LockManager.

Writers hold it for short critical sections only: taking an instant time, rolling back failed
writes, checking for conflicts and completing an instant, planning table services. Providers:

- ``FileSystemBasedLockProvider``: a lock file created atomically (``O_CREAT|O_EXCL``) in
  ``hoodie.write.lock.filesystem.path`` (default ``<base>/.hoodie/.aux``), holding who took it. With
  ``hoodie.write.lock.filesystem.expire`` minutes > 0 a holder refreshes the file's modification
  time while it holds the lock and a lock file older than that is stale and taken over.
- ``ZookeeperBasedLockProvider``: kazoo's Lock recipe under ``<zookeeper.base_path>/<lock_key>``
  (ephemeral sequential znodes: a dead holder's session ends and with it its lock).
- ``InProcessLockProvider``: a lock shared by the threads of one process.

A thread that holds a table's lock may enter it again (a write's inline clean runs inside the
write's lock), so nested sections never deadlock.
"""
from __future__ import annotations

import json
import logging
import os
import posixpath
import random
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieLockError, HoodieLockLostError
from ..storage import Storage
from ..timeline.timeline import META_DIR
from .provider import LockProvider, describe_owner
from .settings import is_occ

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..table.meta_client import HoodieTable

LOCK_FILE_NAME = "lock"
AUX_DIR = f"{META_DIR}/.aux"


# --- file system ---------------------------------------------------------------------------------
class FileSystemLockProvider(LockProvider):
    kind = "file system"

    def __init__(self, lock_dir: str, expire_minutes: float, poll_ms: int, purpose: str = ""):
        self.dir = lock_dir
        self.path = posixpath.join(lock_dir, LOCK_FILE_NAME)
        super().__init__(self.path, purpose)
        self.expire_s = max(0.0, float(expire_minutes)) * 60
        self.poll_s = max(0.001, poll_ms / 1000)
        self._keepalive: threading.Thread | None = None
        self._stop = threading.Event()
        self._lost = False

    @classmethod
    def for_table(cls, base_path: str, cfg: HoodieConfig, purpose: str = "") -> "FileSystemLockProvider":
        configured = cfg.get_str(C.LOCK_FILESYSTEM_PATH)
        storage = Storage(configured or base_path)
        if not storage.is_local:
            raise HoodieConfigError(
                f"{C.FS_LOCK_PROVIDER} needs a file system that creates files atomically; "
                f"{configured or base_path} is on an object store or remote file system. Use "
                f"{C.ZK_LOCK_PROVIDER} or {C.HMS_LOCK_PROVIDER}, or point {C.LOCK_FILESYSTEM_PATH.key} at a "
                "local or shared POSIX folder")
        lock_dir = storage.full("" if configured else AUX_DIR)
        expire = cfg.get(C.LOCK_FILESYSTEM_EXPIRE)
        if expire < 0:
            raise HoodieConfigError(f"{C.LOCK_FILESYSTEM_EXPIRE.key}={expire} must be 0 (never) or more minutes")
        return cls(lock_dir, expire, cfg.get(C.LOCK_WAIT_TIME_MS_BETWEEN_RETRY), purpose)

    def try_lock(self, timeout: float) -> bool:
        os.makedirs(self.dir, exist_ok=True)
        deadline = time.monotonic() + timeout
        pause = min(0.005, self.poll_s)
        while True:
            if self._create():
                return True
            if self.expire_s and self._is_stale(self.path):
                self._reclaim()
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, pause * random.uniform(0.5, 1.0)))
            pause = min(self.poll_s, pause * 2)

    def _create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(self.info))
            f.flush()
            os.fsync(f.fileno())
        self._lost = False
        if self.expire_s:
            self._stop.clear()
            self._keepalive = threading.Thread(target=self._refresh, name="hudi-lock-keepalive", daemon=True)
            self._keepalive.start()
        return True

    def _refresh(self) -> None:
        """Keep a held lock from looking stale: touch it a few times per expiry period."""
        every = max(0.05, self.expire_s / 4)
        while not self._stop.wait(every):
            if self._read().get("owner") != self.info["owner"]:
                self._lost = True
                return
            try:
                os.utime(self.path)
            except FileNotFoundError:
                self._lost = True
                return

    def stale_hint(self) -> str:
        if self.expire_s:
            return (f"its lock file is taken over {self.expire_s / 60:g} minutes after its last refresh "
                    f"({C.LOCK_FILESYSTEM_EXPIRE.key})")
        return f"set {C.LOCK_FILESYSTEM_EXPIRE.key} (minutes) or delete the lock file"

    def _read(self, path: str | None = None) -> dict:
        try:
            with open(path or self.path) as f:
                text = f.read()
            return json.loads(text) if text else {}
        except (FileNotFoundError, ValueError):
            return {}

    def _is_stale(self, path: str) -> bool:
        try:
            return time.time() - os.stat(path).st_mtime > self.expire_s
        except FileNotFoundError:
            return False

    def _reclaim(self) -> None:
        """Take over a stale lock. Only one process at a time may judge and delete it (a guard file
        created exclusively), and it judges again once it holds the guard, so a fresh lock that
        another process took meanwhile is never deleted."""
        guard = self.path + ".reclaim"
        try:
            fd = os.open(guard, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if self._is_stale(guard):  # a process died while reclaiming (a window of microseconds)
                try:
                    os.unlink(guard)
                except FileNotFoundError:
                    pass
            return
        os.close(fd)
        try:
            if self._is_stale(self.path):
                stale = self._read()
                os.unlink(self.path)
                log.info(f"took over the stale lock {self.path} of {describe_owner(stale)} "
                      f"(older than {C.LOCK_FILESYSTEM_EXPIRE.key}={self.expire_s / 60:g} minutes)",
                      )
        except FileNotFoundError:
            pass
        finally:
            os.unlink(guard)

    def check_held(self) -> None:
        if self._lost or self._read().get("owner") != self.info["owner"]:
            raise HoodieLockLostError(
                f"the file system lock {self.path} was lost while held (now held by "
                f"{self.holder()}): it was older than {C.LOCK_FILESYSTEM_EXPIRE.key} and taken over. "
                f"Raise {C.LOCK_FILESYSTEM_EXPIRE.key} or set it to 0, and retry the write")

    def unlock(self) -> None:
        self._stop.set()
        if self._keepalive is not None:
            self._keepalive.join()
            self._keepalive = None
        if self._read().get("owner") == self.info["owner"]:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def holder(self) -> str:
        if not os.path.exists(self.path):
            return "nobody (released just now)"
        return describe_owner(self._read())


# --- in process ----------------------------------------------------------------------------------
_IN_PROCESS: dict[str, threading.Lock] = {}
_IN_PROCESS_OWNERS: dict[str, dict] = {}
_IN_PROCESS_GUARD = threading.Lock()


class InProcessLockProvider(LockProvider):
    kind = "in-process"

    def __init__(self, base_path: str, purpose: str = ""):
        super().__init__(Storage(base_path).uri(""), purpose)
        with _IN_PROCESS_GUARD:
            self._lock = _IN_PROCESS.setdefault(self.name, threading.Lock())

    def try_lock(self, timeout: float) -> bool:
        if self._lock.acquire(timeout=max(0.0, timeout)):
            _IN_PROCESS_OWNERS[self.name] = self.info
            return True
        return False

    def unlock(self) -> None:
        _IN_PROCESS_OWNERS.pop(self.name, None)
        self._lock.release()

    def holder(self) -> str:
        return describe_owner(_IN_PROCESS_OWNERS.get(self.name))

    def stale_hint(self) -> str:
        return "its lock went with its process (a holder in this process is alive: wait for it)"


# --- ZooKeeper -----------------------------------------------------------------------------------
class ZookeeperLockProvider(LockProvider):
    kind = "ZooKeeper"

    def __init__(self, hosts: str, path: str, session_timeout_ms: int, connection_timeout_ms: int,
                 retries: int, retry_wait_ms: int, purpose: str = ""):
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError
        from kazoo.protocol.states import KazooState
        from kazoo.retry import KazooRetry

        super().__init__(path, purpose)
        self.hosts = hosts
        self.session_timeout_ms = session_timeout_ms
        self._lost = False
        retry = KazooRetry(max_tries=retries, delay=retry_wait_ms / 1000, max_delay=max(1.0, retry_wait_ms / 1000 * 16))
        self.client = KazooClient(hosts=hosts, timeout=session_timeout_ms / 1000,
                                  connection_retry=retry, command_retry=retry)
        try:
            self.client.start(timeout=connection_timeout_ms / 1000)
        except KazooTimeoutError:
            self.client.close()
            raise HoodieLockError(
                f"could not connect to ZooKeeper at {hosts} within {connection_timeout_ms} ms "
                f"({C.ZK_CONNECTION_TIMEOUT_MS.key}) to take the lock {path}: check "
                f"{C.ZK_CONNECT_URL.key}/{C.ZK_PORT.key} and that ZooKeeper runs") from None

        def listen(state):
            if state == KazooState.LOST:
                self._lost = True
        self.client.add_listener(listen)
        self._lock = self.client.Lock(path, json.dumps(self.info))

    @classmethod
    def for_table(cls, base_path: str, cfg: HoodieConfig, table_name: str | None,
                  purpose: str = "") -> "ZookeeperLockProvider":
        url = cfg.get_str(C.ZK_CONNECT_URL)
        base = cfg.get_str(C.ZK_BASE_PATH)
        if not url or not base:
            raise HoodieConfigError(
                f"{C.ZK_LOCK_PROVIDER} needs {C.ZK_CONNECT_URL.key} and {C.ZK_BASE_PATH.key} (the same for "
                f"every writer of the table); or choose another {C.LOCK_PROVIDER.key}: {C.HMS_LOCK_PROVIDER}, "
                f"{C.FS_LOCK_PROVIDER} or {C.IN_PROCESS_LOCK_PROVIDER}")
        port = cfg.get_str(C.ZK_PORT)
        hosts = ",".join(h if ":" in h or not port else f"{h}:{port}"
                         for h in (part.strip() for part in url.split(",")) if h)
        key = cfg.get_str(C.ZK_LOCK_KEY) or table_name or cfg.get_str(C.TABLE_NAME)
        if not key:
            raise HoodieConfigError(f"{C.ZK_LOCK_KEY.key} is required when the table has no name")
        path = "/" + "/".join(p for p in (base.strip("/"), key.strip("/")) if p)
        return cls(hosts, path, cfg.get(C.ZK_SESSION_TIMEOUT_MS), cfg.get(C.ZK_CONNECTION_TIMEOUT_MS),
                   cfg.get(C.LOCK_NUM_RETRIES), cfg.get(C.LOCK_WAIT_TIME_MS_BETWEEN_RETRY), purpose)

    def try_lock(self, timeout: float) -> bool:
        from kazoo.exceptions import LockTimeout

        self._lost = False
        try:
            return bool(self._lock.acquire(blocking=True, timeout=max(0.001, timeout)))
        except LockTimeout:
            return False

    def unlock(self) -> None:
        self._lock.release()

    def holder(self) -> str:
        try:
            contenders = self._lock.contenders()
        except Exception as exc:  # the holder is only for the message
            return f"unknown ({exc})"
        if not contenders:
            return "nobody (released just now)"
        try:
            return describe_owner(json.loads(contenders[0]))
        except ValueError:
            return contenders[0]

    def stale_hint(self) -> str:
        return (f"its ZooKeeper session ends at most {C.ZK_SESSION_TIMEOUT_MS.key}={self.session_timeout_ms} ms "
                "after it died, and its lock znode with it")

    def check_held(self) -> None:
        if self._lost or not self._lock.is_acquired:
            raise HoodieLockLostError(
                f"the ZooKeeper lock {self.name} on {self.hosts} was lost while held (the session "
                f"expired: {C.ZK_SESSION_TIMEOUT_MS.key}); retry the write")

    def close(self) -> None:
        try:
            self.client.stop()
        finally:
            self.client.close()


def lock_provider(base_path: str, cfg: HoodieConfig, table_name: str | None = None,
                  purpose: str = "") -> LockProvider:
    name = cfg.get_str(C.LOCK_PROVIDER)
    if name == C.FS_LOCK_PROVIDER:
        return FileSystemLockProvider.for_table(base_path, cfg, purpose)
    if name == C.ZK_LOCK_PROVIDER:
        return ZookeeperLockProvider.for_table(base_path, cfg, table_name, purpose)
    if name == C.IN_PROCESS_LOCK_PROVIDER:
        return InProcessLockProvider(base_path, purpose)
    if name == C.LEASE_LOCK_PROVIDER:
        from .lease_lock import KubernetesLeaseLockProvider    # imports the kubernetes client only when chosen
        return KubernetesLeaseLockProvider.for_table(base_path, cfg, table_name, purpose)
    if name == C.HMS_LOCK_PROVIDER:
        from .hms_lock import HiveMetastoreLockProvider    # imports the thrift client only when chosen
        return HiveMetastoreLockProvider.for_table(cfg, table_name, purpose)
    raise HoodieConfigError(f"{C.LOCK_PROVIDER.key}={name} is not a lock provider this engine has")


# --- the lock manager ----------------------------------------------------------------------------
@dataclass
class _Held:
    provider: LockProvider
    thread: int
    depth: int = 1


_HELD: dict[str, _Held] = {}
_HELD_GUARD = threading.Lock()


WAIT_WORTH_TELLING_S = 1.0


def acquire(provider: LockProvider, cfg: HoodieConfig, what: str) -> None:
    """Hudi's LockManager: attempts of ``wait_time_ms`` each, ``client.num_retries`` more after the
    first, ``client.wait_time_ms_between_retry`` apart; then a HoodieLockError naming the holder."""
    wait = cfg.get(C.LOCK_WAIT_TIME_MS) / 1000
    retries = max(0, cfg.get(C.LOCK_CLIENT_NUM_RETRIES))
    pause = cfg.get(C.LOCK_CLIENT_WAIT_TIME_MS_BETWEEN_RETRY) / 1000
    started = time.monotonic()
    for attempt in range(retries + 1):
        if provider.try_lock(wait):
            waited = time.monotonic() - started
            if waited >= WAIT_WORTH_TELLING_S:          # another writer held it: say so, not every take
                log.info(f"waited {waited:.1f} s for the {provider.kind} lock {provider.name} ({what})")
            return
        if attempt < retries:
            time.sleep(pause)
    raise HoodieLockError(
        f"could not acquire the {provider.kind} lock {provider.name} for {what} within "
        f"{time.monotonic() - started:.1f} s ({retries + 1} attempts of {C.LOCK_WAIT_TIME_MS.key}="
        f"{int(wait * 1000)}); it is held by {provider.holder()}. Retry later; if that holder died, "
        f"{provider.stale_hint()}")


def _lock_key(base_path: str, cfg: HoodieConfig) -> str:
    return f"{cfg.get_str(C.LOCK_PROVIDER)}|{Storage(base_path).uri('')}"


def check_lock_held(base_path: str, cfg: HoodieConfig) -> None:
    """Just before a critical section publishes (a plan on the timeline): raise HoodieLockLostError if
    this thread's lock on the table was lost while held, so that what was decided under it does not
    become visible beside another holder's. A no-op when this thread holds no lock on it."""
    with _HELD_GUARD:
        held = _HELD.get(_lock_key(base_path, cfg))
    if held is not None and held.thread == threading.get_ident():
        held.provider.check_held()


@contextmanager
def locked_table(table: "HoodieTable", cfg: HoodieConfig, what: str) -> Iterator["HoodieTable"]:
    """The table for a critical section under its lock: with several writers the lock is taken
    and the table reloaded (others may have changed its timeline); a single writer's as it is."""
    occ = is_occ(cfg)
    with table_lock(table.storage.base_uri, cfg, what, table.name, occ):
        yield table.reload() if occ else table


@contextmanager
def table_lock(base_path: str, cfg: HoodieConfig, what: str, table_name: str | None = None,
               enabled: bool | None = None) -> Iterator[LockProvider | None]:
    """Hold the table's lock for a critical section (a no-op for a single writer). Re-entrant
    within a thread."""
    if enabled is None:
        enabled = is_occ(cfg)
    if not enabled:
        yield None
        return
    key = _lock_key(base_path, cfg)
    me = threading.get_ident()
    with _HELD_GUARD:
        held = _HELD.get(key)
    if held is not None and held.thread == me:
        held.depth += 1
        try:
            yield held.provider
        finally:
            held.depth -= 1
        return
    provider = lock_provider(base_path, cfg, table_name, f"{what} of {base_path}")
    try:
        acquire(provider, cfg, f"{what} of {base_path}")
        with _HELD_GUARD:
            _HELD[key] = _Held(provider, me)
        try:
            yield provider
        finally:
            with _HELD_GUARD:
                _HELD.pop(key, None)
            provider.unlock()
    finally:
        provider.close()
