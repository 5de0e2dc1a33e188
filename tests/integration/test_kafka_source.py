"""Kafka and Debezium sources end to end with Spark, against STAND-INS: librdkafka's mock Kafka
cluster (tests/support/kafka_mock.py; no Kafka broker can run here) and an HTTP stand-in of the
Confluent schema registry (tests/support/schema_registry_stub.py). Spark's Python workers read the
mock cluster over loopback TCP, as executors read a real cluster."""
import datetime
import decimal
import itertools
import json

import pytest
from confluent_kafka import Consumer

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.sources import debezium as D
from hudi_jobs.sources.kafka import (AvroKafkaSource, JsonKafkaSource, KafkaUnavailableError, client_config,
                                     consumer_config, read_range)
from hudi_jobs.sources.kafka_offsets import KafkaDataLossError, OffsetRange
from tests.support.kafka_mock import MockKafkaCluster
from tests.support.schema_registry_stub import SchemaRegistryStub, confluent_wire

TOPIC_KEY = "hoodie.streamer.source.kafka.topic"
_names = itertools.count()


@pytest.fixture(scope="module")
def kafka():
    with MockKafkaCluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def registry():
    with SchemaRegistryStub() as stub:
        yield stub


def new_topic(kafka, partitions=3):
    name = f"t{next(_names)}"
    kafka.create_topic(name, partitions)
    return name


def props(kafka, topic, **extra):
    return {"bootstrap.servers": kafka.bootstrap_servers, TOPIC_KEY: topic, "auto.offset.reset": "earliest",
            **{k.replace("__", "."): v for k, v in extra.items()}}


def rows(df):
    return [] if df is None else [r.asDict() for r in df.collect()]


# --- Kafka client settings (no Spark) -------------------------------------------------------------------

def test_client_settings_are_the_non_hoodie_keys_minus_the_platforms_own():
    conf = client_config({"bootstrap.servers": "b:9092", "group.id": "g", "security.protocol": "SASL_SSL",
                          "sasl.mechanism": "SCRAM-SHA-512", "hoodie.streamer.source.kafka.topic": "t",
                          "auto.offset.reset": "earliest", "schema.registry.url": "http://r",
                          "key.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
                          "fetch.max.wait.ms": "200", "ssl.endpoint.identification.algorithm": "",
                          "max.rounds.without.new.data.to.shutdown": "3"})
    assert conf == {"bootstrap.servers": "b:9092", "group.id": "g", "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512", "fetch.wait.max.ms": "200",
                    "ssl.endpoint.identification.algorithm": "none"}


def test_java_jaas_login_becomes_librdkafka_credentials():
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="ingest" '
            'password="p\\"w;d";')
    assert client_config({"sasl.jaas.config": jaas}) == {"sasl.username": "ingest", "sasl.password": 'p"w;d',
                                                         "sasl.mechanism": "PLAIN"}
    scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";'
    assert client_config({"sasl.jaas.config": scram, "sasl.mechanism": "SCRAM-SHA-256"}) == {
        "sasl.username": "u", "sasl.password": "p", "sasl.mechanism": "SCRAM-SHA-256"}


def test_jaas_login_librdkafka_cannot_do_is_refused_with_what_to_set():
    oauth = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
    with pytest.raises(HoodieConfigError, match="OAuthBearerLoginModule.*sasl.oauthbearer"):
        client_config({"sasl.jaas.config": oauth})


def test_java_trust_and_key_stores_are_translated_or_refused():
    assert client_config({"ssl.truststore.location": "/ca.pem", "ssl.truststore.type": "PEM"}) == \
        {"ssl.ca.location": "/ca.pem"}
    with pytest.raises(HoodieConfigError, match="ssl.truststore.location.*JKS.*ssl.ca.location"):
        client_config({"ssl.truststore.location": "/trust.jks", "ssl.truststore.password": "x"})
    with pytest.raises(HoodieConfigError, match="ssl.keystore.type=JKS.*PKCS#12"):
        client_config({"ssl.keystore.location": "/k.jks", "ssl.keystore.type": "JKS"})
    assert client_config({"ssl.keystore.location": "/k.p12", "ssl.keystore.password": "x"}) == \
        {"ssl.keystore.location": "/k.p12", "ssl.keystore.password": "x"}


