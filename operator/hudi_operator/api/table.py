"""The HudiTable kind: one Hudi table at a base path, how it is keyed and laid out, and the table
services (compaction, cleaning, clustering, archival, indexing), catalog sync and savepoints that keep
it healthy."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .common import (CRON, DNS_NAME, ENDPOINT, ID_LEN, REGION, IDENTIFIER, NAME_LEN, STORAGE_URI, URI_LEN, ConfigMapKeyRef,
                     ObjectMeta, SparkSpec, hoodie_options, schedule_needed)
from .fields import Pattern, Rule, Transition, cel, model, spec_field

COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"
COLUMN = Pattern(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$",
                 "a column name (a nested field as parent.child)")
THRIFT_URIS = Pattern(r"^thrift://[^\s,]+(,thrift://[^\s,]+)*$",
                      "thrift://host:port, several separated by commas")
SERVICE_MODES = ("inline", "scheduled", "disabled")


def _spark_override(job: str) -> Any:
    return spec_field(f"Spark settings of the {job} job, over the table's spark (field by field).",
                      default=None)


# --- schema ------------------------------------------------------------------------------------------
@cel(
    Rule(rule="self.type != 'decimal' || has(self.precision)",
         message="a decimal column needs precision (and optionally scale)",
         message_expression="'column ' + self.name + ': type decimal needs precision (and optionally scale)'",
         field_path=".precision",
         check=lambda c: c.type != "decimal" or c.precision is not None,
         explain=lambda c: f"column {c.name}: type decimal needs precision (and optionally scale)"),
    Rule(rule="self.type == 'decimal' || (!has(self.precision) && !has(self.scale))",
         message="precision and scale apply to decimal columns only",
         field_path=".type",
         check=lambda c: c.type == "decimal" or (c.precision is None and c.scale is None)),
    Rule(rule="!has(self.scale) || !has(self.precision) || self.scale <= self.precision",
         message="a decimal's scale cannot exceed its precision",
         field_path=".scale",
         check=lambda c: c.scale is None or c.precision is None or c.scale <= c.precision),
)
@model
class ColumnSpec:
    """One column of a declared schema."""
    name: str = spec_field("Column name.", pattern=IDENTIFIER, max_length=ID_LEN)
    type: str = spec_field("Column type.", enum=("string", "int", "long", "float", "double", "boolean",
                                                 "date", "timestamp", "bytes", "decimal"))
    precision: int | None = spec_field("Decimal precision (digits in all).", default=None, minimum=1,
                                       maximum=38)
    scale: int | None = spec_field("Decimal scale (digits after the point).", default=None, minimum=0,
                                   maximum=38)
    nullable: bool = spec_field("Whether the column may be null.", default=True)
    comment: str | None = spec_field("Column comment (synced to the catalog).", default=None,
                                     max_length=1024)


@cel(
    Rule(rule="!(has(self.columns) && has(self.avroSchemaRef))",
         message="schema takes columns or avroSchemaRef, not both",
         check=lambda s: not (s.columns is not None and s.avro_schema_ref is not None)),
    Rule(rule="has(self.columns) || has(self.avroSchemaRef)",
         message="schema needs columns or avroSchemaRef (leave schema out to infer it from the first batch)",
         check=lambda s: s.columns is not None or s.avro_schema_ref is not None),
)
@model
class SchemaSpec:
    """The table's schema, declared instead of inferred from the first batch."""
    columns: tuple[ColumnSpec, ...] | None = spec_field("The columns, in order.", default=None, min_items=1,
                                                        max_items=1000)
    avro_schema_ref: ConfigMapKeyRef | None = spec_field("A ConfigMap key holding an Avro schema (.avsc JSON).",
                                                         default=None)


# --- layout ------------------------------------------------------------------------------------------
_MIGRATE = "create a new HudiTable and migrate the data into it"


def _bucket(index: IndexSpec) -> bool:
    return index.type == "BUCKET"


