"""Hudi's ``HiveMetastoreBasedLockProvider``: the table lock as an EXCLUSIVE table-level lock in the
Hive Metastore's own lock manager (the thrift calls ``lock``, ``check_lock``, ``heartbeat``,
``unlock``, ``show_locks`` of Hive 2.x/3.x, served from its transaction tables).

A holder heartbeats at ``hoodie.write.lock.heartbeat_interval_ms``, or at a third of the metastore's
own ``hive.txn.timeout`` (asked with ``get_config_value``) when that is shorter: a lock heartbeated
less often than the metastore expires it is dropped while held, and a second writer then enters the
critical section beside the first (a lost update).

A request is queued by the metastore: ``lock`` answers ACQUIRED or WAITING, and a waiter polls
``check_lock`` (which also heartbeats it) until it is granted or the wait is over, when it unlocks
its queued request so that it blocks nobody. A holder heartbeats its lock from a thread every
``hoodie.write.lock.heartbeat_interval_ms``; the metastore drops a lock nobody heartbeated for
``hive.txn.timeout`` (its housekeeping thread runs with ``hive.compactor.initiator.on=true`` and the
DbTxnManager), which is how the lock of a writer that died goes away.

The metastore side needs the transaction tables (``HIVE_LOCKS``, ``NEXT_LOCK_ID``, ...) that
schematool creates and DataNucleus does not: charts/hive-metastore creates them on PostgreSQL.
"""
from __future__ import annotations

import getpass
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable, TypeVar
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore.ttypes import (CheckLockRequest, DataOperationType, HeartbeatRequest, LockComponent,
                                               LockLevel, LockRequest, LockResponse, LockState, LockType,
                                               MetaException, NoSuchLockException, ShowLocksRequest,
                                               ShowLocksResponseElement, TxnAbortedException, UnlockRequest)
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportException

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieLockError, HoodieLockLostError
from .provider import LockProvider

log = logging.getLogger(__name__)
T = TypeVar("T")

SOCKET_TIMEOUT_S = 30        # one call; the lock calls answer at once (waiting is polled, never blocked)
COLUMN_WIDTH = 128           # HIVE_LOCKS.HL_USER, HL_HOST and HL_AGENT_INFO are VARCHAR(128)
# The metastore's lock expiry: Hive 2's name, then Hive 3/4's (where the first may be unset).
TXN_TIMEOUT_KEYS = ("hive.txn.timeout", "metastore.txn.timeout")
BEATS_PER_TIMEOUT = 3
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "": 1.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "m": 60.0,
               "min": 60.0, "mins": 60.0, "h": 3600.0, "hour": 3600.0, "hours": 3600.0, "d": 86400.0,
               "day": 86400.0, "days": 86400.0}
_warned_cadence: set[tuple] = set()
_TRANSPORT_ERRORS = (TTransportException, OSError, EOFError)


@dataclass(frozen=True)
class HmsLockTarget:
    """What is locked and where: every writer of a table must resolve the same."""
    uris: tuple[str, ...]
    database: str
    table: str

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"


def resolve_target(cfg: HoodieConfig, table_name: str | None) -> HmsLockTarget:
    """Hudi's keys, falling back to the catalog sync's (the metastore a table syncs to is the one
    that locks it) and to the table's own name, as Hudi's writer fills them in."""
    uris_text = cfg.get_str(C.HMS_LOCK_URIS) or cfg.get_str(C.HIVE_SYNC_METASTORE_URIS)
    uris = tuple(u.strip() for u in (uris_text or "").split(",") if u.strip())
    for uri in uris:
        parsed = urlparse(uri if "://" in uri else f"thrift://{uri}")
        if parsed.scheme != "thrift" or not parsed.hostname:
            raise HoodieConfigError(f"{C.HMS_LOCK_URIS.key}: {uri!r} is not thrift://host:port")
    if not uris:
        raise HoodieConfigError(f"{C.HMS_LOCK_PROVIDER} needs {C.HMS_LOCK_URIS.key} (or "
                                f"{C.HIVE_SYNC_METASTORE_URIS.key}): the metastore's thrift://host:port")
    database = next((cfg.get_str(key) for key in (C.HMS_LOCK_DATABASE, C.HIVE_SYNC_DATABASE) if cfg.contains(key)),
                    None) or cfg.get_str(C.DATABASE_NAME) or C.DATABASE_NAME.default
    table = (cfg.get_str(C.HMS_LOCK_TABLE) or cfg.get_str(C.HIVE_SYNC_TABLE) or table_name
             or cfg.get_str(C.TABLE_NAME))
    if not table:
        raise HoodieConfigError(f"{C.HMS_LOCK_TABLE.key} is required when the table has no name")
    # The metastore keeps names in lower case; two writers spelling one table differently must meet.
    return HmsLockTarget(uris, database.lower(), table.lower())


