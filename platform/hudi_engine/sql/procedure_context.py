"""What a procedure runs with: the session, its bound arguments, and the table they name (by
``table``, resolved by the caller's catalog, or by ``path``), plus the small readings several
procedures share (``options`` strings, completion times, instant metadata)."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from pyspark.sql import SparkSession

from .. import config as C
from ..errors import HoodieConfigError
from ..table.meta_client import HoodieTable
from ..timeline.avro_models import decode_instant_avro
from ..timeline.instant import Instant, format_instant_time
from .procedure_args import Args, Procedure


@dataclass
class Invocation:
    spark: SparkSession
    procedure: Procedure
    args: Args
    locate: Callable[[str], str]     # table name -> base path

    @cached_property
    def base_path(self) -> str:
        """Hudi's rule: the ``table`` argument when given, else ``path``."""
        name = self.args.values.get("table")
        if name:
            return self.locate(name)
        path = self.args.values.get("path")
        if path:
            return path
        ways = "table => 'name' or path => 'base path'" if "path" in self.args.values else "table => 'name'"
        raise HoodieConfigError(f"CALL {self.procedure.name}: name the table with {ways}")

    @cached_property
    def table(self) -> HoodieTable:
        return HoodieTable.load(self.base_path)

    def options(self) -> dict[str, str]:
        """The ``options`` argument, ``'key=value,key2=value2'`` as Hudi's procedures take it."""
        return parse_options(self.procedure.name, self.args.values.get("options"))

    def refresh_catalog(self) -> None:
        """After a procedure rewound the table, Spark's cached plans of it must go (as Hudi does)."""
        name = self.args.values.get("table")
        if name and self.spark.catalog.tableExists(name):
            self.spark.catalog.refreshTable(name)


def parse_options(procedure: str, text: str | None) -> dict[str, str]:
    options = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise HoodieConfigError(f"CALL {procedure}: options => expects 'key=value,key2=value2', got {item!r}")
        options[key.strip()] = value.strip()
    return options


def instant_metadata(table: HoodieTable, instant: Instant) -> dict:
    """The Avro record a completed clean, rollback, savepoint or restore instant holds."""
    return decode_instant_avro(table.timeline.read_details(instant))


def completion_times(table: HoodieTable) -> dict[Instant, str]:
    """When each completed instant completed, as Hudi 1.x reports it (``state_transition_time``):
    from the file name on timeline layout 2, from the completed file's modification time on layout 1."""
    timeline = table.timeline
    done = [i for i in timeline.instants if i.is_completed]
    if timeline.layout_version >= 2:
        return {i: i.completion_time for i in done if i.completion_time}
    utc = (table.config.get_str(C.TIMELINE_TIMEZONE) or "").upper() == "UTC"
    mtimes = {info.path.rsplit("/", 1)[-1]: info.mtime_ns for info in table.storage.list(timeline.timeline_dir)}
    out = {}
    for i in done:
        mtime = mtimes.get(i.file_name(timeline.layout_version))
        if mtime is not None:
            moment = _dt.datetime.fromtimestamp(mtime / 1e9, _dt.timezone.utc if utc else None)
            out[i] = format_instant_time(moment)
    return out


def java_list(items, sep: str = ", ") -> str:
    """A list as Hudi's procedures print one (Java's ``List.toString``)."""
    return "[" + sep.join(str(i) for i in items) + "]"
