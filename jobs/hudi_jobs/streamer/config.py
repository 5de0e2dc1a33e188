"""The streamer's configuration contract: the job-config file the Kubernetes operator generates,
Hudi Streamer's command line, and the checks that run on both before Spark starts.

Job-config file (YAML or JSON; ``--job-config FILE``): Hudi Streamer's options in camelCase.

    targetBasePath (required)  targetTable (required)  tableType  baseFileFormat  op  filterDupes
    sourceClass  sourceOrderingField  sourceLimit  schemaproviderClass  transformerClass
    checkpoint  ignoreCheckpoint  enableSync  continuous  minSyncIntervalSeconds
    retryOnSourceFailures  retryIntervalSeconds  maxRetryCount  maxPendingCompactions
    disableCompaction  postWriteTerminationStrategyClass  commitOnErrors
    props       a .properties file (relative to the job-config file's folder)
    hoodieConf  a map of hoodie.* (and source/client) options

Each field has the flag Hudi Streamer spells for it (``targetBasePath`` ↔ ``--target-base-path``,
``op`` ↔ ``--op``, ...); a flag given on the command line overrides the file's field. The options
(``StreamerConfig.props``) merge, lowest first: the ``props``/``--props`` file, then ``hoodieConf``,
then ``--hoodie-conf key=value``. Null fields count as absent. Class names are Hudi's, fully
qualified or short; they are kept in their short form.

    targetBasePath: s3://lake/orders
    targetTable: orders
    tableType: MERGE_ON_READ
    sourceClass: org.apache.hudi.utilities.sources.JsonDFSSource
    props: orders.properties
    hoodieConf: {hoodie.streamer.source.dfs.root: "s3://landing/orders"}
"""
from __future__ import annotations

import difflib
import importlib
import json
import pkgutil
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from hudi_engine import config as C
from hudi_engine.config import REGISTRY, ConfigProperty, HoodieConfig
from hudi_engine.errors import HoodieConfigError

from .. import keys as _keys_package
from .. import schema_provider
from ..keys import files as FK
from ..keys import jdbc as JK
from ..keys import kafka as KK
from ..keys import postgres_cdc as PK
from ..keys import schema as SK
from ..keys import streamer as K
from .props import load_properties, read_text

COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"
OPERATIONS = ("UPSERT", "INSERT", "BULK_INSERT")
SRC = "<SRC>"
MASKED = "SENSITIVE_INFO_MASKED"
SECRET_MARKERS = ("password", "secret", "sasl.jaas", "token", "key.password", "basic.auth")


@dataclass(frozen=True)
class StreamerConfig:
    """One validated streamer job. ``props`` holds every option as a string; don't mutate it."""
    target_base_path: str
    target_table: str
    table_type: str = COPY_ON_WRITE
    base_file_format: str = "PARQUET"
    operation: str = "upsert"                  # lower case, as hoodie.datasource.write.operation
    filter_dupes: bool = False
    source_class: str = "JsonDFSSource"
    source_ordering_field: str | None = "ts"
    source_ordering_field_given: bool = False  # False: "ts" is Hudi's default, not the user's choice
    source_limit: int = 0                      # <= 0: the source's own default
    schemaprovider_class: str | None = None
    transformer_classes: tuple[str, ...] = ()  # "Name" or "id:Name"
    checkpoint: str | None = None
    ignore_checkpoint: str | None = None
    enable_sync: bool = False
    continuous: bool = False
    min_sync_interval_seconds: int = 0
    retry_on_source_failures: bool = False
    retry_interval_seconds: int = 30
    max_retry_count: int = 3
    max_pending_compactions: int = 5
    disable_compaction: bool = False
    post_write_termination_strategy_class: str | None = None
    commit_on_errors: bool = False
    props: Mapping[str, str] = field(default_factory=dict)


# --- the settings: one row each, for the job-config file and the command line --------------------
@dataclass(frozen=True)
class Field:
    name: str                  # attribute of StreamerConfig ("props": the properties file)
    job_key: str               # its name in the job-config file
    flag: str                  # Hudi Streamer's flag
    kind: type                 # str, int, bool or list (of str)
    help: str
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.flag} ({self.job_key})"


