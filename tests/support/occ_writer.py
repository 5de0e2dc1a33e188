"""One writer of a multi-writer test, as its own process with its own SparkSession:

    python -m tests.support.occ_writer <base path> '<json spec>'

spec: ``rows`` (fruit rows), ``options`` (extra write options), ``operation`` and ``gate``: a file
the writer's input waits for, so a test can hold the write in flight (its instant exists, its
heartbeat beats) until every writer it races with has started too. Prints one JSON line,
``{"committed": instant}`` or ``{"conflict": message}`` (exit code 3)."""
from __future__ import annotations

import json
import os
import sys
import time

from hudi_engine import write
from hudi_engine.concurrency.heartbeat import Heartbeat
from hudi_engine.file_group.markers import marker_path
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.instant import Instant, State, new_instant_time
from hudi_engine.errors import HoodieWriteConflictError
from hudi_engine.spark import local_spark
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA

CONFLICT_EXIT = 3


def gated(gate: str):
    def wait_for_gate(batches):
        deadline = time.monotonic() + 300
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.05)
        yield from batches
    return wait_for_gate


def live_writer_footprint(path: str, partition: str, file_id: str) -> tuple[Instant, Heartbeat]:
    """What a live writer that started updating a file group leaves on storage: its requested
    instant, a beating heartbeat and a MERGE marker naming the file group (``stop()`` the heartbeat
    and the writer is dead: the next writer rolls it back)."""
    table = HoodieTable.load(path)
    instant = Instant(new_instant_time(table.timeline.last_instant_time), "commit", State.REQUESTED)
    beat = Heartbeat(table.storage, instant.timestamp, 1000).start()
    table.timeline.create_requested(instant)
    table.storage.write_bytes(marker_path(instant.timestamp, partition,
                                          f"{file_id}_0-1-1_{instant.timestamp}.parquet", "MERGE"), b"")
    return instant, beat


def main(base_path: str, spec: dict) -> int:
    spark = local_spark("occ-writer", cores=1, memory="1g")
    df = spark.createDataFrame([tuple(r) for r in spec["rows"]], FRUIT_SCHEMA)
    if spec.get("gate"):
        df = df.mapInArrow(gated(spec["gate"]), df.schema)
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": spec.get("operation", "upsert"),
               **spec.get("options", {})}
    try:
        instant = write(df, base_path, options)
    except HoodieWriteConflictError as exc:
        print(json.dumps({"conflict": str(exc)}), flush=True)
        return CONFLICT_EXIT
    print(json.dumps({"committed": instant}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], json.loads(sys.argv[2])))
