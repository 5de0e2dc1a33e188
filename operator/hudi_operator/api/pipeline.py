"""The HudiPipeline kind: an ingestion job (Hudi Streamer) that reads a source, transforms and checks
the records, and writes them into a HudiTable, continuously or on a schedule."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .common import (CRON, ID_LEN, STORAGE_URI, URI_LEN, VALUE_LEN, ConfigMapKeyRef, ObjectMeta, SecretKeyRef,
                     SparkSpec, TableRef, hoodie_options, no_credentials)
from .fields import Pattern, Rule, cel, model, spec_field
from .table import COLUMN

BOOTSTRAP_SERVERS = Pattern(r"^[^\s,]+:[0-9]+(,[^\s,]+:[0-9]+)*$", "host:port, several separated by commas")
TOPIC = Pattern(r"^[a-zA-Z0-9._-]+$", "a Kafka topic name: letters, digits, '.', '_' and '-'")
HTTP_URL = Pattern(r"^https?://\S+$", "an http:// or https:// URL")
FRACTION = Pattern(r"^(-1|0(\.[0-9]+)?|1(\.0+)?)$", "a decimal from 0 to 1, or -1 for no limit")
LOWER_NAME = Pattern(r"^[a-z0-9_]+$", "lower-case letters, digits and '_'")
RULE_NAME = Pattern(r"^[A-Za-z0-9_]+$", "letters, digits and '_'")
SQL_LEN = 65536
POSTGRES_URL = Pattern(r"^(jdbc:)?postgres(ql)?://\S+$", "postgresql://host:5432/database or "
                                                          "jdbc:postgresql://host:5432/database")
JDBC_URL = Pattern(r"^jdbc:[a-z0-9]+:\S+$", "a JDBC URL, jdbc:<database>:...")
SQL_TABLE = Pattern(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$", "table or schema.table")
JAVA_CLASS = Pattern(r"^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$", "a Java class name")


# --- sources -----------------------------------------------------------------------------------------
@model
class FilesSource:
    """New files under a folder, oldest first (JsonDFSSource, CsvDFSSource, ...)."""
    path: str = spec_field("Folder whose new files are read.", pattern=STORAGE_URI, max_length=URI_LEN)
    format: str = spec_field("File format.", default="json", enum=("json", "csv", "parquet", "avro"))
    csv_options: dict[str, str] = spec_field("Spark CSV reader options (header, sep, ...).", default={},
                                             max_properties=32, max_length=256)


@model
class SchemaRegistrySpec:
    """A Confluent schema registry, for Avro messages in the Confluent wire format."""
    url: str = spec_field("Registry URL.", pattern=HTTP_URL, max_length=URI_LEN)
    basic_auth_secret: SecretKeyRef | None = spec_field("Secret key holding 'user:password' for the registry.",
                                                        default=None)


@model
class KafkaSecurity:
    """How the job authenticates to the brokers; every credential is a Secret reference."""
    protocol: str = spec_field("security.protocol.", default="PLAINTEXT",
                               enum=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"))
    sasl_mechanism: str | None = spec_field("sasl.mechanism (SASL protocols).", default=None,
                                            enum=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"))
    username_secret: SecretKeyRef | None = spec_field("Secret key holding the SASL user name.", default=None)
    password_secret: SecretKeyRef | None = spec_field("Secret key holding the SASL password.", default=None)
    jaas_config_secret: SecretKeyRef | None = spec_field(
        "Secret key holding a sasl.jaas.config with the user name and password (PLAIN or SCRAM login module), "
        "instead of usernameSecret and passwordSecret: e.g. key sasl.jaas.config of a Strimzi KafkaUser's Secret.",
        default=None)
    ca_secret: SecretKeyRef | None = spec_field("Secret key holding the brokers' CA certificate (PEM).",
                                                default=None)


def _sasl(security: KafkaSecurity) -> bool:
    return security.protocol.startswith("SASL_")


@cel(
    Rule(rule="!self.security.protocol.startsWith('SASL_') || has(self.security.jaasConfigSecret) || "
              "(has(self.security.usernameSecret) && has(self.security.passwordSecret))",
         message="a SASL security.protocol needs usernameSecret and passwordSecret, or jaasConfigSecret (Secret "
                 "references); credentials are never written in the spec",
         message_expression="'security.protocol ' + self.security.protocol + ' needs usernameSecret and "
                            "passwordSecret, or jaasConfigSecret (Secret references); credentials are never "
                            "written in the spec'",
         check=lambda k: not _sasl(k.security) or k.security.jaas_config_secret is not None
         or (k.security.username_secret is not None and k.security.password_secret is not None),
         explain=lambda k: f"security.protocol {k.security.protocol} needs usernameSecret and passwordSecret, "
                           "or jaasConfigSecret (Secret references); credentials are never written in the spec"),
    Rule(rule="!self.security.protocol.startsWith('SASL_') || has(self.security.saslMechanism)",
         message="a SASL security.protocol needs saslMechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)",
         field_path=".security.saslMechanism",
         check=lambda k: not _sasl(k.security) or k.security.sasl_mechanism is not None),
    Rule(rule="self.format != 'avro' || has(self.schemaRegistry)",
         message="format avro reads Confluent-framed Avro messages: set schemaRegistry.url",
         field_path=".schemaRegistry",
         check=lambda k: k.format != "avro" or k.schema_registry is not None),
)
@model
class KafkaSource:
    """A Kafka topic (JsonKafkaSource, AvroKafkaSource)."""
    bootstrap_servers: str = spec_field("Brokers, host:port,...", pattern=BOOTSTRAP_SERVERS, max_length=URI_LEN)
    topic: str = spec_field("Topic to read.", pattern=TOPIC, max_length=249)
    format: str = spec_field("Message format.", default="json", enum=("json", "avro"))
    starting_offsets: str = spec_field("Where a new pipeline starts reading.", default="latest",
                                       enum=("earliest", "latest"))
    max_events_per_batch: int | None = spec_field("Most messages one batch reads.", default=None, minimum=1)
    schema_registry: SchemaRegistrySpec | None = spec_field("Schema registry (format avro).", default=None)
    security: KafkaSecurity = spec_field("Authentication and encryption.", default=KafkaSecurity)
    options: dict[str, str] = spec_field(
        "Extra Kafka consumer options (fetch.max.bytes, ...). Credentials go in security's Secret "
        "references.", default={}, max_properties=64, max_length=VALUE_LEN,
        rules=(no_credentials("security.usernameSecret, passwordSecret, jaasConfigSecret, caSecret"),))


@cel(Rule(rule="has(self.tableRef) != has(self.basePath)",
          message="hudiIncremental reads one upstream table: set tableRef (a HudiTable) or basePath, not both",
          check=lambda s: (s.table_ref is None) != (s.base_path is None)))
@model
class HudiIncrementalSource:
    """The commits of an upstream Hudi table (HoodieIncrSource), e.g. bronze → silver."""
    table_ref: TableRef | None = spec_field("The upstream HudiTable (same namespace).", default=None)
    base_path: str | None = spec_field("Base path of an upstream table not managed here.", default=None,
                                       pattern=STORAGE_URI, max_length=URI_LEN)
    instants_per_batch: int = spec_field("Upstream commits read per batch.", default=5, minimum=1)


@model
class DebeziumSource:
    """Debezium change events of a database table, read from Kafka."""
    database: str = spec_field("Database the events come from.", enum=("postgres", "mysql"))
    kafka: KafkaSource = spec_field("The Debezium topic.")


@model
class PostgresSource:
    """A PostgreSQL table's changes by logical decoding (PostgresCdcSource), without Kafka: the
    first run reads the table, later runs its inserts, updates and deletes, exactly once. The
    server needs wal_level=logical; the user the REPLICATION attribute."""
    url: str = spec_field("The database, postgresql://host:5432/db or jdbc:postgresql://host:5432/db.",
                          pattern=POSTGRES_URL, max_length=URI_LEN)
    table: str = spec_field("The table, schema.table (or table, in schema public).", pattern=SQL_TABLE,
                            max_length=127)
    user: str | None = spec_field("User to connect as (default: the URL's).", default=None, max_length=63)
    password_secret: SecretKeyRef | None = spec_field("Secret key holding the user's password.", default=None)
    slot_name: str | None = spec_field("Replication slot (default hudi_<database>_<schema>_<table>); one per "
                                       "pipeline.", default=None, pattern=LOWER_NAME, max_length=63)
    publication_name: str | None = spec_field("Publication of the table (default as the slot).", default=None,
                                              pattern=LOWER_NAME, max_length=63)
    snapshot_mode: str = spec_field("initial: read the table's rows on the first run, then its changes; "
                                    "never: only changes made after the slot was created.", default="initial",
                                    enum=("initial", "never"))
    max_changes_per_batch: int | None = spec_field("Most change messages one batch reads.", default=None,
                                                   minimum=1)


@model
class JdbcSource:
    """A database table pulled by SQL (Hudi's JdbcSource): all rows on the first run, then those
    whose incrementalColumn grew. Deletes are not seen; use a postgres source for those."""
    url: str = spec_field("JDBC URL, e.g. jdbc:postgresql://host:5432/db (other databases need their "
                          "driver JAR in the job's image).", pattern=JDBC_URL, max_length=URI_LEN)
    table: str = spec_field("The table to pull.", pattern=SQL_TABLE, max_length=127)
    user: str | None = spec_field("User to connect as.", default=None, max_length=63)
    password_secret: SecretKeyRef | None = spec_field("Secret key holding the user's password.", default=None)
    driver_class: str | None = spec_field("JDBC driver class (databases other than PostgreSQL).", default=None,
                                          pattern=JAVA_CLASS, max_length=255)
    incremental_column: str | None = spec_field("Column whose growth marks new rows (an id or an update time); "
                                                "unset: every run pulls the whole table.", default=None,
                                                pattern=COLUMN, max_length=ID_LEN)
    fallback_to_full_fetch: bool = spec_field("Pull the whole table when the incremental pull fails.",
                                              default=False)


@model
class SqlSource:
    """The rows of a Spark SQL query over the pipeline's views (Hudi's SqlSource), e.g. gold
    aggregates over silver. A batch runs once a view's table has committed since the last one;
    the query also sees <view>_changes, the rows those commits wrote."""
    query: str = spec_field("The query; it reads the pipeline's views by name.", min_length=1, max_length=SQL_LEN)


SOURCE_TYPES = ("files", "kafka", "hudiIncremental", "debezium", "postgres", "jdbc", "sql")


def _members(s: SourceSpec) -> dict[str, Any]:
    return {"files": s.files, "kafka": s.kafka, "hudiIncremental": s.hudi_incremental, "debezium": s.debezium,
            "postgres": s.postgres, "jdbc": s.jdbc, "sql": s.sql}


@cel(
    Rule(rule="self.type == 'files' ? has(self.files) : self.type == 'kafka' ? has(self.kafka) : "
              "self.type == 'hudiIncremental' ? has(self.hudiIncremental) : self.type == 'debezium' ? "
              "has(self.debezium) : self.type == 'postgres' ? has(self.postgres) : self.type == 'jdbc' ? "
              "has(self.jdbc) : has(self.sql)",
         message="source.type names the source member that must be set",
         message_expression="'source.type ' + self.type + ' needs source.' + self.type",
         check=lambda s: _members(s)[s.type] is not None,
         explain=lambda s: f"source.type {s.type} needs source.{s.type}"),
    Rule(rule="(has(self.files) ? 1 : 0) + (has(self.kafka) ? 1 : 0) + (has(self.hudiIncremental) ? 1 : 0) + "
              "(has(self.debezium) ? 1 : 0) + (has(self.postgres) ? 1 : 0) + (has(self.jdbc) ? 1 : 0) + "
              "(has(self.sql) ? 1 : 0) <= 1",
         message="set only the source member named by source.type (files, kafka, hudiIncremental, debezium, "
                 "postgres, jdbc or sql), not several",
         check=lambda s: sum(v is not None for v in _members(s).values()) <= 1),
)
@model
class SourceSpec:
    """Where records come from: ``type`` names the one member that is set."""
    type: str = spec_field("Source kind.", enum=SOURCE_TYPES)
    files: FilesSource | None = spec_field("Files (type files).", default=None)
    kafka: KafkaSource | None = spec_field("A Kafka topic (type kafka).", default=None)
    hudi_incremental: HudiIncrementalSource | None = spec_field("An upstream Hudi table (type hudiIncremental).",
                                                                default=None)
    debezium: DebeziumSource | None = spec_field("Debezium change events (type debezium).", default=None)
    postgres: PostgresSource | None = spec_field("A PostgreSQL table's changes (type postgres).", default=None)
    jdbc: JdbcSource | None = spec_field("A table pulled over JDBC (type jdbc).", default=None)
    sql: SqlSource | None = spec_field("A SQL query over the pipeline's views (type sql).", default=None)


# --- transformations and checks ----------------------------------------------------------------------
@cel(Rule(rule="(has(self.sql) ? 1 : 0) + (has(self.sqlFileRef) ? 1 : 0) + "
               "(has(self.flatten) && self.flatten ? 1 : 0) == 1",
          message="a transformation is exactly one of sql, sqlFileRef or flatten: true",
          check=lambda t: (t.sql is not None) + (t.sql_file_ref is not None) + (t.flatten is True) == 1))
@model
class Transformation:
    """One step applied to each batch, in order (SqlQueryBasedTransformer, SqlFileBasedTransformer,
    FlatteningTransformer)."""
    name: str | None = spec_field("Name of the step (its options' suffix).", default=None, pattern=LOWER_NAME,
                                  max_length=63)
    sql: str | None = spec_field("A Spark SQL query reading the batch as <SRC>.", default=None,
                                 max_length=SQL_LEN)
    sql_file_ref: ConfigMapKeyRef | None = spec_field("A ConfigMap key holding the SQL.", default=None)
    flatten: bool | None = spec_field("true: flatten nested columns into parent_child columns.", default=None)


@model
class QualityRule:
    """A check each record must pass; failing records go to the error table."""
    name: str = spec_field("Rule name (hoodie.streamer.quality.rule.<name>).", pattern=RULE_NAME, max_length=63)
    expression: str = spec_field("A Spark SQL boolean expression over the record's columns.", min_length=1,
                                 max_length=VALUE_LEN)


_DUPLICATE_RULE = "!self.exists_one(s, s.name == r.name)"


def _first_duplicate(names: list[str]) -> str | None:
    return next((n for n in names if names.count(n) > 1), None)


def _unique_names(what: str) -> Rule:
    """Names of ``what`` (quality rules, views) must be unique; the message names a duplicate."""
    return Rule(
        rule="self.all(r, self.exists_one(s, s.name == r.name))",
        message=f"{what} names must be unique",
        message_expression=f"'{what} ' + self.filter(r, {_DUPLICATE_RULE})[0].name + ' is declared more than "
                           "once: names must be unique'",
        check=lambda items: _first_duplicate([i.name for i in items]) is None,
        explain=lambda items: f"{what} {_first_duplicate([i.name for i in items])} is declared more than once: "
                              "names must be unique",
    )


UNIQUE_RULE_NAMES = _unique_names("quality rule")
UNIQUE_STEP_NAMES = Rule(
    rule="self.all(t, !has(t.name) || self.exists_one(u, has(u.name) && u.name == t.name))",
    message="transformation names must be unique",
    check=lambda steps: _first_duplicate([t.name for t in steps if t.name is not None]) is None,
)


@cel(Rule(rule="has(self.tableRef) != has(self.basePath)",
          message="a view reads one Hudi table: set tableRef (a HudiTable) or basePath, not both",
          check=lambda v: (v.table_ref is None) != (v.base_path is None)))
@model
class ViewSpec:
    """A Hudi table the pipeline's SQL reads by name, as of each batch: silver joins its batch with
    the tables it enriches from, gold aggregates over silver."""
    name: str = spec_field("Name the SQL reads it by.", pattern=LOWER_NAME, max_length=63)
    table_ref: TableRef | None = spec_field("The HudiTable (same namespace).", default=None)
    base_path: str | None = spec_field("Base path of a Hudi table not managed here.", default=None,
                                       pattern=STORAGE_URI, max_length=URI_LEN)


UNIQUE_VIEW_NAMES = _unique_names("view")


# --- running -----------------------------------------------------------------------------------------
@cel(Rule(rule="self.type != 'scheduled' || has(self.schedule)",
          message="mode.type scheduled needs mode.schedule (cron, e.g. '*/15 * * * *')",
          field_path=".schedule",
          check=lambda m: m.type != "scheduled" or m.schedule is not None))
@model
class ModeSpec:
    """Continuous (one long-running job) or scheduled (a job per batch, on a cron schedule)."""
    type: str = spec_field("continuous: batch after batch; scheduled: one batch per run.", default="continuous",
                           enum=("continuous", "scheduled"))
    min_sync_interval_seconds: int = spec_field("continuous: least seconds between two batches' starts.",
                                                default=60, minimum=0)
    schedule: str | None = spec_field("scheduled: cron schedule of the runs.", default=None, pattern=CRON,
                                      max_length=128)
    concurrency_policy: str = spec_field("scheduled: when a run is due while the last one runs, Forbid skips "
                                         "it, Replace stops the old run.", default="Forbid",
                                         enum=("Forbid", "Replace"))


@model
class ErrorTableSpec:
    """Where records that cannot be ingested go, so they don't hold back the others."""
    enabled: bool = spec_field("Write bad records to an error table (else a bad record fails the batch).",
                               default=True)
    base_path: str | None = spec_field("Base path of the error table (default: the table's basePath + "
                                       "'_errors').", default=None, pattern=STORAGE_URI, max_length=URI_LEN)
    max_error_records: int = spec_field("A batch with more bad records fails; -1: no limit.", default=-1,
                                        minimum=-1)
    max_error_fraction: str | None = spec_field("A batch with a larger share of bad records fails (0 to 1, "
                                                "as a string); -1: no limit.", default=None, pattern=FRACTION,
                                                max_length=32)