FIELDS = (
    Field("target_base_path", "targetBasePath", "--target-base-path", str,
          "Base path of the target Hudi table (created on the first run). Required."),
    Field("target_table", "targetTable", "--target-table", str, "Name of the target table. Required."),
    Field("table_type", "tableType", "--table-type", str,
          "COPY_ON_WRITE (default) or MERGE_ON_READ."),
    Field("base_file_format", "baseFileFormat", "--base-file-format", str,
          "Format of base files; only PARQUET."),
    Field("props", "props", "--props", str,
          "A .properties file of hoodie.*, source and client options (include=other.properties "
          "allowed); --hoodie-conf overrides it."),
    Field("operation", "op", "--op", str, "UPSERT (default), INSERT or BULK_INSERT."),
    Field("filter_dupes", "filterDupes", "--filter-dupes", bool,
          "Drop incoming records whose key is already in the table (INSERT/BULK_INSERT only)."),
    Field("source_class", "sourceClass", "--source-class", str,
          "Where records come from: JsonDFSSource (default), CsvDFSSource, ParquetDFSSource, "
          "AvroDFSSource, JsonKafkaSource, AvroKafkaSource, HoodieIncrSource, JdbcSource, SqlSource, "
          "PostgresDebeziumSource, MySqlDebeziumSource, or this platform's PostgresCdcSource "
          "(a PostgreSQL table's changes by logical decoding, without Kafka)."),
    Field("source_ordering_field", "sourceOrderingField", "--source-ordering-field", str,
          "Field deciding which of two records with the same key wins (default: ts).",
          aliases=("--source-ordering-fields",)),
    Field("source_limit", "sourceLimit", "--source-limit", int,
          "Most data one batch reads: bytes for files, events for Kafka, commits for "
          "HoodieIncrSource; <= 0 means the source's default."),
    Field("schemaprovider_class", "schemaproviderClass", "--schemaprovider-class", str,
          "FilebasedSchemaProvider or SchemaRegistryProvider; default: the source's schema."),
    Field("transformer_classes", "transformerClass", "--transformer-class", list,
          "Transformers applied in order, comma separated or repeated: SqlQueryBasedTransformer, "
          "SqlFileBasedTransformer, FlatteningTransformer; 'id:Name' gives each its own "
          "options (<option>.<id>)."),
    Field("checkpoint", "checkpoint", "--checkpoint", str, "Resume from this source checkpoint (once)."),
    Field("ignore_checkpoint", "ignoreCheckpoint", "--ignore-checkpoint", str,
          "A new unique value (e.g. a timestamp) makes the next run ignore the stored checkpoint."),
    Field("enable_sync", "enableSync", "--enable-sync", bool,
          "Sync the table to the Hive Metastore after each commit.", aliases=("--enable-hive-sync",)),
    Field("continuous", "continuous", "--continuous", bool,
          "Run fetch -> transform -> write in a loop instead of once."),
    Field("min_sync_interval_seconds", "minSyncIntervalSeconds", "--min-sync-interval-seconds", int,
          "Continuous mode: least seconds between the starts of two rounds (default 0)."),
    Field("retry_on_source_failures", "retryOnSourceFailures", "--retry-on-source-failures", bool,
          "Retry a failed source fetch."),
    Field("retry_interval_seconds", "retryIntervalSeconds", "--retry-interval-seconds", int,
          "Seconds between fetch retries (default 30)."),
    Field("max_retry_count", "maxRetryCount", "--max-retry-count", int,
          "Fetch retries before giving up (default 3)."),
    Field("max_pending_compactions", "maxPendingCompactions", "--max-pending-compactions", int,
          "Merge-on-read: writing waits while this many compactions are pending (default 5)."),
    Field("disable_compaction", "disableCompaction", "--disable-compaction", bool,
          "Merge-on-read: don't compact (another job does)."),
    Field("post_write_termination_strategy_class", "postWriteTerminationStrategyClass",
          "--post-write-termination-strategy-class", str,
          "NoNewDataTerminationStrategy stops continuous mode after "
          "max.rounds.without.new.data.to.shutdown (default 3) rounds without new data."),
    Field("commit_on_errors", "commitOnErrors", "--commit-on-errors", bool,
          "Without an error table, drop bad records and commit the rest instead of failing the batch."),
)
HOODIE_CONF = "hoodieConf"      # job-config map; on the command line, repeated --hoodie-conf k=v
_BY_JOB_KEY = {f.job_key: f for f in FIELDS}
_BY_NAME = {f.name: f for f in FIELDS}
_REQUIRED = ("target_base_path", "target_table")


