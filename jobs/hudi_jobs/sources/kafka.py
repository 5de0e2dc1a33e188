"""Kafka topics as streamer batches (Hudi's JsonKafkaSource and AvroKafkaSource).

The driver only plans: it asks Kafka for each partition's retained offsets and lets
``kafka_offsets`` choose the ranges of the batch. Executors read: one Spark task per offset range
creates its own consumer, reads its range and hands back Arrow batches (``mapInArrow``), so a
batch scales with the cluster, not with the driver. What a batch read is materialized once
(``localCheckpoint``), so writing the data and then its error records never reads Kafka twice,
and the batch stays the same even if retention removes the messages meanwhile.

Null values (tombstones) are skipped, as Hudi's Kafka sources filter them out, and so are empty
JSON values, as Hudi's JsonKafkaSource does. A value that cannot be decoded becomes an error record
(``Batch.errors``) at ``kafka:<topic>/<p>@<offset>`` and the batch goes on. A fetch that finds
nothing new keeps the checkpoint it was given.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
import time
from abc import ABC, abstractmethod
from typing import Iterator, Mapping

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, TIMESTAMP_NOT_AVAILABLE, TopicPartition
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import IntegerType, LongType, MapType, StringType, StructField, StructType

from hudi_engine import config as C
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieError

from .. import keys as keys_package
from ..keys import kafka as K
from ..keys import schema as S
from ..schema_provider import fetch_registry_schema, spark_struct
from . import base
from .base import Batch, ErrorReason
from .kafka_decode import AvroDecoder, DecodeError, RegistryClient, raw_text, utf8_text
from .kafka_offsets import OffsetRange, Plan, plan_batch

# Hudi's KafkaOffsetPostProcessor columns (hoodie.streamer.source.kafka.append.offsets).
OFFSET_COLUMN = "_hoodie_kafka_source_offset"
PARTITION_COLUMN = "_hoodie_kafka_source_partition"
TIMESTAMP_COLUMN = "_hoodie_kafka_source_timestamp"
KEY_COLUMN = "_hoodie_kafka_source_key"

# Internal columns of what the executors hand back; never in Batch.data.
PARTITION, OFFSET, TIMESTAMP, KEY = "__kafka_partition", "__kafka_offset", "__kafka_timestamp", "__kafka_key"
VALUE, RECORD = "__kafka_value", "__kafka_record"
REASON, MESSAGE, RAW = "__kafka_error_reason", "__kafka_error_message", "__kafka_raw"
INTERNAL = (PARTITION, OFFSET, TIMESTAMP, KEY, VALUE, RECORD, REASON, MESSAGE, RAW)
CORRUPT = "__kafka_corrupt_record"

_FLUSH_EVERY = 5000                 # messages per Arrow batch a reading task hands back


class KafkaUnavailableError(RuntimeError):
    """Kafka could not be asked (brokers down, network): worth retrying, unlike a HoodieError."""


# --- Kafka client settings ------------------------------------------------------------------------

# Java client and Confluent serde settings that mean nothing to librdkafka (values are decoded
# here, offsets are never auto-committed, protocol versions are negotiated).
_IGNORED = frozenset({
    "key.deserializer", "value.deserializer", "specific.avro.reader", "auto.register.schemas",
    "use.latest.version", "basic.auth.credentials.source", "exclude.internal.topics",
    "default.api.timeout.ms", "interceptor.classes", "metric.reporters", "metrics.num.samples",
    "metrics.recording.level", "metrics.sample.window.ms", "ssl.protocol", "ssl.enabled.protocols",
    "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation",
    "security.providers", "ssl.truststore.type", "ssl.truststore.password", "ssl.keystore.type",
    "enable.auto.commit",
})
_RENAMED = {"fetch.max.wait.ms": "fetch.wait.max.ms", "receive.buffer.bytes": "socket.receive.buffer.bytes",
            "send.buffer.bytes": "socket.send.buffer.bytes", "ssl.keystore.certificate.chain": "ssl.certificate.pem",
            "ssl.keystore.key": "ssl.key.pem", "ssl.truststore.certificates": "ssl.ca.pem"}
_JAAS = re.compile(r"\s*(\S+)\s+(?:required|requisite|sufficient|optional)\s*(.*?)\s*;?\s*$", re.S)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"|(\w+)\s*=\s*(\S+)')
_LIBRDKAFKA_DOC = "https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md"


def client_config(props: Mapping[str, str]) -> dict[str, str]:
    """The Kafka client settings among the job's properties, for librdkafka.

    As in Hudi, every property not starting with ``hoodie.`` is for the Kafka client, except the
    platform's own keys (``auto.offset.reset``, the registry keys, ...). Java-only names are
    translated where librdkafka has the same setting under another name or form, and refused
    with what to use instead where it cannot honour them.
    """
    for module in pkgutil.iter_modules(keys_package.__path__):   # every platform key, whoever imported what
        importlib.import_module(f"{keys_package.__name__}.{module.name}")
    own = {name for prop in C.REGISTRY.values() for name in (prop.key, *prop.alternatives)}
    conf: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith("hoodie.") or key in own or key in _IGNORED:
            continue
        if key == "sasl.jaas.config":
            conf.update({k: v for k, v in _jaas_credentials(value).items() if k not in props})
        elif key == "ssl.truststore.location":
            _require_pem(props, "ssl.truststore.type", key, "ssl.ca.location",
                         "convert the trust store to a PEM file of CA certificates "
                         "(keytool -exportcert -rfc) and set ssl.ca.location to it")
            conf["ssl.ca.location"] = value
        elif key == "ssl.keystore.location":
            if props.get("ssl.keystore.type", "PKCS12").upper() != "PKCS12":
                raise HoodieConfigError(
                    f"ssl.keystore.type={props['ssl.keystore.type']}: librdkafka reads PKCS#12 key stores "
                    "only; convert it (keytool -importkeystore -deststoretype PKCS12) or give the "
                    "certificate and key as PEM with ssl.certificate.location and ssl.key.location")
            conf[key] = value
        elif key == "ssl.endpoint.identification.algorithm":
            conf[key] = value or "none"             # Java's empty value turns host name checks off
        else:
            conf[_RENAMED.get(key, key)] = value
    return conf


def _jaas_credentials(jaas: str) -> dict[str, str]:
    match = _JAAS.match(jaas)
    module = match.group(1) if match else ""
    if module.endswith(("PlainLoginModule", "ScramLoginModule")):
        options = {m.group(1) or m.group(3): (m.group(2) if m.group(1) else m.group(4))
                   for m in _JAAS_OPTION.finditer(match.group(2))}
        options = {k: re.sub(r"\\(.)", r"\1", v) for k, v in options.items()}
        if "username" in options and "password" in options:
            creds = {"sasl.username": options["username"], "sasl.password": options["password"]}
            if module.endswith("PlainLoginModule"):
                creds["sasl.mechanism"] = "PLAIN"
            return creds
    raise HoodieConfigError(
        f"sasl.jaas.config uses {module or 'a login module'} that librdkafka (this platform's Kafka "
        "client) cannot take: only PlainLoginModule and ScramLoginModule with username and password "
        "are translated. Set librdkafka's own properties instead (sasl.mechanism, sasl.username, "
        f"sasl.password, or sasl.oauthbearer.* for OAUTHBEARER; see {_LIBRDKAFKA_DOC})")


def _require_pem(props: Mapping[str, str], type_key: str, key: str, use: str, how: str) -> None:
    kind = props.get(type_key, "JKS").upper()
    if kind != "PEM":
        raise HoodieConfigError(f"{key} with {type_key}={kind}: librdkafka cannot read Java {kind} stores; {how} "
                                f"(remove {key}, or set {type_key}=PEM if the file is PEM already; it becomes {use})")


def consumer_config(client: Mapping[str, str], topic: str) -> dict[str, str]:
    """Settings of every consumer the source creates: it reads assigned offset ranges and never
    commits, so the group only names the client to the brokers."""
    return {"group.id": f"hudi-streamer-{topic}", **client,
            "enable.auto.commit": "false", "enable.auto.offset.store": "false"}


def open_consumer(conf: Mapping[str, str]) -> Consumer:
    try:
        return Consumer(dict(conf))
    except KafkaException as exc:
        error = exc.args[0]
        raise HoodieConfigError(
            f"the Kafka client refused its settings: {error.str()}. Every property not starting with "
            f"'hoodie.' is passed to it, as in Hudi; remove the property or use librdkafka's name for "
            f"it ({_LIBRDKAFKA_DOC})") from None


# --- the driver: where the batch starts and ends --------------------------------------------------

class KafkaSource(ABC):
    """What the Kafka and Debezium sources share: configuration, planning, reading, and the split
    of what was read into data and error records. Subclasses say how values become rows."""

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        self.cfg = HoodieConfig(props)
        self.topic = self.cfg.require(K.TOPIC, f"{type(self).__name__} reads that Kafka topic")
        client = client_config(props)
        if not client.get("bootstrap.servers"):
            raise HoodieConfigError(f"bootstrap.servers is required: {type(self).__name__} reads from those "
                                    "Kafka brokers (host:port,...)")
        self.consumer_conf = consumer_config(client, self.topic)
        open_consumer(self.consumer_conf).close()          # bad settings fail now, before Spark works
        self.schema_avro = schema_avro
        self.reset = self.cfg.get_str(K.AUTO_OFFSET_RESET)
        self.max_events = self.cfg.get(K.MAX_EVENTS)
        self.min_partitions = self.cfg.get(K.MIN_PARTITIONS)
        self.fail_on_data_loss = self.cfg.get(K.FAIL_ON_DATA_LOSS)
        self.timeout = self.cfg.get(K.POLL_TIMEOUT_MS) / 1000.0

    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        plan, latest = self.plan(checkpoint, limit)
        if not plan.ranges:
            return Batch(None, checkpoint, lag_records=plan.lag(latest), position=plan.describe())
        rows = self._rows(spark, plan).localCheckpoint(eager=True)
        data, errors = split_errors(rows, position_column(self.topic))
        return Batch(data, plan.checkpoint, errors, lag_records=plan.lag(latest), position=plan.describe(),
                     stable=True)

    def plan(self, checkpoint: str | None, limit: int) -> tuple[Plan, dict[int, int]]:
        """The batch after ``checkpoint`` (at most ``limit`` events when > 0, else maxEvents) and
        each partition's latest offset."""
        earliest, latest = self.watermarks()
        num_events = limit if limit > 0 else self.max_events
        plan = plan_batch(self.topic, checkpoint, earliest, latest, self.reset, self.fail_on_data_loss,
                          num_events, self.min_partitions)
        return plan, latest

    def watermarks(self) -> tuple[dict[int, int], dict[int, int]]:
        """Earliest retained and next-to-be-written offset of every partition of the topic."""
        consumer = open_consumer(self.consumer_conf)
        try:
            partitions = self._partitions(consumer)
            return (self._list_offsets(consumer, partitions, -2), self._list_offsets(consumer, partitions, -1))
        finally:
            consumer.close()

    def _partitions(self, consumer: Consumer) -> list[int]:
        servers = self.consumer_conf["bootstrap.servers"]
        try:
            metadata = consumer.list_topics(self.topic, timeout=self.timeout)
        except KafkaException as exc:
            raise KafkaUnavailableError(f"could not read the metadata of Kafka topic {self.topic} from "
                                        f"{servers}: {exc.args[0].str()}") from None
        topic = metadata.topics.get(self.topic)
        if topic is None or (topic.error is not None and topic.error.code() in
                             (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC)):
            raise HoodieConfigError(f"Kafka topic {self.topic} does not exist at {servers}; check "
                                    f"{K.TOPIC.key} and bootstrap.servers")
        if topic.error is not None:
            raise KafkaUnavailableError(f"Kafka topic {self.topic} at {servers}: {topic.error.str()}")
        return sorted(topic.partitions)

    def _list_offsets(self, consumer: Consumer, partitions: list[int], which: int) -> dict[int, int]:
        asked = [TopicPartition(self.topic, p, which) for p in partitions]
        try:
            answers = consumer.offsets_for_times(asked, timeout=self.timeout)
        except KafkaException as exc:
            raise KafkaUnavailableError(f"could not list the offsets of Kafka topic {self.topic}: "
                                        f"{exc.args[0].str()}") from None
        failed = [a for a in answers if a.error is not None or a.offset < 0]
        if failed:
            raise KafkaUnavailableError(f"could not list the offsets of Kafka topic {self.topic}, partitions "
                                        f"{[a.partition for a in failed]}: {failed[0].error}")
        return {a.partition: a.offset for a in answers}

    # --- reading ----------------------------------------------------------------------------------
    def read(self, spark: SparkSession, plan: Plan, values: TextValues | AvroValues) -> DataFrame:
        """The messages of the plan's ranges, one Spark task per range, as rows of
        (partition, offset, timestamp, key, the decoded value, error reason, message, raw value)."""
        schema = StructType([StructField(PARTITION, IntegerType()), StructField(OFFSET, LongType()),
                             StructField(TIMESTAMP, LongType()), StructField(KEY, StringType()),
                             StructField(values.column, values.spark_type),
                             StructField(REASON, StringType()), StructField(MESSAGE, StringType()),
                             StructField(RAW, StringType())])
        task = ReadRanges(self.topic, plan.ranges, self.consumer_conf, self.timeout, values, to_arrow_schema(schema))
        n = len(plan.ranges)
        return spark.range(0, n, 1, n).mapInArrow(task, schema)

    @abstractmethod
    def _rows(self, spark: SparkSession, plan: Plan) -> DataFrame:
        """Data columns, plus REASON/MESSAGE/RAW (set on error records) and the internal columns."""

    def with_offsets(self, rows: DataFrame) -> DataFrame:
        if not self.cfg.get(K.APPEND_OFFSETS):
            return rows
        return rows.withColumns({OFFSET_COLUMN: F.col(OFFSET), PARTITION_COLUMN: F.col(PARTITION),
                                 TIMESTAMP_COLUMN: F.col(TIMESTAMP), KEY_COLUMN: F.col(KEY)})

    def registry(self) -> RegistryClient:
        """The schema registry resolving wire-format schema ids."""
        url = self.cfg.get_str(K.SCHEMA_REGISTRY_URL) or self.cfg.get_str(S.REGISTRY_URL)
        if not url:
            raise HoodieConfigError(
                f"{type(self).__name__} reads Confluent wire-format values, whose schema ids the schema "
                f"registry resolves: set {K.SCHEMA_REGISTRY_URL.key} or {S.REGISTRY_URL.key}")
        return RegistryClient(url, self.cfg.get_str(K.SCHEMA_REGISTRY_USER_INFO))

    def source_schema(self, what: str) -> str:
        """The Avro schema rows are decoded into: the schema provider's, else the registry's latest
        (fetched every batch, so an evolved schema is picked up)."""
        if self.schema_avro:
            return self.schema_avro
        url = self.cfg.get_str(S.REGISTRY_URL)
        if not url:
            raise HoodieConfigError(
                f"{type(self).__name__} needs the Avro schema of {what}: use --schemaprovider-class "
                f"SchemaRegistryProvider with {S.REGISTRY_URL.key} (e.g. http://registry:8081/subjects/"
                f"{self.topic}-value/versions/latest) or FilebasedSchemaProvider with {S.SOURCE_SCHEMA_FILE.key}")
        return fetch_registry_schema(url)