def test_source_refuses_unknown_client_property_before_reading(kafka):
    with pytest.raises(HoodieConfigError, match='"fetch.max.wiat.ms".*not starting with .hoodie.'):
        JsonKafkaSource(props(kafka, "t", fetch__max__wiat__ms="5"))


def test_source_needs_topic_and_brokers(kafka):
    with pytest.raises(HoodieConfigError, match="hoodie.streamer.source.kafka.topic is required"):
        JsonKafkaSource({"bootstrap.servers": kafka.bootstrap_servers})
    with pytest.raises(HoodieConfigError, match="bootstrap.servers is required"):
        JsonKafkaSource({TOPIC_KEY: "t"})


def test_reading_past_what_kafka_has_times_out_naming_the_range(kafka):
    """Against the mock cluster stand-in: a range whose end was never written."""
    topic = new_topic(kafka, 1)
    kafka.produce(topic, [(0, None, b"x")] * 2)
    consumer = Consumer({**consumer_config({"bootstrap.servers": kafka.bootstrap_servers}, topic),
                         "enable.partition.eof": "true"})
    try:
        with pytest.raises(KafkaUnavailableError, match=f"topic {topic} partition 0 offsets 0-5 \\(read up to 2\\)"):
            list(read_range(consumer, topic, OffsetRange(0, 0, 5), timeout=2))
    finally:
        consumer.close()


# --- JSON ----------------------------------------------------------------------------------------------

@pytest.mark.spark
def test_json_capped_batches_read_every_message_once_with_the_mock_cluster(spark, kafka):
    topic = new_topic(kafka, 3)
    skew = [0] * 20 + [1] * 6 + [2] * 4
    messages = [(p, f"k{i}", json.dumps({"id": i, "name": f"n{i}"})) for i, p in enumerate(skew)]
    messages += [(1, "bad", "{not json"), (2, "gone", None), (2, "empty", "")]
    kafka.produce(topic, messages)
    source = JsonKafkaSource(props(kafka, topic))
    checkpoint, ids, errors, lags = None, [], [], []
    for _ in range(10):
        batch = source.fetch(spark, checkpoint, 12)
        if batch.data is None and batch.errors is None:
            assert batch.checkpoint == checkpoint
            break
        ids += [r["id"] for r in rows(batch.data)]
        errors += rows(batch.errors)
        lags.append(batch.lag_records)
        assert batch.checkpoint != checkpoint
        checkpoint = batch.checkpoint
    assert sorted(ids) == list(range(30))
    assert lags == [21, 9, 0]
    assert checkpoint == f"{topic},0:20,1:7,2:6"
    assert errors == [{"raw_record": "{not json", "reason": "JSON_ROW_DESERIALIZATION_FAILURE",
                       "message": "the value is not a JSON object", "source_position": f"kafka:{topic}/1@6"}]


@pytest.mark.spark
def test_json_with_source_schema_sends_mismatches_to_errors_and_appends_offsets(spark, kafka):
    topic = new_topic(kafka, 1)
    kafka.produce(topic, [(0, "a", json.dumps({"id": 1, "name": "x"})), (0, None, json.dumps({"id": "two"})),
                          (0, "c", json.dumps({"id": 3, "extra": True}))])
    schema = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"},
                                                       {"name": "name", "type": ["null", "string"]}]}
    source = JsonKafkaSource(props(kafka, topic, hoodie__streamer__source__kafka__append__offsets="true"),
                             json.dumps(schema))
    batch = source.fetch(spark, None, 0)
    assert batch.data.columns == ["id", "name", "_hoodie_kafka_source_offset", "_hoodie_kafka_source_partition",
                                  "_hoodie_kafka_source_timestamp", "_hoodie_kafka_source_key"]
    got = sorted(rows(batch.data), key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["_hoodie_kafka_source_offset"], r["_hoodie_kafka_source_partition"],
             r["_hoodie_kafka_source_key"]) for r in got] == [(1, "x", 0, 0, "a"), (3, None, 2, 0, "c")]
    assert all(r["_hoodie_kafka_source_timestamp"] > 1_600_000_000_000 for r in got)
    assert [(e["reason"], e["source_position"]) for e in rows(batch.errors)] == \
        [("INVALID_RECORD_SCHEMA", f"kafka:{topic}/0@1")]


