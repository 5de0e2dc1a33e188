"""Kafka and Debezium sources (Hudi's KafkaSourceConfig, HoodieStreamerConfig and the Confluent
serde keys Hudi passes through to the Kafka client).

Every property that does not start with ``hoodie.`` and is not defined as one of the platform's own
keys goes to the Kafka client (librdkafka here), as Hudi passes them to its Kafka consumer.
"""
from hudi_engine.config import define

KAFKA_AVRO_DESERIALIZER = "io.confluent.kafka.serializers.KafkaAvroDeserializer"
KAFKA_AVRO_SCHEMA_DESERIALIZER = "org.apache.hudi.utilities.deser.KafkaAvroSchemaDeserializer"
BYTE_ARRAY_DESERIALIZER = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
STRING_DESERIALIZER = "org.apache.kafka.common.serialization.StringDeserializer"

TOPIC = define(
    "hoodie.streamer.source.kafka.topic", None,
    "Kafka topic to read.",
    alternatives=("hoodie.deltastreamer.source.kafka.topic",))
AUTO_OFFSET_RESET = define(
    "auto.offset.reset", "LATEST",
    "Where the first run starts when there is no checkpoint: EARLIEST (the oldest retained "
    "offsets), LATEST (only what arrives from now on; Hudi's default) or NONE (fail: a checkpoint "
    "must be given with --checkpoint).",
    choices=("EARLIEST", "LATEST", "NONE"))
MAX_EVENTS = define(
    "hoodie.streamer.kafka.source.maxEvents", 5000000,
    "Most events one batch reads when --source-limit is not given (a positive --source-limit wins).",
    alternatives=("hoodie.deltastreamer.kafka.source.maxEvents",))
MIN_PARTITIONS = define(
    "hoodie.streamer.source.kafka.minPartitions", 0,
    "Desired minimum number of Spark tasks reading a batch: when larger than the number of Kafka "
    "partitions with new events, big offset ranges are split into smaller ones. A hint, not exact.",
    alternatives=("hoodie.deltastreamer.source.kafka.minPartitions",))
FAIL_ON_DATA_LOSS = define(
    "hoodie.streamer.source.kafka.enable.failOnDataLoss", False,
    "Fail when the checkpoint points at offsets Kafka no longer retains (aged out, or the topic was "
    "recreated) instead of going on from the earliest retained offsets.",
    alternatives=("hoodie.deltastreamer.source.kafka.enable.failOnDataLoss",))
APPEND_OFFSETS = define(
    "hoodie.streamer.source.kafka.append.offsets", False,
    "Add each record's Kafka position as columns _hoodie_kafka_source_offset (long), "
    "_hoodie_kafka_source_partition (int), _hoodie_kafka_source_timestamp (long, epoch millis) and "
    "_hoodie_kafka_source_key (string).",
    alternatives=("hoodie.deltastreamer.source.kafka.append.offsets",))
VALUE_DESERIALIZER_CLASS = define(
    "hoodie.streamer.source.kafka.value.deserializer.class", KAFKA_AVRO_DESERIALIZER,
    "How Avro and Debezium values are encoded. KafkaAvroDeserializer (Confluent) or Hudi's "
    "KafkaAvroSchemaDeserializer: the Confluent wire format (magic byte 0, 4-byte schema id, Avro "
    "binary), decoded with the writer's schema from the registry into the source schema; "
    "ByteArrayDeserializer: plain Avro binary in the source schema (AvroKafkaSource); "
    "StringDeserializer: JSON text (Debezium sources).",
    alternatives=("hoodie.deltastreamer.source.kafka.value.deserializer.class",))
POLL_TIMEOUT_MS = define(
    "hoodie.streamer.source.kafka.poll.timeout.ms", 120000,
    "This platform's own: how long the driver waits for the topic's metadata and offsets, and a "
    "reading task for the next message of its offset range, before failing with what it could not "
    "read (the batch is then fetched again when --retry-on-source-failures is on).")
SCHEMA_REGISTRY_URL = define(
    "schema.registry.url", None,
    "Base URL of the Confluent schema registry that resolves the schema ids of wire-format values "
    "(the Confluent deserializer's own key; default: hoodie.streamer.schemaprovider.registry.url up "
    "to '/subjects'). Comma-separated URLs are tried in turn.")
SCHEMA_REGISTRY_USER_INFO = define(
    "basic.auth.user.info", None,
    "'user:password' for the schema registry (the Confluent deserializer's key); credentials in "
    "the registry URL (http://user:password@host:8081) work too.",
    alternatives=("schema.registry.basic.auth.user.info",))
