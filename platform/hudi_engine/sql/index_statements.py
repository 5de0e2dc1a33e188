"""Hudi's index DDL in Spark SQL, read from the statement's text (sqlglot has no grammar for it):

    CREATE INDEX [IF NOT EXISTS] name ON [TABLE] table [USING type] (column [OPTIONS(...)], ...) [OPTIONS(...)]
    DROP INDEX [IF EXISTS] name ON [TABLE] table
    SHOW INDEXES {FROM | IN} [TABLE] table

Pure: ``parse_index_statement`` returns None for any other text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import HoodieConfigError

_NAME = r"`?([\w.]+?)`?"
_CREATE = re.compile(rf"^\s*CREATE\s+INDEX\s+(IF\s+NOT\s+EXISTS\s+)?{_NAME}\s+ON\s+(?:TABLE\s+)?"
                     rf"((?:`[^`]+`|[\w]+)(?:\.(?:`[^`]+`|[\w]+))*)\s*(?:USING\s+(\w+)\s*)?\((.*)\)\s*;?\s*$",
                     re.IGNORECASE | re.DOTALL)
_DROP = re.compile(rf"^\s*DROP\s+INDEX\s+(IF\s+EXISTS\s+)?{_NAME}\s+ON\s+(?:TABLE\s+)?([`\w.]+)\s*;?\s*$",
                   re.IGNORECASE)
_SHOW = re.compile(r"^\s*SHOW\s+INDEX(?:ES)?\s+(?:FROM|IN)\s+(?:TABLE\s+)?([`\w.]+)\s*;?\s*$", re.IGNORECASE)
_QUOTED = r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"'
# key [=] value: a key is a (dotted) name or a string; a value a string or a bare literal.
_OPTION = re.compile(rf"""\s*(`[^`]+`|{_QUOTED}|[\w.]+)\s*=?\s*({_QUOTED}|[^,\s]+)\s*(?:,|$)""", re.DOTALL)
_ESCAPES = {"b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "0": "\0"}


@dataclass(frozen=True)
class CreateIndex:
    name: str
    table: str
    columns: tuple[str, ...]
    index_type: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropIndex:
    name: str
    table: str
    if_exists: bool = False


@dataclass(frozen=True)
class ShowIndexes:
    table: str


IndexStatement = CreateIndex | DropIndex | ShowIndexes


def _table(text: str) -> str:
    return text.replace("`", "")


def parse_index_statement(text: str) -> IndexStatement | None:
    if m := _SHOW.match(text):
        return ShowIndexes(_table(m.group(1)))
    if m := _DROP.match(text):
        return DropIndex(m.group(2), _table(m.group(3)), bool(m.group(1)))
    m = _CREATE.match(text)
    if m is None:
        return None
    body = m.group(5)
    close = _closing(body)
    columns_text, options_text = body[:close], body[close + 1:]
    columns_text = re.sub(r"\s+OPTIONS\s*\(.*", "", columns_text, flags=re.IGNORECASE | re.DOTALL)
    if options_text.strip():
        # The statement's pattern took the closing parenthesis.
        trailing = re.match(r"^\s*OPTIONS\s*\((.*)$", options_text.strip(), re.IGNORECASE | re.DOTALL)
        if trailing is None:
            raise HoodieConfigError(f"CREATE INDEX {m.group(2)}: cannot read {options_text.strip()!r}; write "
                                    "CREATE INDEX name ON table [USING type] (column) [OPTIONS (key = 'value')]")
        options = _options(m.group(2), trailing.group(1))
    else:
        options = {}
    columns = tuple(c.strip().strip("`") for c in columns_text.split(",") if c.strip())
    return CreateIndex(m.group(2), _table(m.group(3)), columns, m.group(4), options, bool(m.group(1)))


def _closing(body: str) -> int:
    """Where the column list ends: the first ``)`` outside quotes and any parentheses opened in it."""
    depth, i = 0, 0
    while i < len(body):
        c = body[i]
        if c in "'\"`":
            i = _end_of_quote(body, i)
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return len(body)


def _end_of_quote(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" and quote != "`" else 1
    return i


def _options(index: str, text: str) -> dict[str, str]:
    out, pos = {}, 0
    while text[pos:].strip():
        m = _OPTION.match(text, pos)
        if m is None:
            raise HoodieConfigError(f"CREATE INDEX {index}: cannot read the options at {text[pos:].strip()!r}; write "
                                    "OPTIONS (key = 'value', ...), with quotes around values holding , or spaces")
        out[_literal(m.group(1))] = _literal(m.group(2))
        pos = m.end()
    return out


def _literal(token: str) -> str:
    """A key or value as Spark's parser reads it: quotes removed and, in strings, backslash
    escapes resolved (``'\\\\d'`` is ``\\d``; an unknown escape drops its backslash)."""
    if token[0] == "`":
        return token[1:-1]
    if token[0] not in "'\"":
        return token
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
                out.append(chr(int(body[i + 2:i + 6], 16)))
                i += 6
                continue
            if re.fullmatch(r"[0-3][0-7]{2}", body[i + 1:i + 4]):
                out.append(chr(int(body[i + 1:i + 4], 8)))
                i += 4
                continue
            out.append("\\" + nxt if nxt in "%_" else _ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
