"""The driver's half of ``df.write.format("hudi")`` and of each ``writeStream`` micro-batch: the rows
Spark's tasks staged, written to the table in one commit by ``api.write`` as a DataFrame of the
user's exact schema, so the engine picks where the work runs (this process for a small input,
Spark's executors otherwise) as for any DataFrame. The save mode is applied first (``save_mode``);
a micro-batch the table holds already is skipped (``sink_checkpoint``); the staged files go however
it ends."""
from __future__ import annotations

import json
import logging

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from .. import config as C
from ..api.writes import write
from ..config import HoodieConfig
from ..spark_files import ReadParquetFiles, task_indexes
from ..storage import Storage
from ..table.meta_client import PROPERTIES_FILE, HoodieTable
from .save_mode import deletes_table
from .sink_checkpoint import SinkBatch
from .staging import StagedWrite, drop_staging, sweep_abandoned

log = logging.getLogger(__name__)


def write_staged(spark: SparkSession, staged: StagedWrite) -> str:
    """Write the staged rows to the table; returns the committed instant."""
    storage = Storage(staged.base_path, staged.options)
    try:
        cfg = HoodieConfig(staged.options)
        operation = cfg.get_str(C.OPERATION).lower()
        existing = HoodieTable.load(storage) if storage.exists(PROPERTIES_FILE) else None
        batch = None if staged.batch_id is None else SinkBatch.of(staged.options, staged.batch_id)
        replayed = batch.committed_in(existing) if batch is not None and existing is not None else None
        if replayed is not None:
            log.warning("micro-batch %d is in %s already (commit %s): Spark replays it, nothing to write",
                        staged.batch_id, staged.base_path, replayed)
            return replayed
        if deletes_table(operation, staged.overwrite, staged.base_path, cfg.get_str(C.TABLE_NAME),
                         existing.name if existing is not None else None):
            log.warning("hoodie table at %s already exists. Deleting existing data & overwriting with new data.",
                        staged.base_path)
            _delete_all_but(storage, staged.folder)
        log.info('df.write.format("hudi"): %s of %d rows from %d staged files to %s', operation, staged.rows,
                 len(staged.files), staged.base_path)
        schema = StructType.fromJson(json.loads(staged.schema))
        committed = write(_staged_frame(spark, storage, staged.files, schema), staged.base_path, staged.options,
                          batch.metadata() if batch is not None else None)
        sweep_abandoned(storage)
        return committed
    finally:
        drop_staging(storage, staged.folder)


def _staged_frame(spark: SparkSession, storage: Storage, files: tuple[str, ...], schema: StructType) -> DataFrame:
    """The staged rows in ``schema`` exactly. Read in the executors through pyarrow: Spark's parquet
    reader would make every column nullable, and the table's schema would then differ from the one
    ``api.write`` gives the same DataFrame."""
    if not files:
        return spark.createDataFrame([], schema)
    read = ReadParquetFiles(storage, files, to_arrow_schema(schema))
    return task_indexes(spark, len(files)).mapInArrow(read, schema)


def _delete_all_but(storage: Storage, keep: str, folder: str = "") -> None:
    """Delete everything under ``folder`` except the folder ``keep`` below it (Hudi's Overwrite
    deletes the base path; the staged rows survive it)."""
    files = [f.path for f in storage.list(folder)]
    if files:
        storage.delete_many(files)
    for sub in storage.list_dirs(folder):
        if keep.startswith(sub + "/"):
            _delete_all_but(storage, keep, sub)
        elif sub != keep:
            storage.delete_dir(sub)
