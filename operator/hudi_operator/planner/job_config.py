"""HudiTable + HudiPipeline → the streamer's job-config (camelCase fields and a ``hoodieConf`` map),
checked by the streamer's own ``job_fields`` + ``resolve`` so it can never drift from what the job
accepts. Credentials only ever appear as ``${secret:<name>/<key>}`` placeholders the job resolves
from the Secret mounted beside it."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from hudi_engine import config as C
from hudi_engine.config import ConfigProperty
from hudi_engine.errors import HoodieConfigError
from hudi_jobs import schema_provider
from hudi_jobs.keys import files as FK
from hudi_jobs.keys import jdbc as JK
from hudi_jobs.keys import kafka as KK
from hudi_jobs.keys import metrics as MK
from hudi_jobs.keys import postgres_cdc as PK
from hudi_jobs.keys import schema as SK
from hudi_jobs.keys import streamer as K
from hudi_jobs.streamer import config as streamer_config

from ..api.table import MERGE_ON_READ
from .concurrency import Concurrency
from .errors import PlanError
from .schema import columns_avro
from .settings import OperatorSettings
from .spark_app import Mounts

SOURCE_SCHEMA_FILE = "source-schema.avsc"   # beside job-config.yaml, from the table's declared columns
_FILE_SOURCES = {"json": "JsonDFSSource", "csv": "CsvDFSSource", "parquet": "ParquetDFSSource",
                 "avro": "AvroDFSSource"}
_KAFKA_SOURCES = {"json": "JsonKafkaSource", "avro": "AvroKafkaSource"}
_DEBEZIUM_SOURCES = {"postgres": "PostgresDebeziumSource", "mysql": "MySqlDebeziumSource"}


@dataclass(frozen=True)
class JobConfig:
    """A job-config document, the files that go beside it in its ConfigMap, and what its job mounts."""
    document: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    mounts: Mounts = Mounts()


def secret_placeholder(ref) -> str:
    """How a job-config names a Secret's key: resolved by the job from ``$HUDI_SECRETS_DIR``."""
    return f"${{secret:{ref.name}/{ref.key}}}"


def _write_key(prop: ConfigProperty) -> str:
    """The writer's spelling of a key (hoodie.datasource.write.*), as Hudi users write it."""
    return next((k for k in (prop.key, *prop.alternatives) if k.startswith("hoodie.datasource.write.")), prop.key)


def _flag(value: bool) -> str:
    return "true" if value else "false"


