"""A table service as a job (``python -m hudi_jobs.table_service --job-config FILE``), what the
operator schedules for a HudiTable: compaction (schedule when Hudi's triggers say so, then execute
every pending plan), clustering (likewise, by hoodie.clustering.*), indexing (Hudi's asynchronous
indexer: resume a pending indexing, then build the metadata indexes hoodieConf enables that the table
lacks; hoodieConf carries the table lock writers share), cleaning (finish an interrupted clean, clean by hoodie.cleaner.*, then archive
by hoodie.keep.*), a savepoint of the latest commit (deleting the oldest beyond keepSavepoints) or
catalog sync (Hive Metastore). The job-config is YAML or JSON:

    basePath: s3://lake/orders        # the table
    tableName: orders                 # for messages and metrics
    service: compaction               # or clustering, indexing, clean, savepoint, catalogSync
    hoodieConf: {hoodie.compact.inline.max.delta.commits: "5"}   # ${secret:...} placeholders allowed
    keepSavepoints: 7                 # savepoint only: how many to keep

Rerunning is always safe: an interrupted compaction or clustering is rolled back and run again, an interrupted
clean is completed from its plan, and a sync brings the metastore to the table's state whatever it was.
A run that loses a write conflict to another writer is run again, from the table as the other left
it, up to hoodie.write.num.retries.on.conflict.failures times.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from hudi_engine.errors import HoodieConfigError, HoodieError

from .conflict_retry import conflict_retries, retry_on_conflict
from .placeholders import resolve_placeholders
from .streamer.config import parse_document
from .streamer.props import read_text

PROG = "python -m hudi_jobs.table_service"
COMPACTION, CLUSTERING, CLEAN, SAVEPOINT, CATALOG_SYNC = "compaction", "clustering", "clean", "savepoint", "catalogSync"
INDEXING = "indexing"
SERVICES = (COMPACTION, CLUSTERING, INDEXING, CLEAN, SAVEPOINT, CATALOG_SYNC)
FIELDS = ("basePath", "tableName", "service", "hoodieConf", "keepSavepoints")


@dataclass(frozen=True)
class TableServiceConfig:
    base_path: str
    table_name: str
    service: str
    props: Mapping[str, str]
    keep_savepoints: int = 0


def parse_config(data: Any, where: str) -> TableServiceConfig:
    if not isinstance(data, dict):
        raise HoodieConfigError(f"{where}: a table-service job config is a mapping with {', '.join(FIELDS)}")
    for name in data:
        if name not in FIELDS:
            near = difflib.get_close_matches(name, FIELDS, n=1)
            raise HoodieConfigError(f"{where}: unknown field {name!r}" + (f"; did you mean {near[0]}?" if near else ""))
    for name in ("basePath", "service"):
        if not data.get(name):
            raise HoodieConfigError(f"{where}: {name} is required")
    if data["service"] not in SERVICES:
        raise HoodieConfigError(f"{where}: service {data['service']!r} is not one of {', '.join(SERVICES)}")
    conf = data.get("hoodieConf") or {}
    if not isinstance(conf, dict):
        raise HoodieConfigError(f"{where}: hoodieConf must be a map of option → value")
    keep = data.get("keepSavepoints") or 0
    if not isinstance(keep, int) or keep < 0:
        raise HoodieConfigError(f"{where}: keepSavepoints must be a whole number (0 keeps all)")
    return TableServiceConfig(str(data["basePath"]), str(data.get("tableName") or data["basePath"]),
                              data["service"], {str(k): str(v) for k, v in conf.items()}, keep)


def load_config(path: str) -> TableServiceConfig:
    return parse_config(parse_document(read_text(path, "job config"), path), path)


def run_service(cfg: TableServiceConfig) -> list[str]:
    """Run it; returns what it did (instants compacted, or the sync's summary)."""
    from .session import job_spark_session

    props = resolve_placeholders(cfg.props)
    # First: the session registers the job's spark.hadoop.* settings (how to reach the table's
    # store, e.g. an S3 endpoint), which every service needs before it reads the table.
    spark = job_spark_session(f"hudi-{cfg.service}-{cfg.table_name}")
    if cfg.service == CATALOG_SYNC:
        from hudi_engine.api import sync_hive
        result = sync_hive(cfg.base_path, props)
        return [f"{result.database} synced to {result.synced_instant} "
                f"({'changed' if result.changed else 'already in step'})"]
    from hudi_engine.api import HoodieTable

    if not HoodieTable.exists(cfg.base_path):
        _say(f"{cfg.table_name}: no table at {cfg.base_path} yet, nothing to do")
        return []
    return retry_on_conflict(lambda: _run_table_service(spark, cfg, props), conflict_retries(props),
                             f"the {cfg.service} of {cfg.table_name}")


def _run_table_service(spark, cfg: TableServiceConfig, props: Mapping[str, str]) -> list[str]:
    """One attempt, from the table as it is now."""
    from hudi_engine.api import HoodieTable, run_compactions, schedule_compaction

    table = HoodieTable.load(cfg.base_path)
    if cfg.service == SAVEPOINT:
        return _savepoint(table, cfg.keep_savepoints)
    if cfg.service == CLUSTERING:
        from hudi_engine.api import run_clusterings, schedule_clustering
        schedule_clustering(table, props)
        return run_clusterings(spark, table.reload(), options=props)
    if cfg.service == INDEXING:
        from hudi_engine.api import build_index
        resumed = build_index(spark, table, mode="execute", options=props)
        built = build_index(spark, table.reload(), options=props)
        return [f"indexed {i.timestamp}" for i in (resumed, built) if i is not None]
    if cfg.service == CLEAN:
        from hudi_engine.api import archive_inline, run_clean
        done = run_clean(table, props, spark, force=True)
        return done + [f"archived {i.timestamp}" for i in archive_inline(table.reload(), props)]
    schedule_compaction(table, props)
    return run_compactions(spark, table.reload(), options=props)


def _savepoint(table, keep: int) -> list[str]:
    """Savepoint the latest commit unless it already is; drop the oldest beyond ``keep``."""
    from hudi_engine.api import create_savepoint, delete_savepoint, list_savepoints
    latest = table.timeline.last_completed_write()
    existing = [s.instant for s in list_savepoints(table)]
    if latest is None or latest.timestamp in existing:
        return []
    done = [f"savepoint {create_savepoint(table.reload(), latest.timestamp, comments='scheduled').timestamp}"]
    existing.append(latest.timestamp)
    for old in existing[:-keep] if keep else []:
        delete_savepoint(table.reload(), old)
        done.append(f"deleted savepoint {old}")
    return done


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run one table service (compaction, clustering, clean, savepoint or catalog sync) of a Hudi table.", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  python -m hudi_jobs.table_service --job-config /etc/hudi/job/job-config.yaml\n\n"
               "job config:\n  basePath: s3://lake/orders\n  tableName: orders\n  service: compaction\n")
    parser.add_argument("--job-config", required=True, metavar="FILE", help="the service's job config (YAML/JSON)")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.job_config)
        done = run_service(cfg)
    except HoodieConfigError as exc:
        _say(f"error: {exc}")
        return 2
    except HoodieError as exc:
        _say(f"failed: {exc}")
        return 1
    _say(f"{cfg.service} of {cfg.table_name} done: {', '.join(done) if done else 'nothing was due'}")
    return 0


def _say(message: str) -> None:
    print(f"[table-service] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
