"""The file sources end to end on real files and a real SparkSession: successive fetches under a
byte limit, checkpoints, bad records going to the error rows with their file, schemas given or
inferred, for JSON lines, CSV, Parquet and Avro (written with fastavro)."""
import gzip
import io
import json
import os
import time
import uuid
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.storage import Storage
from hudi_jobs.schema_provider import source_schema
from hudi_jobs.sources.base import ERROR_SCHEMA
from hudi_jobs.sources.files import AvroDFSSource, CsvDFSSource, JsonDFSSource, ParquetDFSSource

pytestmark = pytest.mark.spark

BASE_S = int(time.time()) - 1000      # files get distinct, past modification times from here


def place(path, payload, age_index):
    """Write a file with modification time BASE_S + age_index seconds (the order the sources follow)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(payload if isinstance(payload, bytes) else payload.encode())
    mtime_ns = (BASE_S + age_index) * 1_000_000_000
    os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


class Inbox:
    """Where source files land: a local folder, or a folder in a bucket of the real S3 server (files
    there carry their upload time; Spark cannot open s3a:// here, so the sources read through Arrow)."""

    def __init__(self, root: str, local: bool):
        self.root, self.local = root, local

    def put(self, name: str, payload, age_index: int = 0) -> str:
        """Places a file; returns the source position its error records name."""
        if self.local:
            return f"file:{place(Path(self.root) / name, payload, age_index)}"
        Storage(self.root).write_bytes(name, payload if isinstance(payload, bytes) else payload.encode())
        return f"file:{self.root}/{name}"


@pytest.fixture(params=["local", "s3"])
def inbox(request, tmp_path):
    if request.param == "local":
        return Inbox(str(tmp_path / "in"), True)
    return Inbox(f"s3a://{request.getfixturevalue('s3_session')}/in", False)


def json_lines(records):
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def drain(source, spark, limit, columns):
    """Fetch until nothing is new; the rows of every batch, and the checkpoints in order."""
    checkpoint, batches, checkpoints = None, [], []
    for _ in range(20):
        batch = source.fetch(spark, checkpoint, limit)
        if batch.checkpoint == checkpoint:
            assert batch.data is None and batch.errors is None
            return batches, checkpoints
        rows = [] if batch.data is None else batch.data.select(*columns).collect()
        batches.append(sorted(tuple(r) for r in rows))
        checkpoints.append(batch.checkpoint)
        checkpoint = batch.checkpoint
    raise AssertionError("the source never ran dry")


def errors_of(batch):
    assert [(f.name, f.dataType) for f in batch.errors.schema] == [(f.name, f.dataType) for f in ERROR_SCHEMA]
    return sorted((r.reason, r.raw_record, r.source_position) for r in batch.errors.collect())


def epoch_ms(age_index):
    return str((BASE_S + age_index) * 1000)


def test_json_batches_follow_the_limit_and_take_every_row_once(spark, tmp_path):
    inbox = tmp_path / "in"
    sizes = []
    for n in range(4):
        text = json_lines([{"id": n * 10 + i, "name": f"n{n}-{i}"} for i in range(5)])
        if n == 2:      # a gzip file among them
            sizes.append(place(inbox / "day=2" / f"part-{n}.json.gz", gzip.compress(text.encode()), n).stat().st_size)
        else:
            sizes.append(place(inbox / f"part-{n}.json", text, n).stat().st_size)
    place(inbox / "_SUCCESS", "not json", 9)                   # ignored, as in Hudi
    place(inbox / ".part-9.json.crc", "not json", 9)
    place(inbox / "_temporary" / "part-9.json", "{broken", 9)

    source = JsonDFSSource({"hoodie.streamer.source.dfs.root": str(inbox)})
    first = source.fetch(spark, None, sizes[0] + sizes[1])
    assert first.checkpoint == epoch_ms(1)
    assert first.position.startswith("2 files, ")
    assert first.lag_seconds >= 998                              # part-2 has been waiting since BASE_S + 2
    assert first.errors.count() == 0

    batches, checkpoints = drain(source, spark, max(sizes) + 1, ["id", "name"])
    assert checkpoints == [epoch_ms(n) for n in range(4)]
    every = [row for batch in batches for row in batch]
    assert sorted(every) == sorted((n * 10 + i, f"n{n}-{i}") for n in range(4) for i in range(5))
    last = source.fetch(spark, checkpoints[-1], 0)
    assert (last.data, last.checkpoint, last.lag_seconds) == (None, epoch_ms(3), 0.0)


def test_json_bad_lines_go_to_errors_with_their_file_and_never_into_data(spark, inbox):
    inbox.put("good.json", json_lines([{"id": 1, "amount": 2.5}]), 0)
    bad = inbox.put("a b+c.json", json_lines([
        {"id": 2, "amount": 1.0},
        '{"id": 3, "amount": ',                  # unparseable
        "",                                      # blank lines are not records
        {"id": 4, "amount": 7},
    ]), 1)
    source = JsonDFSSource({"hoodie.deltastreamer.source.dfs.root": inbox.root})   # the older key
    batch = source.fetch(spark, None, 0)
    assert sorted(tuple(r) for r in batch.data.select("id", "amount").collect()) == [(1, 2.5), (2, 1.0), (4, 7.0)]
    assert errors_of(batch) == [("JSON_ROW_DESERIALIZATION_FAILURE", '{"id": 3, "amount": ', bad)]


def test_json_read_into_a_given_schema_file_sends_mismatches_to_errors(spark, tmp_path):
    inbox = tmp_path / "in"
    avsc = tmp_path / "orders.avsc"
    avsc.write_text(json.dumps({"type": "record", "name": "order", "fields": [
        {"name": "id", "type": "long"}, {"name": "amount", "type": ["null", "double"], "default": None},
        {"name": "region", "type": ["null", "string"], "default": None}]}))
    schema = source_schema("org.apache.hudi.utilities.schema.FilebasedSchemaProvider",
                           {"hoodie.streamer.schemaprovider.source.schema.file": str(avsc)})
    path = place(inbox / "orders.json", json_lines([
        {"id": 1, "amount": 3, "region": "eu", "extra": "dropped"},
        {"id": 2, "amount": "abc", "region": "us"},          # parses, but amount is not a double
        {"id": 3},
        "[1, 2",                                              # not JSON
    ]), 0)
    batch = JsonDFSSource({"hoodie.streamer.source.dfs.root": str(inbox)}, schema).fetch(spark, None, 0)
    assert [(f.name, f.dataType.simpleString()) for f in batch.data.schema.fields] == [
        ("id", "bigint"), ("amount", "double"), ("region", "string")]
    assert sorted(tuple(r) for r in batch.data.collect()) == [(1, 3.0, "eu"), (3, None, None)]
    # even a query that only needs the key column never sees the mismatched record
    assert sorted(r.id for r in batch.data.select("id").collect()) == [1, 3]
    errors = sorted(batch.errors.collect(), key=lambda r: r.reason)
    assert [(e.reason, e.source_position) for e in errors] == [
        ("INVALID_RECORD_SCHEMA", f"file:{path}"), ("JSON_ROW_DESERIALIZATION_FAILURE", f"file:{path}")]
    assert errors[0].raw_record == '{"id": 2, "amount": "abc", "region": "us"}'
    assert errors[0].message == 'the record does not fit the source schema: amount = abc is not double'
    assert errors[1].raw_record == "[1, 2"


def test_csv_with_header_and_a_custom_separator(spark, inbox):
    """A header on every file, and a comment line; on S3, parsed as Spark's CSV reader would."""
    for n in range(2):
        inbox.put(f"orders-{n}.csv", "id;name;amount\n# a comment\n" + "".join(
            f"{n * 10 + i};name {n}-{i};{i}.5\n" for i in range(3)), n)
    props = {"hoodie.streamer.source.dfs.root": inbox.root, "hoodie.streamer.csv.sep": ";",
             "hoodie.deltastreamer.csv.header": "true", "hoodie.streamer.csv.comment": "#"}
    batch = CsvDFSSource(props).fetch(spark, None, 0)
    assert sorted(tuple(r) for r in batch.data.select("id", "name", "amount").collect()) == [
        (n * 10 + i, f"name {n}-{i}", i + 0.5) for n in range(2) for i in range(3)]
    assert batch.errors.count() == 0


def test_csv_with_header_and_a_custom_separator_in_limited_batches(spark, tmp_path):
    inbox = tmp_path / "in"
    sizes = [place(inbox / f"orders-{n}.csv", "id;name;amount\n" + "".join(
        f"{n * 10 + i};name {n}-{i};{i}.5\n" for i in range(3)), n).stat().st_size for n in range(3)]
    props = {"hoodie.streamer.source.dfs.root": str(inbox), "hoodie.streamer.csv.sep": ";",
             "hoodie.deltastreamer.csv.header": "true"}
    batches, checkpoints = drain(CsvDFSSource(props), spark, sizes[0], ["id", "name", "amount"])
    assert checkpoints == [epoch_ms(0), epoch_ms(1), epoch_ms(2)]
    assert batches == [[(n * 10 + i, f"name {n}-{i}", i + 0.5) for i in range(3)] for n in range(3)]


def test_csv_malformed_lines_go_to_errors_with_their_file(spark, tmp_path, inbox):
    avsc = tmp_path / "s.avsc"
    avsc.write_text(json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "int"}, {"name": "amount", "type": "double"}]}))
    schema = source_schema("FilebasedSchemaProvider", {"hoodie.streamer.schemaprovider.source.schema.file": str(avsc)})
    path = inbox.put("a.csv", "1,2.5\n2,x\n3\n4,4.0\n", 0)
    batch = CsvDFSSource({"hoodie.streamer.source.dfs.root": inbox.root}, schema).fetch(spark, None, 0)
    assert sorted(tuple(r) for r in batch.data.collect()) == [(1, 2.5), (4, 4.0)]
    assert sorted(r.id for r in batch.data.select("id").collect()) == [1, 4]
    assert errors_of(batch) == [("CSV_ROW_DESERIALIZATION_FAILURE", "2,x", path),
                                ("CSV_ROW_DESERIALIZATION_FAILURE", "3", path)]
    message = next(r.message for r in batch.errors.collect() if r.raw_record == "2,x")
    assert message.endswith('it reads as {"id":2}')


