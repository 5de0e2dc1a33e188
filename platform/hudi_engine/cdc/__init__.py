"""Change data capture as Hudi does it (RFC-51): writers log per-key changes of the file groups
they rewrite in ``-cdc`` log files, and an incremental query in ``cdc`` format turns commits into
``op``/``ts_ms``/``before``/``after`` rows, reading those files or inferring the changes from data
files. Engine-free: the writer and the reader do the I/O and call these."""
from .changes import diff, written
from .extract import CDCSplit, Commit, FileGroupIndex, InferenceCase, SliceLookup, extract_splits
from .records import cdc_data_block, cdc_log_file_name, cdc_records, cdc_write_token
from .rows import change_rows
from .schema import CDC_SUFFIX, QUERY_SCHEMA, LoggingMode, cdc_avro_schema, cdc_schema_json

__all__ = [
    "CDCSplit", "CDC_SUFFIX", "Commit", "FileGroupIndex", "InferenceCase", "LoggingMode", "QUERY_SCHEMA",
    "SliceLookup", "cdc_avro_schema", "cdc_data_block", "cdc_log_file_name", "cdc_records", "cdc_schema_json",
    "cdc_write_token", "change_rows", "diff", "extract_splits", "written",
]