# --- class names ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Requirement:
    """An option a class cannot run without. ``key`` is a plain string for a client option that
    is passed through, not defined (bootstrap.servers)."""
    key: ConfigProperty | str
    why: str

    @property
    def name(self) -> str:
        return self.key if isinstance(self.key, str) else self.key.key

    def given(self, props: Mapping[str, str]) -> bool:
        spellings = (self.key,) if isinstance(self.key, str) else (self.key.key, *self.key.alternatives)
        return any(props.get(k) for k in spellings)


@dataclass(frozen=True)
class SourceSpec:
    module: str
    class_name: str
    hudi_package: str
    requires: tuple[Requirement, ...]


_SOURCES_PKG = "org.apache.hudi.utilities.sources."
_DEBEZIUM_PKG = "org.apache.hudi.utilities.sources.debezium."
_DFS_ROOT = Requirement(FK.ROOT, "the folder whose files are read")
_KAFKA = (Requirement(KK.TOPIC, "the topic to read"),
          Requirement("bootstrap.servers", "the Kafka brokers, host:port,..."))
_INCR = (Requirement(K.HOODIEINCR_PATH, "the upstream Hudi table to read"),)
SOURCES: dict[str, SourceSpec] = {
    "JsonDFSSource": SourceSpec("hudi_jobs.sources.files", "JsonDFSSource", _SOURCES_PKG, (_DFS_ROOT,)),
    "CsvDFSSource": SourceSpec("hudi_jobs.sources.files", "CsvDFSSource", _SOURCES_PKG, (_DFS_ROOT,)),
    "ParquetDFSSource": SourceSpec("hudi_jobs.sources.files", "ParquetDFSSource", _SOURCES_PKG, (_DFS_ROOT,)),
    "AvroDFSSource": SourceSpec("hudi_jobs.sources.files", "AvroDFSSource", _SOURCES_PKG, (_DFS_ROOT,)),
    "JsonKafkaSource": SourceSpec("hudi_jobs.sources.kafka", "JsonKafkaSource", _SOURCES_PKG, _KAFKA),
    "AvroKafkaSource": SourceSpec("hudi_jobs.sources.kafka", "AvroKafkaSource", _SOURCES_PKG, _KAFKA),
    "HoodieIncrSource": SourceSpec("hudi_jobs.sources.hudi_incr", "HoodieIncrSource", _SOURCES_PKG, _INCR),
    "PostgresDebeziumSource": SourceSpec("hudi_jobs.sources.debezium", "PostgresDebeziumSource",
                                         _DEBEZIUM_PKG, _KAFKA),
    "MySqlDebeziumSource": SourceSpec("hudi_jobs.sources.debezium", "MySqlDebeziumSource",
                                      _DEBEZIUM_PKG, _KAFKA),
    "JdbcSource": SourceSpec("hudi_jobs.sources.jdbc", "JdbcSource", _SOURCES_PKG,
                             (Requirement(JK.URL, "the database, e.g. jdbc:postgresql://host:5432/db"),
                              Requirement(JK.TABLE_NAME, "the table to pull"))),
    "SqlSource": SourceSpec("hudi_jobs.sources.sql", "SqlSource", _SOURCES_PKG,
                            (Requirement(K.SOURCE_SQL, "the query whose rows are the batch"),)),
    "PostgresCdcSource": SourceSpec("hudi_jobs.sources.postgres_cdc", "PostgresCdcSource", "",
                                    (Requirement(PK.URL, "the PostgreSQL database"),
                                     Requirement(PK.TABLE, "the table whose changes are captured"))),
}
SQL_QUERY, SQL_FILE, FLATTENING = "SqlQueryBasedTransformer", "SqlFileBasedTransformer", "FlatteningTransformer"
_TRANSFORM_PKG = "org.apache.hudi.utilities.transform."
TRANSFORMERS = (SQL_QUERY, SQL_FILE, FLATTENING)
NO_NEW_DATA = "NoNewDataTerminationStrategy"
_TERMINATION_PKGS = ("org.apache.hudi.utilities.streamer.", "org.apache.hudi.utilities.deltastreamer.")
_RULE_NAME = re.compile(r"[A-Za-z0-9_]+")