def test_parquet_files_with_a_new_nullable_column_merge(spark, tmp_path, inbox):
    old = pa.table({"id": [1, 2], "name": ["a", "b"]})
    new = pa.table({"id": [3], "name": ["c"], "email": ["c@x"]})
    for n, table in enumerate([old, new]):
        pq.write_table(table, tmp_path / "tmp.parquet")
        inbox.put(f"part-{n}.parquet", (tmp_path / "tmp.parquet").read_bytes(), n)
    source = ParquetDFSSource({"hoodie.streamer.source.dfs.root": inbox.root})
    batch = source.fetch(spark, None, 0)
    assert batch.errors is None
    assert sorted(tuple(r) for r in batch.data.select("id", "name", "email").collect()) == [
        (1, "a", None), (2, "b", None), (3, "c", "c@x")]
    if not inbox.local:     # what follows steps through files by the modification times set here
        return
    assert batch.checkpoint == epoch_ms(1)
    inbox = Path(inbox.root)

    one_file = (inbox / "part-0.parquet").stat().st_size
    batches, checkpoints = drain(source, spark, one_file, ["id"])
    assert (batches, checkpoints) == ([[(1,), (2,)], [(3,)]], [epoch_ms(0), epoch_ms(1)])


def avro_file(schema, records, **kwargs):
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, **kwargs)
    return out.getvalue()


