"""Every ``hoodie.*`` option the engine understands, defined once with Hudi's own key and default.

Users pass plain string dicts (as with Hudi's Spark datasource); :class:`HoodieConfig` reads them
through these definitions so a default or an alias lives in exactly one place.
"""
from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .errors import HoodieConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConfigProperty:
    key: str
    default: Any = None
    doc: str = ""
    alternatives: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()


REGISTRY: dict[str, ConfigProperty] = {}
FAMILIES: dict[str, str] = {}        # prefix -> doc: keys that end in a name the user chooses
_SPELLINGS: dict[str, str] = {}      # every defined key and alternative, lower-cased -> as defined


def define(key: str, default: Any = None, doc: str = "", alternatives: Iterable[str] = (),
           choices: Iterable[str] = ()) -> ConfigProperty:
    """Register one option; jobs and services define their own keys here too, each exactly once."""
    prop = ConfigProperty(key, default, doc, tuple(alternatives), tuple(choices))
    assert key not in REGISTRY, f"{key} defined twice"
    REGISTRY[key] = prop
    _SPELLINGS.update((spelling.lower(), spelling) for spelling in (key, *prop.alternatives))
    return prop


def define_family(prefix: str, doc: str) -> str:
    """Register a family of keys ``<prefix><name>`` (a view, a quality rule, a driver option)."""
    assert prefix.endswith(".") and prefix not in FAMILIES, f"{prefix} defined twice"
    FAMILIES[prefix] = doc
    return prefix


def unknown_keys(options: Mapping[str, Any]) -> dict[str, str | None]:
    """The ``hoodie.*`` keys of ``options`` that no definition or family covers, each with the
    nearest defined key (or None): options Hudi may know but this engine does not act on, and typos."""
    families = tuple(prefix.lower() for prefix in FAMILIES)
    found: dict[str, str | None] = {}
    for key in options:
        lower = key.lower()
        if not lower.startswith("hoodie.") or lower in _SPELLINGS or lower.startswith(families):
            continue
        nearest = difflib.get_close_matches(lower, list(_SPELLINGS), n=1, cutoff=0.75)
        found[key] = _SPELLINGS[nearest[0]] if nearest else None
    return found


_REPORTED: set[str] = set()


def report_unknown(options: Mapping[str, Any] | None) -> None:
    """A warning, once per process and key, for each unknown ``hoodie.*`` key: it changes nothing
    here, which a user who set it must hear rather than find out from the result."""
    for key, nearest in unknown_keys(options or {}).items():
        if key not in _REPORTED:
            _REPORTED.add(key)
            log.warning("%s is not an option this engine knows, so it has no effect%s", key,
                        f"; did you mean {nearest}?" if nearest else "")


# --- table identity and layout (persisted in .hoodie/hoodie.properties) ---------------------------
TABLE_NAME = define("hoodie.table.name", None, "Table name; required on first write.",
                    alternatives=("hoodie.datasource.write.table.name",))
DATABASE_NAME = define("hoodie.database.name", "default", "Database the table belongs to.")
TABLE_TYPE = define("hoodie.table.type", "COPY_ON_WRITE", "Storage type of the table.",
                    alternatives=("hoodie.datasource.write.table.type",),
                    choices=("COPY_ON_WRITE", "MERGE_ON_READ"))
WRITE_TABLE_VERSION = define(
    "hoodie.write.table.version", 9,
    "Table version a write wants: a new table is created with it, an older table is upgraded to it first "
    "(hoodie.write.auto.upgrade). 9 (Hudi 1.1, the default here as in Hudi: as 8, with ordering fields and "
    "the merge mode in place of the payload class), 8 (Hudi 1.0: completion times on the timeline, Avro "
    "commit metadata, log files named by their own delta commit) or 6 (Hudi 0.14/0.15: choose it for a "
    "table that engines reading only 0.x tables must read, as Trino, Presto or Athena connectors built on "
    "Hudi 0.x; with auto-upgrade on, every writer of such a table must name 6).",
    choices=("6", "8", "9"))
TABLE_VERSION = define("hoodie.table.version", WRITE_TABLE_VERSION.default, "Table format version written.")
TABLE_FORMAT = define("hoodie.table.format", "native", "Table format plugin (version 9+); native is Hudi's own.")
AUTO_UPGRADE = define("hoodie.write.auto.upgrade", True,
                      "A write to a table older than hoodie.write.table.version (the default one included) "
                      "upgrades the table first (6 to 8 to 9), as Hudi 1.1 does. false writes the table at its "
                      "own version, and refuses a write that names a newer version.")
INITIAL_TABLE_VERSION = define("hoodie.table.initial.version", None,
                               "Table version the table was created with (version 8+).")
TIMELINE_LAYOUT_VERSION = define("hoodie.timeline.layout.version", 1, "Timeline layout version.")
TIMELINE_PATH = define("hoodie.timeline.path", "timeline",
                       "Folder under .hoodie holding the active timeline (layout version 2+).")
TIMELINE_HISTORY_PATH = define("hoodie.timeline.history.path", "history",
                               "Folder under the timeline folder holding the LSM timeline history (version 8+).")
RECORD_MERGE_STRATEGY_ID = define("hoodie.record.merge.strategy.id", None,
                                  "Id of the record merge strategy (version 8+), following the merge mode; "
                                  "under CUSTOM, the merger's strategy_id.")
LEGACY_PAYLOAD_CLASS = define("hoodie.table.legacy.payload.class", None,
                              "Payload class a table upgraded to version 9 had; the merge mode says how it merges.")
PARTIAL_UPDATE_MODE = define("hoodie.table.partial.update.mode", None,
                             "How a version 9 table fills columns an update leaves out (Hudi 1.1). "
                             "IGNORE_DEFAULTS: an update's null columns (and, with "
                             "hoodie.write.set.null.for.missing.columns=true, those the batch lacks) keep the "
                             "stored values; tables of version 6 and 8 say it with PartialUpdateAvroPayload. "
                             "FILL_UNAVAILABLE is not supported here.")
ARCHIVELOG_FOLDER = define("hoodie.archivelog.folder", "archived", "Archived timeline folder.")
RECORDKEY_FIELDS = define("hoodie.table.recordkey.fields", None, "Record key field(s), comma separated.",
                          alternatives=("hoodie.datasource.write.recordkey.field",))
PARTITION_FIELDS = define("hoodie.table.partition.fields", "",
                          "Partition path field(s), comma separated; empty for non-partitioned.",
                          alternatives=("hoodie.datasource.write.partitionpath.field",))
PRECOMBINE_FIELD = define("hoodie.table.precombine.field", None,
                          "Ordering field(s), comma separated (Hudi 1.1): when two records share a key the "
                          "larger value wins, several fields compared in order (the first, then the next on "
                          "a tie). Version 9 tables persist them as hoodie.table.ordering.fields, 6 and 8 "
                          "under this key.",
                          alternatives=("hoodie.datasource.write.precombine.field",
                                       "hoodie.table.ordering.fields"))
KEYGEN_CLASS = define("hoodie.table.keygenerator.class", None, "Key generator class.",
                      alternatives=("hoodie.datasource.write.keygenerator.class",))