@cel(
    Transition(rule="(self.type == 'BUCKET') == (oldSelf.type == 'BUCKET')",
               message=f"index.type cannot change to or from BUCKET: a bucket index keeps each key in the file group "
                       f"its hash names, other indexes look keys up; {_MIGRATE}",
               field_path=".type",
               check=lambda old, new: _bucket(old) == _bucket(new)),
    Transition(rule="self.type != 'BUCKET' || oldSelf.type != 'BUCKET' || self.numBuckets == oldSelf.numBuckets",
               message=f"index.numBuckets cannot change on a BUCKET index: every key's file group is its hash "
                       f"modulo the bucket count; {_MIGRATE} (with the new count)",
               field_path=".numBuckets",
               check=lambda old, new: not (_bucket(old) and _bucket(new)) or old.num_buckets == new.num_buckets),
)
@model
class IndexSpec:
    """How writes find the file group of an existing key."""
    type: str = spec_field("SIMPLE or BLOOM (key ranges and bloom filters in file footers): keys are unique "
                           "within a partition; GLOBAL_SIMPLE or GLOBAL_BLOOM: unique across the table; BUCKET: "
                           "a key's file group is a hash of it (numBuckets per partition, no lookup); "
                           "RECORD_INDEX: unique across the table, looked up in the metadata table's record index.",
                           default="SIMPLE",
                           enum=("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET", "RECORD_INDEX"))
    update_partition_path: bool = spec_field("GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX: a record whose partition "
                                             "changed moves to the new partition (else it is updated in place).",
                                             default=True)
    num_buckets: int = spec_field("BUCKET: file groups per partition; fixed when the table is created.",
                                  default=256, minimum=1, maximum=100000)


_NEEDS_METADATA_TABLE = ("metadataTable.columnStats, bloomFilters and recordIndex live in the metadata table: "
                         "set metadataTable.enabled to true or turn them off")


@cel(Rule(rule="self.enabled || !(self.columnStats || self.bloomFilters || self.recordIndex)",
          message=_NEEDS_METADATA_TABLE, field_path=".enabled",
          check=lambda m: m.enabled or not (m.column_stats or m.bloom_filters or m.record_index),
          explain=lambda m: _NEEDS_METADATA_TABLE))
@model
class MetadataTableSpec:
    """The metadata table (.hoodie/metadata): file listings without directory scans, and indexes
    that reads use to skip files (column stats) and find keys (record index)."""
    enabled: bool = spec_field("Keep the metadata table (hoodie.metadata.enable); false deletes it.", default=True)
    column_stats: bool = spec_field("Per-file column ranges, for data skipping on filters.", default=False)
    column_stats_columns: tuple[str, ...] = spec_field("Columns to keep ranges of (default: the first 32).",
                                                       default=(), max_items=64, pattern=COLUMN,
                                                       max_length=ID_LEN)
    bloom_filters: bool = spec_field("Base files' bloom filters, read from here instead of file footers.",
                                     default=False)
    record_index: bool = spec_field("Where every record key lives (global): point lookups by key read one "
                                    "file group.", default=False)


@cel(Rule(rule="self.smallFileLimitBytes < self.maxFileSizeBytes",
          message="fileSizing.smallFileLimitBytes must be below maxFileSizeBytes",
          message_expression="'fileSizing.smallFileLimitBytes (' + string(self.smallFileLimitBytes) + ') must be "
                             "below maxFileSizeBytes (' + string(self.maxFileSizeBytes) + ')'",
          field_path=".smallFileLimitBytes",
          check=lambda f: f.small_file_limit_bytes < f.max_file_size_bytes,
          explain=lambda f: f"fileSizing.smallFileLimitBytes ({f.small_file_limit_bytes}) must be below "
                            f"maxFileSizeBytes ({f.max_file_size_bytes})"))
@model
class FileSizingSpec:
    """Target sizes of base files (hoodie.parquet.max.file.size, hoodie.parquet.small.file.limit)."""
    max_file_size_bytes: int = spec_field("Largest base file written.", default=125829120, minimum=1)
    small_file_limit_bytes: int = spec_field("Base files below this size receive new inserts until they "
                                             "grow; 0 turns that off.", default=104857600, minimum=0)