@pytest.mark.spark
def test_reset_policies_without_checkpoint(spark, kafka):
    topic = new_topic(kafka, 2)
    kafka.produce(topic, [(0, None, '{"a": 1}'), (1, None, '{"a": 2}')])
    latest = JsonKafkaSource(props(kafka, topic, auto__offset__reset="latest")).fetch(spark, None, 0)
    assert (latest.data, latest.errors, latest.checkpoint, latest.lag_records) == (None, None, None, 0)
    with pytest.raises(HoodieConfigError, match="auto.offset.reset=none"):
        JsonKafkaSource(props(kafka, topic, auto__offset__reset="none")).fetch(spark, None, 0)
    with pytest.raises(HoodieConfigError, match="does not exist"):
        JsonKafkaSource(props(kafka, "no-such-topic")).fetch(spark, None, 0)


@pytest.mark.spark
def test_checkpoint_below_retention_resets_or_fails_on_data_loss(spark, kafka):
    topic = new_topic(kafka, 2)
    kafka.produce(topic, [(p, None, json.dumps({"p": p, "i": i})) for i in range(5) for p in (0, 1)])
    kafka.delete_records(topic, 0, 3)                      # retention took offsets 0-2 of partition 0
    checkpoint = f"{topic},0:1,1:4"
    batch = JsonKafkaSource(props(kafka, topic)).fetch(spark, checkpoint, 0)
    assert sorted((r["p"], r["i"]) for r in rows(batch.data)) == [(0, 3), (0, 4), (1, 4)]
    assert batch.checkpoint == f"{topic},0:5,1:5"
    strict = props(kafka, topic, hoodie__streamer__source__kafka__enable__failOnDataLoss="true")
    with pytest.raises(KafkaDataLossError, match="partition 0: checkpoint 1, retained 3-5"):
        JsonKafkaSource(strict).fetch(spark, checkpoint, 0)


@pytest.mark.spark
def test_min_partitions_splits_the_batch_into_more_reading_tasks(spark, kafka):
    topic = new_topic(kafka, 1)
    kafka.produce(topic, [(0, None, json.dumps({"i": i})) for i in range(40)])
    source = JsonKafkaSource(props(kafka, topic, hoodie__streamer__source__kafka__minPartitions="4"))
    batch = source.fetch(spark, None, 0)
    assert batch.data.rdd.getNumPartitions() == 4
    assert sorted(r["i"] for r in rows(batch.data)) == list(range(40))


# --- Avro ---------------------------------------------------------------------------------------------

ORDER_V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"}]}
ORDER_V2 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
    {"name": "qty", "type": "int", "default": 1}]}