KEYGEN_TYPE = define("hoodie.datasource.write.keygenerator.type", None,
                     "Key generator by type name (SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP).",
                     alternatives=("hoodie.table.keygenerator.type",))
HIVE_STYLE_PARTITIONING = define("hoodie.datasource.write.hive_style_partitioning", False,
                                 "Partition folders named field=value.")
URL_ENCODE_PARTITIONING = define("hoodie.datasource.write.partitionpath.urlencode", False,
                                 "URL-encode partition path values.")
DROP_PARTITION_COLUMNS = define("hoodie.datasource.write.drop.partition.columns", False,
                                "Drop partition columns from data files.")
POPULATE_META_FIELDS = define("hoodie.populate.meta.fields", True, "Write the _hoodie_ meta columns.")
BASE_FILE_FORMAT = define("hoodie.table.base.file.format", "PARQUET", "Base file format.")
CREATE_SCHEMA = define("hoodie.table.create.schema", None, "Avro schema at table creation.")
TIMELINE_TIMEZONE = define("hoodie.table.timeline.timezone", "LOCAL",
                           "Time zone of instant times.", choices=("LOCAL", "UTC"))
PAYLOAD_CLASS = define("hoodie.compaction.payload.class",
                       "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
                       "Payload class persisted for other engines.",
                       alternatives=("hoodie.datasource.write.payload.class",))
TABLE_CHECKSUM = define("hoodie.table.checksum", None, "CRC32 of database.table.")
PARTITION_METAFILE_USE_BASE_FORMAT = define("hoodie.partition.metafile.use.base.format", False,
                                            "Partition metadata as a base-format file.")
CDC_ENABLED = define("hoodie.table.cdc.enabled", False, "Write CDC log files.")
CDC_LOGGING_MODE = define("hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER",
                          "What CDC log files hold besides the operation and key.",
                          choices=("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"))

# --- key generators -------------------------------------------------------------------------------
TIMESTAMP_TYPE = define("hoodie.keygen.timebased.timestamp.type", None,
                        "How the partition field holds time.",
                        choices=("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS",
                                "EPOCHMICROSECONDS", "SCALAR"))
TIMESTAMP_INPUT_DATE_FORMAT = define("hoodie.keygen.timebased.input.dateformat", "",
                                     "Input pattern(s) for DATE_STRING, comma separated.")
TIMESTAMP_INPUT_DATE_FORMAT_DELIMITER = define(
    "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex", ",",
    "Separator of several input patterns.")
TIMESTAMP_OUTPUT_DATE_FORMAT = define("hoodie.keygen.timebased.output.dateformat", "",
                                      "Partition path pattern.")
TIMESTAMP_TIMEZONE = define("hoodie.keygen.timebased.timezone", "UTC",
                            "Time zone of input and output; when set it overrides both zones below.")
TIMESTAMP_INPUT_TIMEZONE = define("hoodie.keygen.timebased.input.timezone", "",
                                  "Time zone of the input, when timezone is not set.")
TIMESTAMP_OUTPUT_TIMEZONE = define("hoodie.keygen.timebased.output.timezone", "",
                                   "Time zone of the output, when timezone is not set.")
TIMESTAMP_SCALAR_UNIT = define("hoodie.keygen.timebased.timestamp.scalar.time.unit", "SECONDS",
                               "Unit of a SCALAR timestamp.")
COMPLEX_KEYGEN_ENCODING = define(
    "hoodie.table.complex.keygenerator.encoding", None,
    "How a complex key with one field is written: FIELD_PREFIXED ('id:1') or VALUE_ONLY ('1').",
    choices=("FIELD_PREFIXED", "VALUE_ONLY"))
COMPLEX_KEYGEN_NEW_ENCODING = define("hoodie.write.complex.keygen.new.encoding", False,
                                     "Older switch: true writes a one-field complex key as the value.")
COMPLEX_KEYGEN_ENCODE_SINGLE_FIELD_NAME = define(
    "hoodie.write.complex.keygen.encode.single.record.key.field.name", True,
    "Older switch: false writes a one-field complex key as the value.")
KEYGEN_JAVA_FLOAT_FORMAT = define(
    "hoodie.engine.keygen.java.float.format", "LEGACY",
    "Engine-specific: which JVM's float/double text keys follow: LEGACY (JDK 8-18) or SHORTEST (JDK 19+).",
    choices=("LEGACY", "SHORTEST"))
CONSISTENT_LOGICAL_TIMESTAMP = define(
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled", False,
    "Use logical timestamp values in keys.")

# --- write ----------------------------------------------------------------------------------------
OPERATION = define("hoodie.datasource.write.operation", "upsert", "Write operation.",
                   choices=("insert", "upsert", "delete", "bulk_insert", "insert_overwrite",
                           "insert_overwrite_table", "delete_partition"))
SQL_INSERT_INTO_OPERATION = define(
    "hoodie.spark.sql.insert.into.operation", "insert",
    "The write operation of SQL's INSERT INTO (INSERT OVERWRITE always replaces).",
    choices=("insert", "upsert", "bulk_insert"))
PARTITIONS_TO_DELETE = define("hoodie.datasource.write.partitions.to.delete", None,
                              "Comma separated partition paths for delete_partition.")
RECORD_MERGE_MODE = define("hoodie.record.merge.mode", "EVENT_TIME_ORDERING",
                           "How two versions of a record are merged: by ordering value, by commit time, or "
                           "CUSTOM (a Python merger, hoodie.record.merge.custom.implementation.classes; "
                           "table version 8 or 9).",
                           choices=("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"))
RECORD_MERGE_CUSTOM_CLASSES = define(
    "hoodie.record.merge.custom.implementation.classes", None,
    "CUSTOM merge mode: importable names ('package.module:Class', comma separated) of Python mergers "
    "(hudi_engine.api.RecordMerger); the one whose strategy_id is hoodie.record.merge.strategy.id runs in "
    "writes, merge-on-read queries and compaction. Hudi names Java classes here; a new table persists the "
    "name so its readers and table services find it.")
COMBINE_BEFORE_INSERT = define("hoodie.combine.before.insert", False,
                               "De-duplicate the input by key on insert and bulk_insert.")
COMBINE_BEFORE_UPSERT = define("hoodie.combine.before.upsert", True,
                               "De-duplicate the input by key on upsert.")
COMBINE_BEFORE_DELETE = define("hoodie.combine.before.delete", True,
                               "De-duplicate the input by key on delete.")
INSERT_DROP_DUPS = define("hoodie.datasource.write.insert.drop.duplicates", False,
                          "Drop incoming inserts whose key already exists.")
SCHEMA_RECONCILE = define("hoodie.datasource.write.reconcile.schema", False,
                          "Keep the table schema when the batch lacks columns: they are written as nulls.")
SET_NULL_FOR_MISSING_COLUMNS = define("hoodie.write.set.null.for.missing.columns", False,
                                      "Write the table's columns a batch lacks as nulls; otherwise the write fails.")
