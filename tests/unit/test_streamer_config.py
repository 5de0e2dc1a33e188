import json
from pathlib import Path

import pytest
import yaml

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.streamer.config import (FIELDS, HOODIE_CONF, MASKED, SOURCES, StreamerConfig, canonical_source,
                                       canonical_transformer, check_record_key, job_fields, load_job_config,
                                       mask_secrets, resolve, to_job_config, transformer_option)
from hudi_jobs.keys import streamer as K

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "examples" / "orders-json-files.yaml"
BASE = {"target_base_path": "/lake/t", "target_table": "t",
        "hoodie_conf": {"hoodie.streamer.source.dfs.root": "/landing"}}


def config(**fields) -> StreamerConfig:
    """A config from BASE plus ``fields`` (as a job-config file would give them)."""
    conf = {**BASE["hoodie_conf"], **fields.pop("hoodie_conf", {})}
    return resolve({**BASE, **fields, "hoodie_conf": conf}, {})


def problem(**fields) -> str:
    with pytest.raises(HoodieConfigError) as err:
        config(**fields)
    return str(err.value)


def load_job_config_and_resolve(path) -> StreamerConfig:
    return resolve(load_job_config(str(path)), {})


def test_example_job_config():
    cfg = load_job_config_and_resolve(EXAMPLE)
    assert cfg.target_base_path == "/data/lake/orders" and cfg.target_table == "orders"
    assert cfg.table_type == "MERGE_ON_READ" and cfg.operation == "upsert"
    assert cfg.source_class == "JsonDFSSource"
    assert (cfg.source_ordering_field, cfg.source_ordering_field_given) == ("updated_at", True)
    assert cfg.source_limit == 268435456 and cfg.transformer_classes == ("SqlQueryBasedTransformer",)
    assert cfg.continuous and cfg.min_sync_interval_seconds == 60
    assert cfg.post_write_termination_strategy_class == "NoNewDataTerminationStrategy"
    # orders.properties is found beside the YAML file, and hoodieConf is merged over it
    assert cfg.props["hoodie.datasource.write.recordkey.field"] == "order_id"
    assert cfg.props["hoodie.streamer.errortable.max.error.fraction"] == "0.01"
    assert cfg.props["hoodie.streamer.transformer.sql"].endswith("FROM <SRC>")
    assert cfg.props["max.rounds.without.new.data.to.shutdown"] == "5"
    assert cfg.props[K.QUALITY_RULE_PREFIX + "amount_not_negative"] == "amount >= 0"



def test_json_job_config_equals_yaml(tmp_path):
    data = yaml.safe_load(EXAMPLE.read_text())
    data["props"] = str(EXAMPLE.parent / "orders.properties")
    for name in ("job.json", "job.conf"):                      # by extension, then by content
        (tmp_path / name).write_text(json.dumps(data))
        assert load_job_config_and_resolve(tmp_path / name) == load_job_config_and_resolve(EXAMPLE)


def test_defaults_are_hudi_streamers():
    cfg = config()
    assert cfg == StreamerConfig("/lake/t", "t", props={"hoodie.streamer.source.dfs.root": "/landing"})
    assert (cfg.table_type, cfg.operation, cfg.source_class, cfg.source_ordering_field) == (
        "COPY_ON_WRITE", "upsert", "JsonDFSSource", "ts")
    assert not cfg.source_ordering_field_given
    assert (cfg.retry_interval_seconds, cfg.max_retry_count, cfg.max_pending_compactions) == (30, 3, 5)


def test_options_precedence_props_file_then_hoodie_conf_then_command_line(tmp_path):
    (tmp_path / "job.properties").write_text("a=file\nb=file\nc=file\nhoodie.streamer.source.dfs.root=/in\n")
    file_fields = job_fields({"targetBasePath": "/lake/t", "targetTable": "t", "props": "job.properties",
                              HOODIE_CONF: {"b": "job-config", "c": "job-config"}}, "job.yaml", str(tmp_path))
    cfg = resolve(file_fields, {"hoodie_conf": {"c": "command-line"}})
    assert {k: cfg.props[k] for k in "abc"} == {"a": "file", "b": "job-config", "c": "command-line"}


