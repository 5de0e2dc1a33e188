"""Spark jobs of one write, tagged with a job group so a failed write can stop its stragglers and
so its progress can be followed.

When one task fails, Spark fails the job while the stage's other tasks may still be writing files;
rolling back before they stop would leave their files behind. So a failed write cancels its
group and waits until none of its tasks is active before it rolls back.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

from pyspark.sql import SparkSession

from . import progress, storage

@contextmanager
def storage_scope(spark: SparkSession, options: dict | None = None) -> Iterator[None]:
    """Storage settings as Hadoop users give them: the session's ``spark.hadoop.fs.*`` for the
    process (as Hadoop's configuration), a read's or write's ``fs.*`` options for that call."""
    storage.configure(spark.conf.getAll)
    with storage.scoped(options):
        yield


# Rows per Arrow batch between the JVM and Python workers when the session leaves it at Spark's
# default (10,000): a task's fixed costs per batch (keys, splitting by partition) then weigh 12%
# less in a bulk insert, and a batch of even 50 wide columns stays a few MiB.
ARROW_BATCH_ROWS = 50_000


@contextmanager
def write_settings(spark: SparkSession, shuffle_partitions: int) -> Iterator[None]:
    """The session's settings for one write's Spark jobs, set back after: its shuffles sized from
    the work (not from ``spark.sql.shuffle.partitions``, 200 by default, whose tasks cost more to
    schedule than a few file groups' lookup takes), and its Arrow batches larger unless the user
    chose a size."""
    settings = {"spark.sql.shuffle.partitions": str(shuffle_partitions)}
    if spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", None) is None:
        settings["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(ARROW_BATCH_ROWS)
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@contextmanager
def step(spark: SparkSession, what: str) -> Iterator[None]:
    """Name the Spark jobs of one step of an action ("upsert 2026...: index lookup"), as Hudi's
    ``setJobStatus`` does: Spark's UI and status API then show where an action's time goes."""
    sc = spark.sparkContext
    key = "spark.job.description"
    outer = sc.getLocalProperty(key)
    sc.setLocalProperty(key, f"{outer}: {what}" if outer else what)
    try:
        yield
    finally:
        sc.setLocalProperty(key, outer)


_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


@contextmanager
def job_group(spark: SparkSession, group: str, description: str) -> Iterator[None]:
    sc = spark.sparkContext
    previous = {key: sc.getLocalProperty(key) for key in _GROUP_PROPERTIES}
    sc.setJobGroup(group, description, interruptOnCancel=True)
    report = progress.sink()
    try:
        if report is None:
            yield
        else:
            with SparkTaskProgress(spark, group, description.removeprefix("hudi "), report):
                yield
    finally:
        for key, value in previous.items():
            sc.setLocalProperty(key, value)


def cancel_and_wait(spark: SparkSession, group: str, timeout_s: float = 120.0) -> bool:
    """Cancel the group's jobs; True once none of their tasks is active (False on timeout)."""
    sc = spark.sparkContext
    sc.cancelJobGroup(group)
    tracker = sc.statusTracker()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(stage.numActiveTasks for stage in _stages(tracker, group)):
            return True
        time.sleep(0.2)
    return False


def _stages(tracker, group: str) -> Iterator:
    """Spark's stage infos of every job in the group so far."""
    for job_id in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job_id)
        for stage_id in (info.stageIds if info else []):
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                yield stage


class SparkTaskProgress:
    """Polls Spark's status tracker for the tasks of one job group and reports them to the sink,
    from a daemon thread, until stopped; then once more as final (every task done, unless the work
    failed)."""

    def __init__(self, spark, group: str, what: str, report: progress.Sink, interval_s: float = 0.5):
        self.tracker = spark.sparkContext.statusTracker()
        self.group, self.what, self.report, self.interval_s = group, what, report, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"progress-{group}", daemon=True)
        self._last: tuple[int, int] | None = None

    def __enter__(self) -> "SparkTaskProgress":
        self._thread.start()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self._stop.set()
        self._thread.join()
        self._poll(final=True, failed=exc is not None)

    def counts(self) -> tuple[int, int]:
        """(tasks completed, tasks) over every stage of the group's jobs so far."""
        stages = list(_stages(self.tracker, self.group))
        return sum(s.numCompletedTasks for s in stages), sum(s.numTasks for s in stages)

    def _poll(self, final: bool = False, failed: bool = False) -> None:
        done, total = self.counts()
        if final and not failed:
            done = total       # skipped stages never run their tasks
        if total and (final or (done, total) != self._last):
            self._last = (done, total)
            self.report(self.what, done, total, final)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._poll()
            except Exception:       # the tracker is best effort; the work itself must not fail
                time.sleep(self.interval_s)