WRITE_PARTIAL_UPDATE_SCHEMA = define(
    "hoodie.write.partial.update.schema", "",
    "Avro record schema of the columns an upsert's updates carry (Hudi 1.x, table version 8+; MERGE INTO sets "
    "it). Merge-on-read logs write those columns only, in blocks marked IS_PARTIAL; every other column keeps "
    "the stored value, on read, at compaction and in copy-on-write merges.")
MERGE_INTO_PARTIAL_UPDATES = define(
    "hoodie.spark.sql.merge.into.partial.updates", True,
    "MERGE INTO on a merge-on-read table of version 8+ logs only the columns its UPDATE SET assigns (and the "
    "ordering fields), when it assigns fewer than all.")
STREAMING_CHECKPOINT_IDENTIFIER = define(
    "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
    "Names a writeStream's batch ids in the commits it makes; each streaming query writing a table needs its own.")
INDEX_TYPE = define("hoodie.index.type", "SIMPLE", "Index used to tag updates.",
                    choices=("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET", "RECORD_INDEX"))
SIMPLE_INDEX_UPDATE_PARTITION_PATH = define(
    "hoodie.simple.index.update.partition.path", True,
    "Under GLOBAL_SIMPLE, a key arriving with a new partition moves there.")
BLOOM_INDEX_UPDATE_PARTITION_PATH = define(
    "hoodie.bloom.index.update.partition.path", True,
    "Under GLOBAL_BLOOM, a key arriving with a new partition moves there.")
RECORD_INDEX_UPDATE_PARTITION_PATH = define(
    "hoodie.record.index.update.partition.path", False,
    "Under RECORD_INDEX, a key arriving with a new partition moves there (else it is updated in place).")
BLOOM_INDEX_PRUNE_BY_RANGES = define("hoodie.bloom.index.prune.by.ranges", True,
                                     "Check a key only against files whose footer key range holds it.")
BUCKET_INDEX_NUM_BUCKETS = define("hoodie.bucket.index.num.buckets", 256,
                                  "BUCKET index: file groups (buckets) per partition.",
                                  alternatives=("hoodie.index.bucket.num.buckets",))
BUCKET_INDEX_HASH_FIELD = define("hoodie.bucket.index.hash.field", None,
                                 "BUCKET index: record key fields hashed (default: all of them).")
BUCKET_INDEX_ENGINE = define("hoodie.index.bucket.engine", "SIMPLE",
                             "BUCKET index: fixed buckets (SIMPLE), or buckets on a hash ring that clustering "
                             "splits and merges (CONSISTENT_HASHING, merge-on-read tables only).",
                             choices=("SIMPLE", "CONSISTENT_HASHING"))
BUCKET_INDEX_MAX_NUM_BUCKETS = define(
    "hoodie.bucket.index.max.num.buckets", None,
    "CONSISTENT_HASHING: most buckets a partition may be split into (unset: num.buckets, so no split).")
BUCKET_INDEX_MIN_NUM_BUCKETS = define(
    "hoodie.bucket.index.min.num.buckets", None,
    "CONSISTENT_HASHING: fewest buckets a partition may be merged into (unset: num.buckets, so no merge).")
BUCKET_SPLIT_THRESHOLD = define("hoodie.bucket.index.split.threshold", 2.0,
                                "CONSISTENT_HASHING: a bucket whose file slice exceeds this x "
                                "hoodie.parquet.max.file.size is split by clustering.")
BUCKET_MERGE_THRESHOLD = define("hoodie.bucket.index.merge.threshold", 0.2,
                                "CONSISTENT_HASHING: adjacent buckets whose slices are below this x "
                                "hoodie.parquet.max.file.size are merged by clustering.")
PARQUET_MAX_FILE_SIZE = define("hoodie.parquet.max.file.size", 125829120, "Target base file size.")
PARQUET_SMALL_FILE_LIMIT = define("hoodie.parquet.small.file.limit", 104857600,
                                  "Files smaller than this receive new inserts; 0 disables.")
SMALL_FILE_GROUP_CANDIDATES_LIMIT = define(
    "hoodie.merge.small.file.group.candidates.limit", 1,
    "Merge-on-read: how many small file groups (without log files) per partition take inserts.")
PARQUET_COMPRESSION = define(
    "hoodie.parquet.compression.codec", "zstd",
    "Parquet codec of base files and parquet log blocks. zstd is Hudi's default on Spark 3.5 and newer "
    "(apache/hudi#19685); gzip, Hudi's older default, costs about 8x the write time for 1.6x the size.",
    choices=("zstd", "snappy", "gzip", "lz4", "brotli", "uncompressed"))
PARQUET_BLOCK_SIZE = define("hoodie.parquet.block.size", 125829120, "Parquet row group size.")
PARQUET_PAGE_SIZE = define("hoodie.parquet.page.size", 1048576, "Parquet page size.")
HFILE_COMPRESSION = define("hoodie.hfile.compression.algorithm", "GZ",
                          "Codec of metadata-table HFiles and HFile log blocks: GZ or NONE.")
COPY_ON_WRITE_RECORD_SIZE_ESTIMATE = define("hoodie.copyonwrite.record.size.estimate", 1024,
                                            "Bytes per record before any commit tells better.")
COPY_ON_WRITE_INSERT_SPLIT_SIZE = define("hoodie.copyonwrite.insert.split.size", 500000,
                                         "Records per new file group when sizes are unknown.")
COPY_ON_WRITE_AUTO_SPLIT_INSERTS = define("hoodie.copyonwrite.insert.auto.split", True,
                                          "Size new file groups from the average record size.")
BULKINSERT_SHUFFLE_PARALLELISM = define("hoodie.bulkinsert.shuffle.parallelism", 0,
                                        "Spark partitions for bulk_insert; 0 keeps the input's.")
_SHUFFLE_DOC = ("Spark partitions of the {}'s index lookup and routing; 0 derives them from the input "
                "(its partitions, at least the cores), never from spark.sql.shuffle.partitions.")
UPSERT_SHUFFLE_PARALLELISM = define("hoodie.upsert.shuffle.parallelism", 0, _SHUFFLE_DOC.format("upsert"))
INSERT_SHUFFLE_PARALLELISM = define("hoodie.insert.shuffle.parallelism", 0, _SHUFFLE_DOC.format("insert"))
DELETE_SHUFFLE_PARALLELISM = define("hoodie.delete.shuffle.parallelism", 0, _SHUFFLE_DOC.format("delete"))
# This engine's own keys (not Apache Hudi's): where a write's data steps run.
IN_PROCESS_MAX_RECORDS = define(
    "hoodie.write.in.process.max.records", 100_000,
    "Writes of up to this many records run their data steps (keys, index lookup, merge, files) in the "
    "writing process, with no Spark stage; 0 sends every write through Spark. This engine's own key.")
IN_PROCESS_MAX_MERGE_BYTES = define(
    "hoodie.write.in.process.max.merge.bytes", 1024 ** 3,
    "Beyond this many bytes of base files to rewrite, an in-process write merges on Spark's executors "
    "(when Spark is at hand). This engine's own key.")
