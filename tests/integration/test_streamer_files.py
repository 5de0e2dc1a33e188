"""The streamer end to end on JSON files: batches, checkpoints, transformers, bad records and the
error table, read back by our reader and by hudi-rs."""
import json
import os
import time

import pytest

from hudi_engine import read
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.instant import parse_instant_time
from hudi_jobs.streamer.checkpoint import CHECKPOINT_KEY
from hudi_jobs.streamer.cli import build_config
from hudi_jobs.streamer.run import Streamer, StreamerError
from tests.support.hudi_rs import hudi_rs_read
from tests.support.streamer import orders_argv
from tests.support.prometheus import samples, start_pushgateway

pytestmark = pytest.mark.spark


def write_json(folder, name, records, mtime):
    """One JSON-lines file with a chosen modification time (the file source orders by it)."""
    path = folder / name
    path.write_text("".join(r if isinstance(r, str) else json.dumps(r) + "\n" for r in records))
    os.utime(path, (mtime, mtime))
    return path


def order(i, amount=10.0, ts=1, region="eu", **extra):
    return {"id": f"o{i}", "amount": amount, "region": region, "ts": ts, **extra}


def run_once(spark, argv):
    streamer = Streamer(spark, build_config(argv))
    try:
        return streamer.sync_once()
    finally:
        streamer.close()


def table_rows(spark, path, *columns):
    return sorted(tuple(r) for r in read(spark, str(path)).select(*columns).collect())


def last_checkpoint(path):
    table = HoodieTable.load(str(path))
    return table.timeline.commit_metadata(table.timeline.last_completed_write())["extraMetadata"][CHECKPOINT_KEY]


