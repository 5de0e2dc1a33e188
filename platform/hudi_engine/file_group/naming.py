"""Data file names as Hudi writes them (FSUtils): they carry the file group id and the instant."""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

PARTITION_METAFILE = ".hoodie_partition_metadata"
BASE_EXTENSIONS = (".parquet", ".orc", ".hfile", ".lance")

_LOG_NAME = re.compile(
    r"^\.(?P<file_id>.+?)_(?P<instant>\d+)\.log\.(?P<version>\d+)(?:_(?P<token>\d+-\d+-\d+))?(?P<cdc>-cdc)?$")


def new_file_id() -> str:
    """A file group id: a UUID plus the ``-0`` index suffix Hudi appends."""
    return f"{uuid.uuid4()}-0"


def write_token(task_partition: int, stage: int, task_attempt: int) -> str:
    return f"{task_partition}-{stage}-{task_attempt}"


def base_file_name(file_id: str, token: str, instant: str, ext: str = ".parquet") -> str:
    return f"{file_id}_{token}_{instant}{ext}"


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant: str


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    instant: str
    version: int
    write_token: str | None
    is_cdc: bool


def parse_base_file_name(name: str) -> BaseFileName | None:
    if name.startswith(".") or not name.endswith(BASE_EXTENSIONS):
        return None
    stem = name.rsplit(".", 1)[0]
    parts = stem.split("_")
    if len(parts) < 3:
        return None
    return BaseFileName(parts[0], "_".join(parts[1:-1]), parts[-1])


def parse_log_file_name(name: str) -> LogFileName | None:
    m = _LOG_NAME.match(name)
    if not m:
        return None
    return LogFileName(m.group("file_id"), m.group("instant"), int(m.group("version")),
                       m.group("token"), bool(m.group("cdc")))


def partition_metadata_text(instant: str, depth: int, saved_at: str) -> str:
    """``.hoodie_partition_metadata``: the instant that created the partition and its depth."""
    return f"#partition metadata\n#{saved_at}\ncommitTime={instant}\npartitionDepth={depth}\n"