@model
class CdcSpec:
    """Change data capture logs, so downstream pipelines read inserts, updates and deletes."""
    enabled: bool = spec_field("Write CDC logs (hoodie.table.cdc.enabled).", default=False)
    logging_mode: str = spec_field("What each change record holds.", default="DATA_BEFORE_AFTER",
                                   enum=("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"))


# --- table services ----------------------------------------------------------------------------------
@cel(schedule_needed("compaction"))
@model
class CompactionSpec:
    """Merging a MERGE_ON_READ table's log files into new base files."""
    mode: str = spec_field("inline: the writer compacts when due; scheduled: a separate job on schedule "
                           "(MERGE_ON_READ only); disabled: never.", default="inline", enum=SERVICE_MODES)
    schedule: str | None = spec_field("Cron schedule of the compaction job (mode scheduled).", default=None,
                                      pattern=CRON, max_length=128)
    max_delta_commits: int = spec_field("Delta commits after which a compaction is due "
                                        "(hoodie.compact.inline.max.delta.commits).", default=5, minimum=1)
    trigger_strategy: str = spec_field("When a compaction is due: after maxDeltaCommits, after "
                                       "maxDeltaSeconds, or both/either.", default="NUM_COMMITS",
                                       enum=("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED",
                                             "NUM_AND_TIME", "NUM_OR_TIME"))
    max_delta_seconds: int = spec_field("Seconds after which a compaction is due "
                                        "(hoodie.compact.inline.max.delta.seconds).", default=3600, minimum=1)
    run_when_due: bool = spec_field("mode scheduled: also start the job as soon as a compaction is due (by "
                                    "triggerStrategy, or a pending plan), one job at a time, not only on the "
                                    "schedule.", default=True)
    spark: SparkSpec | None = _spark_override("compaction")