def test_flags_override_file_fields(tmp_path):
    (tmp_path / "file.properties").write_text("from=file-field\n")
    (tmp_path / "flag.properties").write_text("from=flag\n")
    file_fields = job_fields({"targetBasePath": "/lake/t", "targetTable": "t", "op": "INSERT", "continuous": True,
                              "props": "file.properties", HOODIE_CONF: {"hoodie.streamer.source.dfs.root": "/in"}},
                             "job.yaml", str(tmp_path))
    cfg = resolve(file_fields, {"operation": "BULK_INSERT", "target_table": "t2",
                                "props": str(tmp_path / "flag.properties")})
    assert (cfg.operation, cfg.target_table, cfg.continuous) == ("bulk_insert", "t2", True)
    assert cfg.props["from"] == "flag"


def test_null_fields_count_as_absent():
    assert config(**job_fields({"checkpoint": None, "maxRetryCount": None}, "job.yaml")) == config()


def test_unknown_job_config_field_names_the_nearest_valid_one():
    with pytest.raises(HoodieConfigError, match="unknown field 'targetBasepath' in job config j.yaml; "
                                                "did you mean 'targetBasePath'"):
        job_fields({"targetBasepath": "/x"}, "j.yaml")
    with pytest.raises(HoodieConfigError, match="unknown field 'zzz'.*valid fields: targetBasePath"):
        job_fields({"zzz": 1}, "j.yaml")
    with pytest.raises(HoodieConfigError, match="did you mean 'hoodieConf'"):
        job_fields({"hoodieconf": {}}, "j.yaml")


@pytest.mark.parametrize("document, message", [
    ("- a\n- b\n", "must be a mapping of fields"),
    ("targetBasePath: [unclosed\n", "is not valid YAML"),
    ("hoodieConf: [a, b]\n", "hoodieConf in job config .* must be a map"),
    ("hoodieConf: {a: {nested: 1}}\n", "hoodieConf.a in job config .* must be a string, number or boolean"),
])
def test_bad_job_config_documents(tmp_path, document, message):
    (tmp_path / "job.yaml").write_text(document)
    with pytest.raises(HoodieConfigError, match=message):
        load_job_config(str(tmp_path / "job.yaml"))


def test_bad_json_job_config(tmp_path):
    (tmp_path / "job.json").write_text('{"targetTable": }')
    with pytest.raises(HoodieConfigError, match=r"job.json is not valid JSON"):
        load_job_config(str(tmp_path / "job.json"))


def test_hoodie_conf_scalars_become_java_strings():
    fields = job_fields({HOODIE_CONF: {"b": True, "i": 5, "f": 0.5, "s": "x"}}, "j.yaml")
    assert fields["hoodie_conf"] == {"b": "true", "i": "5", "f": "0.5", "s": "x"}


@pytest.mark.parametrize("name, short", [
    ("JsonDFSSource", "JsonDFSSource"),
    ("org.apache.hudi.utilities.sources.JsonKafkaSource", "JsonKafkaSource"),
    ("org.apache.hudi.utilities.sources.HoodieIncrSource", "HoodieIncrSource"),
    ("org.apache.hudi.utilities.sources.debezium.PostgresDebeziumSource", "PostgresDebeziumSource"),
    ("org.apache.hudi.utilities.sources.debezium.MySqlDebeziumSource", "MySqlDebeziumSource"),
])
def test_source_class_names(name, short):
    assert canonical_source(name) == short


def test_unknown_source_class_lists_the_supported_ones():
    with pytest.raises(HoodieConfigError) as err:
        canonical_source("org.apache.hudi.utilities.sources.PostgresDebeziumSource")   # wrong package
    message = str(err.value)
    assert message.startswith("--source-class 'org.apache.hudi.utilities.sources.PostgresDebeziumSource' "
                              "is not supported; did you mean")
    assert all(short in message for short in SOURCES)


