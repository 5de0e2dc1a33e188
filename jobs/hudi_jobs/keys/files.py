"""File sources on storage (Hudi's DFSPathSelector, CsvDFSSource and ParquetDFSSource options)."""
from hudi_engine.config import define

DFS_PATH_SELECTOR = "DFSPathSelector"

ROOT = define(
    "hoodie.streamer.source.dfs.root", None,
    "Folder whose files (recursively) are ingested, oldest modification time first; read with "
    "pyarrow.fs, so local, s3://, gs://... Names starting with '.' or '_' are skipped.",
    alternatives=("hoodie.deltastreamer.source.dfs.root",))
INPUT_SELECTOR = define(
    "hoodie.streamer.source.input.selector", None,
    "Which files make the next batch. Only Hudi's default, "
    "org.apache.hudi.utilities.sources.helpers.DFSPathSelector (by modification time), is "
    "supported.",
    alternatives=("hoodie.deltastreamer.source.input.selector",))
PARQUET_MERGE_SCHEMA = define(
    "hoodie.streamer.source.parquet.dfs.merge_schema.enable", True,
    "Merge the schemas of the Parquet files of a batch, so a column added in newer files is kept. "
    "On by default here (Hudi: false), since off silently drops such columns.",
    alternatives=("hoodie.deltastreamer.source.parquet.dfs.merge_schema.enable",))

# Spark CSV reader options passed through as Hudi's CsvDFSSource does, Spark's defaults when unset.
# columnNameOfCorruptRecord is not among them: unparseable lines always go to the error records.
_CSV_READER_OPTIONS = {
    "sep": "Field separator (Spark's default: ',').",
    "encoding": "Character set of the files (default UTF-8).",
    "quote": "Quote character (default '\"').",
    "escape": "Escape character inside quoted values (default '\\').",
    "charToEscapeQuoteEscaping": "Character escaping the quote escape character.",
    "comment": "Lines starting with this character are skipped (default: none).",
    "header": "The first line of every file names the columns (default false, as in Hudi).",
    "enforceSchema": "Apply the given schema, ignoring header names (default true).",
    "inferSchema": "Infer column types when no source schema is given (default true here, as in "
                   "Hudi; false reads every column as a string).",
    "samplingRatio": "Fraction of lines used to infer the schema (default 1.0).",
    "ignoreLeadingWhiteSpace": "Trim leading white space of values (default false).",
    "ignoreTrailingWhiteSpace": "Trim trailing white space of values (default false).",
    "nullValue": "Text that reads as null (default: empty).",
    "emptyValue": "Text of an empty value (default: empty).",
    "nanValue": "Text of a NaN (default 'NaN').",
    "positiveInf": "Text of positive infinity (default 'Inf').",
    "negativeInf": "Text of negative infinity (default '-Inf').",
    "dateFormat": "Pattern of date values (default yyyy-MM-dd).",
    "timestampFormat": "Pattern of timestamp values (Spark's default ISO 8601).",
    "maxColumns": "Most columns a line may have (default 20480).",
    "maxCharsPerColumn": "Most characters of one value (default: unlimited).",
    "mode": "What to do with a malformed line: PERMISSIVE (default: it goes to the error records), "
            "DROPMALFORMED (drop it silently) or FAILFAST (fail the batch).",
    "multiLine": "Quoted values may span lines (default false).",
}
CSV_OPTIONS = {
    option: define(f"hoodie.streamer.csv.{option}", None, doc,
                   alternatives=(f"hoodie.deltastreamer.csv.{option}",),
                   choices=("PERMISSIVE", "DROPMALFORMED", "FAILFAST") if option == "mode" else ())
    for option, doc in _CSV_READER_OPTIONS.items()
}