@cel(schedule_needed("cleaning"))
@model
class CleaningSpec:
    """Deleting file versions no query or incremental reader needs any more."""
    mode: str = spec_field("inline: after each commit; scheduled: a separate job on schedule; disabled: "
                           "never.", default="inline", enum=SERVICE_MODES)
    policy: str = spec_field("What to keep.", default="KEEP_LATEST_COMMITS",
                             enum=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"))
    retain_commits: int = spec_field("KEEP_LATEST_COMMITS: commits whose files are kept.", default=10,
                                     minimum=1)
    retain_file_versions: int = spec_field("KEEP_LATEST_FILE_VERSIONS: versions kept per file group.",
                                           default=3, minimum=1)
    retain_hours: int = spec_field("KEEP_LATEST_BY_HOURS: hours of history kept.", default=24, minimum=1)
    schedule: str | None = spec_field("Cron schedule of the cleaning job (mode scheduled).", default=None,
                                      pattern=CRON, max_length=128)
    run_when_due: bool = spec_field("mode scheduled: also start the job as soon as a clean is due "
                                    "(hoodie.clean.max.commits in options, 1 by default: after every commit), one "
                                    "job at a time, not only on the schedule.", default=False)
    spark: SparkSpec | None = _spark_override("cleaning")


@cel(
    schedule_needed("clustering"),
    Rule(rule="self.layout == 'LINEAR' || size(self.sortColumns) > 0",
         message="clustering layout ZORDER or HILBERT needs sortColumns",
         field_path=".sortColumns",
         check=lambda c: c.layout == "LINEAR" or len(c.sort_columns) > 0),
)
@model
class ClusteringSpec:
    """Rewriting small files into larger ones, sorted for faster queries."""
    mode: str = spec_field("inline: the writer clusters when due; scheduled: a separate job on schedule; "
                           "disabled: never.", default="disabled", enum=SERVICE_MODES)
    sort_columns: tuple[str, ...] = spec_field("Columns the rewritten files are sorted by.", default=(),
                                               max_items=32, pattern=COLUMN, max_length=ID_LEN)
    layout: str = spec_field("Sort order over sortColumns: LINEAR (lexicographic), ZORDER or HILBERT "
                             "(space-filling curves).", default="LINEAR", enum=("LINEAR", "ZORDER", "HILBERT"))
    target_file_size_bytes: int | None = spec_field("Size of the files clustering writes "
                                                    "(default: fileSizing.maxFileSizeBytes).", default=None,
                                                    minimum=1)
    schedule: str | None = spec_field("Cron schedule of the clustering job (mode scheduled).", default=None,
                                      pattern=CRON, max_length=128)
    run_when_due: bool = spec_field("mode scheduled: also start the job as soon as a clustering is due "
                                    "(hoodie.clustering.inline.max.commits in options, 4 by default, or a pending "
                                    "plan), one job at a time, not only on the schedule.", default=True)
    spark: SparkSpec | None = _spark_override("clustering")


@cel(schedule_needed("indexing"))
@model
class IndexingSpec:
    """Building the metadata table's indexes (metadataTable.columnStats, bloomFilters, recordIndex)
    on a table that already holds data."""
    mode: str = spec_field("inline: the first write that wants an index builds it, holding the table lock "
                           "meanwhile; scheduled: Hudi's asynchronous indexer, a separate job, builds it while "
                           "writers keep committing (hoodie.metadata.index.async; always under optimistic "
                           "concurrency, with the table's lock; table version 8 or later).",
                           default="inline", enum=("inline", "scheduled"))
    schedule: str | None = spec_field("Cron schedule of the indexing job (mode scheduled).", default=None,
                                      pattern=CRON, max_length=128)
    run_when_due: bool = spec_field("mode scheduled: also start the job as soon as an enabled index is neither "
                                    "built nor being built, or an indexing is pending, not only on the schedule.",
                                    default=True)
    spark: SparkSpec | None = _spark_override("indexing")


@cel(Rule(rule="self.minCommits < self.maxCommits",
          message="archival.minCommits must be below maxCommits",
          message_expression="'archival.minCommits (' + string(self.minCommits) + ') must be below maxCommits ("
                             "' + string(self.maxCommits) + ')'",
          field_path=".minCommits",
          check=lambda a: a.min_commits < a.max_commits,
          explain=lambda a: f"archival.minCommits ({a.min_commits}) must be below maxCommits ({a.max_commits})"))
@model
class ArchivalSpec:
    """Moving old instants off the active timeline (hoodie.keep.min.commits / hoodie.keep.max.commits)."""
    min_commits: int = spec_field("Instants always kept on the active timeline.", default=20, minimum=1)
    max_commits: int = spec_field("Archiving starts when the active timeline holds more instants.",
                                  default=30, minimum=2)


@cel(Rule(rule="self.cleaning.policy != 'KEEP_LATEST_COMMITS' || "
               "self.archival.minCommits > self.cleaning.retainCommits",
          message="archival.minCommits must be above cleaning.retainCommits, or incremental readers could "
                  "miss commits whose files were cleaned",
          field_path=".archival.minCommits",
          check=lambda s: s.cleaning.policy != "KEEP_LATEST_COMMITS"
          or s.archival.min_commits > s.cleaning.retain_commits))
@model
class ServicesSpec:
    """The table services and how each runs."""
    compaction: CompactionSpec = spec_field("Compaction (MERGE_ON_READ tables).", default=CompactionSpec)
    cleaning: CleaningSpec = spec_field("Cleaning of old file versions.", default=CleaningSpec)
    clustering: ClusteringSpec = spec_field("Clustering of small files.", default=ClusteringSpec)
    archival: ArchivalSpec = spec_field("Archival of the timeline.", default=ArchivalSpec)
    indexing: IndexingSpec = spec_field("Building the metadata table's indexes.", default=IndexingSpec)


# --- around the table --------------------------------------------------------------------------------
@model
class CatalogSyncTarget:
    """A catalog the table is registered in after each commit."""
    type: str = spec_field("Catalog kind.", default="hive", enum=("hive",))
    metastore_uris: str = spec_field("Hive Metastore thrift URIs.", pattern=THRIFT_URIS, max_length=URI_LEN)
    database: str | None = spec_field("Database in the catalog (default: spec.database).", default=None,
                                      pattern=IDENTIFIER, max_length=ID_LEN)
    table: str | None = spec_field("Table name in the catalog (default: the table name).", default=None,
                                   pattern=IDENTIFIER, max_length=ID_LEN)
    sync_mode: str = spec_field("How the catalog is written: hms, the metastore's thrift API.", default="hms",
                                enum=("hms",))


@model
class SavepointSpec:
    """Savepoints taken on a schedule, so the table can be restored to one."""
    schedule: str = spec_field("Cron schedule of the savepoint job.", pattern=CRON, max_length=128)
    keep: int = spec_field("Savepoints kept; older ones are deleted.", default=7, minimum=1)


@model
class StorageSpec:
    """How jobs reach the storage at basePath, never with credentials in the spec."""
    credentials_secret: str | None = spec_field(
        "A Secret whose keys become the jobs' environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...).",
        default=None, pattern=DNS_NAME, max_length=NAME_LEN)
    service_account_name: str | None = spec_field("Service account of the jobs, for workload identity.",
                                                  default=None, pattern=DNS_NAME, max_length=NAME_LEN)
    endpoint: str | None = spec_field(
        "Endpoint of an S3-compatible store (MinIO, Ceph RGW, ...); unset for Amazon S3. Jobs get it as "
        "spark.hadoop.fs.s3a.endpoint.", default=None, pattern=ENDPOINT, max_length=URI_LEN)
    region: str | None = spec_field("Region of the bucket (spark.hadoop.fs.s3a.endpoint.region).", default=None,
                                    pattern=REGION, max_length=64)
    path_style_access: bool = spec_field(
        "Address buckets as <endpoint>/<bucket>, as most S3-compatible stores need "
        "(spark.hadoop.fs.s3a.path.style.access).", default=False)


# --- several writers ----------------------------------------------------------------------------------
CONCURRENCY_MODES = ("auto", "singleWriter", "optimistic")
LOCK_PROVIDERS = ("kubernetesLease", "hiveMetastore", "zookeeper", "fileSystem")
# each provider's settings, by the LockSpec field that holds them (the CEL spelling, the attribute)
_LOCK_SECTIONS = {"kubernetesLease": ("kubernetesLease", "kubernetes_lease"),
                  "hiveMetastore": ("hiveMetastore", "hive_metastore"),
                  "zookeeper": ("zookeeper", "zookeeper"), "fileSystem": ("fileSystem", "file_system")}
ZK_HOSTS = Pattern(r"^[A-Za-z0-9.-]+(:[0-9]+)?(,[A-Za-z0-9.-]+(:[0-9]+)?)*$",
                   "ZooKeeper hosts: host or host:port, several separated by commas")
ZNODE_PATH = Pattern(r"^(/[^/\s]+)+$", "an absolute znode path such as /hudi/locks")


@model
class KubernetesLeaseLock:
    """A coordination.k8s.io/v1 Lease in the table's namespace (this platform's provider)."""
    name: str | None = spec_field("Lease name (default hudi-lock-<table>-<8 hex of a hash of basePath>).",
                                  default=None, pattern=DNS_NAME, max_length=NAME_LEN)
    duration_seconds: int = spec_field("How long the lease holds without renewal; the holder renews every "
                                       "third of it, and an expired lease is taken over.", default=60,
                                       minimum=5, maximum=3600)


@model
class HiveMetastoreLock:
    """A lock in the Hive Metastore's lock API (HiveMetastoreBasedLockProvider)."""
    uris: str | None = spec_field("Metastore thrift URIs (default: the catalogSync target's, else the "
                                  "platform's).", default=None,
                                  pattern=THRIFT_URIS, max_length=URI_LEN)
    database: str | None = spec_field("Database the lock is taken on (default: the catalogSync target's, "
                                      "else spec.database).", default=None, pattern=IDENTIFIER, max_length=ID_LEN)
    table: str | None = spec_field("Table the lock is taken on (default: the catalogSync target's, else the "
                                   "table name).", default=None, pattern=IDENTIFIER, max_length=ID_LEN)


@model
class ZookeeperLock:
    """A lock znode in ZooKeeper (ZookeeperBasedLockProvider); what it leaves out is the platform's (the
    operator's lock.zookeeper settings)."""
    url: str | None = spec_field("ZooKeeper host(s) (default: the platform's).", default=None, pattern=ZK_HOSTS,
                                 max_length=URI_LEN)
    port: int | None = spec_field("Port of the hosts that name none (default: the platform's, 2181).", default=None,
                                  minimum=1, maximum=65535)
    base_path: str | None = spec_field("Znode under which the lock lives (default: the platform's, /hudi/locks).",
                                       default=None, pattern=ZNODE_PATH, max_length=1024)
    lock_key: str | None = spec_field("Lock znode name (default: the table name).", default=None,
                                      pattern=IDENTIFIER, max_length=ID_LEN)


@model
class FileSystemLock:
    """A lock file: only on a local disk or a shared POSIX file system, never on an object store."""
    path: str | None = spec_field("Folder of the lock file (default <basePath>/.hoodie/.aux).", default=None,
                                  pattern=STORAGE_URI, max_length=URI_LEN)


def _settings_of_provider(provider: str) -> Rule:
    json_name, attribute = _LOCK_SECTIONS[provider]
    return Rule(rule=f"!has(self.{json_name}) || self.provider == '{provider}'",
                message=f"lock.{json_name} holds the settings of provider {provider}: set provider {provider} "
                        "or remove them",
                field_path=f".{json_name}",
                check=lambda lock: getattr(lock, attribute) is None or lock.provider == provider)


@cel(*(_settings_of_provider(p) for p in LOCK_PROVIDERS))
@model
class LockSpec:
    """The lock every job of the table takes to start and commit an instant."""
    provider: str = spec_field("kubernetesLease: a Lease in the namespace (no other service needed); "
                               "hiveMetastore: the metastore's lock API; zookeeper: a ZooKeeper ensemble; "
                               "fileSystem: a lock file (local or shared POSIX disks only).", enum=LOCK_PROVIDERS)
    kubernetes_lease: KubernetesLeaseLock | None = spec_field("kubernetesLease settings.", default=None)
    hive_metastore: HiveMetastoreLock | None = spec_field("hiveMetastore settings.", default=None)
    zookeeper: ZookeeperLock | None = spec_field("zookeeper settings.", default=None)
    file_system: FileSystemLock | None = spec_field("fileSystem settings.", default=None)


@cel(Rule(rule="self.mode != 'singleWriter' || !has(self.lock)",
          message="concurrency.lock is taken by optimistic concurrency control only: remove it, or set mode "
                  "auto or optimistic",
          field_path=".lock",
          check=lambda c: c.mode != "singleWriter" or c.lock is None))
@model
class ConcurrencySpec:
    """How the jobs writing the table (its pipelines and scheduled table services) share it."""
    mode: str = spec_field("auto: optimistic concurrency control when more than one job writes the table, a "
                           "single writer otherwise; singleWriter: refuse a second writer; optimistic: always "
                           "take the lock.", default="auto", enum=CONCURRENCY_MODES)
    lock: LockSpec | None = spec_field("The lock (default: the platform's, set by the operator's chart).",
                                       default=None)


KEY_GENERATORS = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP")


def _effective_key_generator(obj: str) -> str:
    """CEL twin of ``HudiTableSpec.effective_key_generator`` for ``obj`` (self or oldSelf)."""
    return (f"(has({obj}.keyGenerator) ? {obj}.keyGenerator : size({obj}.partitionFields) == 0 ? 'NON_PARTITION' : "
            f"size({obj}.recordKey) == 1 && size({obj}.partitionFields) == 1 ? 'SIMPLE' : 'COMPLEX')")


@cel(
    Rule(rule="self.tableType == 'MERGE_ON_READ' || self.services.compaction.mode != 'scheduled'",
         message="services.compaction.mode scheduled needs a MERGE_ON_READ table: a COPY_ON_WRITE table has no "
                 "log files to compact (leave compaction at its default or set it disabled)",
         field_path=".services.compaction.mode",
         check=lambda t: t.table_type == MERGE_ON_READ or t.services.compaction.mode != "scheduled"),
    Rule(rule="self.metadataTable.enabled || self.services.indexing.mode != 'scheduled'",
         message="services.indexing.mode scheduled builds indexes in the metadata table: set "
                 "metadataTable.enabled to true, or leave indexing inline",
         field_path=".services.indexing.mode",
         check=lambda t: t.metadata_table.enabled or t.services.indexing.mode != "scheduled"),
    Rule(rule="!has(self.keyGenerator) || !(self.keyGenerator in ['SIMPLE', 'TIMESTAMP']) || "
              "(size(self.recordKey) == 1 && size(self.partitionFields) <= 1)",
         message="keyGenerator SIMPLE or TIMESTAMP takes one recordKey field and at most one partition field; "
                 "use COMPLEX",
         field_path=".keyGenerator",
         check=lambda t: t.key_generator not in ("SIMPLE", "TIMESTAMP")
         or (len(t.record_key) == 1 and len(t.partition_fields) <= 1)),
    Rule(rule="!has(self.keyGenerator) || self.keyGenerator != 'NON_PARTITION' || size(self.partitionFields) == 0",
         message="keyGenerator NON_PARTITION writes an unpartitioned table: remove partitionFields or choose "
                 "another key generator",
         field_path=".keyGenerator",
         check=lambda t: t.key_generator != "NON_PARTITION" or not t.partition_fields),
    # keyGenerator is optional (derived when unset), so its rule sits here, where setting it, removing it
    # or changing it are all seen: the derived generator may be written out, not changed
    Transition(rule=f"{_effective_key_generator('self')} == {_effective_key_generator('oldSelf')}",
               message=f"keyGenerator cannot change: it made every stored record's key and partition path; {_MIGRATE} "
                       "(writing out the generator the table already derives is fine)",
               field_path=".keyGenerator",
               check=lambda old, new: old.effective_key_generator() == new.effective_key_generator()),
)
@model
class HudiTableSpec:
    """A Hudi table: where it lives, how records are keyed and laid out, and how it is kept healthy."""
    table_name: str | None = spec_field("hoodie.table.name (default: metadata.name with '-' turned into '_').",
                                        default=None, pattern=IDENTIFIER, max_length=ID_LEN)
    database: str = spec_field("Database the table belongs to.", default="default", pattern=IDENTIFIER,
                               max_length=ID_LEN)
    base_path: str = spec_field("Where the table is stored. Fixed when the table is created.", pattern=STORAGE_URI,
                                max_length=URI_LEN,
                                immutable=f"basePath cannot change: the table's files and timeline stay where they "
                                          f"were written; {_MIGRATE} (or copy them to the new path first)")
    table_type: str = spec_field(
        "COPY_ON_WRITE rewrites files on update; MERGE_ON_READ appends logs and compacts them later. "
        "Fixed when the table is created.", default=COPY_ON_WRITE, enum=(COPY_ON_WRITE, MERGE_ON_READ),
        immutable=f"tableType cannot change: a table's type is fixed when it is created; {_MIGRATE}")
    record_key: tuple[str, ...] = spec_field("Columns that identify a record "
                                             "(hoodie.datasource.write.recordkey.field). Fixed when the table is "
                                             "created.", min_items=1, max_items=16, pattern=COLUMN, max_length=ID_LEN,
                                             immutable=f"recordKey cannot change: stored records are found by the "
                                                       f"keys they were written with; {_MIGRATE}")
    partition_fields: tuple[str, ...] = spec_field("Columns the table is partitioned by. Fixed when the table is "
                                                   "created.", default=(), max_items=16, pattern=COLUMN,
                                                   max_length=ID_LEN,
                                                   immutable=f"partitionFields cannot change: stored records stay "
                                                             f"in the partitions they were written to; {_MIGRATE}")
    ordering_field: str | None = spec_field("Of two records with one key, the one with the larger value "
                                            "wins (precombine field).", default=None, pattern=COLUMN,
                                            max_length=ID_LEN)
    key_generator: str | None = spec_field("How keys and partition paths are built (default: SIMPLE for one "
                                           "key and one partition field, COMPLEX for more, NON_PARTITION "
                                           "without partition fields). Fixed when the table is created.",
                                           default=None, enum=KEY_GENERATORS)
    hive_style_partitioning: bool = spec_field("Partition folders named field=value.", default=False)
    schema: SchemaSpec | None = spec_field("The table's schema (default: inferred from the first batch).",
                                           default=None)
    index: IndexSpec = spec_field("Index used to find existing keys.", default=IndexSpec)
    metadata_table: MetadataTableSpec = spec_field("The metadata table and its indexes.", default=MetadataTableSpec)
    file_sizing: FileSizingSpec = spec_field("Base file sizes.", default=FileSizingSpec)
    cdc: CdcSpec = spec_field("Change data capture.", default=CdcSpec)
    services: ServicesSpec = spec_field("Table services.", default=ServicesSpec)
    catalog_sync: tuple[CatalogSyncTarget, ...] = spec_field("Catalogs the table is synced to.", default=(),
                                                             max_items=8)
    savepoints: SavepointSpec | None = spec_field("Scheduled savepoints.", default=None)
    deletion_policy: str = spec_field("What deleting the HudiTable does to the data at basePath: Retain "
                                      "keeps it, Delete removes it.", default="Retain", enum=("Retain", "Delete"))
    spark: SparkSpec = spec_field("Spark settings of every job of this table and its pipelines.",
                                  default=SparkSpec)
    storage: StorageSpec | None = spec_field("Storage access of the jobs.", default=None)
    concurrency: ConcurrencySpec = spec_field("Several writers: concurrency control and the lock.",
                                              default=ConcurrencySpec)
    options: dict[str, str] = hoodie_options("Extra Hudi options (hoodie.*), written as Hudi spells them.",
                                             "storage.credentialsSecret")

    def effective_table_name(self, metadata_name: str) -> str:
        """hoodie.table.name: tableName, else the resource name with '-' turned into '_'."""
        return self.table_name or metadata_name.replace("-", "_")

    def effective_key_generator(self) -> str:
        """The key generator named, else the one the keys and partition fields call for."""
        if self.key_generator:
            return self.key_generator
        if not self.partition_fields:
            return "NON_PARTITION"
        if len(self.record_key) == 1 and len(self.partition_fields) == 1:
            return "SIMPLE"
        return "COMPLEX"


_TABLE_NAME_FROM_METADATA = r"^[a-z_][a-z0-9_-]*$"


@cel(Rule(rule=f"has(self.spec.tableName) || self.metadata.name.matches('{_TABLE_NAME_FROM_METADATA}')",
          message="metadata.name does not make a table name (it may not start with a digit or hold .): "
                  "set spec.tableName",
          message_expression="'metadata.name ' + self.metadata.name + ' does not make a table name (it may not "
                             "start with a digit or hold .): set spec.tableName'",
          field_path=".metadata.name",
          check=lambda r: r.spec.table_name is not None or re.search(_TABLE_NAME_FROM_METADATA, r.metadata.name),
          explain=lambda r: f"metadata.name {r.metadata.name} does not make a table name (it may not start "
                            "with a digit or hold .): set spec.tableName"))
@dataclass(frozen=True, kw_only=True)
class HudiTableResource:
    """A HudiTable as the operator sees it; ``status`` is what the operator last wrote."""
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: HudiTableSpec
    status: dict[str, Any] | None = None