@pytest.mark.parametrize("entry, canonical", [
    ("SqlQueryBasedTransformer", "SqlQueryBasedTransformer"),
    ("org.apache.hudi.utilities.transform.FlatteningTransformer", "FlatteningTransformer"),
    ("tr1:org.apache.hudi.utilities.transform.SqlFileBasedTransformer", "tr1:SqlFileBasedTransformer"),
])
def test_transformer_class_names(entry, canonical):
    assert canonical_transformer(entry) == canonical


def test_class_names_are_canonicalized_in_the_config():
    cfg = config(source_class="org.apache.hudi.utilities.sources.ParquetDFSSource",
                 schemaprovider_class="org.apache.hudi.utilities.schema.FilebasedSchemaProvider",
                 post_write_termination_strategy_class="org.apache.hudi.utilities.deltastreamer."
                                                       "NoNewDataTerminationStrategy",
                 transformer_classes="a:org.apache.hudi.utilities.transform.SqlQueryBasedTransformer,"
                                     "b:FlatteningTransformer",
                 hoodie_conf={"hoodie.streamer.schemaprovider.source.schema.file": "/s.avsc",
                              "hoodie.streamer.transformer.sql.a": "SELECT * FROM <SRC>"})
    assert (cfg.source_class, cfg.schemaprovider_class, cfg.post_write_termination_strategy_class) == (
        "ParquetDFSSource", "FilebasedSchemaProvider", "NoNewDataTerminationStrategy")
    assert cfg.transformer_classes == ("a:SqlQueryBasedTransformer", "b:FlatteningTransformer")


