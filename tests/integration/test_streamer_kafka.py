"""The streamer reading Kafka, against librdkafka's mock cluster: a STAND-IN for a Kafka broker
(none can run here; tests/support/kafka_mock.py). JSON orders in capped batches with a corrupt
message set aside, and Debezium change events from Postgres applied in LSN order."""
import json

import pytest

from hudi_engine import read
from hudi_engine.table.meta_client import HoodieTable
from hudi_jobs.streamer.checkpoint import CHECKPOINT_KEY
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer
from tests.support.hudi_rs import hudi_rs_read
from tests.support.kafka_mock import MockKafkaCluster

pytestmark = pytest.mark.spark
STRING_VALUES = "org.apache.kafka.common.serialization.StringDeserializer"


@pytest.fixture(scope="module")
def kafka():
    with MockKafkaCluster() as cluster:
        yield cluster


def argv(tmp_path, kafka, topic, source_class, *extra):
    return ["--target-base-path", str(tmp_path / "target"), "--target-table", "target",
            "--source-class", source_class,
            "--hoodie-conf", f"hoodie.streamer.source.kafka.topic={topic}",
            "--hoodie-conf", f"bootstrap.servers={kafka.bootstrap_servers}",
            "--hoodie-conf", "auto.offset.reset=earliest",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id", *extra]


def rounds_until_idle(spark, args, limit=10):
    streamer = Streamer(spark, build_config(args))
    try:
        results = []
        while len(results) < limit:
            results.append(streamer.sync_once())
            if results[-1].instant is None:
                return results
        raise AssertionError("the streamer never ran out of data")
    finally:
        streamer.close()


def checkpoint(path):
    table = HoodieTable.load(str(path))
    return table.timeline.commit_metadata(table.timeline.last_completed_write())["extraMetadata"][CHECKPOINT_KEY]


def test_json_topic_in_capped_batches_every_record_once(spark, tmp_path, kafka):
    kafka.create_topic("orders", 3)
    kafka.produce("orders", [(i % 3, f"o{i}", json.dumps({"id": f"o{i}", "amount": i, "ts": 1})) for i in range(90)]
                  + [(1, "bad", "{not json")])
    args = argv(tmp_path, kafka, "orders", "JsonKafkaSource", "--source-limit", "40",
                "--hoodie-conf", "hoodie.errortable.enable=true",
                "--hoodie-conf", f"hoodie.errortable.base.path={tmp_path / 'errors'}")
    results = rounds_until_idle(spark, args)
    assert len([r for r in results if r.instant]) == 3               # 91 events, at most 40 a batch
    assert sum(r.records_written for r in results) == 90
    assert checkpoint(tmp_path / "target") == "orders,0:30,1:31,2:30"
    kafka.produce("orders", [(0, "o1", json.dumps({"id": "o1", "amount": 1000, "ts": 2}))])
    assert rounds_until_idle(spark, args)[0].records_written == 1

    expected = sorted([(f"o{i}", i) for i in range(90) if i != 1] + [("o1", 1000)])
    assert sorted((r["id"], r["amount"]) for r in read(spark, str(tmp_path / "target")).collect()) == expected
    outside = hudi_rs_read(tmp_path / "target")
    assert sorted(zip(outside.column("id").to_pylist(), outside.column("amount").to_pylist())) == expected
    errors = read(spark, str(tmp_path / "errors")).collect()
    assert [(e["reason"], e["source_position"], e["raw_record"]) for e in errors] == [
        ("JSON_ROW_DESERIALIZATION_FAILURE", "kafka:orders/1@30", "{not json")]


def pg_event(op, before, after, lsn):
    return json.dumps({"before": before, "after": after, "op": op, "ts_ms": 1_700_000_000_000 + lsn,
                       "source": {"connector": "postgresql", "name": "pg", "ts_ms": 1_700_000_000_000 + lsn,
                                  "schema": "public", "table": "customers", "txId": lsn, "lsn": lsn}})


def test_postgres_debezium_changes_become_upserts_and_deletes_in_lsn_order(spark, tmp_path, kafka):
    kafka.create_topic("pg.public.customers", 2)
    ann, bob, cid = ({"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}, {"id": 3, "name": "cid"})
    first = [(0, "1", pg_event("r", None, ann, 10)), (1, "2", pg_event("c", None, bob, 11)),
             (0, "1", pg_event("u", ann, {**ann, "name": "anne"}, 12)), (1, "3", pg_event("c", None, cid, 13)),
             (1, "2", None)]                                            # a tombstone: skipped
    kafka.produce("pg.public.customers", first)
    args = argv(tmp_path, kafka, "pg.public.customers", "PostgresDebeziumSource",
                "--hoodie-conf", f"hoodie.streamer.source.kafka.value.deserializer.class={STRING_VALUES}")
    rounds_until_idle(spark, args)
    # bob is deleted; a replayed, older change of cid (lower LSN) must not undo the newer one
    kafka.produce("pg.public.customers", [(1, "2", pg_event("d", bob, None, 20)),
                                          (1, "3", pg_event("u", cid, {**cid, "name": "cyd"}, 21))])
    rounds_until_idle(spark, args)
    kafka.produce("pg.public.customers", [(0, "3", pg_event("u", cid, {**cid, "name": "stale"}, 14))])
    assert rounds_until_idle(spark, args)[0].records_written == 1
    got = sorted((r["id"], r["name"], r["_event_lsn"]) for r in read(spark, str(tmp_path / "target")).collect())
    assert got == [(1, "anne", 12), (3, "cyd", 21)]
    outside = hudi_rs_read(tmp_path / "target")
    assert sorted(zip(outside.column("id").to_pylist(), outside.column("name").to_pylist())) == [(1, "anne"), (3, "cyd")]