def test_batches_follow_the_source_limit_and_resume_from_the_commit(spark, tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    base = time.time() - 100
    files = [write_json(inbox, f"part-{n}.json", [order(n * 10 + i, ts=n) for i in range(10)], base + n)
             for n in range(3)]
    size = files[0].stat().st_size
    argv = orders_argv(tmp_path, "--source-limit", str(size + 1), "--op", "UPSERT")

    instants = [run_once(spark, argv).instant for _ in range(3)]
    assert all(instants) and len(set(instants)) == 3
    assert run_once(spark, argv).instant is None                     # nothing new: no commit
    assert last_checkpoint(tmp_path / "orders") == str(int((base + 2) * 1000))
    # an update of o1 and a new order arrive in a later file
    write_json(inbox, "part-3.json", [order(1, amount=99.0, ts=5), order(100, ts=5)], base + 3)
    assert run_once(spark, argv).instant

    expected = sorted([(f"o{i}", 10.0) for i in range(30) if i != 1] + [("o1", 99.0), ("o100", 10.0)])
    assert table_rows(spark, tmp_path / "orders", "id", "amount") == expected
    outside = hudi_rs_read(tmp_path / "orders")
    assert sorted(zip(outside.column("id").to_pylist(), outside.column("amount").to_pylist())) == expected


@pytest.fixture(params=["local", "s3"])
def landing(request, tmp_path):
    """Where source files land and tables live: a local folder, then a bucket of the real S3
    server (``s3a://``); the streamer reads the one and writes the other."""
    if request.param == "local":
        return str(tmp_path)
    return f"s3a://{request.getfixturevalue('s3_session')}"


def test_bad_records_go_to_the_error_table_once_and_the_rest_is_written(spark, landing):
    """On S3 too: JSON read through Arrow, the error table under GLOBAL_SIMPLE."""
    Storage(landing).write_text("in/batch.json", "".join(r if isinstance(r, str) else json.dumps(r) + "\n" for r in [
        order(1), order(2, code="7"),
        "{not json at all\n",                                       # unparseable
        {"id": None, "amount": 1.0, "region": "eu", "ts": 1},        # no record key
        order(3, amount=-5.0),                                       # fails the quality rule
        order(4, code="seven"),                                      # fails the transformer's cast
    ]))
    argv = orders_argv(
        landing, "--transformer-class", "SqlQueryBasedTransformer",
        "--hoodie-conf", "hoodie.streamer.transformer.sql=SELECT id, amount, region, ts, "
                         "CAST(code AS INT) AS code FROM <SRC>",
        "--hoodie-conf", "hoodie.streamer.quality.rule.positive_amount=amount >= 0",
        "--hoodie-conf", "hoodie.errortable.enable=true",
        "--hoodie-conf", f"hoodie.errortable.base.path={landing}/errors")
    result = run_once(spark, argv)
    assert (result.records_written, result.records_errored) == (2, 4)
    assert table_rows(spark, f"{landing}/orders", "id", "code") == [("o1", None), ("o2", 7)]
    outside = hudi_rs_read(f"{landing}/orders")
    assert sorted(outside.column("id").to_pylist()) == ["o1", "o2"]

    def errors():
        return sorted((r["reason"], r["raw_record"][:40]) for r in read(spark, f"{landing}/errors").collect())
    found = errors()
    assert [reason for reason, _ in found] == ["CUSTOM_TRANSFORMER_FAILURE", "JSON_ROW_DESERIALIZATION_FAILURE",
                                               "QUALITY_RULE_FAILURE", "RECORD_CREATION"]
    assert any("seven" in raw for _, raw in found) and any("not json" in raw for _, raw in found)
    # The same batch fetched again (as after a crash before the target commit) adds no error twice.
    run_once(spark, argv + ["--ignore-checkpoint", "replay-1"])
    assert errors() == found
    assert table_rows(spark, f"{landing}/orders", "id", "code") == [("o1", None), ("o2", 7)]


def test_too_many_bad_records_fail_the_batch_and_commit_nothing(spark, tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    write_json(inbox, "a.json", [order(1)], time.time() - 20)
    argv = orders_argv(tmp_path, "--hoodie-conf", "hoodie.errortable.enable=true",
                         "--hoodie-conf", "hoodie.streamer.errortable.max.error.fraction=0.2")
    run_once(spark, argv)
    write_json(inbox, "b.json", [order(2), "oops\n", "{\n"], time.time() - 10)
    with pytest.raises(StreamerError, match="over the limit"):
        run_once(spark, argv)
    assert table_rows(spark, tmp_path / "orders", "id") == [("o1",)]
    assert not HoodieTable.load(str(tmp_path / "orders")).timeline.pending()


def test_without_an_error_table_a_bad_record_stops_the_batch_naming_it(spark, tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    write_json(inbox, "a.json", [order(1), "{broken\n"], time.time() - 10)
    with pytest.raises(StreamerError, match=r"JSON_ROW_DESERIALIZATION_FAILURE at file:.*a\.json.*broken"):
        run_once(spark, orders_argv(tmp_path))
    assert not HoodieTable.exists(str(tmp_path / "orders"))
    # --commit-on-errors drops them and goes on, as Hudi Streamer's flag does
    assert run_once(spark, orders_argv(tmp_path, "--commit-on-errors")).records_written == 1


def test_chained_transformers_and_flattening(spark, tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    write_json(inbox, "a.json", [{"id": "o1", "ts": 1, "customer": {"name": "ann", "address": {"city": "Oslo"}},
                                  "amount": 3.0}], time.time() - 10)
    argv = ["--target-base-path", str(tmp_path / "orders"), "--target-table", "orders",
            "--source-class", "org.apache.hudi.utilities.sources.JsonDFSSource",
            "--transformer-class", "flat:org.apache.hudi.utilities.transform.FlatteningTransformer",
            "--transformer-class", "double:SqlQueryBasedTransformer",
            "--hoodie-conf", "hoodie.streamer.transformer.sql.double=SELECT *, amount * 2 AS doubled FROM <SRC>",
            "--hoodie-conf", f"hoodie.streamer.source.dfs.root={inbox}",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id"]
    run_once(spark, argv)
    assert table_rows(spark, tmp_path / "orders", "id", "customer_name", "customer_address_city", "doubled") == [
        ("o1", "ann", "Oslo", 6.0)]


def test_a_batch_is_reported_to_a_real_pushgateway(spark, tmp_path):
    """The streamer's own counts, as Prometheus's Pushgateway (a real one, from Debian) holds them."""
    gateway = start_pushgateway(tmp_path / "pushgateway")
    try:
        inbox = tmp_path / "in"
        inbox.mkdir()
        write_json(inbox, "a.json", [order(1), order(2), "{bad\n"], time.time() - 10)
        result = run_once(spark, orders_argv(
            tmp_path, "--commit-on-errors",
            "--hoodie-conf", "hoodie.metrics.on=true",
            "--hoodie-conf", "hoodie.metrics.reporter.type=PROMETHEUS_PUSHGATEWAY",
            "--hoodie-conf", f"hoodie.metrics.pushgateway.port={gateway.port}",
            "--hoodie-conf", "hoodie.metrics.pushgateway.host=127.0.0.1",
            "--hoodie-conf", "hoodie.metrics.pushgateway.job.name=orders-ingest",
            "--hoodie-conf", "hoodie.metrics.pushgateway.random.job.name.suffix=false",
            "--hoodie-conf", "hoodie.metrics.pushgateway.delete.on.shutdown=false"))
        found = {(name, dict(labels).get("table")): v for (name, labels), v in samples(f"{gateway.url}/metrics").items()
                 if dict(labels).get("job") == "orders-ingest"}
        assert found[("hudi_streamer_records_written_total", "orders")] == 2
        assert found[("hudi_streamer_records_errored_total", "orders")] == 1
        assert found[("hudi_streamer_batches_total", "orders")] == 1
        assert found[("hudi_streamer_last_commit_timestamp_seconds", "orders")] == pytest.approx(
            parse_instant_time(result.instant).timestamp(), abs=1)
    finally:
        gateway.stop()


def test_a_new_nullable_column_flows_into_the_table(spark, tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    start = time.time() - 100
    write_json(inbox, "a.json", [order(1), order(2)], start)
    argv = orders_argv(tmp_path)
    run_once(spark, argv)
    write_json(inbox, "b.json", [order(3, coupon="SPRING"), order(1, amount=12.0, ts=2, coupon="VIP")], start + 1)
    run_once(spark, argv)
    assert table_rows(spark, tmp_path / "orders", "id", "amount", "coupon") == [
        ("o1", 12.0, "VIP"), ("o2", 10.0, None), ("o3", 10.0, "SPRING")]
    outside = hudi_rs_read(tmp_path / "orders")
    assert sorted(zip(outside.column("id").to_pylist(), outside.column("coupon").to_pylist()),
                  key=lambda r: r[0]) == [("o1", "VIP"), ("o2", None), ("o3", "SPRING")]


def test_records_read_with_an_avro_schema_file(spark, tmp_path):
    """FilebasedSchemaProvider: the types come from the .avsc, not from inference (amount stays a
    double even when every value in the batch is an integer)."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    write_json(inbox, "a.json", [{"id": "o1", "amount": 5, "region": "eu", "ts": 1}], time.time() - 10)
    schema = {"type": "record", "name": "order", "fields": [
        {"name": "id", "type": "string"}, {"name": "amount", "type": ["null", "double"]},
        {"name": "region", "type": "string"}, {"name": "ts", "type": "long"}]}
    (tmp_path / "order.avsc").write_text(json.dumps(schema))
    run_once(spark, orders_argv(tmp_path, "--schemaprovider-class", "FilebasedSchemaProvider",
                                "--hoodie-conf", f"hoodie.streamer.schemaprovider.source.schema.file={tmp_path / 'order.avsc'}"))
    df = read(spark, str(tmp_path / "orders"))
    assert dict(df.dtypes)["amount"] == "double"
    assert [(r["id"], r["amount"]) for r in df.collect()] == [("o1", 5.0)]
