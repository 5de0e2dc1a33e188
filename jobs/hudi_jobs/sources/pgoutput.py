"""PostgreSQL's logical replication messages (the ``pgoutput`` plugin, protocol version 1) as
Python values, so change capture needs no output plugin beyond the one built into the server.

The byte layout is PostgreSQL's "Logical Replication Message Formats" chapter. Column values come
in their text form; :mod:`.postgres_types` turns them into typed values.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Union

PG_EPOCH_US = 946_684_800_000_000      # 2000-01-01 in microseconds since 1970-01-01
UNCHANGED_TOAST = object()             # a large value an UPDATE left alone, which pgoutput does not resend


@dataclass(frozen=True)
class Begin:
    final_lsn: int
    commit_time_us: int                # since 1970-01-01, UTC
    xid: int


@dataclass(frozen=True)
class Commit:
    commit_lsn: int
    end_lsn: int
    commit_time_us: int


@dataclass(frozen=True)
class Column:
    name: str
    type_oid: int
    type_modifier: int
    is_key: bool


@dataclass(frozen=True)
class Relation:
    oid: int
    namespace: str
    name: str
    replica_identity: str              # d(efault), n(othing), f(ull), i(ndex)
    columns: tuple[Column, ...]


# A row image: one entry per column of the relation, text, None (SQL NULL) or UNCHANGED_TOAST.
Tuple = tuple[object, ...]


@dataclass(frozen=True)
class Insert:
    relation_oid: int
    new: Tuple


@dataclass(frozen=True)
class Update:
    relation_oid: int
    old: Tuple | None                  # the old key ('K') or whole old row ('O', REPLICA IDENTITY FULL)
    new: Tuple
    old_is_key_only: bool


@dataclass(frozen=True)
class Delete:
    relation_oid: int
    old: Tuple
    old_is_key_only: bool


@dataclass(frozen=True)
class Truncate:
    relation_oids: tuple[int, ...]


@dataclass(frozen=True)
class Other:
    """Messages change capture does not act on (origin, type, logical message)."""
    kind: str


Message = Union[Begin, Commit, Relation, Insert, Update, Delete, Truncate, Other]


class PgOutputError(ValueError):
    """Bytes that are not a pgoutput message of protocol version 1."""


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise PgOutputError(f"message ends after {len(self.data)} bytes, inside a field at byte {self.pos}")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise PgOutputError(f"unterminated string at byte {self.pos}")
        text = self.data[self.pos:end].decode("utf-8")
        self.pos = end + 1
        return text

    def raw(self, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise PgOutputError(f"value of {size} bytes runs past the message's end at byte {self.pos}")
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def tuple(self) -> Tuple:
        values: list[object] = []
        for _ in range(self.take("!h")):
            kind = chr(self.take("!B"))
            if kind == "n":
                values.append(None)
            elif kind == "u":
                values.append(UNCHANGED_TOAST)
            elif kind == "t":
                values.append(self.raw(self.take("!i")).decode("utf-8"))
            else:
                raise PgOutputError(f"column value of kind {kind!r}: only text values (protocol version 1) "
                                    "are read")
        return tuple(values)


def _timestamp(pg_us: int) -> int:
    return pg_us + PG_EPOCH_US


def decode(data: bytes) -> Message:
    """One message, as ``pg_logical_slot_peek_binary_changes`` returns it."""
    if not data:
        raise PgOutputError("empty message")
    r = _Reader(bytes(data))
    kind = chr(r.take("!B"))
    if kind == "B":
        lsn, ts, xid = r.take("!QqI")
        return Begin(lsn, _timestamp(ts), xid)
    if kind == "C":
        _flags, commit_lsn, end_lsn, ts = r.take("!BQQq")
        return Commit(commit_lsn, end_lsn, _timestamp(ts))
    if kind == "R":
        oid = r.take("!I")
        namespace, name = r.string(), r.string()
        identity = chr(r.take("!B"))
        columns = []
        for _ in range(r.take("!h")):
            flags = r.take("!B")
            col_name = r.string()
            type_oid, modifier = r.take("!Ii")
            columns.append(Column(col_name, type_oid, modifier, bool(flags & 1)))
        return Relation(oid, namespace, name, identity, tuple(columns))
    if kind == "I":
        oid = r.take("!I")
        _expect(r, "N")
        return Insert(oid, r.tuple())
    if kind == "U":
        oid = r.take("!I")
        marker, old, old_marker = chr(r.take("!B")), None, None
        if marker in "KO":
            old, old_marker = r.tuple(), marker
            marker = chr(r.take("!B"))
        if marker != "N":
            raise PgOutputError(f"update message: expected the new row ('N'), found {marker!r}")
        return Update(oid, old, r.tuple(), old_marker == "K")
    if kind == "D":
        oid = r.take("!I")
        marker = chr(r.take("!B"))
        if marker not in "KO":
            raise PgOutputError(f"delete message: expected the old key ('K') or row ('O'), found {marker!r}")
        return Delete(oid, r.tuple(), marker == "K")
    if kind == "T":
        count = r.take("!i")
        r.take("!B")
        return Truncate(tuple(r.take("!I") for _ in range(count)))
    if kind in "OYM":
        return Other(kind)
    raise PgOutputError(f"unknown message kind {kind!r}")


def _expect(r: _Reader, marker: str) -> None:
    found = chr(r.take("!B"))
    if found != marker:
        raise PgOutputError(f"expected {marker!r}, found {found!r}")


def format_lsn(lsn: int) -> str:
    """PostgreSQL's spelling of a WAL position: ``16/B374D848``."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def parse_lsn(text: str) -> int:
    high, sep, low = text.strip().partition("/")
    if not sep:
        raise ValueError(f"{text!r} is not a WAL position (like 16/B374D848)")
    return (int(high, 16) << 32) | int(low, 16)