def canonical_source(name: str) -> str:
    """Short name of a source class given short or fully qualified (as Hudi spells it)."""
    known = {spec.hudi_package + short: short for short, spec in SOURCES.items()}
    return _canonical(name, set(SOURCES), known, "--source-class")


def split_transformer(entry: str) -> tuple[str | None, str]:
    """(identifier or None, class name) of a ``--transformer-class`` entry ``[id:]Class``."""
    parts = entry.split(":")
    if len(parts) > 2:
        raise HoodieConfigError(f"--transformer-class {entry!r} has more than one ':'; write id:Class")
    if len(parts) == 2 and not parts[0].strip():
        raise HoodieConfigError(f"--transformer-class {entry!r} has an empty identifier before ':'")
    return (parts[0].strip(), parts[1].strip()) if len(parts) == 2 else (None, parts[0].strip())


def canonical_transformer(entry: str) -> str:
    """``[id:]Short`` of a transformer entry whose class is short or fully qualified."""
    ident, name = split_transformer(entry)
    short = _canonical(name, set(TRANSFORMERS), {_TRANSFORM_PKG + t: t for t in TRANSFORMERS},
                       "--transformer-class")
    return f"{ident}:{short}" if ident else short


def transformer_option(props: Mapping[str, str], prop: ConfigProperty, ident: str | None) -> str | None:
    """An option as one transformer of the chain sees it: like Hudi's ChainedTransformer, with an
    identifier ``<key>.<id>`` overrides ``<key>`` (for each spelling of the key, newest first)."""
    for key in (prop.key, *prop.alternatives):
        for candidate in ((f"{key}.{ident}", key) if ident else (key,)):
            if props.get(candidate):
                return props[candidate]
    return None


def canonical_termination_strategy(name: str) -> str:
    return _canonical(name, {NO_NEW_DATA}, {pkg + NO_NEW_DATA: NO_NEW_DATA for pkg in _TERMINATION_PKGS},
                      "--post-write-termination-strategy-class")


def _canonical(name: str, shorts: set[str], qualified: Mapping[str, str], flag: str) -> str:
    name = name.strip()
    if name in shorts:
        return name
    if name in qualified:
        return qualified[name]
    nearest = difflib.get_close_matches(name, [*shorts, *qualified], n=1)
    hint = f"did you mean {nearest[0]}? " if nearest else ""
    raise HoodieConfigError(f"{flag} {name!r} is not supported; {hint}supported: "
                            f"{', '.join(sorted(shorts))} (short or fully qualified Hudi names)")


# --- the job-config file -------------------------------------------------------------------------
def load_job_config(path: str) -> dict[str, Any]:
    """The settings of a job-config file, by StreamerConfig field name (plus ``props``, made
    relative to the file's folder, and ``hoodie_conf``)."""
    text = read_text(path, "job config")
    data = parse_document(text, path)
    return job_fields(data, path, posixpath.dirname(path))


def job_fields(data: Any, where: str, base_dir: str = "") -> dict[str, Any]:
    """Settings of an already parsed job config (the operator validates what it generates)."""
    if not isinstance(data, Mapping):
        raise HoodieConfigError(f"job config {where} must be a mapping of fields (targetBasePath: ...), "
                                f"not {type(data).__name__}")
    fields: dict[str, Any] = {}
    for key, value in data.items():
        if key == HOODIE_CONF:
            fields["hoodie_conf"] = _hoodie_conf(value, where)
        elif key in _BY_JOB_KEY:
            if value is not None:
                fields[_BY_JOB_KEY[key].name] = value
        else:
            nearest = difflib.get_close_matches(str(key), [*_BY_JOB_KEY, HOODIE_CONF], n=1)
            hint = f"did you mean {nearest[0]!r}?" if nearest else \
                f"valid fields: {', '.join([*_BY_JOB_KEY, HOODIE_CONF])}"
            raise HoodieConfigError(f"unknown field {key!r} in job config {where}; {hint}")
    props_path = fields.get("props")
    if isinstance(props_path, str) and base_dir and "://" not in props_path and not props_path.startswith("/"):
        fields["props"] = posixpath.join(base_dir, props_path)
    return fields