def position_column(topic: str) -> Column:
    return F.concat(F.lit(f"kafka:{topic}/"), F.col(PARTITION).cast("string"), F.lit("@"),
                    F.col(OFFSET).cast("string"))


# --- the executors: reading offset ranges ---------------------------------------------------------

class TextValues:
    """Values as UTF-8 text (JSON); Spark parses them afterwards."""
    column = VALUE
    spark_type = StringType()
    skip_empty = True

    def decode(self, values: list[bytes]) -> tuple[pa.Array, list[tuple[str, str] | None]]:
        texts: list[str | None] = []
        errors: list[tuple[str, str] | None] = []
        for value in values:
            try:
                texts.append(utf8_text(value))
                errors.append(None)
            except DecodeError as exc:
                texts.append(None)
                errors.append((ErrorReason.JSON_ROW_DESERIALIZATION_FAILURE.value, str(exc)))
        return pa.array(texts, pa.string()), errors


class AvroValues:
    """Avro values decoded into records of the source schema (see ``kafka_decode.AvroDecoder``);
    the decoder is built on the executor, once per task."""
    column = RECORD
    skip_empty = False

    def __init__(self, schema_avro: str, wire: bool, registry: RegistryClient | None):
        self.schema_avro, self.wire, self.registry = schema_avro, wire, registry
        self.spark_type = spark_struct(schema_avro)
        self._decoder: AvroDecoder | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_decoder": None}

    def decode(self, values: list[bytes]) -> tuple[pa.Array, list[tuple[str, str] | None]]:
        if self._decoder is None:
            self._decoder = AvroDecoder(self.schema_avro, self.wire, self.registry)
        records: list[dict | None] = []
        errors: list[tuple[str, str] | None] = []
        for value in values:
            try:
                records.append(self._decoder.decode(value))
                errors.append(None)
            except DecodeError as exc:
                records.append(None)
                errors.append((ErrorReason.AVRO_DESERIALIZATION_FAILURE.value, str(exc)))
        column, refused = self._decoder.to_arrow(records)
        for i, why in refused.items():
            errors[i] = (ErrorReason.AVRO_DESERIALIZATION_FAILURE.value, why)
        return column, errors