def lock_request(target: HmsLockTarget, info: dict) -> LockRequest:
    """An EXCLUSIVE lock on the table outside any transaction (txnid 0), as Hudi's provider takes it;
    user, host and agent info name the holder in ``show_locks``."""
    component = LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=target.database,
                              tablename=target.table, operationType=DataOperationType.NO_TXN)
    agent = f"hudi pid {info['pid']} {info['lockThreadName']}: {info['purpose'] or 'table lock'}"
    return LockRequest(component=[component], user=getpass.getuser()[:COLUMN_WIDTH],
                       hostname=str(info["host"])[:COLUMN_WIDTH], agentInfo=agent[:COLUMN_WIDTH])


def granted(response: LockResponse) -> bool:
    """True when acquired, False while queued; a refusal (ABORT, NOT_ACQUIRED) is an error."""
    if response.state == LockState.ACQUIRED:
        return True
    if response.state == LockState.WAITING:
        return False
    state = LockState._VALUES_TO_NAMES.get(response.state, response.state)
    raise HoodieLockError(f"the metastore refused lock {response.lockid}: state {state}")


def hive_seconds(text: str | None) -> float | None:
    """A Hive time setting (``300s``, ``5m``, ``300``: seconds when it has no unit) in seconds; None
    when it is not one."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text or "")
    unit = match and _TIME_UNITS.get(match.group(2).lower())
    return float(match.group(1)) * unit if unit else None


def heartbeat_cadence(configured_s: float, txn_timeout_s: float | None) -> float:
    """How often a holder heartbeats: as configured, but at least ``BEATS_PER_TIMEOUT`` times within
    the metastore's expiry, so that one late beat does not lose the lock."""
    if txn_timeout_s is None or txn_timeout_s <= 0:
        return configured_s
    return min(configured_s, txn_timeout_s / BEATS_PER_TIMEOUT)


def describe_lock(element: ShowLocksResponseElement) -> str:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(element.acquiredat / 1000)) \
        if element.acquiredat else "?"
    return (f"{element.user}@{element.hostname} ({element.agentInfo}) since {since}, "
            f"metastore lock {element.lockid}")


def holder_of(locks: list[ShowLocksResponseElement] | None, database: str, table: str) -> str:
    """Who holds the table's lock, from a ``show_locks`` answer."""
    held = [e for e in locks or () if e.state == LockState.ACQUIRED
            and (e.dbname or "").lower() == database and (e.tablename or "").lower() == table]
    return "; ".join(describe_lock(e) for e in held) or "nobody (released just now)"


