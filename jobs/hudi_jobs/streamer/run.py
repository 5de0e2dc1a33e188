"""The streamer's loop: fetch from the checkpoint, transform, route bad records, write and commit
the new checkpoint with the data, then (continuous mode) wait and go again.

Exactly once comes from the commit: the checkpoint is stored in the same commit as the rows, a
failed or killed batch leaves an inflight instant that the next write rolls back, and the next run
fetches again from the last committed checkpoint. SIGTERM asks for a graceful stop: the batch in
flight finishes and commits, then the job exits. A second SIGTERM (or SIGINT) abandons it: Spark
jobs are cancelled and the write is rolled back, never half committed.
"""
from __future__ import annotations

import importlib
import logging
import signal
import time
from dataclasses import dataclass
from functools import reduce

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from hudi_engine import config as C
from hudi_engine.api import META_FIELDS, HoodieTable, parse_instant_time, table_schema, write
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieError

from ..conflict_retry import conflict_retries, retry_on_conflict
from ..keys import streamer as K
from ..metrics import StreamerMetrics
from ..placeholders import resolve_placeholders
from ..schema_provider import source_schema
from ..session import job_spark_session
from ..sources import hudi_views
from ..sources.base import MESSAGE, RAW_RECORD, REASON, SOURCE_POSITION, Batch
from .checkpoint import CommitInfo, checkpoint_metadata, resolve_checkpoint
from .config import SOURCES, StreamerConfig, check_record_key
from .dedupe import drop_existing_keys
from .error_table import ErrorTable
from .quality import check_records, quality_rules
from .services import AsyncCompactor, compaction_options
from .transform import SRC_VIEW_PREFIX, build_transformers, transform_batch

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_ABANDONED = 0, 1, 2, 143


class StreamerError(HoodieError):
    """A batch that must not be committed (too many bad records, bad records without an error table)."""


@dataclass(frozen=True)
class RoundResult:
    instant: str | None          # the target commit, None when nothing was new
    records_read: int = 0
    records_written: int = 0
    records_errored: int = 0