class ReadRanges:
    """``mapInArrow`` function over ``spark.range(len(ranges))``: task i reads ``ranges[i]``."""

    def __init__(self, topic: str, ranges: tuple[OffsetRange, ...], conf: Mapping[str, str], timeout: float,
                 values: TextValues | AvroValues, schema: pa.Schema):
        self.topic, self.ranges, self.timeout, self.values, self.schema = topic, ranges, timeout, values, schema
        self.conf = {**conf, "enable.partition.eof": "true", "auto.offset.reset": "error"}

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        indexes = [i for b in batches for i in b.column(0).to_pylist()]
        if not indexes:
            return
        consumer = open_consumer(self.conf)
        try:
            for i in indexes:
                for messages in read_range(consumer, self.topic, self.ranges[i], self.timeout):
                    yield self._batch(messages)
        finally:
            consumer.close()

    def _batch(self, messages: list) -> pa.RecordBatch:
        messages = [m for m in messages if m.value() is not None and (m.value() or not self.values.skip_empty)]
        values = [m.value() for m in messages]
        column, errors = self.values.decode(values)
        stamps = [m.timestamp() for m in messages]
        arrays = [
            pa.array([m.partition() for m in messages], pa.int32()),
            pa.array([m.offset() for m in messages], pa.int64()),
            pa.array([ts if kind != TIMESTAMP_NOT_AVAILABLE else -1 for kind, ts in stamps], pa.int64()),
            pa.array([None if m.key() is None else m.key().decode("utf-8", "replace") for m in messages], pa.string()),
            column,
            pa.array([e[0] if e else None for e in errors], pa.string()),
            pa.array([e[1] if e else None for e in errors], pa.string()),
            pa.array([raw_text(v) if e else None for v, e in zip(values, errors)], pa.string()),
        ]
        arrays[4] = arrays[4].cast(self.schema.field(4).type)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def read_range(consumer: Consumer, topic: str, r: OffsetRange, timeout: float) -> Iterator[list]:
    """The messages of one offset range, in chunks. Offsets may have gaps (compacted topics,
    transaction markers): the range ends at the first offset >= its end, or at the end of the
    partition once that is past the range."""
    consumer.assign([TopicPartition(topic, r.partition, r.start)])
    reached, chunk = r.start, []
    deadline = time.monotonic() + timeout
    try:
        while reached < r.end:
            messages = consumer.consume(num_messages=min(_FLUSH_EVERY, r.end - reached), timeout=1.0)
            if messages:
                deadline = time.monotonic() + timeout
            for m in messages:
                if m.topic() != topic or m.partition() != r.partition:
                    continue            # left over from the consumer's previous range: not ours
                error = m.error()
                if error is None:
                    if m.offset() >= r.end:
                        reached = r.end
                        break
                    chunk.append(m)
                    reached = m.offset() + 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    if m.offset() >= r.end:
                        reached = r.end
                elif error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                    raise HoodieError(
                        f"Kafka no longer has offsets {reached}-{r.end} of topic {topic} partition {r.partition} "
                        f"(retention removed them after the batch was planned): {error.str()}. Run again: the "
                        f"next batch starts from what Kafka still has, or fails if "
                        f"{K.FAIL_ON_DATA_LOSS.key}=true")
                elif not error.retriable():
                    raise KafkaUnavailableError(f"reading Kafka topic {topic} partition {r.partition} offsets "
                                                f"{r.start}-{r.end}: {error.str()}")
                if reached >= r.end:
                    break
            if len(chunk) >= _FLUSH_EVERY:
                yield chunk
                chunk = []
            if reached < r.end and time.monotonic() > deadline:
                raise KafkaUnavailableError(
                    f"timed out after {timeout:.0f}s reading Kafka topic {topic} partition {r.partition} "
                    f"offsets {r.start}-{r.end} (read up to {reached}): the brokers did not deliver the rest. "
                    f"Check that they are up, or raise {K.POLL_TIMEOUT_MS.key}")
        if chunk:
            yield chunk
    finally:
        consumer.unassign()