BULKINSERT_SORT_MODE = define("hoodie.bulkinsert.sort.mode", "NONE", "Sort before bulk insert.",
                              choices=("NONE", "GLOBAL_SORT", "PARTITION_SORT"))
BLOOM_NUM_ENTRIES = define("hoodie.index.bloom.num_entries", 60000, "Expected keys per file.")
BLOOM_FPP = define("hoodie.index.bloom.fpp", 0.000000001, "Bloom filter false positive rate.")
BLOOM_FILTER_TYPE = define("hoodie.bloom.index.filter.type", "DYNAMIC_V0", "Bloom filter type.",
                           choices=("SIMPLE", "DYNAMIC_V0"))
BLOOM_DYNAMIC_MAX_ENTRIES = define("hoodie.bloom.index.filter.dynamic.max.entries", 100000,
                                   "Upper bound of entries for a dynamic bloom filter.")
ROLLBACK_PENDING = define("hoodie.cleaner.policy.failed.writes", "EAGER",
                          "When failed writes are rolled back.", choices=("EAGER", "LAZY", "NEVER"))

# --- merge-on-read: log files and compaction ----------------------------------------------------
LOGFILE_DATA_BLOCK_FORMAT = define("hoodie.logfile.data.block.format", "avro",
                                   "Format of log data blocks.", choices=("avro", "parquet"))
LOGFILE_MAX_SIZE = define("hoodie.logfile.max.size", 1073741824,
                          "A log file rolls over to the next version past this many bytes.")
LOGFILE_DATA_BLOCK_MAX_SIZE = define("hoodie.logfile.data.block.max.size", 268435456,
                                     "Records of one write are split into data blocks of about this size.")
LOGFILE_TO_PARQUET_COMPRESSION_RATIO = define(
    "hoodie.logfile.to.parquet.compression.ratio", 0.35,
    "Expected parquet size of log bytes, to size file groups that have log files.")
COMPACT_INLINE = define("hoodie.compact.inline", False, "Schedule and run compaction after each write.")
COMPACT_SCHEDULE_INLINE = define("hoodie.compact.schedule.inline", False,
                                 "Schedule compaction after each write, to be run by a separate job.")
COMPACT_TRIGGER_STRATEGY = define("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS",
                                  "When a compaction is due.",
                                  choices=("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST",
                                          "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME"))
COMPACT_MAX_DELTA_COMMITS = define("hoodie.compact.inline.max.delta.commits", 5,
                                   "Delta commits since the last compaction that make one due.")
COMPACT_MAX_DELTA_SECONDS = define("hoodie.compact.inline.max.delta.seconds", 3600,
                                   "Seconds since the last compaction that make one due.")
COMPACTION_STRATEGY = define(
    "hoodie.compaction.strategy",
    "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
    "Which file groups a compaction plan takes, and in what order.")
COMPACTION_TARGET_IO = define("hoodie.compaction.target.io", 512000,
                              "MB of I/O one compaction may plan (bounded strategies).")
COMPACTION_LOGFILE_SIZE_THRESHOLD = define("hoodie.compaction.logfile.size.threshold", 0,
                                           "Only file groups with at least this many log bytes.")
COMPACTION_LOGFILE_NUM_THRESHOLD = define("hoodie.compaction.logfile.num.threshold", 0,
                                          "Only file groups with at least this many log files.")

# --- metadata table (HoodieMetadataConfig; Hudi 1.1 keys, the 1.0 names as alternatives) ---------
METADATA_ENABLE = define("hoodie.metadata.enable", True,
                         "Keep the metadata table (.hoodie/metadata): file listings and indexes.")
METADATA_COMPACT_MAX_DELTA_COMMITS = define("hoodie.metadata.compact.max.delta.commits", 10,
                                            "Metadata-table delta commits between its compactions.")
METADATA_COLUMN_STATS_ENABLE = define("hoodie.metadata.index.column.stats.enable", False,
                                      "Keep per-file column ranges in the column_stats partition.")
METADATA_COLUMN_STATS_FILE_GROUP_COUNT = define("hoodie.metadata.index.column.stats.file.group.count", 2,
                                                "File groups of the column_stats partition.")
METADATA_EXPRESSION_INDEX_FILE_GROUP_COUNT = define("hoodie.metadata.index.expression.file.group.count", 2,
                                                    "File groups of each expression index partition.")
METADATA_EXPRESSION_INDEX_ENABLE = define(
    "hoodie.metadata.index.expression.enable", False,
    "With hoodie.metadata.index.expression.column and .options, a write defines that expression index (Hudi "
    "1.0.1+) when the table has none on the column with the same function, and builds it. Expression indexes "
    "made by CREATE INDEX are kept in step whatever this says; DROP INDEX removes them.")
METADATA_EXPRESSION_INDEX_COLUMN = define("hoodie.metadata.index.expression.column", None,
                                          "Column of the expression index a write defines "
                                          "(hoodie.metadata.index.expression.enable).")
METADATA_EXPRESSION_INDEX_OPTIONS = define(
    "hoodie.metadata.index.expression.options", None,
    "Options of the expression index a write defines, comma separated key=value pairs as CREATE INDEX's OPTIONS "
    "(expr=from_unixtime,format=yyyy-MM-dd); expr is required.")
EXPRESSION_INDEX_TYPE = define("hoodie.expression.index.type", "COLUMN_STATS",
                               "What the expression index a write defines keeps per file.",
                               choices=("COLUMN_STATS", "BLOOM_FILTERS"))
METADATA_SECONDARY_INDEX_COLUMN = define("hoodie.metadata.index.secondary.column", None,
                                         "A write defines a secondary index on this column (Hudi 1.0.1+) when the "
                                         "table has none on it, and builds it (the record index is needed).")
INDEX_NAME = define("hoodie.index.name", None,
                    "Name of the secondary or expression index a write defines; default: the column's name.")
METADATA_INDEX_DROP = define(
    "hoodie.metadata.index.drop", None,
    "Indexes a write drops before it writes (Hudi 1.0.1+), comma separated: a secondary or expression index's name "
    "(as SHOW INDEXES lists it) or a metadata partition (column_stats, bloom_filters, record_index, "
    "partition_stats, expr_index_<name>, secondary_index_<name>). One the table does not have is passed over "
    "with a warning, so a job can keep the option.")
METADATA_COLUMN_STATS_COLUMNS = define("hoodie.metadata.index.column.stats.column.list", None,
                                       "Columns (comma separated) to keep stats for; unset: the first "
                                       "max.columns.to.index columns of the schema.")
METADATA_COLUMN_STATS_MAX_COLUMNS = define("hoodie.metadata.index.column.stats.max.columns.to.index", 32,
                                           "Without a column list, stats of this many leading columns.")
METADATA_PARTITION_STATS_ENABLE = define(
    "hoodie.metadata.index.partition.stats.enable", True,
    "Keep each column's range over each data partition in the partition_stats partition, so reads "
    "skip whole partitions: on table version 8 and up, wherever the column_stats index is on (as "
    "Hudi 1.1, which dropped this Hudi 1.0 key; false leaves it out).")
