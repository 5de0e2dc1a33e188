"""The Hive partition values of a partition path, and which commits a sync must look at.

Extractors are Hudi's ``PartitionValueExtractor`` classes, chosen by (class) name so Hudi users'
settings work unchanged. The commit window follows HiveSyncTool: everything after the last synced
instant plus "hollow" commits (started before it, completed after it), told apart by completion
time, so a sync running beside slow concurrent writers never skips one.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import HoodieConfigError
from ..keygen import DEFAULT_PARTITION_PATH
from ..keygen.paths import unescape_path_name
from .errors import HiveSyncError


@dataclass(frozen=True)
class PartitionValueExtractor:
    name: str
    extract: Callable[[str], list[str]]


def _multi_part_keys(path: str) -> list[str]:
    """One value per ``/`` level; ``key=value`` levels give their value."""
    if not path:
        return []
    values = []
    for level in path.split("/"):
        if "=" in level:
            parts = level.split("=")
            if len(parts) != 2:
                raise HiveSyncError(f"partition level {level!r} of {path!r} is not key=value")
            level = parts[1]
        values.append(level)
    return values


def _hive_style(path: str) -> list[str]:
    parts = path.split("=")
    if len(parts) != 2:
        raise HiveSyncError(f"partition path {path!r} is not in the form key=value")
    return [parts[1]]


def _slash_encoded(levels: int, fmt: str) -> Callable[[str], list[str]]:
    """``yyyy/mm/dd[/hh]`` (levels may be ``key=value``) as one date value; Hive's default
    partition passes through."""
    def extract(path: str) -> list[str]:
        if path == DEFAULT_PARTITION_PATH:
            return [path]
        parts = [p.split("=")[-1] for p in path.split("/")]
        try:
            if len(parts) != levels:
                raise ValueError
            moment = _dt.datetime(*(int(p) for p in parts))
        except ValueError:
            raise HiveSyncError(f"partition path {path!r} is not in the form "
                                + "/".join(["yyyy", "mm", "dd", "hh"][:levels])) from None
        return [moment.strftime(fmt)]
    return extract


_EXTRACTORS = {
    "MultiPartKeysValueExtractor": _multi_part_keys,
    "HiveStylePartitionValueExtractor": _hive_style,
    "SlashEncodedDayPartitionValueExtractor": _slash_encoded(3, "%Y-%m-%d"),
    "SlashEncodedHourPartitionValueExtractor": _slash_encoded(4, "%Y-%m-%d-%H"),
    "SinglePartPartitionValueExtractor": lambda path: [path],
    "NonPartitionedExtractor": lambda path: [],
}


def extractor_for(class_name: str) -> PartitionValueExtractor:
    short = class_name.strip().rsplit(".", 1)[-1]
    if short not in _EXTRACTORS:
        raise HoodieConfigError(
            f"partition value extractor {class_name!r} is not supported; use one of "
            f"{', '.join('org.apache.hudi.hive.' + n for n in _EXTRACTORS)}")
    return PartitionValueExtractor(short, _EXTRACTORS[short])


def infer_extractor_name(partition_fields: Sequence[str], hive_style: bool) -> str:
    """Hudi's inference: none for no fields, hive-style for one ``key=value`` level, else one
    value per level."""
    if not partition_fields:
        return "NonPartitionedExtractor"
    if len(partition_fields) == 1 and hive_style:
        return "HiveStylePartitionValueExtractor"
    return "MultiPartKeysValueExtractor"


def partition_values(extractor: PartitionValueExtractor, path: str, fields: Sequence[str],
                     decode: bool) -> tuple[str, ...]:
    values = extractor.extract(path)
    if len(values) != len(fields):
        raise HiveSyncError(
            f"partition path {path!r} gives {len(values)} value(s) {values} with {extractor.name}, but "
            f"the Hive table is partitioned by {list(fields)}; set "
            "hoodie.datasource.hive_sync.partition_extractor_class (e.g. "
            "SlashEncodedDayPartitionValueExtractor for yyyy/mm/dd paths) or "
            "hoodie.datasource.hive_sync.partition_fields")
    return tuple(unescape_path_name(v) if decode else v for v in values)


# --- the commit window -----------------------------------------------------------------------------
@dataclass(frozen=True)
class CompletedWrite:
    timestamp: str
    completion_time: str | None


def writes_to_sync(writes: Sequence[CompletedWrite], last_synced: str | None,
                   last_completion_synced: str | None) -> list[CompletedWrite] | None:
    """Completed writes the metastore has not seen: after the last synced one, or "hollow" (started
    before it, completed after it). None when only a full listing can tell: never synced, or the
    last synced commit left the active timeline (archived, or restored away)."""
    if last_synced is None or all(w.timestamp != last_synced for w in writes):
        return None
    return [w for w in writes if w.timestamp > last_synced or (
        last_completion_synced is not None and w.completion_time is not None
        and w.completion_time > last_completion_synced)]