class StopSignal:
    """First SIGTERM/SIGINT: finish the batch in flight, then stop. Second: abandon it now."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt(f"signal {signum}: abandoning the batch in flight")
        self.requested = True
        log.info(f"signal {signum}: stopping after the batch in flight (send it again to abandon the batch)")

    def sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.requested and time.monotonic() < deadline:
            time.sleep(min(0.5, deadline - time.monotonic()))


def run_streamer(cfg: StreamerConfig) -> int:
    """Run the job described by a validated config; returns the process exit code."""
    spark = job_spark_session(f"hudi-streamer-{cfg.target_table}")
    stop = StopSignal()
    stop.install()
    streamer = None
    try:
        streamer = Streamer(spark, cfg, stop)
        streamer.run()
        return EXIT_OK
    except KeyboardInterrupt:
        log.info("abandoned; the next run rolls back the unfinished write and resumes from the last commit")
        return EXIT_ABANDONED
    except HoodieConfigError as exc:
        log.error(f"error: {exc}")
        return EXIT_CONFIG
    except HoodieError as exc:
        log.error(f"failed: {exc}")
        return EXIT_FAILED
    finally:
        if streamer is not None:
            streamer.close()
        stop.uninstall()


class Streamer:
    def __init__(self, spark: SparkSession, cfg: StreamerConfig, stop: StopSignal | None = None):
        self.spark, self.cfg, self.stop = spark, cfg, stop or StopSignal()
        check_record_key(cfg, HoodieTable.exists(cfg.target_base_path))
        self.props = resolve_placeholders(cfg.props)
        self.source = _make_source(cfg, self.props)
        self.transformers = build_transformers(cfg.transformer_classes, self.props)
        self.rules = quality_rules(self.props)
        self.views = {} if getattr(self.source, "registers_views", False) else hudi_views.declared_views(self.props)
        self.error_table = ErrorTable.from_props(self.props, cfg.target_base_path, cfg.target_table)
        self.metrics = StreamerMetrics.from_props(self.props, cfg.target_table, cfg.target_base_path)
        self.options = self._write_options()
        self.conflict_retries = conflict_retries(self.options)
        self.writer_id = HoodieConfig(self.options).get(K.MULTIWRITER_CHECKPOINT_ID)
        self.compactor = None
        if cfg.continuous and cfg.table_type == "MERGE_ON_READ" and not cfg.disable_compaction:
            self.compactor = AsyncCompactor(spark, cfg.target_base_path, self.options,
                                            lambda instant, secs: self.metrics.record_table_service("compaction", secs))

    # --- the loop --------------------------------------------------------------------------------
    def run(self) -> None:
        rounds_without_data = 0
        max_idle_rounds = (HoodieConfig(self.props).get(K.MAX_ROUNDS_WITHOUT_NEW_DATA)
                           if self.cfg.post_write_termination_strategy_class else None)
        while True:
            started = time.monotonic()
            if self.compactor is not None:
                self.compactor.wait_below(self.cfg.max_pending_compactions, lambda: self.stop.requested)
            result = self.sync_once()
            rounds_without_data = 0 if result.instant else rounds_without_data + 1
            if not self.cfg.continuous or self.stop.requested:
                return
            if max_idle_rounds is not None and rounds_without_data >= max_idle_rounds:
                log.info(f"no new data for {rounds_without_data} rounds: stopping "
                          f"({self.cfg.post_write_termination_strategy_class})")
                return
            self.stop.sleep(self.cfg.min_sync_interval_seconds - (time.monotonic() - started))

    def sync_once(self) -> RoundResult:
        """One batch: fetch, transform, check, write. Returns what it committed."""
        started = time.monotonic()
        try:
            result = retry_on_conflict(lambda: self._sync(started), self.conflict_retries,
                                       f"the batch into {self.cfg.target_table}", self.stop.sleep)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self.metrics.record_failure(type(exc).__name__)
            raise
        finally:
            self._release_batch()
        if self.compactor is not None and result.instant:
            self.compactor.wake()
        return result

    def _sync(self, started: float) -> RoundResult:
        table = HoodieTable.load(self.cfg.target_base_path) if HoodieTable.exists(self.cfg.target_base_path) else None
        checkpoint = self._resume_from(table)
        if not self._views_ready():
            return RoundResult(None)
        batch = self._fetch(checkpoint)
        if batch.data is None and batch.errors is None and batch.checkpoint == checkpoint:
            self.metrics.record_no_data()
            log.info(f"no new data after checkpoint {checkpoint!r}")
            return RoundResult(None)
        position = batch.position or f"batch after checkpoint {checkpoint!r}"
        data, transform_errors, check_errors, ordering = None, None, None, None
        # Whether counting the records, then writing them, computes nothing twice: the source or the
        # transformers hold them in Spark's cache. Otherwise they are cached here for the two reads.
        read_twice_free = batch.stable or bool(self.transformers)
        if batch.data is not None:
            data, transform_errors = transform_batch(self.spark, batch.data, self.transformers, position)
            key_fields, ordering = self._key_and_ordering(table, data)
            data, check_errors = check_records(data, self.rules, key_fields, ordering, position)
            if self.cfg.filter_dupes:
                data = drop_existing_keys(self.spark, data, self.cfg.target_base_path, self.options)
                read_twice_free = False
        elif table is not None:                         # only bad records: an empty commit moves the checkpoint
            data = _empty_like(self.spark, table)
        if data is None:
            return self._errors_only(batch, position, started)
        if not read_twice_free:
            data = data.persist()
        written = data.count()
        errors = _union([e for e in (batch.errors, transform_errors, check_errors) if e is not None])
        errored = errors.count() if errors is not None else 0
        self._check_error_budget(errors, errored, written + errored, position)
        if errored and self.error_table is not None:
            self._write_errors(errors, batch.checkpoint)
        options = self.options if ordering else _without(self.options, C.PRECOMBINE_FIELD)
        instant = write(data, self.cfg.target_base_path, options,
                        extra_metadata=checkpoint_metadata(batch.checkpoint, self.cfg.checkpoint,
                                                           self.cfg.ignore_checkpoint, self.writer_id))
        data.unpersist()
        duration = time.monotonic() - started
        self.metrics.record_batch(records_read=written + errored, records_written=written,
                                  records_errored=errored, duration_seconds=duration,
                                  lag_records=batch.lag_records, lag_seconds=batch.lag_seconds,
                                  commit_instant=instant,
                                  commit_time_epoch=parse_instant_time(instant).timestamp())
        log.info(f"committed {instant}: {written} records from {position}"
                  f"{f', {errored} to the error table' if errored else ''} in {duration:.1f}s; "
                  f"checkpoint {batch.checkpoint!r}{_lag(batch)}")
        return RoundResult(instant, written + errored, written, errored)

    def _errors_only(self, batch: Batch, position: str, started: float) -> RoundResult:
        """Nothing to write before the target exists (only bad records, or only skipped ones such
        as tombstones): with no schema to create it from, bad records are set aside (idempotently)
        and the checkpoint stays, so the batch is fetched again until records arrive with it."""
        errored = batch.errors.count() if batch.errors is not None else 0
        if errored:
            self._check_error_budget(batch.errors, errored, errored, position)
            if self.error_table is not None:
                self._write_errors(batch.errors, batch.checkpoint)
        self.metrics.record_batch(records_read=errored, records_written=0, records_errored=errored,
                                  duration_seconds=time.monotonic() - started, lag_records=batch.lag_records,
                                  lag_seconds=batch.lag_seconds, commit_instant=None, commit_time_epoch=None)
        log.info(f"no records to write from {position} ({errored} bad) and no target table to "
                  "commit to yet; the checkpoint stays until a batch brings records to create it from")
        return RoundResult(None, errored, 0, errored)

    # --- pieces ----------------------------------------------------------------------------------
    def _release_batch(self) -> None:
        """A long-running streamer keeps nothing of a finished batch: cached frames and the
        transformers' temporary views go."""
        self.spark.catalog.clearCache()
        for view in self.spark.catalog.listTables():
            if view.isTemporary and view.name.upper().startswith(SRC_VIEW_PREFIX):
                self.spark.catalog.dropTempView(view.name)

    def _resume_from(self, table: HoodieTable | None) -> str | None:
        commits = []
        if table is not None:
            timeline = table.timeline
            commits = [CommitInfo(i.timestamp, i.action, timeline.commit_metadata(i).get("extraMetadata") or {})
                       for i in timeline.completed_writes()]
        return resolve_checkpoint(commits, self.cfg.table_type, self.cfg.checkpoint, self.cfg.ignore_checkpoint,
                                  self.writer_id)

    def _views_ready(self) -> bool:
        """The Hudi tables the transformers read by name, registered as of now; False (no batch this
        round) while one has no commit yet."""
        tables, missing = hudi_views.load_tables(self.views)
        if missing:
            self.metrics.record_no_data()
            log.info(f"waiting for the first commit of {', '.join(missing)} (views of the transformations)")
            return False
        for name, table in tables.items():
            hudi_views.register(self.spark, name, table.base_path)
        return True

    def _fetch(self, checkpoint: str | None) -> Batch:
        attempts = self.cfg.max_retry_count if self.cfg.retry_on_source_failures else 0
        for attempt in range(attempts + 1):
            try:
                return self.source.fetch(self.spark, checkpoint, self.cfg.source_limit)
            except (HoodieError, KeyboardInterrupt):
                raise                                   # configuration problems do not heal by waiting
            except Exception as exc:
                if attempt == attempts:
                    raise
                log.warning(f"source failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                          f"retry {attempt + 1} of {attempts} in {self.cfg.retry_interval_seconds}s")
                self.stop.sleep(self.cfg.retry_interval_seconds)
        raise AssertionError("unreachable")

    def _key_and_ordering(self, table: HoodieTable | None, data: DataFrame) -> tuple[list[str], str | None]:
        cfg = HoodieConfig({**self.options, **(table.props if table is not None else {})})
        ordering = cfg.get_str(C.PRECOMBINE_FIELD)
        table_has_one = table is not None and HoodieConfig(table.props).contains(C.PRECOMBINE_FIELD)
        if ordering and not self.cfg.source_ordering_field_given and not table_has_one \
                and ordering.split(".")[0] not in data.columns:
            ordering = None                             # Hudi's "ts" default, absent from these records
        return cfg.get_list(C.RECORDKEY_FIELDS), ordering

    def _check_error_budget(self, errors: DataFrame | None, errored: int, total: int, position: str) -> None:
        if not errored:
            return
        cfg = HoodieConfig(self.props)
        max_errors, max_fraction = cfg.get(K.ERROR_TABLE_MAX_ERRORS), cfg.get(K.ERROR_TABLE_MAX_ERROR_FRACTION)
        over = ((max_errors >= 0 and errored > max_errors) or
                (max_fraction >= 0 and total and errored / total > max_fraction))
        if self.error_table is None and not self.cfg.commit_on_errors:
            raise StreamerError(f"{errored} bad records in {position} and no error table to put them in; "
                                f"first: {_describe(errors)}. Set {K.ERROR_TABLE_ENABLED.key}=true to set "
                                "them aside, or fix the records or the transform; nothing was committed")
        if over:
            raise StreamerError(
                f"{errored} of {total} records in {position} are bad, over the limit "
                f"({K.ERROR_TABLE_MAX_ERRORS.key}={max_errors}, {K.ERROR_TABLE_MAX_ERROR_FRACTION.key}="
                f"{max_fraction}); first: {_describe(errors)}. Nothing was committed")
        if self.error_table is None:
            log.warning(f"--commit-on-errors: dropping {errored} bad records of {position}; first: {_describe(errors)}")

    def _write_errors(self, errors: DataFrame, checkpoint: str | None) -> None:
        try:
            self.error_table.write(errors, self.cfg.target_table, checkpoint)
        except Exception as exc:
            if self.error_table.fail_batch_on_write_error:
                raise StreamerError(f"writing bad records to the error table {self.error_table.base_path} "
                                    f"failed, so the batch is not committed: {exc}") from exc
            log.warning(f"error table write failed; going on ({K.ERROR_TABLE_WRITE_FAILURE_STRATEGY.key}="
                      f"LOG_ERROR): {exc}")

    def _write_options(self) -> dict[str, str]:
        cfg = self.cfg
        options = {**_without(self.props, C.TABLE_TYPE, C.OPERATION),
                   C.TABLE_TYPE.key: cfg.table_type, C.OPERATION.key: cfg.operation}
        if not HoodieConfig(options).contains(C.TABLE_NAME):
            options[C.TABLE_NAME.key] = cfg.target_table
        ordering = cfg.source_ordering_field
        if not cfg.source_ordering_field_given and getattr(self.source, "ordering_field", None):
            ordering = self.source.ordering_field
        if ordering and not HoodieConfig(options).contains(C.PRECOMBINE_FIELD):
            options[C.PRECOMBINE_FIELD.key] = ordering
        if cfg.enable_sync:
            options[C.META_SYNC_ENABLED.key] = "true"
        options.update(compaction_options(cfg.table_type, cfg.continuous, cfg.disable_compaction, self.props))
        return options

    def close(self) -> None:
        if self.compactor is not None:
            self.compactor.stop(timeout=None if not self.stop.requested else 600)
        self.metrics.close()


def _make_source(cfg: StreamerConfig, props: dict[str, str]):
    entry = SOURCES[cfg.source_class]
    source_class = getattr(importlib.import_module(entry.module), entry.class_name)
    return source_class(props, source_schema(cfg.schemaprovider_class, props))


def _without(options: dict[str, str], *props: C.ConfigProperty) -> dict[str, str]:
    names = {name for prop in props for name in (prop.key, *prop.alternatives)}
    return {k: v for k, v in options.items() if k not in names}


def _empty_like(spark: SparkSession, table: HoodieTable) -> DataFrame:
    return spark.createDataFrame([], from_arrow_schema(table_schema(table))).drop(*META_FIELDS)


def _union(frames: list[DataFrame]) -> DataFrame | None:
    if not frames:
        return None
    return reduce(lambda a, b: a.unionByName(b), frames).persist()


def _describe(errors: DataFrame) -> str:
    row = errors.select(RAW_RECORD, REASON, MESSAGE, SOURCE_POSITION).first()
    raw = (row[RAW_RECORD] or "")[:200]
    return f"{row[REASON]} at {row[SOURCE_POSITION]}: {row[MESSAGE]} (record: {raw})"


def _lag(batch: Batch) -> str:
    parts = []
    if batch.lag_records is not None:
        parts.append(f"{batch.lag_records} records")
    if batch.lag_seconds is not None:
        parts.append(f"{batch.lag_seconds:.0f}s")
    return f"; behind by {', '.join(parts)}" if parts else ""