METADATA_PARTITION_STATS_FILE_GROUP_COUNT = define("hoodie.metadata.index.partition.stats.file.group.count", 1,
                                                   "File groups of the partition_stats partition.")
METADATA_BLOOM_FILTER_ENABLE = define("hoodie.metadata.index.bloom.filter.enable", False,
                                      "Keep base files' bloom filters in the bloom_filters partition.")
METADATA_BLOOM_FILTER_FILE_GROUP_COUNT = define("hoodie.metadata.index.bloom.filter.file.group.count", 4,
                                                "File groups of the bloom_filters partition.")
METADATA_RECORD_INDEX_ENABLE = define("hoodie.metadata.global.record.level.index.enable", False,
                                      "Keep the (global) record index: record key -> file group.",
                                      alternatives=("hoodie.metadata.record.index.enable",))
METADATA_RECORD_INDEX_MIN_FILE_GROUPS = define(
    "hoodie.metadata.global.record.level.index.min.filegroup.count", 10,
    "Fewest file groups of the record_index partition.",
    alternatives=("hoodie.metadata.record.index.min.filegroup.count",))
METADATA_RECORD_INDEX_MAX_FILE_GROUPS = define(
    "hoodie.metadata.global.record.level.index.max.filegroup.count", 10000,
    "Most file groups of the record_index partition.",
    alternatives=("hoodie.metadata.record.index.max.filegroup.count",))
METADATA_RECORD_INDEX_MAX_FILE_GROUP_BYTES = define("hoodie.metadata.record.index.max.filegroup.size",
                                                    1024 * 1024 * 1024,
                                                    "Record-index file group size to aim below (bytes).")
METADATA_RECORD_INDEX_GROWTH_FACTOR = define("hoodie.metadata.record.index.growth.factor", 2.0,
                                             "Record count multiplier when sizing the record index.")


# --- read -----------------------------------------------------------------------------------------
QUERY_TYPE = define("hoodie.datasource.query.type", "snapshot", "Query type.",
                    choices=("snapshot", "incremental", "read_optimized"))
BEGIN_INSTANTTIME = define("hoodie.datasource.read.begin.instanttime", None,
                           "Incremental start, exclusive.")
END_INSTANTTIME = define("hoodie.datasource.read.end.instanttime", None,
                         "Incremental end, inclusive; latest commit when unset.")
INCR_SCHEMA_USE_END_INSTANT = define(
    "hoodie.datasource.read.schema.use.end.instanttime", False,
    "Incremental reads use the schema as of the end instant instead of the latest.")
AS_OF_INSTANT = define("as.of.instant", None, "Time travel to this instant.")
INCREMENTAL_FORMAT = define("hoodie.datasource.query.incremental.format", "latest_state",
                            "Incremental queries return the latest state of changed rows, or CDC records.",
                            choices=("latest_state", "cdc"))
MERGE_TYPE = define("hoodie.datasource.merge.type", "payload_combine",
                    "Merge-on-read: merge log records into base rows, or return them as found.",
                    choices=("payload_combine", "skip_merge"))
STREAMING_START_OFFSET = define(
    "hoodie.datasource.streaming.startOffset", "earliest",
    "Where a new readStream starts: earliest, latest (commits after the query starts), or after an "
    "instant (a completion time on Hudi 1.x tables).")


# --- catalog sync (Hive Metastore) ----------------------------------------------------------------
META_SYNC_ENABLED = define("hoodie.datasource.meta.sync.enable", False,
                           "Sync the table to the catalog after every commit.")
HIVE_SYNC_ENABLED = define("hoodie.datasource.hive_sync.enable", False,
                           "Sync the table to the Hive Metastore after every commit.")
HIVE_SYNC_MODE = define("hoodie.datasource.hive_sync.mode", None,
                        "How to reach Hive; this engine speaks the metastore's thrift API (hms).",
                        choices=("hms", "jdbc", "hiveql", "glue"))
HIVE_SYNC_METASTORE_URIS = define("hoodie.datasource.hive_sync.metastore.uris", "thrift://localhost:9083",
                                  "Metastore thrift URI(s), comma separated; tried in turn.")
HIVE_SYNC_DATABASE = define("hoodie.datasource.hive_sync.database", "default",
                            "Database to sync into (default: the table's hoodie.database.name).")
HIVE_SYNC_TABLE = define("hoodie.datasource.hive_sync.table", None,
                         "Table name in the metastore (default: the Hudi table name).")
HIVE_SYNC_PARTITION_FIELDS = define("hoodie.datasource.hive_sync.partition_fields", None,
                                    "Hive partition columns (default: the table's partition fields).")
HIVE_SYNC_PARTITION_EXTRACTOR = define(
    "hoodie.datasource.hive_sync.partition_extractor_class", None,
    "How partition values are read from a partition path (default: inferred from the table).")
HIVE_SYNC_AUTO_CREATE_DATABASE = define("hoodie.datasource.hive_sync.auto_create_database", True,
                                        "Create the database when it does not exist.")
HIVE_SYNC_SKIP_RO_SUFFIX = define("hoodie.datasource.hive_sync.skip_ro_suffix", False,
                                  "Merge-on-read: register the read-optimized table without '_ro'.")
HIVE_SYNC_TABLE_STRATEGY = define("hoodie.datasource.hive_sync.table.strategy", "ALL",
                                  "Merge-on-read: register the RO table, the RT table or both.",
                                  choices=("RO", "RT", "ALL"))
META_SYNC_SNAPSHOT_WITH_TABLE_NAME = define(
    "hoodie.meta.sync.sync_snapshot_with_table_name", False,
    "Merge-on-read with strategy ALL: also register the snapshot (RT) view under the bare name "
    "(Hudi 0.14/0.15 default; 1.x defaults to true).")
HIVE_SYNC_AS_DATASOURCE = define("hoodie.datasource.hive_sync.sync_as_datasource", True,
                                 "Add the spark.sql.sources.* properties so Spark sees a hudi table.")
HIVE_SYNC_SCHEMA_STRING_LENGTH_THRESHOLD = define(
    "hoodie.datasource.hive_sync.schema_string_length_thresh", 4000,
    "Longest piece of the Spark schema JSON stored in one table property.")
HIVE_SYNC_CREATE_MANAGED_TABLE = define("hoodie.datasource.hive_sync.create_managed_table", False,
                                        "Register a MANAGED table instead of an EXTERNAL one.")
HIVE_SYNC_SUPPORT_TIMESTAMP = define("hoodie.datasource.hive_sync.support_timestamp", False,
                                     "Timestamps become Hive 'timestamp' instead of 'bigint'.")
HIVE_SYNC_COMMENT = define("hoodie.datasource.hive_sync.sync_comment", False,
                           "Copy column comments (Avro doc) to the metastore.")
HIVE_SYNC_OMIT_METADATA_FIELDS = define("hoodie.datasource.hive_sync.omit_metadata_fields", False,
                                        "Leave the _hoodie_* meta columns out of the Hive table.")
HIVE_SYNC_BATCH_NUM = define("hoodie.datasource.hive_sync.batch_num", 1000,
                             "Partitions added per metastore call.")
