"""Spark jobs of one write, tagged with a job group so a failed write can stop its stragglers and
so its progress can be followed.

When one task fails, Spark fails the job while the stage's other tasks may still be writing files;
rolling back before they stop would leave their files behind. So a failed write cancels its
group and waits until none of its tasks is active before it rolls back.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from pyspark.sql import SparkSession

from . import progress

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
            with progress.SparkTaskProgress(spark, group, description.removeprefix("hudi "), report):
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
        active = 0
        for job_id in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job_id)
            for stage_id in (info.stageIds if info else []):
                stage = tracker.getStageInfo(stage_id)
                active += stage.numActiveTasks if stage else 0
        if active == 0:
            return True
        time.sleep(0.2)
    return False