# --- the table -----------------------------------------------------------------------------------
def table_options(table) -> dict[str, str]:
    """The ``hoodie.*`` options a HudiTable's settings stand for (not its spec.options)."""
    spec = table.spec
    opts = {
        C.TABLE_NAME.key: spec.effective_table_name(table.metadata.name),
        C.DATABASE_NAME.key: spec.database,
        _write_key(C.RECORDKEY_FIELDS): ",".join(spec.record_key),
        _write_key(C.PARTITION_FIELDS): ",".join(spec.partition_fields),
        C.KEYGEN_TYPE.key: spec.effective_key_generator(),
        C.HIVE_STYLE_PARTITIONING.key: _flag(spec.hive_style_partitioning),
        C.INDEX_TYPE.key: spec.index.type,
        C.SIMPLE_INDEX_UPDATE_PARTITION_PATH.key: _flag(spec.index.update_partition_path),
        C.BLOOM_INDEX_UPDATE_PARTITION_PATH.key: _flag(spec.index.update_partition_path),
        C.RECORD_INDEX_UPDATE_PARTITION_PATH.key: _flag(spec.index.update_partition_path),
        C.BUCKET_INDEX_NUM_BUCKETS.key: str(spec.index.num_buckets),
        **metadata_options(spec.metadata_table),
        C.PARQUET_MAX_FILE_SIZE.key: str(spec.file_sizing.max_file_size_bytes),
        C.PARQUET_SMALL_FILE_LIMIT.key: str(spec.file_sizing.small_file_limit_bytes),
        C.CDC_ENABLED.key: _flag(spec.cdc.enabled),
        C.KEEP_MIN_COMMITS.key: str(spec.services.archival.min_commits),
        C.KEEP_MAX_COMMITS.key: str(spec.services.archival.max_commits),
        **cleaning_options(spec.services.cleaning),
        **clustering_options(table),
        # the writer cleans only when the table says inline; a scheduled job or nobody otherwise
        C.CLEAN_AUTOMATIC.key: _flag(spec.services.cleaning.mode == "inline"),
    }
    if spec.services.indexing.mode == "scheduled":
        opts[C.METADATA_INDEX_ASYNC.key] = "true"       # writers leave indexes they lack to the indexing job
    if spec.cdc.enabled:
        opts[C.CDC_LOGGING_MODE.key] = spec.cdc.logging_mode
    if spec.ordering_field:
        opts[_write_key(C.PRECOMBINE_FIELD)] = spec.ordering_field
    if spec.effective_key_generator() == "TIMESTAMP" and not C.HoodieConfig(spec.options).contains(C.TIMESTAMP_TYPE):
        raise PlanError("spec.keyGenerator", f"TIMESTAMP needs {C.TIMESTAMP_TYPE.key} (and its date formats) "
                                             "in spec.options, e.g. EPOCHMILLISECONDS")
    if spec.table_type == MERGE_ON_READ and spec.services.compaction.mode == "inline":
        opts.update(compaction_triggers(spec.services.compaction))
    opts.update(catalog_options(table))
    return opts


def metadata_options(metadata) -> dict[str, str]:
    opts = {C.METADATA_ENABLE.key: _flag(metadata.enabled),
            C.METADATA_COLUMN_STATS_ENABLE.key: _flag(metadata.column_stats),
            C.METADATA_BLOOM_FILTER_ENABLE.key: _flag(metadata.bloom_filters),
            C.METADATA_RECORD_INDEX_ENABLE.key: _flag(metadata.record_index)}
    if metadata.column_stats_columns:
        opts[C.METADATA_COLUMN_STATS_COLUMNS.key] = ",".join(metadata.column_stats_columns)
    return opts


def compaction_triggers(compaction) -> dict[str, str]:
    """When a compaction is due, for whichever job compacts (the writer inline, or the service)."""
    return {C.COMPACT_TRIGGER_STRATEGY.key: compaction.trigger_strategy,
            C.COMPACT_MAX_DELTA_COMMITS.key: str(compaction.max_delta_commits),
            C.COMPACT_MAX_DELTA_SECONDS.key: str(compaction.max_delta_seconds)}


LAYOUTS = {"LINEAR": "linear", "ZORDER": "z-order", "HILBERT": "hilbert"}


def clustering_options(table) -> dict[str, str]:
    """How the table clusters, for whichever job does (writers inline, or the service job, which
    waits for hoodie.clustering.async.max.commits commits since the last clustering)."""
    spec = table.spec
    clustering = spec.services.clustering
    if clustering.mode == "disabled":
        return {}
    opts = {C.LAYOUT_OPTIMIZE_STRATEGY.key: LAYOUTS[clustering.layout],
            C.CLUSTERING_TARGET_FILE_MAX_BYTES.key: str(clustering.target_file_size_bytes
                                                        or spec.file_sizing.max_file_size_bytes),
            C.CLUSTERING_INLINE.key if clustering.mode == "inline" else C.CLUSTERING_ASYNC_ENABLED.key: "true"}
    if clustering.sort_columns:
        opts[C.CLUSTERING_SORT_COLUMNS.key] = ",".join(clustering.sort_columns)
    return opts