class HiveMetastoreLockProvider(LockProvider):
    kind = "Hive Metastore"

    def __init__(self, target: HmsLockTarget, heartbeat_interval_ms: int, poll_ms: int, purpose: str = ""):
        super().__init__(f"{target.name} on {', '.join(target.uris)}", purpose)
        self.target = target
        self.heartbeat_s = max(0.05, heartbeat_interval_ms / 1000)
        self._cadence_s: float | None = None     # how often the holder beats, once the metastore was asked
        self.poll_s = max(0.01, poll_ms / 1000)
        self.lock_id: int | None = None
        self._uris = list(target.uris)
        self._transport: TBufferedTransport | None = None
        self._client: ThriftHiveMetastore.Client | None = None
        self._rpc = threading.Lock()        # one thrift connection, shared with the heartbeat thread
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._lost: str | None = None

    @classmethod
    def for_table(cls, cfg: HoodieConfig, table_name: str | None, purpose: str = "") -> "HiveMetastoreLockProvider":
        interval = cfg.get(C.LOCK_HEARTBEAT_INTERVAL_MS)
        if interval <= 0:
            raise HoodieConfigError(f"{C.LOCK_HEARTBEAT_INTERVAL_MS.key}={interval} must be positive")
        return cls(resolve_target(cfg, table_name), interval, cfg.get(C.LOCK_WAIT_TIME_MS_BETWEEN_RETRY), purpose)

    # --- the lock protocol ---------------------------------------------------------------------
    def try_lock(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        request = lock_request(self.target, self.info)
        self._lost = None
        response = self._call("lock", lambda c: c.lock(request))
        self.lock_id = response.lockid
        try:
            while not granted(response):
                left = deadline - time.monotonic()
                if left <= 0:
                    self._release()        # a queued request would block every later writer
                    return False
                time.sleep(min(left, self.poll_s))
                try:
                    response = self._call("check_lock",
                                          lambda c: c.check_lock(CheckLockRequest(lockid=self.lock_id)))
                except NoSuchLockException:   # expired while queued (polls slower than hive.txn.timeout)
                    response = self._call("lock", lambda c: c.lock(request))
                    self.lock_id = response.lockid
        except BaseException:
            self._release_quietly()
            raise
        self._stop.clear()
        self._cadence()
        self._heartbeat = threading.Thread(target=self._keep_alive, name="hudi-hms-lock-heartbeat", daemon=True)
        self._heartbeat.start()
        return True

    def _cadence(self) -> float:
        if self._cadence_s is None:
            timeout = self._txn_timeout()
            self._cadence_s = heartbeat_cadence(self.heartbeat_s, timeout)
            key = (self.target.uris, timeout, self.heartbeat_s)
            if self._cadence_s < self.heartbeat_s and key not in _warned_cadence:
                _warned_cadence.add(key)
                log.warning("%s=%d is not well below the metastore's hive.txn.timeout (%gs) on %s: heartbeating "
                            "its lock every %.1f s instead, so that the metastore does not drop it while held",
                            C.LOCK_HEARTBEAT_INTERVAL_MS.key, int(self.heartbeat_s * 1000), timeout,
                            ", ".join(self.target.uris), self._cadence_s)
        return self._cadence_s

    def _txn_timeout(self) -> float | None:
        """The metastore's lock expiry in seconds, None when it does not say (a metastore may refuse
        to show its settings)."""
        for key in TXN_TIMEOUT_KEYS:
            try:
                seconds = hive_seconds(self._call("get_config_value", lambda c: c.get_config_value(key, "")))
            except HoodieLockError as exc:
                log.debug("the metastore does not show %s: %s", key, exc)
                continue
            if seconds is not None:
                return seconds
        return None

    def _keep_alive(self) -> None:
        lock_id = self.lock_id
        while not self._stop.wait(self._cadence_s or self.heartbeat_s):
            try:
                self._call("heartbeat", lambda c: c.heartbeat(HeartbeatRequest(lockid=lock_id)))
            except (NoSuchLockException, TxnAbortedException) as exc:
                self._lost = f"the metastore dropped it ({exc.message})"
                return
            except HoodieLockError as exc:    # unreachable for now: the next beat tries again
                log.warning("heartbeat of metastore lock %s failed: %s", lock_id, exc)

    def check_held(self) -> None:
        lost = self._lost
        if lost is None and self.lock_id is not None:
            try:
                response = self._call("check_lock", lambda c: c.check_lock(CheckLockRequest(lockid=self.lock_id)))
                if response.state != LockState.ACQUIRED:
                    lost = f"it is {LockState._VALUES_TO_NAMES.get(response.state, response.state)}"
            except NoSuchLockException as exc:
                lost = f"the metastore dropped it ({exc.message})"
        if lost is not None:
            raise HoodieLockLostError(
                f"the Hive Metastore lock on {self.name} was lost while held: {lost}. Its heartbeats "
                f"(every {self._cadence_s or self.heartbeat_s:g} s; {C.LOCK_HEARTBEAT_INTERVAL_MS.key}) did not reach the "
                "metastore within its hive.txn.timeout; nothing was published without it: retry the write")

    def unlock(self) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
            self._heartbeat = None
        self._release()

    def _release(self) -> None:
        lock_id, self.lock_id = self.lock_id, None
        if lock_id is None:
            return
        try:
            self._call("unlock", lambda c: c.unlock(UnlockRequest(lockid=lock_id)))
        except NoSuchLockException:
            pass                       # expired already: nothing is held

    def _release_quietly(self) -> None:
        try:
            self._release()
        except HoodieLockError as exc:    # the metastore drops it after hive.txn.timeout anyway
            log.warning("could not unlock queued metastore lock on %s: %s", self.target.name, exc)

    def holder(self) -> str:
        request = ShowLocksRequest(dbname=self.target.database, tablename=self.target.table)
        try:
            answer = self._call("show_locks", lambda c: c.show_locks(request))
        except HoodieLockError as exc:   # the holder is only for a message
            return f"unknown ({exc})"
        return holder_of(answer.locks, self.target.database, self.target.table)

    def stale_hint(self) -> str:
        return ("the metastore expires its lock hive.txn.timeout (the metastore's setting; the hive-metastore "
                "chart's lockManager.txnTimeout) after its last heartbeat")

    def close(self) -> None:
        self._stop.set()
        with self._rpc:
            self._disconnect()

    # --- plumbing ------------------------------------------------------------------------------
    def _call(self, what: str, fn: Callable[[ThriftHiveMetastore.Client], T]) -> T:
        """One call, on a new connection to the next URI if the last one broke (each URI tried once);
        the protocol's own answers (NoSuchLockException, ...) pass through."""
        errors: list[str] = []
        with self._rpc:
            for _ in range(len(self._uris)):
                try:
                    return fn(self._connected())
                except _TRANSPORT_ERRORS as exc:
                    errors.append(f"{self._uris[0]}: {exc}")
                    self._disconnect()
                    self._uris = self._uris[1:] + self._uris[:1]
                except (NoSuchLockException, TxnAbortedException):
                    raise
                except MetaException as exc:
                    raise HoodieLockError(self._refused(what, exc.message or str(exc))) from exc
                except TApplicationException as exc:
                    raise HoodieLockError(
                        f"the metastore at {self._uris[0]} does not serve {what} ({exc}); the lock needs "
                        "a Hive 2.x/3.x metastore (Hive 4 renamed calls)") from exc
                except TException as exc:
                    raise HoodieLockError(self._refused(what, str(exc))) from exc
        raise HoodieLockError(
            f"cannot reach the Hive Metastore for the lock on {self.target.name} ({what} failed: "
            f"{'; '.join(errors)}). Check that the metastore runs and listens there, that "
            f"{C.HMS_LOCK_URIS.key} (default {C.HIVE_SYNC_METASTORE_URIS.key}) names it as thrift://host:port, "
            "and that no network policy blocks the port")

    def _refused(self, what: str, message: str) -> str:
        hint = ""
        if "HIVE_LOCKS" in message.upper() or "NEXT_LOCK_ID" in message.upper():
            hint = (" Its database lacks the transaction tables: create them (schematool -initSchema, or "
                    "charts/hive-metastore/files/hive-txn-schema-2.3.0.sql, as the chart does).")
        return f"the metastore at {self._uris[0]} refused {what} on {self.target.name}: {message}.{hint}"

    def _connected(self) -> ThriftHiveMetastore.Client:
        if self._client is None:
            parsed = urlparse(self._uris[0] if "://" in self._uris[0] else f"thrift://{self._uris[0]}")
            sock = TSocket(parsed.hostname, parsed.port or 9083)
            sock.setTimeout(SOCKET_TIMEOUT_S * 1000)
            transport = TBufferedTransport(sock)
            transport.open()
            self._transport, self._client = transport, ThriftHiveMetastore.Client(TBinaryProtocol(transport))
        return self._client

    def _disconnect(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._transport = self._client = None