# --- the sources ----------------------------------------------------------------------------------

class JsonKafkaSource(KafkaSource):
    """JSON values, parsed by Spark with the schema provider's schema, or with one inferred from
    the batch when none is given (Hudi needs a schema; inferring suits exploration, not types
    that must stay stable across batches)."""

    def _rows(self, spark: SparkSession, plan: Plan) -> DataFrame:
        raw = self.read(spark, plan, TextValues())
        if self.schema_avro:
            schema = spark_struct(self.schema_avro)
        else:
            raw = raw.localCheckpoint(eager=True)
            schema = infer_json_schema(spark, raw)
        return self.with_offsets(parse_json(raw, schema))


class AvroKafkaSource(KafkaSource):
    """Avro values: the Confluent wire format with the registry (default, as Hudi's
    KafkaAvroDeserializer), or plain Avro binary in the source schema (ByteArrayDeserializer)."""

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        super().__init__(props, schema_avro)
        self.wire = value_deserializer(self.cfg, ("KafkaAvroDeserializer", "KafkaAvroSchemaDeserializer",
                                                  "ByteArrayDeserializer")) != "ByteArrayDeserializer"
        self.registry_client = self.registry() if self.wire else None

    def _rows(self, spark: SparkSession, plan: Plan) -> DataFrame:
        values = AvroValues(self.source_schema("the topic's records"), self.wire, self.registry_client)
        raw = self.read(spark, plan, values)
        fields = [F.col(f"{RECORD}.{f.name}").alias(f.name) for f in values.spark_type.fields]
        return self.with_offsets(raw.select(*fields, *[c for c in raw.columns if c != RECORD]))