def cleaning_options(cleaning) -> dict[str, str]:
    """The cleaner policy, for whichever job cleans (the writer inline, or the service)."""
    return {C.CLEANER_POLICY.key: cleaning.policy,
            C.CLEANER_COMMITS_RETAINED.key: str(cleaning.retain_commits),
            C.CLEANER_FILE_VERSIONS_RETAINED.key: str(cleaning.retain_file_versions),
            C.CLEANER_HOURS_RETAINED.key: str(cleaning.retain_hours)}


def catalog_options(table) -> dict[str, str]:
    """The Hive sync options of the table's catalog target (none without one)."""
    targets = table.spec.catalog_sync
    if not targets:
        return {}
    if len(targets) > 1:
        raise PlanError("spec.catalogSync[1]", "one catalog target per table is supported for now; keep one "
                                               "(a metastore with several URIs is one target: thrift://a,thrift://b)")
    target = targets[0]
    return {C.HIVE_SYNC_MODE.key: target.sync_mode,
            C.HIVE_SYNC_METASTORE_URIS.key: target.metastore_uris,
            C.HIVE_SYNC_DATABASE.key: target.database or table.spec.database,
            C.HIVE_SYNC_TABLE.key: target.table or table.spec.effective_table_name(table.metadata.name)}


def storage_spark_conf(table) -> dict[str, str]:
    """The Hadoop S3A settings of spec.storage, as every job of the table gets them in its Spark
    conf (the engine and the user's own Spark code read them there); credentials never: they come
    from spec.storage.credentialsSecret's environment or the service account's identity."""
    storage = table.spec.storage
    if storage is None:
        return {}
    conf = {"spark.hadoop.fs.s3a.endpoint": storage.endpoint, "spark.hadoop.fs.s3a.endpoint.region": storage.region,
            "spark.hadoop.fs.s3a.path.style.access": "true" if storage.path_style_access else None}
    return {k: v for k, v in conf.items() if v}


def table_mounts(table) -> Mounts:
    storage = table.spec.storage
    return Mounts(env_secret=storage.credentials_secret if storage else None)


def service_account(table, spark, settings: OperatorSettings) -> str | None:
    """storage.serviceAccountName (workload identity for the data), else the Spark settings' one,
    else the installation's (the chart's account allowed to run executors)."""
    storage = table.spec.storage
    return ((storage.service_account_name if storage else None) or spark.service_account_name
            or settings.service_account)


