"""``format("hudi")``: the Python data source for reads and writes that ``hudi_engine.spark.register``
puts in a session.

``df.write.format("hudi").options(**hudi_options).mode("append" | "overwrite").save(base_path)``
takes Hudi's own options (Spark hands them over lower-cased; each is spelled back as ``config``
defines it) and Hudi's meaning of the save mode (``save_mode``). Spark's tasks stage the rows
(``staging``); the commit, which Spark runs in a Python worker with no session, hands the write to
the driver's Python process (``handoff``), which writes it in one commit (``dataframe_write``).
``df.writeStream.format("hudi")...start(base_path)`` writes each micro-batch the same way, with its
batch id, once (``sink_checkpoint``).
"""
from __future__ import annotations

import posixpath
from dataclasses import asdict, replace
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..read.datasource import HudiReadSource
from ..storage import Storage
from .handoff import call, check_reachable
from .save_mode import check_mode
from .staging import StagedFile, StagedWrite, drop_staging, new_staging_dir, stage_batches


class HudiDataSource(HudiReadSource):
    # Where the registering process writes for the session (handoff): set by sessions.session_source.
    driver_address: str = ""

    def writer(self, schema: StructType, overwrite: bool) -> "HudiWriter":
        return HudiWriter(*self._staging(schema, overwrite, 'df.write.format("hudi") needs a path: .save("<base path>")'))

    def streamWriter(self, schema: StructType, overwrite: bool) -> "HudiStreamWriter":
        return HudiStreamWriter(*self._staging(
            schema, overwrite, 'df.writeStream.format("hudi") needs a path: .start("<base path>")'))

    def _staging(self, schema: StructType, overwrite: bool, no_path: str) -> tuple[StagedWrite, Storage, str]:
        path = self.options.get("path")
        if not path:
            raise HoodieConfigError(no_path)
        options = C.canonical_keys({k: v for k, v in self.options.items() if k != "path"})
        check_mode(HoodieConfig(options).get_str(C.OPERATION).lower(), overwrite)
        check_reachable(self.driver_address)
        staged = StagedWrite(path, options, overwrite, new_staging_dir(), schema.json())
        return staged, Storage(path, {**self.session_settings, **options}), self.driver_address


class _StagingWriter:
    """Tasks stage their rows; the commit has the driver write them, exactly once."""

    def __init__(self, staged: StagedWrite, storage: Storage, driver_address: str):
        self.staged, self.storage, self.driver_address = staged, storage, driver_address

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedFile:
        return stage_batches(self.storage, self.staged.folder, iterator)

    def _hand_over(self, messages: list[WriterCommitMessage | None], **fields) -> None:
        staged = [m for m in messages if isinstance(m, StagedFile)]
        files = tuple(m.path for m in staged if m.path)
        call(self.driver_address, asdict(replace(self.staged, files=files, rows=sum(m.rows for m in staged),
                                                 **fields)))


class HudiWriter(_StagingWriter, DataSourceArrowWriter):
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self._hand_over(messages)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        drop_staging(self.storage, self.staged.folder)


class HudiStreamWriter(_StagingWriter, DataSourceStreamArrowWriter):
    """Each micro-batch one commit. Spark makes this writer once for a query's tasks, and again for
    each commit in a worker of its own: the commit finds the folder its tasks staged in from their
    files."""

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._hand_over(messages, batch_id=batchId, folder=_staged_folder(messages) or self.staged.folder)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        drop_staging(self.storage, _staged_folder(messages) or self.staged.folder)


def _staged_folder(messages: list[WriterCommitMessage | None]) -> str | None:
    return next((posixpath.dirname(m.path) for m in messages if isinstance(m, StagedFile) and m.path), None)
