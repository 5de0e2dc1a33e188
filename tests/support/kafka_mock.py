"""A STAND-IN for a Kafka cluster: librdkafka's built-in mock cluster, which speaks the Kafka
protocol on loopback TCP ports. No Kafka broker can run on these machines (no JVM distribution of
Kafka in the registries we reach), so the Kafka source tests run against this.

How it is reachable from other processes: confluent-kafka does not expose librdkafka's mock
cluster API in Python, but the librdkafka it bundles (``confluent_kafka.libs/librdkafka-*.so``)
exports it. Through ``ctypes`` this helper creates a bare librdkafka handle, starts a mock cluster
on it (``rd_kafka_mock_cluster_new``), and reads its bootstrap servers
(``rd_kafka_mock_cluster_bootstraps``, ``127.0.0.1:<port>,...``). The mock brokers listen on real
loopback sockets owned by this process, so any client in any process on the machine, Spark's
Python workers included, connects to them with plain ``bootstrap.servers``; the cluster lives
until :meth:`MockKafkaCluster.close`. The same API creates topics with a chosen number of
partitions (``rd_kafka_mock_topic_create``; the mock's CreateTopics has no controller) and drops
old records to imitate retention (``rd_kafka_mock_partition_delete_records``).

Like a broker with a small retention, a mock partition keeps only its newest messages (seen here:
about 20,000 of ~300 bytes); older ones go, and the earliest offset moves up. Put big volumes on
more partitions.

(The simpler ``test.mock.num.brokers`` client setting also starts a reachable mock cluster, but
offers no way to create topics with a given partition count or to delete records.)
"""
from __future__ import annotations

import ctypes
import glob
import os
from typing import Iterable

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition

_PRODUCER = 0


def _librdkafka() -> ctypes.CDLL:
    libs = os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)), "confluent_kafka.libs")
    found = glob.glob(os.path.join(libs, "librdkafka*.so*"))
    if not found:
        raise RuntimeError(f"no bundled librdkafka in {libs}: the Kafka mock cluster needs the confluent-kafka wheel")
    lib = ctypes.CDLL(found[0])
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_partition_delete_records.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                                           ctypes.c_int64]
    return lib


class MockKafkaCluster:
    """librdkafka's mock Kafka cluster (a stand-in), reachable at :attr:`bootstrap_servers`."""

    def __init__(self, num_brokers: int = 1):
        self._lib = _librdkafka()
        error = ctypes.create_string_buffer(512)
        self._handle = self._lib.rd_kafka_new(_PRODUCER, self._lib.rd_kafka_conf_new(), error, len(error))
        if not self._handle:
            raise RuntimeError(f"librdkafka handle for the mock cluster: {error.value.decode()}")
        self._cluster = self._lib.rd_kafka_mock_cluster_new(self._handle, num_brokers)
        if not self._cluster:
            self._lib.rd_kafka_destroy(self._handle)
            raise RuntimeError("librdkafka could not start a mock cluster")
        self.bootstrap_servers = self._lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()
        self._producer = Producer({"bootstrap.servers": self.bootstrap_servers, "linger.ms": 0})

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        err = self._lib.rd_kafka_mock_topic_create(self._cluster, name.encode(), partitions, replication_factor)
        if err:
            raise RuntimeError(f"mock cluster: creating topic {name} failed with error code {err}")

    def produce(self, topic: str, messages: Iterable[tuple[int | None, bytes | str | None, bytes | str | None]]) -> None:
        """Writes (partition, key, value) messages in order and waits until all are stored; a
        partition of None lets the producer's partitioner choose (by key)."""
        failures = []

        def delivered(err, msg):
            if err is not None:
                failures.append(err)

        for partition, key, value in messages:
            where = {} if partition is None else {"partition": partition}
            while True:
                try:
                    self._producer.produce(topic, value=value, key=key, on_delivery=delivered, **where)
                    break
                except BufferError:                 # local queue full: let deliveries drain it
                    self._producer.poll(0.1)
            self._producer.poll(0)
        remaining = self._producer.flush(60)
        if remaining or failures:
            raise RuntimeError(f"mock cluster: {remaining} messages undelivered, failures {failures[:3]}")

    def end_offsets(self, topic: str) -> dict[int, int]:
        """Partition → the offset the next message will get."""
        consumer = Consumer({"bootstrap.servers": self.bootstrap_servers, "group.id": "kafka-mock-helper"})
        try:
            partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
            return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
        finally:
            consumer.close()

    def delete_records(self, topic: str, partition: int, before_offset: int) -> None:
        """Drops the records below ``before_offset``, as retention would."""
        err = self._lib.rd_kafka_mock_partition_delete_records(self._cluster, topic.encode(), partition,
                                                              before_offset)
        if err:
            raise RuntimeError(f"mock cluster: deleting records of {topic}/{partition} failed with error code {err}")

    def close(self) -> None:
        if self._cluster:
            self._producer.flush(10)
            del self._producer
            self._lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._lib.rd_kafka_destroy(self._handle)
            self._cluster = self._handle = None

    def __enter__(self) -> MockKafkaCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