# --- the pipeline --------------------------------------------------------------------------------
def pipeline_job_config(table, pipeline, settings: OperatorSettings, upstream=None,
                        concurrency: Concurrency | None = None) -> JobConfig:
    """The streamer job-config of ``pipeline`` writing ``table``; ``upstream`` maps the names of
    the HudiTables the pipeline reads by tableRef to them; ``concurrency`` the table's decision
    (None: a single writer)."""
    tspec, spec = table.spec, pipeline.spec
    if spec.table_ref.name != table.metadata.name:
        raise PlanError("spec.tableRef.name", f"names HudiTable {spec.table_ref.name}, but the table given is "
                                              f"{table.metadata.name}")
    upstream = upstream or {}
    source_class, source_opts, mounts = _source(spec.source, upstream)
    transformers, transform_opts, transform_mounts = _transformers(spec.transformations, settings)
    files: dict[str, str] = {}
    schema_opts, schema_mounts = {}, Mounts()
    # Declared columns are the records' schema as a file or Kafka source delivers them only when no
    # step reshapes them; with transformations the table's schema comes from the transformed batch.
    # (Debezium and Hudi-incremental sources bring their own.)
    declared = tspec.schema is not None and spec.source.type in ("files", "kafka") and not spec.transformations
    if declared:
        schema_opts, schema_mounts, files = _declared_schema(table, settings)

    concurrency = concurrency or Concurrency("singleWriter", ())
    inline_scheduler = concurrency.keeps_inline_scheduling(pipeline.metadata.name)
    hoodie_conf = {**table_options(table), **source_opts, **_views(spec.views, upstream), **transform_opts,
                   **schema_opts,
                   **_quality_rules(spec.quality_rules), **_error_table(tspec, spec.error_table),
                   **_metrics(spec.metrics), **concurrency.options, **tspec.options, **spec.options}
    if concurrency.shared_by_pipelines():                 # resume from its own source position only
        hoodie_conf.setdefault(K.MULTIWRITER_CHECKPOINT_ID.key, pipeline.metadata.name)
    if not inline_scheduler and tspec.services.clustering.mode == "inline":
        hoodie_conf[C.CLUSTERING_INLINE.key] = "false"    # the table's first pipeline clusters it
    document: dict[str, Any] = {
        "targetBasePath": tspec.base_path,
        "targetTable": tspec.effective_table_name(table.metadata.name),
        "tableType": tspec.table_type,
        "op": spec.operation.upper(),
        "filterDupes": spec.filter_dupes,
        "sourceClass": source_class,
    }
    ordering = spec.source_ordering_field or tspec.ordering_field
    if ordering:
        document["sourceOrderingField"] = ordering
    if spec.source_limit > 0:
        document["sourceLimit"] = spec.source_limit
    if declared:
        document["schemaproviderClass"] = schema_provider.FILE_BASED
    if transformers:
        document["transformerClass"] = transformers
    document["continuous"] = spec.mode.type == "continuous"
    if document["continuous"]:
        document["minSyncIntervalSeconds"] = spec.mode.min_sync_interval_seconds
    if tspec.table_type == MERGE_ON_READ and (tspec.services.compaction.mode != "inline" or not inline_scheduler):
        document["disableCompaction"] = True          # a scheduled service, another pipeline, or nothing compacts
    if tspec.catalog_sync:
        document["enableSync"] = True
    document[streamer_config.HOODIE_CONF] = hoodie_conf
    check_streamer_config(document)
    return JobConfig(document, files, table_mounts(table) | mounts | transform_mounts | schema_mounts)


def check_streamer_config(document: dict[str, Any]) -> None:
    """The streamer's own validation of a generated job-config; a failure is a PlanError on the spec
    (the options of table and pipeline are where a generated config can go wrong)."""
    try:
        streamer_config.resolve(streamer_config.job_fields(document, "generated by the operator"), {})
    except HoodieConfigError as exc:
        raise PlanError("spec", f"the streamer refuses this pipeline's settings: {exc}") from None


def _source(source, upstream) -> tuple[str, dict[str, str], Mounts]:
    """Source class, its options and its mounts."""
    if source.type == "files":
        files = source.files
        opts = {FK.ROOT.key: files.path}
        for option, value in files.csv_options.items():
            if option not in FK.CSV_OPTIONS:
                raise PlanError(f"spec.source.files.csvOptions.{option}",
                                f"is not a CSV reader option; use one of {', '.join(sorted(FK.CSV_OPTIONS))}")
            opts[FK.CSV_OPTIONS[option].key] = value
        return _FILE_SOURCES[files.format], opts, Mounts()
    if source.type == "kafka":
        opts, mounts = _kafka(source.kafka, "spec.source.kafka")
        return _KAFKA_SOURCES[source.kafka.format], opts, mounts
    if source.type == "debezium":
        opts, mounts = _kafka(source.debezium.kafka, "spec.source.debezium.kafka")
        if source.debezium.kafka.format == "json":
            opts[KK.VALUE_DESERIALIZER_CLASS.key] = KK.STRING_DESERIALIZER
        return _DEBEZIUM_SOURCES[source.debezium.database], opts, mounts
    if source.type == "postgres":
        return "PostgresCdcSource", *_postgres(source.postgres)
    if source.type == "jdbc":
        return "JdbcSource", *_jdbc(source.jdbc)
    if source.type == "sql":
        return "SqlSource", {K.SOURCE_SQL.key: source.sql.query}, Mounts()
    incremental = source.hudi_incremental
    opts = {K.HOODIEINCR_PATH.key: _upstream_path(incremental, upstream, "spec.source.hudiIncremental"),
            K.HOODIEINCR_NUM_INSTANTS.key: str(incremental.instants_per_batch)}
    return "HoodieIncrSource", opts, Mounts()


