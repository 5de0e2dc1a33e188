"""``.hoodie/hoodie.properties``: Java properties text, as Hudi (and every other Hudi engine) reads it."""
from __future__ import annotations

import datetime as _dt
import zlib
from typing import Mapping

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def read_properties_text(text: str) -> dict[str, str]:
    """Parse java.util.Properties text (comments, ``\\`` escapes, continuation lines, ``\\uXXXX``)."""
    props: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.lstrip() if pending else raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending = line[:-1]
            continue
        pending = ""
        logical.append(line)
    if pending:
        logical.append(pending)
    for line in logical:
        key, value = _split_key_value(line)
        props[_unescape(key)] = _unescape(value)
    return props


def _split_key_value(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and i + 6 <= len(s):
                out.append(chr(int(s[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _escape(s: str, is_key: bool) -> str:
    out = []
    for i, c in enumerate(s):
        if c == " " and (is_key or i == 0):
            out.append("\\ ")
        elif c in "\\=:#!":
            out.append("\\" + c)
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            out.append("".join(f"\\u{u:04X}" for u in _utf16_units(c)))
        else:
            out.append(c)
    return "".join(out)


def _utf16_units(c: str) -> list[int]:
    data = c.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def write_properties_text(props: Mapping[str, str], now: _dt.datetime | None = None) -> str:
    """Text as Hudi stores it: a 'saved on' comment, a date comment, then ``key=value`` lines."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    lines = [f"#Properties saved on {now.strftime('%Y-%m-%dT%H:%M:%S.')}{now.microsecond // 1000:03d}Z",
             "#" + now.strftime("%a %b %d %H:%M:%S UTC %Y")]
    lines += [f"{_escape(k, True)}={_escape(str(v), False)}" for k, v in sorted(props.items())]
    return "\n".join(lines) + "\n"


def table_checksum(database: str, table: str) -> str:
    """Hudi's ``hoodie.table.checksum``: CRC32 of ``<database>.<table>``."""
    return str(zlib.crc32(f"{database}.{table}".encode("utf-8")))