@pytest.mark.parametrize("fields, message", [
    (dict(target_base_path=""), "--target-base-path (targetBasePath) is required"),
    (dict(table_type="COW"), "--table-type (tableType) 'COW' is not valid; use COPY_ON_WRITE or MERGE_ON_READ"),
    (dict(base_file_format="HFILE"), "--base-file-format (baseFileFormat) 'HFILE' is not supported"),
    (dict(operation="DELETE"), "--op (op) 'DELETE' is not supported by the streamer; use UPSERT, INSERT, BULK_INSERT"),
    (dict(filter_dupes=True), "'--filter-dupes' (filterDupes) needs to be disabled when '--op' is 'UPSERT'"),
    (dict(min_sync_interval_seconds=-1), "--min-sync-interval-seconds (minSyncIntervalSeconds) must be at least 0"),
    (dict(retry_interval_seconds="-5"), "--retry-interval-seconds (retryIntervalSeconds) must be at least 0"),
    (dict(max_retry_count=0), "--max-retry-count (maxRetryCount) must be at least 1, got 0"),
    (dict(max_pending_compactions=0), "--max-pending-compactions (maxPendingCompactions) must be at least 1"),
    (dict(source_limit="lots"), "--source-limit (sourceLimit) must be a whole number, got 'lots'"),
    (dict(source_limit=True), "--source-limit (sourceLimit) must be a whole number"),
    (dict(continuous="yes"), "--continuous (continuous) must be true or false, got 'yes'"),
    (dict(target_table=["t"]), "--target-table (targetTable) must be a string"),
    (dict(transformer_classes=5), "--transformer-class (transformerClass) must be a list of class names"),
    (dict(source_class="S3EventsSource"), "--source-class 'S3EventsSource' is not supported"),
    (dict(schemaprovider_class="HiveSchemaProvider"), "--schemaprovider-class 'HiveSchemaProvider' is not supported"),
    (dict(post_write_termination_strategy_class="Never"),
     "--post-write-termination-strategy-class 'Never' is not supported; supported: NoNewDataTerminationStrategy"),
    (dict(source_class="JsonKafkaSource"),
     "JsonKafkaSource needs hoodie.streamer.source.kafka.topic (the topic to read) and bootstrap.servers"),
    (dict(source_class="PostgresDebeziumSource", hoodie_conf={"bootstrap.servers": "b:9092"}),
     "PostgresDebeziumSource needs hoodie.streamer.source.kafka.topic (the topic to read); set them in"),
    (dict(source_class="HoodieIncrSource"), "HoodieIncrSource needs hoodie.streamer.source.hoodieincr.path"),
    (dict(source_class="HoodieIncrSource", hoodie_conf={"hoodie.streamer.source.hoodieincr.path": "/up",
                                                        "hoodie.streamer.source.hoodieincr.num_instants": "0"}),
     "hoodie.streamer.source.hoodieincr.num_instants must be at least 1, got 0"),
    (dict(schemaprovider_class="SchemaRegistryProvider"),
     "SchemaRegistryProvider needs hoodie.streamer.schemaprovider.registry.url"),
    (dict(transformer_classes="SqlQueryBasedTransformer"),
     "SqlQueryBasedTransformer needs hoodie.streamer.transformer.sql: the SQL query, reading the batch as <SRC>"),
    (dict(transformer_classes="SqlQueryBasedTransformer", hoodie_conf={"hoodie.streamer.transformer.sql": "SELECT 1"}),
     "hoodie.streamer.transformer.sql must read the batch as <SRC>"),
    (dict(transformer_classes="x:SqlQueryBasedTransformer,y:SqlQueryBasedTransformer",
          hoodie_conf={"hoodie.streamer.transformer.sql.x": "SELECT * FROM <SRC>"}),
     "y:SqlQueryBasedTransformer needs hoodie.streamer.transformer.sql.y"),
    (dict(transformer_classes="SqlFileBasedTransformer"),
     "SqlFileBasedTransformer needs hoodie.streamer.transformer.sql.file"),
    (dict(transformer_classes="a:FlatteningTransformer,FlatteningTransformer"),
     "either all transformers have an identifier (id:Class) or none has"),
    (dict(transformer_classes=["a:FlatteningTransformer", "a:FlatteningTransformer"]),
     "identifier(s) a used more than once"),
    (dict(transformer_classes="a:b:FlatteningTransformer"), "'a:b:FlatteningTransformer' has more than one ':'"),
    (dict(transformer_classes=":FlatteningTransformer"), "has an empty identifier"),
    (dict(hoodie_conf={K.QUALITY_RULE_PREFIX + "no-dashes": "a > 0"}),
     "quality rule hoodie.streamer.quality.rule.no-dashes: the name after"),
    (dict(hoodie_conf={K.QUALITY_RULE_PREFIX + "empty": " "}),
     "quality rule hoodie.streamer.quality.rule.empty is empty"),
    (dict(hoodie_conf={"hoodie.errortable.enable": "maybe"}), "hoodie.errortable.enable='maybe' is not a valid bool"),
    (dict(hoodie_conf={"hoodie.errortable.write.failure.strategy": "IGNORE"}),
     "hoodie.errortable.write.failure.strategy='IGNORE' is not valid; use one of ROLLBACK_COMMIT, LOG_ERROR"),
    (dict(hoodie_conf={"hoodie.streamer.errortable.max.error.fraction": "1.5"}),
     "hoodie.streamer.errortable.max.error.fraction must be -1 (never fail) or a fraction 0..1, got 1.5"),
    (dict(hoodie_conf={"hoodie.datasource.write.operation": "merge"}),
     "hoodie.datasource.write.operation='merge' is not valid"),
    (dict(post_write_termination_strategy_class="NoNewDataTerminationStrategy",
          hoodie_conf={"max.rounds.without.new.data.to.shutdown": "0"}),
     "max.rounds.without.new.data.to.shutdown must be at least 1, got 0"),
    (dict(table_type="MERGE_ON_READ", hoodie_conf={"hoodie.datasource.write.table.type": "COPY_ON_WRITE"}),
     "--table-type (tableType) is MERGE_ON_READ but the options say "
     "hoodie.datasource.write.table.type=COPY_ON_WRITE; keep one of them"),
])
def test_validation_errors_name_the_setting(fields, message):
    assert message in problem(**fields)


def test_all_problems_are_reported_at_once():
    message = problem(target_table="", max_retry_count=0, source_class="JsonKafkaSource")
    assert message.startswith("the streamer configuration has 3 problems:")
    for part in ("--target-table (targetTable) is required", "--max-retry-count", "JsonKafkaSource needs"):
        assert part in message


