"""Partition path text: Hive-style escaping and reading partition values back from a path."""
from __future__ import annotations

import re
from typing import Sequence

from .. import config as C
from ..errors import HoodieValidationError

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"

_ESCAPE_CHARS = frozenset([chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
_ESCAPE_RE = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(_ESCAPE_CHARS)) + "]"


def partition_values_from_path(path: str, fields: Sequence[str], hive_style: bool, *,
                               url_encoded: bool = False) -> dict[str, str | None]:
    """Partition column values from a relative partition path, the inverse of simple/complex layouts.

    ``__HIVE_DEFAULT_PARTITION__`` comes back as ``None`` (the value was null or empty).  A value
    that itself contained ``/`` (written without URL encoding) is reassembled for hive-style paths;
    for plain paths that is only possible with a single field, which then gets the whole path
    (also what a timestamp-based ``yyyy/MM/dd`` layout yields).
    """
    fields = [f for f in fields if f]
    if not fields:
        return {}
    path = path.strip("/")
    segments = path.split("/") if path else [""]
    if hive_style:
        values: dict[str, list[str]] = {}
        current = None
        nxt = 0
        for seg in segments:
            if nxt < len(fields) and seg.startswith(fields[nxt] + "="):
                current = fields[nxt]
                values[current] = [seg[len(current) + 1:]]
                nxt += 1
            elif current is not None:
                values[current].append(seg)
            else:
                raise HoodieValidationError(
                    f"Partition path {path!r} is not hive style for fields {list(fields)} "
                    f"(expected {fields[0]}=...); check {C.HIVE_STYLE_PARTITIONING.key}")
        if nxt != len(fields):
            raise HoodieValidationError(
                f"Partition path {path!r} lacks field {fields[nxt]!r}; expected "
                + "/".join(f + "=..." for f in fields))
        raw = {f: "/".join(v) for f, v in values.items()}
    elif len(fields) == 1:
        raw = {fields[0]: path}
    else:
        if len(segments) != len(fields):
            raise HoodieValidationError(
                f"Partition path {path!r} has {len(segments)} levels but the table has "
                f"{len(fields)} partition fields {list(fields)}; a value containing '/' cannot be "
                f"told apart without {C.HIVE_STYLE_PARTITIONING.key} or {C.URL_ENCODE_PARTITIONING.key}")
        raw = dict(zip(fields, segments))
    out: dict[str, str | None] = {}
    for f, v in raw.items():
        if v == DEFAULT_PARTITION_PATH:
            out[f] = None
        else:
            out[f] = unescape_path_name(v) if url_encoded else v
    return out


def escape_path_name(value: str) -> str:
    """Hive's FileUtils.escapePathName, as Hudi's PartitionPathEncodeUtils does it."""
    if not value:
        return DEFAULT_PARTITION_PATH
    return "".join(f"%{ord(c):02X}" if c in _ESCAPE_CHARS else c for c in value)


def unescape_path_name(value: str) -> str:
    """Inverse of :func:`escape_path_name` (``%XX`` with two hex digits, anything else kept)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), value)