def parse_document(text: str, path: str) -> Any:
    as_json = path.lower().endswith(".json") or (
        not path.lower().endswith((".yaml", ".yml")) and text.lstrip().startswith("{"))
    if as_json:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise HoodieConfigError(f"job config {path} is not valid JSON: {exc}") from None
    import yaml
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise HoodieConfigError(f"job config {path} is not valid YAML: {exc}") from None


def _hoodie_conf(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise HoodieConfigError(f"{HOODIE_CONF} in job config {where} must be a map of option: value")
    conf = {}
    for key, item in value.items():
        if isinstance(item, bool):
            conf[str(key)] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            conf[str(key)] = str(item)
        else:
            raise HoodieConfigError(f"{HOODIE_CONF}.{key} in job config {where} must be a string, "
                                    f"number or boolean, not {type(item).__name__}")
    return conf


# --- resolving and validating --------------------------------------------------------------------
def resolve(file_fields: Mapping[str, Any], flag_fields: Mapping[str, Any]) -> StreamerConfig:
    """The validated config from the job-config file's settings and the command line's (which
    win), both by field name; ``hoodie_conf`` of each is a dict of options. Reads ``props``."""
    settings = {**file_fields, **flag_fields}
    problems: list[str] = []
    coerced = {f.name: _coerce(f, settings[f.name], problems) for f in FIELDS if f.name in settings}
    values = {name: value for name, value in coerced.items() if value is not None}
    props = load_properties(values.pop("props")) if "props" in values else {}
    props.update(file_fields.get("hoodie_conf", {}))
    props.update(flag_fields.get("hoodie_conf", {}))

    for name in _REQUIRED:
        if not values.get(name):
            problems.append(f"{_BY_NAME[name].label} is required")
    values["table_type"] = _table_type(values.get("table_type"), props, problems)
    _check_choices(values, problems)
    _check_numbers(values, problems)
    _canonicalize_classes(values, problems)
    values["source_ordering_field_given"] = "source_ordering_field" in values
    _check_props(values, props, problems)
    if problems:
        raise HoodieConfigError(problems[0] if len(problems) == 1 else
                                f"the streamer configuration has {len(problems)} problems:\n  - "
                                + "\n  - ".join(problems))
    return StreamerConfig(props=props, **values)


def _coerce(f: Field, value: Any, problems: list[str]) -> Any:
    """A file's or a flag's value as the field's type; flags arrive as strings (lists: of
    comma-separated strings)."""
    if f.kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        problems.append(f"{f.label} must be true or false, got {value!r}")
    elif f.kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            problems.append(f"{f.label} must be a whole number, got {value!r}")
    elif f.kind is list:
        items = value.split(",") if isinstance(value, str) else value
        if isinstance(items, list) and all(isinstance(i, str) for i in items):
            return tuple(part.strip() for item in items for part in item.split(",") if part.strip())
        problems.append(f"{f.label} must be a list of class names or a comma-separated string, got {value!r}")
    else:
        if isinstance(value, str):
            return value.strip() or None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        problems.append(f"{f.label} must be a string, got {value!r}")
    return None


def _table_type(given: str | None, props: Mapping[str, str], problems: list[str]) -> str:
    """``--table-type``, else the table type in the options, else COPY_ON_WRITE."""
    in_props = next(((k, props[k]) for k in (C.TABLE_TYPE.key, *C.TABLE_TYPE.alternatives) if props.get(k)), None)
    if given is None:
        return in_props[1].upper() if in_props else COPY_ON_WRITE
    if in_props and in_props[1].upper() != given.upper():
        problems.append(f"{_BY_NAME['table_type'].label} is {given} but the options say "
                        f"{in_props[0]}={in_props[1]}; keep one of them")
    return given.upper()


def _check_choices(values: dict[str, Any], problems: list[str]) -> None:
    if values["table_type"] not in (COPY_ON_WRITE, MERGE_ON_READ):
        problems.append(f"{_BY_NAME['table_type'].label} {values['table_type']!r} is not valid; "
                        f"use {COPY_ON_WRITE} or {MERGE_ON_READ}")
    if values.get("base_file_format"):
        values["base_file_format"] = values["base_file_format"].upper()
        if values["base_file_format"] != "PARQUET":
            problems.append(f"{_BY_NAME['base_file_format'].label} {values['base_file_format']!r} "
                            f"is not supported; only PARQUET base files are written here")
    op = (values.get("operation") or "UPSERT").upper()
    if op not in OPERATIONS:
        problems.append(f"{_BY_NAME['operation'].label} {op!r} is not supported by the streamer; "
                        f"use {', '.join(OPERATIONS)}")
    elif op == "UPSERT" and values.get("filter_dupes"):
        problems.append("'--filter-dupes' (filterDupes) needs to be disabled when '--op' is 'UPSERT' "
                        "to ensure updates are not missed; use --op INSERT or drop --filter-dupes")
    values["operation"] = op.lower()


def _check_numbers(values: dict[str, Any], problems: list[str]) -> None:
    lowest = {"min_sync_interval_seconds": 0, "retry_interval_seconds": 0, "max_retry_count": 1,
              "max_pending_compactions": 1}
    for name, low in lowest.items():
        value = values.get(name)
        if value is not None and value < low:
            problems.append(f"{_BY_NAME[name].label} must be at least {low}, got {value}")


def _canonicalize_classes(values: dict[str, Any], problems: list[str]) -> None:
    def attempt(canonical, value):
        try:
            return canonical(value)
        except HoodieConfigError as exc:
            problems.append(str(exc))
            return None

    if "source_class" in values:
        values["source_class"] = attempt(canonical_source, values["source_class"])
    if "schemaprovider_class" in values:
        values["schemaprovider_class"] = attempt(schema_provider.provider_name, values["schemaprovider_class"])
    if "post_write_termination_strategy_class" in values:
        values["post_write_termination_strategy_class"] = attempt(
            canonical_termination_strategy, values["post_write_termination_strategy_class"])
    entries = [attempt(canonical_transformer, e) for e in values.get("transformer_classes", ())]
    values["transformer_classes"] = tuple(e for e in entries if e)
    idents = [split_transformer(e)[0] for e in values["transformer_classes"]]
    if any(idents) and not all(idents):
        problems.append("--transformer-class (transformerClass): either all transformers have an "
                        "identifier (id:Class) or none has")
    duplicated = sorted({i for i in idents if i and idents.count(i) > 1})
    if duplicated:
        problems.append(f"--transformer-class (transformerClass): identifier(s) {', '.join(duplicated)} "
                        f"used more than once; give each transformer its own")


def _check_props(values: dict[str, Any], props: Mapping[str, str], problems: list[str]) -> None:
    """Options the chosen classes need, and every defined option's type, choices and range."""
    source = values.get("source_class", "JsonDFSSource")     # None: not a known class (reported)
    _check_requirements(source, values.get("schemaprovider_class"), props, problems)
    _check_transformer_options(values["transformer_classes"], props, problems)
    _check_quality_rules(props, problems)
    problems.extend(_typed_option_problems(props))
    _check_option_ranges(source, values.get("post_write_termination_strategy_class"), props, problems)


def _check_requirements(source: str | None, provider: str | None, props: Mapping[str, str],
                        problems: list[str]) -> None:
    if source in SOURCES:
        missing = [r for r in SOURCES[source].requires if not r.given(props)]
        if missing:
            problems.append(f"{source} needs " + " and ".join(f"{r.name} ({r.why})" for r in missing)
                            + "; set them in --props, hoodieConf or --hoodie-conf")
    needs = {schema_provider.FILE_BASED: Requirement(SK.SOURCE_SCHEMA_FILE, "the Avro schema file to read"),
             schema_provider.REGISTRY: Requirement(SK.REGISTRY_URL, "the schema registry URL of the subject")}
    if provider in needs and not needs[provider].given(props):
        problems.append(f"{provider} needs {needs[provider].name} ({needs[provider].why})")


def _check_transformer_options(entries: tuple[str, ...], props: Mapping[str, str], problems: list[str]) -> None:
    for entry in entries:
        ident, name = split_transformer(entry)
        suffix = f".{ident}" if ident else ""
        if name == SQL_QUERY:
            query = transformer_option(props, K.TRANSFORMER_SQL, ident)
            if not query:
                problems.append(f"{entry} needs {K.TRANSFORMER_SQL.key}{suffix}: the SQL query, "
                                f"reading the batch as {SRC}")
            elif SRC not in query:
                problems.append(f"{K.TRANSFORMER_SQL.key}{suffix} must read the batch as {SRC} "
                                f"(e.g. SELECT * FROM {SRC}), got {query!r}")
        elif name == SQL_FILE and not transformer_option(props, K.TRANSFORMER_SQL_FILE, ident):
            problems.append(f"{entry} needs {K.TRANSFORMER_SQL_FILE.key}{suffix}: the file of SQL "
                            f"statements to run")


def _check_quality_rules(props: Mapping[str, str], problems: list[str]) -> None:
    for key, expression in props.items():
        if key.startswith(K.QUALITY_RULE_PREFIX):
            if not _RULE_NAME.fullmatch(key[len(K.QUALITY_RULE_PREFIX):]):
                problems.append(f"quality rule {key}: the name after {K.QUALITY_RULE_PREFIX} may only "
                                f"have letters, digits and '_'")
            elif not expression.strip():
                problems.append(f"quality rule {key} is empty; give a SQL boolean expression, "
                                f"e.g. amount >= 0")


def _check_option_ranges(source: str | None, termination: str | None, props: Mapping[str, str],
                         problems: list[str]) -> None:
    ranges = [(K.ERROR_TABLE_MAX_ERROR_FRACTION, lambda v: v <= 1, "-1 (never fail) or a fraction 0..1")]
    if source == "HoodieIncrSource":
        ranges.append((K.HOODIEINCR_NUM_INSTANTS, lambda v: v >= 1, "at least 1"))
    if termination == NO_NEW_DATA:
        ranges.append((K.MAX_ROUNDS_WITHOUT_NEW_DATA, lambda v: v >= 1, "at least 1"))
    cfg = HoodieConfig(props)
    for prop, ok, expected in ranges:
        try:
            value = cfg.get(prop)
        except HoodieConfigError:
            continue                      # reported by the type check
        if not ok(value):
            problems.append(f"{prop.key} must be {expected}, got {value}")


def _typed_option_problems(props: Mapping[str, str]) -> list[str]:
    """Type and choice errors of every option some keys module defines (engine and jobs)."""
    for module in pkgutil.iter_modules(_keys_package.__path__):
        importlib.import_module(f"{_keys_package.__name__}.{module.name}")
    problems = []
    cfg = HoodieConfig(props)
    for prop in REGISTRY.values():
        if cfg.contains(prop):
            try:
                cfg.get(prop)
            except HoodieConfigError as exc:
                problems.append(str(exc))
    return problems


# --- helpers for the runner and the operator -----------------------------------------------------
def check_record_key(cfg: StreamerConfig, table_exists: bool) -> None:
    """A new table needs its record key before the first batch is fetched; an existing one has
    it in hoodie.properties."""
    if not table_exists and not HoodieConfig(cfg.props).get_str(C.RECORDKEY_FIELDS):
        raise HoodieConfigError(
            f"{cfg.target_base_path} is not a Hudi table yet, so the record key must be given: set "
            f"{C.RECORDKEY_FIELDS.alternatives[0]} (the field(s) identifying a record, e.g. id) in "
            f"--props, hoodieConf or --hoodie-conf")


def mask_secrets(props: Mapping[str, str]) -> dict[str, str]:
    """Options fit to print: values of keys that look like credentials replaced."""
    return {k: MASKED if any(m in k.lower() for m in SECRET_MARKERS) else v for k, v in props.items()}


def to_job_config(cfg: StreamerConfig, mask: bool = True) -> dict[str, Any]:
    """The config as a job-config document; unmasked, loading it gives ``cfg`` back."""
    document: dict[str, Any] = {}
    for f in FIELDS:
        if f.name == "props" or (f.name == "source_ordering_field" and not cfg.source_ordering_field_given):
            continue
        value = getattr(cfg, f.name)
        document[f.job_key] = value.upper() if f.name == "operation" else \
            list(value) if f.kind is list else value
    document[HOODIE_CONF] = mask_secrets(cfg.props) if mask else dict(cfg.props)
    return document