ORDER_V1 = {"type": "record", "name": "order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}
ORDER_V2 = {"type": "record", "name": "order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
    {"name": "qty", "type": ["null", "int"], "default": None}]}


def test_avro_files_in_limited_batches_with_a_corrupt_one_reported(spark, tmp_path):
    inbox = tmp_path / "in"
    place(inbox / "p0.avro", avro_file(ORDER_V1, [{"id": i, "name": f"a{i}"} for i in range(3)]), 0)
    corrupt = place(inbox / "p1.avro", b"this is not an avro file", 1)
    place(inbox / "p2.avro", avro_file(ORDER_V2, [{"id": 10, "name": "b", "qty": 4}]), 2)
    source = AvroDFSSource({"hoodie.streamer.source.dfs.root": str(inbox)})

    whole = source.fetch(spark, None, 0)
    assert sorted(tuple(r) for r in whole.data.collect()) == [
        (0, "a0", None), (1, "a1", None), (2, "a2", None), (10, "b", 4)]
    [error] = whole.errors.collect()
    assert (error.reason, error.raw_record, error.source_position) == (
        "AVRO_DESERIALIZATION_FAILURE", None, f"file:{corrupt}")
    assert "does not start with Avro's magic bytes" in error.message

    batches, checkpoints = drain(source, spark, 1, ["id"])                 # one file per batch
    assert checkpoints == [epoch_ms(0), epoch_ms(1), epoch_ms(2)]
    assert batches == [[(0,), (1,), (2,)], [], [(10,)]]