@pytest.mark.spark
def test_avro_wire_format_with_the_registry_stand_in(spark, kafka, registry):
    topic = new_topic(kafka, 2)
    subject = f"{topic}-value"
    v1, v2 = registry.register(subject, ORDER_V1), registry.register(subject, ORDER_V2)
    kafka.produce(topic, [(0, "1", confluent_wire(v1, ORDER_V1, {"id": 1, "item": "tea"})),
                          (1, "2", confluent_wire(v2, ORDER_V2, {"id": 2, "item": "cake", "qty": 3})),
                          (1, "3", b'{"id": 3}'),
                          (0, "4", b"\x00\x00\x00\x03\xe7\x02"),
                          (0, "5", None)])
    source = AvroKafkaSource(props(kafka, topic, **{
        "hoodie__streamer__schemaprovider__registry__url": f"{registry.url}/subjects/{subject}/versions/latest"}))
    batch = source.fetch(spark, None, 0)
    assert sorted(rows(batch.data), key=lambda r: r["id"]) == [{"id": 1, "item": "tea", "qty": 1},
                                                              {"id": 2, "item": "cake", "qty": 3}]
    errors = sorted(rows(batch.errors), key=lambda e: e["source_position"])
    assert [(e["reason"], e["source_position"]) for e in errors] == [
        ("AVRO_DESERIALIZATION_FAILURE", f"kafka:{topic}/0@1"), ("AVRO_DESERIALIZATION_FAILURE", f"kafka:{topic}/1@1")]
    assert "schema id 999 of the value is not in the schema registry" in errors[0]["message"]
    assert errors[0]["raw_record"] == "AAAAA+cC"
    assert "starts with byte 0x7b" in errors[1]["message"] and errors[1]["raw_record"] == '{"id": 3}'
    assert batch.checkpoint == f"{topic},0:3,1:2"


@pytest.mark.spark
def test_plain_avro_with_logical_types_unions_and_maps_reaches_spark_typed(spark, kafka):
    """ByteArrayDeserializer: plain Avro binary in the schema provider's schema."""
    from tests.unit.test_kafka_decode import avro_binary
    schema = {"type": "record", "name": "Reading", "fields": [
        {"name": "id", "type": "long"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}},
        {"name": "either", "type": ["null", "int", "string"]},
        {"name": "tags", "type": {"type": "map", "values": "string"}}]}
    at = datetime.datetime(2024, 5, 1, 12, 30, 15, 123000, tzinfo=datetime.timezone.utc)
    topic = new_topic(kafka, 1)
    kafka.produce(topic, [(0, None, avro_binary(schema, {
        "id": i, "at": at, "day": datetime.date(2024, 5, i + 1), "price": decimal.Decimal(f"{i}.25"),
        "either": i if i % 2 else f"s{i}", "tags": {"k": str(i)}})) for i in range(3)])
    source = AvroKafkaSource(props(kafka, topic, hoodie__streamer__source__kafka__value__deserializer__class=
                                   "org.apache.kafka.common.serialization.ByteArrayDeserializer"), json.dumps(schema))
    batch = source.fetch(spark, None, 0)
    assert dict(batch.data.dtypes) == {"id": "bigint", "at": "timestamp", "day": "date", "price": "decimal(6,2)",
                                       "either": "struct<member0:int,member1:string>", "tags": "map<string,string>"}
    got = sorted(rows(batch.data), key=lambda r: r["id"])
    assert [(r["day"], r["price"], tuple(r["either"]), r["tags"]) for r in got] == [
        (datetime.date(2024, 5, 1), decimal.Decimal("0.25"), (None, "s0"), {"k": "0"}),
        (datetime.date(2024, 5, 2), decimal.Decimal("1.25"), (1, None), {"k": "1"}),
        (datetime.date(2024, 5, 3), decimal.Decimal("2.25"), (None, "s2"), {"k": "2"})]
    epoch = batch.data.selectExpr("unix_micros(at) AS us").collect()
    assert {r["us"] for r in epoch} == {int(at.timestamp() * 1_000_000)}
    assert batch.errors is None


def test_avro_source_needs_a_registry_for_wire_format(kafka):
    with pytest.raises(HoodieConfigError, match="schema.registry.url or hoodie.streamer.schemaprovider.registry.url"):
        AvroKafkaSource(props(kafka, "t"))


# --- Debezium -----------------------------------------------------------------------------------------

def pg_event(op, before, after, lsn):
    return {"before": before, "after": after, "op": op, "ts_ms": 1_700_000_000_100,
            "source": {"connector": "postgresql", "name": "pg", "ts_ms": 1_700_000_000_000, "schema": "public",
                       "table": "customers", "txId": 9, "lsn": lsn, "xmin": None}}