def _postgres(postgres) -> tuple[dict[str, str], Mounts]:
    named = {PK.URL: postgres.url, PK.TABLE: postgres.table, PK.USER: postgres.user, PK.SLOT: postgres.slot_name,
             PK.PUBLICATION: postgres.publication_name, PK.SNAPSHOT_MODE: postgres.snapshot_mode,
             PK.MAX_CHANGES: postgres.max_changes_per_batch}
    return _with_password({p.key: str(v) for p, v in named.items() if v is not None}, PK.PASSWORD,
                          postgres.password_secret)


def _jdbc(jdbc) -> tuple[dict[str, str], Mounts]:
    named = {JK.URL: jdbc.url, JK.TABLE_NAME: jdbc.table, JK.USER: jdbc.user, JK.DRIVER_CLASS: jdbc.driver_class,
             JK.INCREMENTAL_COLUMN: jdbc.incremental_column,
             JK.IS_INCREMENTAL: _flag(jdbc.incremental_column is not None),
             JK.FALLBACK_TO_FULL_FETCH: _flag(jdbc.fallback_to_full_fetch)}
    return _with_password({p.key: str(v) for p, v in named.items() if v is not None}, JK.PASSWORD,
                          jdbc.password_secret)


def _with_password(opts: dict[str, str], key: ConfigProperty, ref) -> tuple[dict[str, str], Mounts]:
    if ref is None:
        return opts, Mounts()
    return {**opts, key.key: secret_placeholder(ref)}, Mounts(secrets=(ref.name,))


def _upstream_path(ref, upstream, path: str) -> str:
    """Base path of a table read by tableRef (looked up in ``upstream``) or by basePath."""
    if ref.base_path:
        return ref.base_path
    name = ref.table_ref.name
    if name not in upstream:
        raise PlanError(f"{path}.tableRef.name",
                        f"HudiTable {name} was not found in the pipeline's namespace; create it, or read a "
                        "table not managed here with basePath")
    return upstream[name].spec.base_path


def _views(views, upstream) -> dict[str, str]:
    return {f"{K.SQL_VIEW_PREFIX}{view.name}": _upstream_path(view, upstream, f"spec.views[{i}]")
            for i, view in enumerate(views)}


def _kafka(kafka, path: str) -> tuple[dict[str, str], Mounts]:
    opts = {"bootstrap.servers": kafka.bootstrap_servers, KK.TOPIC.key: kafka.topic,
            KK.AUTO_OFFSET_RESET.key: kafka.starting_offsets.upper()}
    if kafka.max_events_per_batch:
        opts[KK.MAX_EVENTS.key] = str(kafka.max_events_per_batch)
    secrets: list[str] = []
    security = kafka.security
    opts["security.protocol"] = security.protocol
    if security.sasl_mechanism:
        opts["sasl.mechanism"] = security.sasl_mechanism
    for client_key, ref in (("sasl.username", security.username_secret), ("sasl.password", security.password_secret),
                            ("sasl.jaas.config", security.jaas_config_secret), ("ssl.ca.pem", security.ca_secret)):
        if ref is not None:
            opts[client_key] = secret_placeholder(ref)
            secrets.append(ref.name)
    registry = kafka.schema_registry
    if registry is not None:
        url = registry.url.rstrip("/")
        opts[KK.SCHEMA_REGISTRY_URL.key] = url
        opts[SK.REGISTRY_URL.key] = f"{url}/subjects/{kafka.topic}-value/versions/latest"
        if registry.basic_auth_secret is not None:
            opts[KK.SCHEMA_REGISTRY_USER_INFO.key] = secret_placeholder(registry.basic_auth_secret)
            secrets.append(registry.basic_auth_secret.name)
    for key, value in kafka.options.items():
        if key in opts:
            raise PlanError(f"{path}.options.{key}", "is set by the source's own fields; change it there")
        opts[key] = value
    return opts, Mounts(secrets=tuple(dict.fromkeys(secrets)))


