"""Table services beside ingestion, as Hudi Streamer runs them: a run-once streamer compacts a
merge-on-read table inline; a continuous one only schedules compactions after its delta commits
and executes them on a background thread, so ingestion is not held up, unless more than
``--max-pending-compactions`` pile up."""
from __future__ import annotations

import threading
import time
from typing import Callable

from pyspark.sql import SparkSession

from hudi_engine import config as C
from hudi_engine.api import COMPACTION, HoodieTable, run_compactions


def compaction_options(table_type: str, continuous: bool, disabled: bool, props: dict[str, str]) -> dict[str, str]:
    """The writer's compaction settings; a user's explicit ones win."""
    if table_type != "MERGE_ON_READ":
        return {}
    inline = not continuous and not disabled
    defaults = {C.COMPACT_INLINE.key: str(inline).lower(),
                C.COMPACT_SCHEDULE_INLINE.key: str(continuous and not disabled).lower()}
    return {k: v for k, v in defaults.items() if k not in props}


def pending_compactions(base_path: str) -> int:
    if not HoodieTable.exists(base_path):
        return 0
    return len(HoodieTable.load(base_path).timeline.pending([COMPACTION]))


class AsyncCompactor:
    """Runs pending compactions on a daemon thread, woken after each commit."""

    def __init__(self, spark: SparkSession, base_path: str, options: dict[str, str],
                 on_done: Callable[[str, float], None]):
        self.spark, self.base_path, self.options, self.on_done = spark, base_path, options, on_done
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._idle = threading.Condition()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="hudi-async-compactor", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def wait_below(self, limit: int, stop: Callable[[], bool]) -> None:
        """Hold ingestion while ``limit`` or more compactions are pending (Hudi's back-pressure);
        a compaction that failed stops the job here."""
        self._raise_if_failed()
        while pending_compactions(self.base_path) >= limit and not stop():
            self._raise_if_failed()
            self.wake()
            with self._idle:
                self._idle.wait(timeout=1.0)

    def stop(self, timeout: float | None = None) -> None:
        """Let a running compaction finish (a killed one is rolled back by the next run)."""
        self._stopping.set()
        self._wake.set()
        self._thread.join(timeout)
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self.error is not None:
            raise self.error

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                started = time.monotonic()
                table = HoodieTable.load(self.base_path)
                if table.timeline.pending([COMPACTION]):
                    for instant in run_compactions(self.spark, table, options=self.options):
                        self.on_done(instant, time.monotonic() - started)
                        started = time.monotonic()
            except BaseException as exc:   # surfaced to the ingest loop, which stops the job
                self.error = exc
                return
            finally:
                with self._idle:
                    self._idle.notify_all()