def test_avro_read_into_a_given_schema_and_a_truncated_file_keeps_what_it_could_read(spark, tmp_path):
    inbox = tmp_path / "in"
    whole = avro_file(ORDER_V1, [{"id": i, "name": f"n{i}"} for i in range(200)], sync_interval=200)
    truncated = place(inbox / "cut.avro", whole[: len(whole) // 2], 0)
    place(inbox / "ok.avro", avro_file(ORDER_V1, [{"id": 1000, "name": "x"}]), 1)
    source = AvroDFSSource({"hoodie.streamer.source.dfs.root": str(inbox)}, json.dumps(ORDER_V2))
    batch = source.fetch(spark, None, 0)
    ids = sorted(r.id for r in batch.data.collect())
    assert 1000 in ids and 0 < len(ids) - 1 < 200 and ids[:-1] == list(range(len(ids) - 1))
    assert {r.qty for r in batch.data.collect()} == {None}                  # the reader schema's default
    [error] = batch.errors.collect()
    assert (error.reason, error.source_position) == ("AVRO_DESERIALIZATION_FAILURE", f"file:{truncated}")
    assert f"({len(ids) - 1} records before the failure were read" in error.message


def test_avro_logical_types_unions_maps_and_enums_read_as_the_engine_maps_them(spark, tmp_path):
    schema = {"type": "record", "name": "event", "fields": [
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "kind", "type": {"type": "enum", "name": "kind", "symbols": ["A", "B"]}},
        {"name": "tags", "type": {"type": "map", "values": "long"}},
        {"name": "value", "type": ["null", "long", "string",
                                   {"type": "record", "name": "point", "fields": [{"name": "x", "type": "int"}]}]},
    ]}
    ids = [uuid.UUID(int=i) for i in range(3)]
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    records = [{"id": str(ids[0]), "at": at, "price": Decimal("1.25"), "kind": "A", "tags": {"t": 1}, "value": 7},
               {"id": str(ids[1]), "at": at, "price": Decimal("2.50"), "kind": "B", "tags": {}, "value": "seven"},
               {"id": str(ids[2]), "at": at, "price": Decimal("0.01"), "kind": "A", "tags": {},
                "value": {"x": 3}}]
    inbox = tmp_path / "in"
    place(inbox / "events.avro", avro_file(schema, records), 0)
    batch = AvroDFSSource({"hoodie.streamer.source.dfs.root": str(inbox)}).fetch(spark, None, 0)
    rows = sorted(batch.data.collect(), key=lambda r: r.id)
    assert [r.id for r in rows] == [str(i) for i in ids]
    assert {r.at.timestamp() for r in rows} == {at.timestamp()}
    assert [r.price for r in rows] == [Decimal("1.25"), Decimal("2.50"), Decimal("0.01")]
    assert [r.kind for r in rows] == ["A", "B", "A"]
    assert rows[0].tags == {"t": 1}
    assert [(r.value.member0, r.value.member1, r.value.member2 and r.value.member2.x) for r in rows] == [
        (7, None, None), (None, "seven", None), (None, None, 3)]
    assert batch.errors.count() == 0


def test_a_missing_root_is_reported_with_the_option_name(spark, tmp_path):
    source = JsonDFSSource({"hoodie.streamer.source.dfs.root": str(tmp_path / "nowhere")})
    with pytest.raises(ValueError, match="hoodie.streamer.source.dfs.root=.*nowhere is not a folder"):
        source.fetch(spark, None, 0)
