"""CDC log files of a write (``hoodie.table.cdc.enabled``): what a merge or a compaction changed in
a file group, logged beside its new base file so CDC queries need not diff file versions."""
from __future__ import annotations

import pyarrow as pa

from .. import config as C
from ..cdc import LoggingMode, cdc_data_block, cdc_records, cdc_schema_json, cdc_write_token
from ..file_group.base_file import WriteContext
from ..file_group.log_file import LogWriter
from .log_append import append_marked, block_chunks


def cdc_mode(ctx: WriteContext) -> LoggingMode | None:
    """The table's supplemental logging mode, or None when it keeps no CDC log."""
    cfg = ctx.config
    return LoggingMode.parse(cfg.get_str(C.CDC_LOGGING_MODE)) if cfg.get(C.CDC_ENABLED) else None


def write_cdc_log(ctx: WriteContext, partition: str, file_id: str, token: str,
                  changes: pa.Table) -> dict[str, int]:
    """Write a change table (``hudi_engine.cdc.changes``) as the group's CDC log file(s) of this
    instant; returns the write stat's ``cdcStats`` (path → bytes). Hudi writes one even when
    nothing changed, so every rewritten group has one."""
    mode = cdc_mode(ctx)
    cfg = ctx.config
    records = cdc_records(changes, mode, ctx.instant)
    schema = cdc_schema_json(mode, ctx.avro_footer_schema)
    writer = LogWriter(ctx.storage, partition, file_id, ctx.instant, version=1,
                       write_token=cdc_write_token(token), max_size=cfg.get(C.LOGFILE_MAX_SIZE))
    blocks = [cdc_data_block(chunk, schema, ctx.instant)
              for chunk in block_chunks(records, cfg.get(C.LOGFILE_DATA_BLOCK_MAX_SIZE))]
    # Marked CREATE, not APPEND: a rollback deletes the whole file.
    return {f.path: f.size for f in append_marked(ctx, writer, partition, blocks, "CREATE")}