@model
class UpgradeSpec:
    """What happens when a spec change keeps failing."""
    rollback_on_failure: bool = spec_field("Go back to the last stable spec when the pipeline keeps failing "
                                           "after a change.", default=False)
    stable_after_seconds: int = spec_field("Running this long without failure marks a spec stable.",
                                           default=300, minimum=0)


@model
class MetricsSpec:
    """The job's Prometheus metrics."""
    enabled: bool = spec_field("Serve the streamer's metrics.", default=True)
    port: int = spec_field("Port of the metrics endpoint scraped by Prometheus.", default=9090, minimum=1,
                           maximum=65535)


@cel(Rule(rule="!self.filterDupes || self.operation != 'upsert'",
          message="filterDupes drops incoming records whose key is already in the table, which contradicts "
                  "operation upsert: use operation insert or bulk_insert, or leave filterDupes off",
          field_path=".filterDupes",
          check=lambda p: not (p.filter_dupes and p.operation == "upsert")))
@model
class HudiPipelineSpec:
    """An ingestion pipeline into a HudiTable."""
    table_ref: TableRef = spec_field("The HudiTable written (same namespace).")
    source: SourceSpec = spec_field("Where records come from.")
    transformations: tuple[Transformation, ...] = spec_field("Steps applied to each batch, in order.",
                                                             default=(), max_items=32, rules=(UNIQUE_STEP_NAMES,))
    views: tuple[ViewSpec, ...] = spec_field("Hudi tables the transformations (and a sql source) read by name.",
                                             default=(), max_items=16, rules=(UNIQUE_VIEW_NAMES,))
    quality_rules: tuple[QualityRule, ...] = spec_field("Checks every record must pass.", default=(),
                                                        max_items=64, rules=(UNIQUE_RULE_NAMES,))
    operation: str = spec_field("Write operation.", default="upsert", enum=("upsert", "insert", "bulk_insert"))
    filter_dupes: bool = spec_field("Drop incoming records whose key is already in the table (insert, "
                                    "bulk_insert).", default=False)
    source_ordering_field: str | None = spec_field("Ordering field of incoming records (default: the table's "
                                                   "orderingField).", default=None, pattern=COLUMN,
                                                   max_length=ID_LEN)
    source_limit: int = spec_field("Most data per batch: bytes (files) or events (Kafka); 0: the source's "
                                   "default.", default=0, minimum=0)
    mode: ModeSpec = spec_field("How the job runs.", default=ModeSpec)
    error_table: ErrorTableSpec = spec_field("Bad records.", default=ErrorTableSpec)
    state: str = spec_field("running, or suspended (the job is stopped; it resumes from its checkpoint).",
                            default="running", enum=("running", "suspended"))
    upgrade: UpgradeSpec = spec_field("Spec changes.", default=UpgradeSpec)
    spark: SparkSpec | None = spec_field("Spark settings over the table's (field by field).", default=None)
    metrics: MetricsSpec = spec_field("Prometheus metrics.", default=MetricsSpec)
    options: dict[str, str] = hoodie_options("Extra Hudi and streamer options (hoodie.*).",
                                             "the table storage.credentialsSecret or the source Secret references")

    def upstream_refs(self) -> list[tuple[str, str]]:
        """(spec path, HudiTable name) of every table the pipeline reads by tableRef."""
        refs = []
        incremental = self.source.hudi_incremental
        if incremental is not None and incremental.table_ref is not None:
            refs.append(("spec.source.hudiIncremental.tableRef.name", incremental.table_ref.name))
        refs += [(f"spec.views[{i}].tableRef.name", v.table_ref.name) for i, v in enumerate(self.views)
                 if v.table_ref is not None]
        return refs

    def upstream_paths(self) -> list[str]:
        """Base paths of the tables the pipeline reads that are given by path, not tableRef."""
        incremental = self.source.hudi_incremental
        paths = [incremental.base_path] if incremental is not None and incremental.base_path else []
        return paths + [v.base_path for v in self.views if v.base_path]


@dataclass(frozen=True, kw_only=True)
class HudiPipelineResource:
    """A HudiPipeline as the operator sees it; ``status`` is what the operator last wrote."""
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: HudiPipelineSpec
    status: dict[str, Any] | None = None