HIVE_SYNC_TABLE_PROPERTIES = define("hoodie.datasource.hive_sync.table_properties", None,
                                    "Extra table properties, one 'key=value' per line.")
HIVE_SYNC_SERDE_PROPERTIES = define("hoodie.datasource.hive_sync.serde_properties", None,
                                    "Extra serde properties, one 'key=value' per line.")
HIVE_SYNC_IGNORE_EXCEPTIONS = define("hoodie.datasource.hive_sync.ignore_exceptions", False,
                                     "A failed sync after a write warns instead of failing the write.")
META_SYNC_INCREMENTAL = define("hoodie.meta.sync.incremental", True,
                               "Sync only partitions written or dropped since the last synced "
                               "commit; false lists the whole table and fixes every partition.")
META_SYNC_DECODE_PARTITION = define("hoodie.meta.sync.decode_partition", False,
                                    "URL-decode partition values (default: the table's urlencode).")


class HoodieConfig:
    """A user's options read through the registry: aliases resolved, defaults applied, types checked."""

    def __init__(self, options: Mapping[str, Any] | None = None):
        self._raw: dict[str, str] = {k: _to_str(v) for k, v in (options or {}).items() if v is not None}

    def raw(self) -> dict[str, str]:
        return dict(self._raw)

    def contains(self, prop: ConfigProperty) -> bool:
        return any(k in self._raw for k in (prop.key, *prop.alternatives))

    def get_str(self, prop: ConfigProperty) -> str | None:
        for key in (prop.key, *prop.alternatives):
            if key in self._raw:
                value = self._raw[key]
                if prop.choices and value.upper() not in {c.upper() for c in prop.choices}:
                    raise HoodieConfigError(
                        f"{key}={value!r} is not valid; use one of {', '.join(prop.choices)}")
                return value
        return None if prop.default is None else _to_str(prop.default)

    def get(self, prop: ConfigProperty) -> Any:
        """The value typed like the property's default (bool, int, float or str)."""
        value = self.get_str(prop)
        if value is None or prop.default is None or isinstance(prop.default, str):
            return value
        try:
            if isinstance(prop.default, bool):
                if value.lower() not in ("true", "false"):
                    raise ValueError(value)
                return value.lower() == "true"
            return type(prop.default)(value)
        except ValueError:
            raise HoodieConfigError(
                f"{prop.key}={value!r} is not a valid {type(prop.default).__name__}") from None

    def get_list(self, prop: ConfigProperty) -> list[str]:
        value = self.get_str(prop) or ""
        return [part.strip() for part in value.split(",") if part.strip()]

    def require(self, prop: ConfigProperty, why: str) -> str:
        value = self.get_str(prop)
        if not value:
            raise HoodieConfigError(f"{prop.key} is required: {why}")
        return value


