"""``--props`` files, as Hudi Streamer reads them: java.util.Properties text plus Hudi's
``include=other.properties`` lines, which pull another file in at that point (a relative path is
relative to the including file's folder). Later lines win, included files count as inline.

Files are read through ``pyarrow.fs``, so a path may be local or ``s3://``, ``gs://``, ``hdfs://``.
"""
from __future__ import annotations

import os
import posixpath
from typing import Iterable

from hudi_engine.api import read_properties_text
from hudi_engine.errors import HoodieConfigError
from hudi_engine.storage import Storage

INCLUDE = "include"


def logical_lines(text: str) -> list[str]:
    """The entries of a properties text: comments and blank lines dropped, lines ending in an odd
    number of backslashes joined with the next one (its leading blanks dropped)."""
    entries: list[str] = []
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None and (not line or line[0] in "#!"):
            continue
        line = line if pending is None else pending + line
        if (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            pending = line[:-1]
            continue
        pending = None
        entries.append(line)
    if pending is not None:
        entries.append(pending)
    return entries


def parse_properties(text: str) -> list[tuple[str, str]]:
    """(key, value) pairs in file order, escapes resolved; repeated keys (``include``) all kept."""
    pairs = []
    for line in logical_lines(text):
        pairs.extend(read_properties_text(line).items())
    return pairs


def load_properties(path: str) -> dict[str, str]:
    """The properties of ``path`` with its includes resolved recursively."""
    props: dict[str, str] = {}
    _load(path, props, chain=())
    return props


def parse_assignments(items: Iterable[str], flag: str) -> dict[str, str]:
    """``key=value`` strings (``--hoodie-conf``); the value may itself contain '='."""
    props = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise HoodieConfigError(f"{flag} {item!r} is not key=value; write it as {flag} "
                                    f"hoodie.some.option=value")
        props[key.strip()] = value
    return props


def read_text(path: str, what: str) -> str:
    """A whole (small) file: local path or URI. ``what`` says what the file is, for the error."""
    folder, name = posixpath.split(path)
    try:
        return Storage(folder or ".").read_text(name)
    except FileNotFoundError:
        raise HoodieConfigError(f"{what} {path} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HoodieConfigError(f"could not read {what} {path}: {exc}") from exc


def _load(path: str, props: dict[str, str], chain: tuple[str, ...]) -> None:
    identity = _identity(path)
    if identity in chain:
        loop = " -> ".join((*chain[chain.index(identity):], identity))
        raise HoodieConfigError(f"properties file {path} includes itself ({loop}); remove one of "
                                f"these include= lines")
    what = f"properties file (included from {chain[-1]})" if chain else "properties file"
    for key, value in parse_properties(read_text(path, what)):
        if key == INCLUDE:
            _load(_beside(path, value), props, (*chain, identity))
        else:
            props[key] = value


def _beside(including: str, included: str) -> str:
    if "://" in included or included.startswith("/"):
        return included
    return posixpath.join(posixpath.dirname(including), included)


def _identity(path: str) -> str:
    """One spelling per file, so 'a/../b.properties' and 'b.properties' are seen as the same."""
    if "://" in path:
        scheme, rest = path.split("://", 1)
        return f"{scheme}://{posixpath.normpath(rest)}"
    return os.path.realpath(path)
