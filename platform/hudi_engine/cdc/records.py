"""What a writer puts in a CDC log file (HoodieCDCLogger): one CDC record per changed key, in
one or more CDC data blocks, in a log file of the changed file group named with the ``-cdc``
suffix. The commit's write stat for the group lists the files in ``cdcStats``."""
from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from ..file_group.log_file import BlockType, LogBlock, avro_data_block, log_file_name
from .schema import AFTER, BEFORE, CDC_SUFFIX, OP, RECORD_KEY, TS_MS, LoggingMode


def cdc_records(changes: pa.Table, mode: LoggingMode, instant: str) -> pa.Table:
    """The CDC records of a change table (see ``changes``) for ``mode``, columns named as in
    ``schema.cdc_avro_schema``; ``ts_ms`` is the writing instant."""
    if mode is LoggingMode.OP_KEY_ONLY:
        return changes.select([OP, RECORD_KEY])
    if mode is LoggingMode.DATA_BEFORE:
        return changes.select([OP, RECORD_KEY, BEFORE])
    ts = pa.array([instant] * changes.num_rows, pa.string())
    return pa.table({OP: changes[OP], TS_MS: ts, BEFORE: changes[BEFORE], AFTER: changes[AFTER]})


def cdc_data_block(records: pa.Table, cdc_schema_json: str, instant: str) -> LogBlock:
    """A CDC data block (HoodieCDCDataBlock): an Avro data block of ``records`` under block type
    CDC_DATA_BLOCK, its header the instant and the CDC schema (``schema.cdc_schema_json``).
    Hudi writes one even when a merge changed nothing, so a merged group always has CDC files."""
    return replace(avro_data_block(records, cdc_schema_json, instant), block_type=BlockType.CDC_DATA_BLOCK)


def cdc_write_token(write_token: str) -> str:
    """Hudi names CDC log files by appending the suffix to the write token, so a ``LogWriter``
    given this token writes (and rolls over) CDC files."""
    return write_token + CDC_SUFFIX


def cdc_log_file_name(file_id: str, instant: str, version: int, write_token: str) -> str:
    """``.<fileId>_<instant>.log.<version>_<writeToken>-cdc``. The instant is the writing commit's
    in every table version (the merge's new base file instant on copy-on-write, the compaction
    instant for compaction), and a write's first CDC file is version 1."""
    return log_file_name(file_id, instant, version, cdc_write_token(write_token))
