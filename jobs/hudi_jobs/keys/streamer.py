"""Options of the streamer itself: SQL transformers, the Hudi-incremental source, the error table,
data-quality rules and the no-new-data termination strategy. Hudi's names, defaults and older
``hoodie.deltastreamer.*`` spellings, except where a doc says the key is this platform's own."""
from hudi_engine.config import define, define_family

READ_UPTO_LATEST_COMMIT = "READ_UPTO_LATEST_COMMIT"
READ_LATEST = "READ_LATEST"
ROLLBACK_COMMIT = "ROLLBACK_COMMIT"
LOG_ERROR = "LOG_ERROR"

# --- several streamers into one table (Hudi's HoodieStreamerConfig) -------------------------------
MULTIWRITER_CHECKPOINT_ID = define(
    "hoodie.streamer.multiwriter.source.checkpoint.id", None,
    "Unique id of this streamer when several write one table: its checkpoint is kept under this id in "
    "the commit's checkpoint map and resumed from the newest commit holding it, never from another "
    "streamer's. One streamer per table needs none.",
    alternatives=("hoodie.deltastreamer.multiwriter.source.checkpoint.id",))

# --- SQL transformers (Hudi's SqlTransformerConfig) ----------------------------------------------
TRANSFORMER_SQL = define(
    "hoodie.streamer.transformer.sql", None,
    "SQL query of SqlQueryBasedTransformer; the batch is the table <SRC>. For an identified "
    "transformer 'id:SqlQueryBasedTransformer', hoodie.streamer.transformer.sql.<id> overrides it.",
    alternatives=("hoodie.deltastreamer.transformer.sql",))
TRANSFORMER_SQL_FILE = define(
    "hoodie.streamer.transformer.sql.file", None,
    "File of SQL statements run by SqlFileBasedTransformer (the batch is the table <SRC>); the "
    "last statement's result is written.",
    alternatives=("hoodie.deltastreamer.transformer.sql.file",))
# <key>.<id>: the query or file of the identified transformer 'id:...' (both keys and their aliases)
for _key in (TRANSFORMER_SQL.key, *TRANSFORMER_SQL.alternatives):
    define_family(f"{_key}.", "The SQL (or SQL file, .file.<id>) of one identified transformer.")

# --- Hudi-incremental source (Hudi's HoodieIncrSourceConfig) --------------------------------------
HOODIEINCR_PATH = define(
    "hoodie.streamer.source.hoodieincr.path", None,
    "Base path of the upstream Hudi table HoodieIncrSource reads.",
    alternatives=("hoodie.deltastreamer.source.hoodieincr.path",))
HOODIEINCR_NUM_INSTANTS = define(
    "hoodie.streamer.source.hoodieincr.num_instants", 5,
    "Most upstream commits whose changes one fetch takes.",
    alternatives=("hoodie.deltastreamer.source.hoodieincr.num_instants",))
HOODIEINCR_MISSING_CHECKPOINT_STRATEGY = define(
    "hoodie.streamer.source.hoodieincr.missing.checkpoint.strategy", None,
    "Where to start when there is no checkpoint yet: READ_UPTO_LATEST_COMMIT (everything up to the "
    "latest commit) or READ_LATEST (only the latest commit). Unset (the default): from the first "
    "commit, num_instants at a time.",
    alternatives=("hoodie.deltastreamer.source.hoodieincr.missing.checkpoint.strategy",),
    choices=(READ_UPTO_LATEST_COMMIT, READ_LATEST))
HOODIEINCR_DROP_ALL_META_FIELDS = define(
    "hoodie.streamer.source.hoodieincr.drop.all.meta.fields.from.source", False,
    "Drop every _hoodie_* column of the upstream table instead of only those the target rewrites.",
    alternatives=("hoodie.deltastreamer.source.hoodieincr.drop.all.meta.fields.from.source",))

# --- error table (Hudi's HoodieErrorTableConfig) --------------------------------------------------
ERROR_TABLE_ENABLED = define(
    "hoodie.errortable.enable", False,
    "Send records that cannot be ingested (unparseable, failing a quality rule, no key) to an "
    "error table instead of failing the batch.")
ERROR_TABLE_BASE_PATH = define(
    "hoodie.errortable.base.path", None,
    "Base path of the error table (default: <target table>_errors beside the target).")
ERROR_TABLE_NAME = define(
    "hoodie.errortable.target.table.name", None,
    "Name of the error table (default: <target table>_errors).")
ERROR_TABLE_WRITE_FAILURE_STRATEGY = define(
    "hoodie.errortable.write.failure.strategy", ROLLBACK_COMMIT,
    "When the error table cannot be written: ROLLBACK_COMMIT fails the batch (the target commit "
    "is not made), LOG_ERROR logs it and commits the target anyway.",
    choices=(ROLLBACK_COMMIT, LOG_ERROR))
ERROR_TABLE_MAX_ERRORS = define(
    "hoodie.streamer.errortable.max.error.records", -1,
    "This platform's own key: fail a batch with more error records than this; -1 never fails.")
ERROR_TABLE_MAX_ERROR_FRACTION = define(
    "hoodie.streamer.errortable.max.error.fraction", -1.0,
    "This platform's own key: fail a batch whose error records exceed this fraction (0..1) of its "
    "records; -1 never fails.")

QUALITY_RULE_PREFIX = define_family(
    "hoodie.streamer.quality.rule.",
    "This platform's own: hoodie.streamer.quality.rule.<name>=<SQL boolean expression>, one key per rule "
    "(name: letters, digits, '_'); a record for which a rule is false or null goes to the error table.")

# --- Hudi tables the pipeline's SQL reads by name (this platform's own) ---------------------------
SQL_VIEW_PREFIX = define_family(
    "hoodie.streamer.sql.view.",
    "hoodie.streamer.sql.view.<name>=<base path>: the table as view <name> for the transformers' SQL and the "
    "SQL source's query; the SQL source also gets <name>_changes (see sources/sql.py).")

# --- the SQL source (Hudi's SqlSourceConfig) ------------------------------------------------------
SOURCE_SQL = define(
    "hoodie.streamer.source.sql.sql.query", None,
    "The Spark SQL query whose rows are the batch (SqlSource). With views "
    "(hoodie.streamer.sql.view.<name>), a batch runs only after one of their tables committed.",
    alternatives=("hoodie.deltastreamer.source.sql.sql.query",))

# --- post-write termination (Hudi's NoNewDataTerminationStrategy) ---------------------------------
MAX_ROUNDS_WITHOUT_NEW_DATA = define(
    "max.rounds.without.new.data.to.shutdown", 3,
    "With --continuous and NoNewDataTerminationStrategy: stop after this many rounds in a row "
    "that brought no new data.")