def canonical_keys(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with each key defined here spelled as defined, whatever case it arrives in (Spark
    lower-cases the option keys of a data source); other keys stay as given."""
    return {_SPELLINGS.get(key.lower(), key): value for key, value in options.items()}


def _to_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- cleaning, archival, savepoints (table services) ----------------------------------------------
CLEAN_AUTOMATIC = define("hoodie.clean.automatic", True, "Clean after every commit when a clean is due.")
CLEAN_ASYNC = define("hoodie.clean.async", False,
                     "Clean in a separate job instead of inline; inline cleaning is then skipped.",
                     alternatives=("hoodie.clean.async.enabled",))
CLEANER_POLICY = define("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", "Which file versions cleaning keeps.",
                        alternatives=("hoodie.clean.policy",),
                        choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"))
CLEANER_COMMITS_RETAINED = define("hoodie.cleaner.commits.retained", 10,
                                  "KEEP_LATEST_COMMITS: commits whose file versions stay queryable.",
                                  alternatives=("hoodie.clean.commits.retained",))
CLEANER_FILE_VERSIONS_RETAINED = define("hoodie.cleaner.fileversions.retained", 3,
                                        "KEEP_LATEST_FILE_VERSIONS: file slices kept per file group.",
                                        alternatives=("hoodie.clean.fileversions.retained",))
CLEANER_HOURS_RETAINED = define("hoodie.cleaner.hours.retained", 24,
                                "KEEP_LATEST_BY_HOURS: hours of commits whose file versions stay queryable.",
                                alternatives=("hoodie.clean.hours.retained",))
CLEAN_TRIGGER_STRATEGY = define("hoodie.clean.trigger.strategy", "NUM_COMMITS",
                                "When a clean is due.", choices=("NUM_COMMITS",))
CLEAN_MAX_COMMITS = define("hoodie.clean.max.commits", 1,
                           "NUM_COMMITS trigger: commits since the last clean before the next one.")
CLEANER_INCREMENTAL_MODE = define("hoodie.cleaner.incremental.mode", True,
                                  "Accepted as Hudi spells it; plans here always look at every "
                                  "partition (one listing), which gives the same plan.")
CLEANER_PARALLELISM = define("hoodie.cleaner.parallelism", 200, "Spark tasks deleting files.")
ARCHIVE_AUTOMATIC = define("hoodie.archive.automatic", True, "Archive after every commit when due.")
KEEP_MIN_COMMITS = define("hoodie.keep.min.commits", 20, "Commits archival leaves on the active timeline.")
KEEP_MAX_COMMITS = define("hoodie.keep.max.commits", 30, "Commits on the active timeline that trigger archival.")
COMMITS_ARCHIVAL_BATCH = define("hoodie.commits.archival.batch", 10,
                                "Archived instants written per log block (version 6), or per history "
                                "file when an upgrade moves the archived timeline (version 8+).")
TIMELINE_COMPACTION_BATCH = define("hoodie.timeline.compaction.batch.size", 10,
                                   "Files of one LSM history layer (version 8+) merged into one file of "
                                   "the next layer, once the layer holds this many.")
TIMELINE_MANIFEST_RETAINED = define("hoodie.timeline.manifest.retained.versions", 3,
                                    "Snapshots (manifests) of the LSM history kept for readers after a "
                                    "compaction; older manifests and the files only they list are deleted.")


# --- concurrency control: several writers on one table (HoodieLockConfig, HoodieWriteConfig) -----
SINGLE_WRITER = "SINGLE_WRITER"
OPTIMISTIC_CONCURRENCY_CONTROL = "OPTIMISTIC_CONCURRENCY_CONTROL"
NON_BLOCKING_CONCURRENCY_CONTROL = "NON_BLOCKING_CONCURRENCY_CONTROL"
FS_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
ZK_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
IN_PROCESS_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
LEASE_LOCK_PROVIDER = "dev.hudi.lakehouse.transaction.lock.KubernetesLeaseLockProvider"
HMS_LOCK_PROVIDER = "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider"
SIMPLE_CONFLICT_RESOLUTION = "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy"
DIRECT_MARKER_DETECTION = "org.apache.hudi.table.marker.SimpleDirectMarkerBasedDetectionStrategy"

WRITE_CONCURRENCY_MODE = define(
    "hoodie.write.concurrency.mode", SINGLE_WRITER,
    "SINGLE_WRITER: one writer at a time (failed writes rolled back eagerly). "
    "OPTIMISTIC_CONCURRENCY_CONTROL: several writers; instants start and commit under "
    "hoodie.write.lock.provider and a commit that touched a file group another writer changed "
    "since it started fails with HoodieWriteConflictError. "
    "NON_BLOCKING_CONCURRENCY_CONTROL (table version 8+, merge-on-read, simple bucket index): several "
    "writers under the lock too, but none conflicts: each bucket has one fixed file group, every write "
    "appends log files to it, and readers and compaction merge them by the ordering field.",
    choices=(SINGLE_WRITER, OPTIMISTIC_CONCURRENCY_CONTROL, NON_BLOCKING_CONCURRENCY_CONTROL))
NUM_RETRIES_ON_CONFLICT_FAILURES = define(
    "hoodie.write.num.retries.on.conflict.failures", 0,
    "Times a job retries a batch (a streamer round, a table service) that lost a write conflict to "
    "another writer, before it fails with the conflict; 0 fails at once, as in Hudi.")
LOCK_PROVIDER = define(
    "hoodie.write.lock.provider", ZK_LOCK_PROVIDER,
    "Lock provider class for optimistic concurrency control.",
    choices=(FS_LOCK_PROVIDER, ZK_LOCK_PROVIDER, IN_PROCESS_LOCK_PROVIDER, LEASE_LOCK_PROVIDER,
             HMS_LOCK_PROVIDER))
LOCK_FILESYSTEM_PATH = define(
    "hoodie.write.lock.filesystem.path", None,
    "FileSystemBasedLockProvider: folder of the lock file (default <base path>/.hoodie/.aux).")
LOCK_FILESYSTEM_EXPIRE = define(
    "hoodie.write.lock.filesystem.expire", 0,
    "FileSystemBasedLockProvider: minutes after which a lock file nobody refreshed is stale and "
    "may be taken over; 0 never expires it.")
LOCK_WAIT_TIME_MS = define("hoodie.write.lock.wait_time_ms", 60000,
                           "How long one attempt to acquire the lock waits.")
LOCK_WAIT_TIME_MS_BETWEEN_RETRY = define(
    "hoodie.write.lock.wait_time_ms_between_retry", 1000,
    "Lock provider: pause between polls of a held file lock, and between ZooKeeper connection retries.")
LOCK_NUM_RETRIES = define("hoodie.write.lock.num_retries", 15,
                          "Lock provider: retries of ZooKeeper connection operations.")
LOCK_CLIENT_NUM_RETRIES = define("hoodie.write.lock.client.num_retries", 50,
                                 "Attempts to acquire the lock after the first one timed out.")
LOCK_CLIENT_WAIT_TIME_MS_BETWEEN_RETRY = define(
    "hoodie.write.lock.client.wait_time_ms_between_retry", 5000,
    "Pause between two attempts to acquire the lock.")
ZK_CONNECT_URL = define("hoodie.write.lock.zookeeper.url", None,
                        "ZookeeperBasedLockProvider: ZooKeeper host(s), comma separated.")
ZK_PORT = define("hoodie.write.lock.zookeeper.port", None,
                 "ZookeeperBasedLockProvider: port of the hosts that name none.")
ZK_BASE_PATH = define("hoodie.write.lock.zookeeper.base_path", None,
                      "ZookeeperBasedLockProvider: znode under which the lock lives; the same for "
                      "every writer of the table.")
ZK_LOCK_KEY = define("hoodie.write.lock.zookeeper.lock_key", None,
                     "ZookeeperBasedLockProvider: lock znode name (default the table name).")
ZK_SESSION_TIMEOUT_MS = define("hoodie.write.lock.zookeeper.session_timeout_ms", 60000,
                               "ZookeeperBasedLockProvider: session timeout.")
ZK_CONNECTION_TIMEOUT_MS = define("hoodie.write.lock.zookeeper.connection_timeout_ms", 15000,
                                  "ZookeeperBasedLockProvider: connection timeout.")
HMS_LOCK_DATABASE = define(
    "hoodie.write.lock.hivemetastore.database", None,
    "HiveMetastoreBasedLockProvider: database of the locked table (default hoodie.datasource.hive_sync.database, "
    "else the table's hoodie.database.name). The same for every writer of the table.")
HMS_LOCK_TABLE = define(
    "hoodie.write.lock.hivemetastore.table", None,
    "HiveMetastoreBasedLockProvider: table name locked (default hoodie.datasource.hive_sync.table, else the "
    "Hudi table name); the metastore locks the name, the table need not exist there.")
HMS_LOCK_URIS = define(
    "hoodie.write.lock.hivemetastore.uris", None,
    "HiveMetastoreBasedLockProvider: metastore thrift URI(s), comma separated (default "
    "hoodie.datasource.hive_sync.metastore.uris). The metastore needs its transaction tables and "
    "hive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DbTxnManager with hive.compactor.initiator.on=true, "
    "so that it expires the locks of writers that died.")
LOCK_HEARTBEAT_INTERVAL_MS = define(
    "hoodie.write.lock.heartbeat_interval_ms", 60000,
    "HiveMetastoreBasedLockProvider: how often a holder heartbeats its lock; keep it well below the "
    "metastore's hive.txn.timeout (300 s by default), after which the metastore drops an unheartbeated lock.")
LEASE_NAMESPACE = define(
    "hoodie.write.lock.kubernetes.lease.namespace", None,
    "KubernetesLeaseLockProvider: namespace of the Lease (default the pod's own, from its service account; "
    "off a cluster, the kubeconfig context's). The same for every writer of the table.")
LEASE_NAME = define(
    "hoodie.write.lock.kubernetes.lease.name", None,
    "KubernetesLeaseLockProvider: name of the Lease (default hudi-lock-<table name>-<8 hex of a hash of the "
    "base path>, so every writer of one table derives the same).")
LEASE_DURATION_SECONDS = define(
    "hoodie.write.lock.kubernetes.lease.duration.seconds", 60,
    "KubernetesLeaseLockProvider: how long a Lease nobody renews stays held before another writer may take "
    "it over; the holder renews it every third of this.")
# hoodie.cleaner.policy.failed.writes (defined above as ROLLBACK_PENDING): EAGER rolls back every
# pending write first (single writer); LAZY only writes whose heartbeat expired (required by, and
# implied with, optimistic concurrency control); NEVER leaves failed writes in place.
FAILED_WRITES_CLEANER_POLICY = ROLLBACK_PENDING
HEARTBEAT_INTERVAL_MS = define("hoodie.client.heartbeat.interval_in_ms", 60000,
                               "How often a writer touches .hoodie/.heartbeat/<instant> while it runs.")
HEARTBEAT_TOLERABLE_MISSES = define(
    "hoodie.client.heartbeat.tolerable.misses", 2,
    "Heartbeats a writer may miss before its instant counts as failed "
    "(expired after interval x misses without a heartbeat, as Hudi's HoodieHeartbeatClient).")
EARLY_CONFLICT_DETECTION_ENABLE = define(
    "hoodie.write.concurrency.early.conflict.detection.enable", False,
    "Before writing data files, fail if a live writer's markers name the same file groups.")
EARLY_CONFLICT_DETECTION_STRATEGY = define(
    "hoodie.write.concurrency.early.conflict.detection.strategy", DIRECT_MARKER_DETECTION,
    "Early conflict detection strategy (direct markers under .hoodie/.temp).",
    choices=(DIRECT_MARKER_DETECTION,))
EARLY_CONFLICT_CHECK_COMMIT_CONFLICT = define(
    "hoodie.write.concurrency.early.conflict.check.commit.conflict", False,
    "Early conflict detection also fails on commits completed since this write started.")
CONFLICT_RESOLUTION_STRATEGY = define(
    "hoodie.write.conflict.resolution.strategy", SIMPLE_CONFLICT_RESOLUTION,
    "How concurrent commits are judged: two writes conflict when both wrote a file group.",
    alternatives=("hoodie.write.lock.conflict.resolution.strategy",),
    choices=(SIMPLE_CONFLICT_RESOLUTION,))


# --- clustering (table service) -------------------------------------------------------------------
CLUSTERING_INLINE = define("hoodie.clustering.inline", False,
                           "Schedule and run clustering after a write when it is due.")
CLUSTERING_INLINE_MAX_COMMITS = define("hoodie.clustering.inline.max.commits", 4,
                                       "Inline clustering: commits since the last clustering before the next.")
CLUSTERING_SCHEDULE_INLINE = define("hoodie.clustering.schedule.inline", False,
                                    "Only plan clustering after a write; a separate job executes it.")
CLUSTERING_ASYNC_ENABLED = define("hoodie.clustering.async.enabled", False,
                                  "Clustering runs in a separate job (the operator's scheduled service).")
CLUSTERING_ASYNC_MAX_COMMITS = define("hoodie.clustering.async.max.commits", 4,
                                      "Scheduled clustering: commits since the last clustering before the next.")
CLUSTERING_PLAN_STRATEGY_CLASS = define(
    "hoodie.clustering.plan.strategy.class",
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
    "How file slices are grouped (size based: small base files, by partition; with the consistent-hashing "
    "bucket index the default is SparkConsistentBucketClusteringPlanStrategy, which resizes buckets).")
CLUSTERING_EXECUTION_STRATEGY_CLASS = define(
    "hoodie.clustering.execution.strategy.class",
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
    "How a group is rewritten (sorted by the sort columns, cut at the target file size; with the "
    "consistent-hashing bucket index the default is SingleSparkJobConsistentHashingExecutionStrategy, "
    "which writes each group's child buckets).")
CLUSTERING_SMALL_FILE_LIMIT = define("hoodie.clustering.plan.strategy.small.file.limit", 314572800,
                                     "Base files below this size (bytes) are candidates.")
CLUSTERING_MAX_BYTES_PER_GROUP = define("hoodie.clustering.plan.strategy.max.bytes.per.group", 2147483648,
                                        "Input bytes one clustering group takes at most.")
CLUSTERING_MAX_NUM_GROUPS = define("hoodie.clustering.plan.strategy.max.num.groups", 30,
                                   "Clustering groups one plan takes at most.")
CLUSTERING_TARGET_FILE_MAX_BYTES = define("hoodie.clustering.plan.strategy.target.file.max.bytes", 1073741824,
                                          "Size of the files clustering writes.")
CLUSTERING_SORT_COLUMNS = define("hoodie.clustering.plan.strategy.sort.columns", None,
                                 "Columns the rewritten files are sorted (or curve ordered) by.")
CLUSTERING_SINGLE_GROUP = define("hoodie.clustering.plan.strategy.single.group.clustering.enabled", True,
                                 "Whether a group of one file slice is worth rewriting.")
CLUSTERING_PARTITION_FILTER_MODE = define(
    "hoodie.clustering.plan.partition.filter.mode", "NONE", "Which partitions a plan looks at.",
    choices=("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"))
CLUSTERING_LOOKBACK_PARTITIONS = define("hoodie.clustering.plan.strategy.daybased.lookback.partitions", 2,
                                        "RECENT_DAYS: the latest partitions (sorted by name) a plan takes.")
CLUSTERING_SKIP_LATEST_PARTITIONS = define(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions", 0,
    "RECENT_DAYS: the newest partitions left alone (still being written).")
CLUSTERING_BEGIN_PARTITION = define("hoodie.clustering.plan.strategy.cluster.begin.partition", None,
                                    "SELECTED_PARTITIONS: first partition (inclusive).")
CLUSTERING_END_PARTITION = define("hoodie.clustering.plan.strategy.cluster.end.partition", None,
                                  "SELECTED_PARTITIONS: last partition (inclusive).")
CLUSTERING_PARTITION_REGEX = define("hoodie.clustering.plan.strategy.partition.regex.pattern", None,
                                    "Only partitions matching this regular expression.")
CLUSTERING_PARTITION_SELECTED = define("hoodie.clustering.plan.strategy.partition.selected", None,
                                       "Exactly these partitions (comma separated).")
LAYOUT_OPTIMIZE_STRATEGY = define("hoodie.layout.optimize.strategy", "linear",
                                  "Order of rows inside clustered files on the sort columns.",
                                  alternatives=("hoodie.clustering.layout.optimize.strategy",),
                                  choices=("linear", "z-order", "hilbert"))
LAYOUT_CURVE_BUILD_METHOD = define("hoodie.layout.optimize.curve.build.method", "direct",
                                   "How values map to curve coordinates (direct: from their bytes).",
                                   alternatives=("hoodie.clustering.layout.optimize.curve.build.method",),
                                   choices=("direct",))
CLUSTERING_UPDATES_STRATEGY = define(
    "hoodie.clustering.updates.strategy",
    "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    "What a write does with updates to file groups a pending clustering is rewriting (reject).",
    choices=("org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",))

# --- metadata table state and data skipping (table properties / read options) ---------------------
TABLE_METADATA_PARTITIONS = define("hoodie.table.metadata.partitions", "",
                                   "Metadata partitions built completely and kept in step (table property).")
TABLE_METADATA_PARTITIONS_INFLIGHT = define("hoodie.table.metadata.partitions.inflight", "",
                                            "Metadata partitions being built (table property).")
METADATA_INDEX_ASYNC = define("hoodie.metadata.index.async", False,
                              "Leave metadata partitions a write asks for, but which are not built yet, to the "
                              "asynchronous indexer (hudictl table index build) instead of building them in the write.")
TABLE_INDEX_DEFS_PATH = define("hoodie.table.index.defs.path", None,
                               "Index definitions file (secondary indexes), relative to the base path "
                               "(table property).")
METADATA_SECONDARY_INDEX_ENABLE = define("hoodie.metadata.index.secondary.enable", True,
                                         "Keep the secondary indexes (CREATE INDEX) in step with writes; "
                                         "false drops their partitions (definitions stay).")
ENABLE_DATA_SKIPPING = define("hoodie.enable.data.skipping", True,
                              "Reads skip partitions whose partition_stats, and files whose column_stats ranges rule "
                              "out the query's filters.")
