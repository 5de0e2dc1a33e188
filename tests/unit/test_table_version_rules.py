"""What changes between table versions 6 and 8, without Spark: commit metadata in each layout's form,
an upgraded table's properties, completion times from file times, and which instant files change."""
from __future__ import annotations

import datetime as _dt
import json

import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.merge.record_merger import merge_mode
from hudi_engine.services.table_version import (completion_time, converted, downgrade_compacts, eight_properties,
                                                nine_properties, upgraded_properties)
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import AVRO_MAGIC, decode_instant_avro, parse_commit_metadata
from hudi_engine.timeline.commit_metadata import commit_metadata, encode_commit_metadata, encode_completed
from hudi_engine.timeline.instant import Instant, State

STAT = {"fileId": "f1-0", "path": "eu/f1-0_0-1-2_20260101000000000.parquet", "prevCommit": "null", "numWrites": 2,
        "numDeletes": 0, "numUpdateWrites": 1, "numInserts": 1, "totalWriteBytes": 10, "totalWriteErrors": 0,
        "partitionPath": "eu", "fileSizeInBytes": 10, "recordsStats": {"val": None}}


def meta(replaced=None) -> dict:
    return commit_metadata([STAT], "upsert", '{"type":"record"}', {"k": "v"}, replaced)


def test_commit_metadata_is_json_in_layout_1_and_avro_in_layout_2():
    as_json = encode_commit_metadata(meta(), 1)
    assert json.loads(as_json)["partitionToWriteStats"]["eu"][0]["recordsStats"] == {"val": None}
    as_avro = encode_commit_metadata(meta(), 2)
    assert as_avro[:4] == AVRO_MAGIC
    record = decode_instant_avro(as_avro)
    [stat] = record["partitionToWriteStats"]["eu"]
    assert "recordsStats" not in stat and stat["numWrites"] == 2 and record["operationType"] == "UPSERT"
    [from_avro] = parse_commit_metadata(as_avro)["partitionToWriteStats"]["eu"]
    [from_json] = parse_commit_metadata(as_json)["partitionToWriteStats"]["eu"]
    assert {k: from_avro[k] for k in STAT if k != "recordsStats"} == {k: from_json[k] for k in STAT
                                                                       if k != "recordsStats"}


def test_a_replacecommit_keeps_its_replaced_file_ids_in_avro():
    record = decode_instant_avro(encode_completed("replacecommit", meta({"eu": ["f0-0"]}), 2))
    assert record["partitionToReplaceFileIds"] == {"eu": ["f0-0"]}
    # A pending clustering completes as a replacecommit.
    assert decode_instant_avro(encode_completed("clustering", meta({"eu": ["f0-0"]}), 2))[
        "partitionToReplaceFileIds"] == {"eu": ["f0-0"]}
    assert "partitionToReplaceFileIds" not in decode_instant_avro(encode_completed("commit", meta({}), 2))


def test_an_upgraded_tables_merge_mode_follows_its_payload_class():
    event = upgraded_properties({"hoodie.table.version": "6", "hoodie.timeline.layout.version": "1",
                                 "hoodie.compaction.payload.class":
                                     "org.apache.hudi.common.model.DefaultHoodieRecordPayload"})
    assert {k: event[k] for k in ("hoodie.table.version", "hoodie.timeline.layout.version", "hoodie.timeline.path",
                                  "hoodie.timeline.history.path", "hoodie.record.merge.mode",
                                  "hoodie.record.merge.strategy.id")} == {
        "hoodie.table.version": "8", "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history", "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"}
    latest = upgraded_properties({"hoodie.compaction.payload.class":
                                  "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"})
    assert (latest["hoodie.record.merge.mode"], latest["hoodie.record.merge.strategy.id"]) == (
        "COMMIT_TIME_ORDERING", "ce9acb64-bde0-424c-9b91-f6ebba25356d")
    assert "hoodie.table.initial.version" not in event


def test_payload_classes_say_their_merge_mode_as_hudi_1x_maps_them():
    def mode(payload):
        return merge_mode(HoodieConfig({"hoodie.datasource.write.payload.class": f"org.apache.hudi.common.model.{payload}",
                                        "hoodie.datasource.write.precombine.field": "ts"}))
    assert mode("EventTimeAvroPayload") == mode("DefaultHoodieRecordPayload") == "EVENT_TIME_ORDERING"
    assert mode("OverwriteWithLatestAvroPayload") == "COMMIT_TIME_ORDERING"
    with pytest.raises(HoodieConfigError, match="PartialUpdateAvroPayload merges by logic of its own"):
        upgraded_properties({"hoodie.table.name": "t", "hoodie.compaction.payload.class":
                             "org.apache.hudi.common.model.PartialUpdateAvroPayload"})


