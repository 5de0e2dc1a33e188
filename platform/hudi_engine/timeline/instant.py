"""Instants and their file names in both timeline layouts.

Layout 1 (table version 6): ``.hoodie/<ts>.<action>[.requested|.inflight]``, except that a commit's
inflight file is ``<ts>.inflight``. Layout 2 (table versions 8, 9): ``.hoodie/timeline/`` with the
same pending names and completed ones named ``<ts>_<completion ts>.<action>``.
"""
from __future__ import annotations

import datetime as _dt
import enum
import re
import time
from dataclasses import dataclass

from ..errors import HoodieConfigError

COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
CLUSTERING = "clustering"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"

ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING, COMPACTION, LOG_COMPACTION, CLEAN,
           ROLLBACK, SAVEPOINT, RESTORE, INDEXING, SCHEMA_COMMIT)
# Actions whose completion adds data files that readers must see.
WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
# Actions that write data files: the writes and the table services that rewrite file groups.
FILE_WRITING_ACTIONS = WRITE_ACTIONS + (COMPACTION, LOG_COMPACTION, CLUSTERING)
# Pending actions that complete under another action's name.
_COMPLETES_AS = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}
# The pending actions a completed action may have had.
PENDING_FORMS = {done: (done, pending) for pending, done in _COMPLETES_AS.items()}

INIT_INSTANT_TS = "00000000000000"
INSTANT_FORMAT = "%Y%m%d%H%M%S"


class State(enum.IntEnum):
    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


@dataclass(frozen=True, order=True)
class Instant:
    timestamp: str
    action: str
    state: State
    completion_time: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    def with_state(self, state: State, completion_time: str | None = None) -> "Instant":
        action = self.action
        if state == State.COMPLETED:
            action = _COMPLETES_AS.get(action, action)
        return Instant(self.timestamp, action, state, completion_time)

    def file_name(self, layout_version: int = 1) -> str:
        ts, action = self.timestamp, self.action
        if self.state == State.REQUESTED:
            return f"{ts}.{action}.requested"
        if self.state == State.INFLIGHT:
            return f"{ts}.inflight" if action == COMMIT else f"{ts}.{action}.inflight"
        if layout_version >= 2:
            return f"{ts}_{self.completion_time}.{action}"
        return f"{ts}.{action}"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.name}]"


_NAME = re.compile(
    r"^(?P<ts>\d+)(?:_(?P<done>\d+))?\.(?P<rest>[a-z]+(?:\.(?:requested|inflight))?)$")


def parse_instant_file_name(name: str) -> Instant | None:
    """The instant a timeline file stands for, or None for files that are not instants."""
    m = _NAME.match(name)
    if not m:
        return None
    ts, done, rest = m.group("ts"), m.group("done"), m.group("rest")
    if rest == "inflight":
        return Instant(ts, COMMIT, State.INFLIGHT)
    action, _, suffix = rest.partition(".")
    if action not in ACTIONS:
        return None
    if suffix == "requested":
        return Instant(ts, action, State.REQUESTED)
    if suffix == "inflight":
        return Instant(ts, action, State.INFLIGHT)
    return Instant(ts, action, State.COMPLETED, done)


def format_instant_time(moment: _dt.datetime) -> str:
    return moment.strftime(INSTANT_FORMAT) + f"{moment.microsecond // 1000:03d}"


def parse_instant_time(ts: str) -> _dt.datetime:
    base = _dt.datetime.strptime(ts[:14], INSTANT_FORMAT)
    millis = int(ts[14:17] or 0)
    return base + _dt.timedelta(milliseconds=millis)


def new_instant_time(after: str | None, utc: bool = False) -> str:
    """A ``yyyyMMddHHmmssSSS`` time strictly after ``after`` (waits out a same-millisecond clash)."""
    while True:
        now = _dt.datetime.now(_dt.timezone.utc) if utc else _dt.datetime.now()
        ts = format_instant_time(now)
        if after is None or ts > after:
            return ts
        time.sleep(0.001)


_AS_OF_FORMATS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f",
                  "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


def normalize_instant(value: str, option: str) -> str:
    """Accept instants as Hudi's readers do: ``yyyyMMddHHmmss[SSS]`` or ``yyyy-MM-dd HH:mm:ss[.SSS]``."""
    value = str(value).strip()
    if re.fullmatch(r"\d{1,17}", value):
        return value if len(value) != 14 else value + "000"
    for fmt in _AS_OF_FORMATS:
        try:
            return format_instant_time(_dt.datetime.strptime(value, fmt))
        except ValueError:
            continue
    raise HoodieConfigError(
        f"{option}={value!r} is not an instant: use yyyyMMddHHmmssSSS (e.g. 20240418172804498) "
        f"or 'yyyy-MM-dd HH:mm:ss[.SSS]'")