def _transformers(steps, settings: OperatorSettings) -> tuple[list[str], dict[str, str], Mounts]:
    """``id:Class`` entries (every step has an id: its name, else t<position>) and their options."""
    entries, opts, config_maps, ids = [], {}, [], {}
    for position, step in enumerate(steps, start=1):
        path = f"spec.transformations[{position - 1}]"
        ident = step.name or f"t{position}"
        if ident in ids:
            raise PlanError(f"{path}.name", f"{ident!r} is also the id of transformation {ids[ident]} (unnamed "
                                            f"steps are called t<position>); choose another name")
        ids[ident] = position - 1
        if step.sql is not None:
            if streamer_config.SRC not in step.sql:
                raise PlanError(f"{path}.sql", f"must read the batch as {streamer_config.SRC}, "
                                               f"e.g. SELECT *, amount * 100 AS cents FROM {streamer_config.SRC}")
            entries.append(f"{ident}:{streamer_config.SQL_QUERY}")
            opts[f"{K.TRANSFORMER_SQL.key}.{ident}"] = step.sql
        elif step.sql_file_ref is not None:
            ref = step.sql_file_ref
            entries.append(f"{ident}:{streamer_config.SQL_FILE}")
            opts[f"{K.TRANSFORMER_SQL_FILE.key}.{ident}"] = posixpath.join(settings.config_dir,
                                                                          ref.config_map_name, ref.key)
            config_maps.append(ref.config_map_name)
        else:
            entries.append(f"{ident}:{streamer_config.FLATTENING}")
    return entries, opts, Mounts(config_maps=tuple(dict.fromkeys(config_maps)))


def _declared_schema(table, settings: OperatorSettings) -> tuple[dict[str, str], Mounts, dict[str, str]]:
    schema = table.spec.schema
    if schema.avro_schema_ref is not None:
        ref = schema.avro_schema_ref
        return ({SK.SOURCE_SCHEMA_FILE.key: posixpath.join(settings.config_dir, ref.config_map_name, ref.key)},
                Mounts(config_maps=(ref.config_map_name,)), {})
    avro = columns_avro(schema.columns, table.spec.effective_table_name(table.metadata.name))
    return ({SK.SOURCE_SCHEMA_FILE.key: posixpath.join(settings.job_config_dir, SOURCE_SCHEMA_FILE)},
            Mounts(), {SOURCE_SCHEMA_FILE: avro})


def _quality_rules(rules) -> dict[str, str]:
    return {f"{K.QUALITY_RULE_PREFIX}{rule.name}": rule.expression for rule in rules}


def _error_table(tspec, error_table) -> dict[str, str]:
    if not error_table.enabled:
        return {K.ERROR_TABLE_ENABLED.key: "false"}
    opts = {K.ERROR_TABLE_ENABLED.key: "true",
            K.ERROR_TABLE_BASE_PATH.key: error_table.base_path or f"{tspec.base_path.rstrip('/')}_errors",
            K.ERROR_TABLE_MAX_ERRORS.key: str(error_table.max_error_records)}
    if error_table.max_error_fraction is not None:
        opts[K.ERROR_TABLE_MAX_ERROR_FRACTION.key] = error_table.max_error_fraction
    return opts


def _metrics(metrics) -> dict[str, str]:
    if not metrics.enabled:
        return {}
    return {MK.METRICS_ON.key: "true", MK.REPORTER_TYPE.key: MK.PROMETHEUS,
            MK.PROMETHEUS_PORT.key: str(metrics.port)}