V8 = {"hoodie.table.name": "t", "hoodie.table.version": "8", "hoodie.timeline.layout.version": "2",
      "hoodie.timeline.path": "timeline", "hoodie.timeline.history.path": "history",
      "hoodie.table.precombine.field": "ts", "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
      "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
      "hoodie.compaction.payload.class": "org.apache.hudi.common.model.EventTimeAvroPayload"}


def test_version_9_keeps_the_payload_as_legacy_and_the_ordering_field_under_its_new_name():
    nine = nine_properties(V8)
    assert nine == {**{k: v for k, v in V8.items() if k not in (
        "hoodie.table.precombine.field", "hoodie.record.merge.strategy.id", "hoodie.compaction.payload.class")},
        "hoodie.table.version": "9", "hoodie.table.ordering.fields": "ts",
        "hoodie.table.legacy.payload.class": "org.apache.hudi.common.model.EventTimeAvroPayload"}
    assert eight_properties(nine) == V8                             # and back, as Hudi's downgrade does
    # A table created at 9 has no legacy payload: version 8 gets the merge mode's.
    created = {k: v for k, v in nine.items() if k != "hoodie.table.legacy.payload.class"}
    assert eight_properties(created)["hoodie.compaction.payload.class"] == (
        "org.apache.hudi.common.model.DefaultHoodieRecordPayload")
    with pytest.raises(HoodieConfigError, match="CUSTOM is one this engine does not run"):
        nine_properties({**V8, "hoodie.record.merge.mode": "CUSTOM"})


def test_only_a_merge_on_read_table_going_down_to_6_compacts_its_logs(tmp_path):
    def table(kind: str, version: int) -> HoodieTable:
        return HoodieTable(Storage(str(tmp_path)), {"hoodie.table.name": "t", "hoodie.table.type": kind,
                                                    "hoodie.table.version": str(version)})
    assert downgrade_compacts(table("MERGE_ON_READ", 9), 6) and downgrade_compacts(table("MERGE_ON_READ", 8), 6)
    assert not downgrade_compacts(table("MERGE_ON_READ", 9), 8)        # hoodie.properties only: no Spark
    assert not downgrade_compacts(table("COPY_ON_WRITE", 9), 6)
    with pytest.raises(HoodieConfigError, match="cannot downgrade t from version 6 to 8"):
        downgrade_compacts(table("MERGE_ON_READ", 6), 8)


def test_completion_time_is_the_files_time_but_never_before_the_instant():
    moment = _dt.datetime(2026, 1, 1, 10, 0, 5, 123000)
    ns = int(moment.timestamp() * 1e9)
    assert completion_time("20260101100000000", ns, utc=False) == "20260101100005123"
    assert completion_time("20260101100009000", ns, utc=False) == "20260101100009000"     # a clock behind
    assert completion_time("20260101100000000", None, utc=False) == "20260101100000000"
    utc_ns = int(_dt.datetime(2026, 1, 1, 10, 0, 5, tzinfo=_dt.timezone.utc).timestamp() * 1e9)
    assert completion_time("20260101100000000", utc_ns, utc=True) == "20260101100005000"


def test_only_commit_metadata_is_rewritten_on_upgrade():
    as_json = encode_commit_metadata(meta(), 1)
    done = Instant("20260101100000000", "deltacommit", State.COMPLETED, "20260101100001000")
    assert converted(done, as_json)[:4] == AVRO_MAGIC
    inflight = Instant("20260101100000000", "commit", State.INFLIGHT)
    assert converted(inflight, as_json)[:4] == AVRO_MAGIC
    requested = Instant("20260101100000000", "commit", State.REQUESTED)
    assert converted(requested, b"") == b""
    plan = b"Obj\x01plan bytes"
    assert converted(Instant("20260101100000000", "compaction", State.REQUESTED), plan) == plan
    assert converted(Instant("20260101100000000", "clean", State.COMPLETED, "20260101100001000"), plan) == plan