@pytest.mark.spark
def test_postgres_debezium_json_events_through_kafka(spark, kafka):
    topic = new_topic(kafka, 1)
    events = [pg_event("c", None, {"id": 1, "name": "ann"}, 10),
              {"schema": {"type": "struct"}, "payload": pg_event("u", {"id": 1, "name": "ann"},
                                                                 {"id": 1, "name": "anne"}, 20)},
              pg_event("d", {"id": 1, "name": "anne"}, None, 30)]
    kafka.produce(topic, [(0, '{"id": 1}', json.dumps(e)) for e in events] + [(0, '{"id": 1}', None)])
    source = D.PostgresDebeziumSource(props(kafka, topic, hoodie__streamer__source__kafka__value__deserializer__class=
                                            "org.apache.kafka.common.serialization.StringDeserializer"))
    batch = source.fetch(spark, None, 0)
    got = sorted(rows(batch.data), key=lambda r: r["_event_lsn"])
    assert [(r["id"], r["name"], r["_change_operation_type"], r["_hoodie_is_deleted"], r["_event_lsn"])
            for r in got] == [(1, "ann", "c", False, 10), (1, "anne", "u", False, 20), (1, "anne", "d", True, 30)]
    assert batch.errors is None and batch.checkpoint == f"{topic},0:4"
    assert source.ordering_field == "_event_lsn"


@pytest.mark.spark
def test_mysql_debezium_avro_events_via_the_registry_stand_in(spark, kafka, registry):
    topic = new_topic(kafka, 1)
    row = {"type": "record", "name": "Value", "fields": [{"name": "id", "type": "int"},
                                                         {"name": "v", "type": ["null", "string"]}]}
    source_schema = {"type": "record", "name": "Source", "namespace": "io.debezium.connector.mysql", "fields": [
        {"name": "name", "type": "string"}, {"name": "ts_ms", "type": "long"},
        {"name": "file", "type": "string"}, {"name": "pos", "type": "long"},
        {"name": "row", "type": "int"}]}
    envelope = {"type": "record", "name": "Envelope", "namespace": "mysql.shop.items", "fields": [
        {"name": "before", "type": ["null", row]}, {"name": "after", "type": ["null", "Value"]},
        {"name": "source", "type": source_schema}, {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"]}]}
    schema_id = registry.register(f"{topic}-value", envelope)

    def event(op, before, after, file, pos):
        return confluent_wire(schema_id, envelope, {
            "before": before, "after": after, "op": op, "ts_ms": 5,
            "source": {"name": "mysql", "ts_ms": 4, "file": file, "pos": pos, "row": 0}})
    kafka.produce(topic, [(0, "1", event("c", None, {"id": 1, "v": "a"}, "bin.000009", 900)),
                          (0, "1", event("u", {"id": 1, "v": "a"}, {"id": 1, "v": "b"}, "bin.000010", 7)),
                          (0, "1", event("d", {"id": 1, "v": "b"}, None, "bin.000010", 95)),
                          (0, "1", None),
                          (0, None, event("t", None, None, "bin.000010", 99))])
    source = D.MySqlDebeziumSource(props(kafka, topic, **{
        "hoodie__streamer__schemaprovider__registry__url": f"{registry.url}/subjects/{topic}-value/versions/latest"}))
    batch = source.fetch(spark, None, 0)
    got = sorted(rows(batch.data), key=lambda r: r["_event_seq"])
    assert [(r["id"], r["v"], r["_change_operation_type"], r["_hoodie_is_deleted"], r["_event_bin_file"],
             r["_event_pos"]) for r in got] == [(1, "a", "c", False, "bin.000009", 900),
                                                (1, "b", "u", False, "bin.000010", 7),
                                                (1, "b", "d", True, "bin.000010", 95)]
    assert got[0]["_event_seq"] == "0000000000000000009.0000000000000000900"
    errors = rows(batch.errors)
    assert [(e["reason"], e["source_position"]) for e in errors] == [("INVALID_RECORD_SCHEMA", f"kafka:{topic}/0@4")]
    assert json.loads(errors[0]["raw_record"])["op"] == "t" and "op 't'" in errors[0]["message"]
    assert batch.checkpoint == f"{topic},0:5"
