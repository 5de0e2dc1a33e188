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
_OPTION = re.compile(r"""['"`]?([\w.]+)['"`]?\s*=\s*['"]?([^,'"]*)['"]?""")


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
    columns_text, _, options_text = body.partition(")")
    columns_text = re.sub(r"\s+OPTIONS\s*\(.*", "", columns_text, flags=re.IGNORECASE | re.DOTALL)
    if options_text.strip():
        trailing = re.match(r"^\s*OPTIONS\s*\((.*)$", options_text.strip().rstrip(")"), re.IGNORECASE | re.DOTALL)
        if trailing is None:
            raise HoodieConfigError(f"CREATE INDEX {m.group(2)}: cannot read {options_text.strip()!r}; write "
                                    "CREATE INDEX name ON table [USING type] (column) [OPTIONS (key = 'value')]")
        options = dict(_OPTION.findall(trailing.group(1)))
    else:
        options = {}
    columns = tuple(c.strip().strip("`") for c in columns_text.split(",") if c.strip())
    return CreateIndex(m.group(2), _table(m.group(3)), columns, m.group(4), options, bool(m.group(1)))