def value_deserializer(cfg: HoodieConfig, accepted: tuple[str, ...]) -> str:
    """The short class name of Hudi's value deserializer option, one of ``accepted``."""
    name = cfg.get_str(K.VALUE_DESERIALIZER_CLASS).rsplit(".", 1)[-1]
    if name not in accepted:
        raise HoodieConfigError(
            f"{K.VALUE_DESERIALIZER_CLASS.key}={cfg.get_str(K.VALUE_DESERIALIZER_CLASS)} is not supported here; "
            f"use one of {', '.join(accepted)}")
    return name


def infer_json_schema(spark: SparkSession, raw: DataFrame) -> StructType:
    """The schema Spark's JSON reader infers over the batch's values (malformed ones ignored)."""
    texts = raw.filter(F.col(REASON).isNull()).select(VALUE).rdd.map(lambda row: row[0])
    inferred = spark.read.option("columnNameOfCorruptRecord", CORRUPT).json(texts).schema
    return StructType([f for f in inferred.fields if f.name != CORRUPT])


def split_errors(rows: DataFrame, position: Column) -> tuple[DataFrame | None, DataFrame | None]:
    """The good rows without the reader's columns, and the bad ones as error records (``position``
    says where each came from); None for an empty side."""
    counts = {bad: n for bad, n in rows.groupBy(F.col(REASON).isNotNull()).count().collect()}
    data = rows.filter(F.col(REASON).isNull()).drop(*[c for c in rows.columns if c in INTERNAL])
    errors = rows.filter(F.col(REASON).isNotNull()).select(
        F.col(RAW).alias(base.RAW_RECORD), F.col(REASON).alias(base.REASON),
        F.col(MESSAGE).alias(base.MESSAGE), position.alias(base.SOURCE_POSITION))
    return (data if counts.get(False) else None), (errors if counts.get(True) else None)