def test_accepted_combinations():
    assert config(operation="insert", filter_dupes=True).filter_dupes
    assert config(continuous=True, post_write_termination_strategy_class="NoNewDataTerminationStrategy").continuous
    assert config(source_limit=-1).source_limit == -1
    # the table type may come from the options alone
    assert config(hoodie_conf={"hoodie.table.type": "merge_on_read"}).table_type == "MERGE_ON_READ"
    # an identified SQL transformer falls back to the plain key, as Hudi's ChainedTransformer does
    assert config(transformer_classes="a:SqlQueryBasedTransformer",
                  hoodie_conf={"hoodie.streamer.transformer.sql": "SELECT * FROM <SRC>"}).transformer_classes
    # Hudi's older hoodie.deltastreamer.* spellings satisfy the requirements
    cfg = config(source_class="JsonKafkaSource", transformer_classes="SqlQueryBasedTransformer",
                 hoodie_conf={"hoodie.deltastreamer.source.kafka.topic": "t", "bootstrap.servers": "b:9092",
                              "hoodie.deltastreamer.transformer.sql": "SELECT * FROM <SRC>"})
    assert cfg.source_class == "JsonKafkaSource"


def test_transformer_option_as_a_chained_transformer_sees_it():
    props = {"hoodie.streamer.transformer.sql": "plain", "hoodie.streamer.transformer.sql.a": "for a",
             "hoodie.deltastreamer.transformer.sql.b": "old for b"}
    assert transformer_option(props, K.TRANSFORMER_SQL, "a") == "for a"
    assert transformer_option(props, K.TRANSFORMER_SQL, "c") == "plain"
    assert transformer_option(props, K.TRANSFORMER_SQL, None) == "plain"
    assert transformer_option({"hoodie.deltastreamer.transformer.sql.b": "old for b"}, K.TRANSFORMER_SQL, "b") == \
        "old for b"
    assert transformer_option({}, K.TRANSFORMER_SQL, "a") is None


def test_record_key_is_needed_only_for_a_new_table():
    cfg = config()
    check_record_key(cfg, table_exists=True)
    with pytest.raises(HoodieConfigError, match="set hoodie.datasource.write.recordkey.field"):
        check_record_key(cfg, table_exists=False)
    check_record_key(config(hoodie_conf={"hoodie.datasource.write.recordkey.field": "id"}), table_exists=False)


def test_job_config_document_round_trip_and_masking():
    cfg = config(transformer_classes="SqlQueryBasedTransformer", operation="INSERT", checkpoint=42,
                 hoodie_conf={"hoodie.streamer.transformer.sql": "SELECT * FROM <SRC>",
                              "sasl.jaas.config": "org.apache...PlainLoginModule required password='p';",
                              "ssl.key.password": "k", "hoodie.streamer.schemaprovider.registry.basic.auth": "u:p",
                              "my.api.token": "t", "aws.secret": "s"})
    document = to_job_config(cfg, mask=False)
    assert resolve(job_fields(json.loads(json.dumps(document)), "printed"), {}) == cfg
    assert "sourceOrderingField" not in document           # Hudi's default stays a default
    masked = to_job_config(cfg)[HOODIE_CONF]
    secrets = ("sasl.jaas.config", "ssl.key.password", "hoodie.streamer.schemaprovider.registry.basic.auth",
               "my.api.token", "aws.secret")
    assert all(masked[k] == MASKED for k in secrets)
    assert masked["hoodie.streamer.transformer.sql"] == "SELECT * FROM <SRC>"
    assert mask_secrets({"Kafka.Password": "x"}) == {"Kafka.Password": MASKED}


def test_readme_documents_every_job_config_field():
    readme = (ROOT / "jobs" / "README.md").read_text()
    for f in FIELDS:
        assert f"`{f.job_key}`" in readme and f"`{f.flag}`" in readme, f.job_key
    assert f"`{HOODIE_CONF}`" in readme and "`--hoodie-conf`" in readme