def flag_errors(rows: DataFrame, failed: Column, reason: Column, message: Column, raw: Column) -> DataFrame:
    """Rows where ``failed`` holds become error records, unless they already are one."""
    failed = F.col(REASON).isNull() & F.coalesce(failed, F.lit(False))
    return rows.withColumns({REASON: F.when(failed, reason).otherwise(F.col(REASON)),
                             MESSAGE: F.when(failed, message).otherwise(F.col(MESSAGE)),
                             RAW: F.when(failed, raw).otherwise(F.col(RAW))})


def parse_json(raw: DataFrame, schema: StructType) -> DataFrame:
    """JSON text → columns of ``schema``; text that is not a JSON object, or whose values do not
    fit the schema's types, becomes an error record instead."""
    with_corrupt = StructType([*schema.fields, StructField(CORRUPT, StringType())])
    parsed = F.from_json(F.col(VALUE), with_corrupt, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT})
    rows = raw.withColumn(RECORD, parsed)
    is_object = F.from_json(F.col(VALUE), MapType(StringType(), StringType())).isNotNull()
    rows = flag_errors(
        rows, F.col(RECORD).isNull() | F.col(f"{RECORD}.{CORRUPT}").isNotNull(),
        F.when(is_object, F.lit(ErrorReason.INVALID_RECORD_SCHEMA.value))
        .otherwise(F.lit(ErrorReason.JSON_ROW_DESERIALIZATION_FAILURE.value)),
        F.when(is_object, F.lit("the JSON object does not fit the source schema: a value has another type "
                                "than its column")).otherwise(F.lit("the value is not a JSON object")),
        F.col(VALUE))
    fields = [F.col(f"{RECORD}.{f.name}").alias(f.name) for f in schema.fields]
    return rows.select(*fields, *[c for c in rows.columns if c in INTERNAL and c != RECORD])
