"""Instant-file Avro models against real Hudi tables (hudi-rs sample tables, 0.14/0.15 and 1.x)."""
from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import fastavro
import pytest
from fastavro.schema import to_parsing_canonical_form

from hudi_engine.errors import HoodieTimelineError
from hudi_engine.timeline import avro_models as am
from tests.conftest import unzip_fixture


COMMIT_ACTIONS = ("commit", "deltacommit", "replacecommit")
V6_COMPLETED = re.compile(r"^(\d{17})\.(%s)$" % "|".join(COMMIT_ACTIONS))
V8_COMPLETED = re.compile(r"^(\d{17})_(\d{17})\.(%s)$" % "|".join(COMMIT_ACTIONS))
STAT_KEYS = ("fileId", "path", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
             "totalWriteBytes", "fileSizeInBytes", "partitionPath")
SHAPE_KEYS = {"partitionToWriteStats", "partitionToReplaceFileIds", "extraMetadata", "operationType",
              "compacted"}
NS = "org.apache.hudi.avro.model"


def unzip_table(tmp_path: Path, relative_zip: str) -> Path:
    """A sample table written by real Hudi, extracted; fails when the fixture is missing."""
    root = unzip_fixture(f"sample_table/{relative_zip}", tmp_path)
    assert (root / ".hoodie" / "hoodie.properties").is_file(), f"unexpected layout in {relative_zip}"
    return root


def table_version(root: Path) -> int:
    for line in (root / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if line.startswith("hoodie.table.version="):
            return int(line.split("=", 1)[1])
    raise AssertionError("no hoodie.table.version")


def completed_commit_files(root: Path) -> list[Path]:
    if table_version(root) >= 8:
        timeline, pattern = root / ".hoodie" / "timeline", V8_COMPLETED
    else:
        timeline, pattern = root / ".hoodie", V6_COMPLETED
    return sorted(p for p in timeline.iterdir() if p.is_file() and pattern.match(p.name))


def data_partitions(root: Path) -> set[str]:
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".hoodie"]
        if any(f.endswith(".parquet") for f in filenames):
            rel = os.path.relpath(dirpath, root)
            found.add("" if rel == "." else rel.replace(os.sep, "/"))
    return found


def file_ids_in(root: Path, partition: str) -> set[str]:
    directory = root / partition if partition else root
    return {f.name.split("_", 1)[0] for f in directory.iterdir() if f.name.endswith(".parquet")}


COW_TABLES = [
    ("cow/v6_simplekeygen_nonhivestyle_overwritetable.zip", 6, {"commit": 2, "replacecommit": 1}),
    ("cow/v8_simplekeygen_nonhivestyle.zip", 8, {"commit": 2}),
    ("cow/v9_txns_simple_meta.zip", 9, {"commit": 10, "replacecommit": 2}),
    ("cow/v9_txns_simple_overwrite.zip", 9, {"commit": 2, "replacecommit": 1}),
]


@pytest.mark.parametrize("zip_name,version,expected_counts", COW_TABLES, ids=[t[0] for t in COW_TABLES])
def test_completed_commits_of_every_layout_read_into_one_shape(tmp_path, zip_name, version, expected_counts):
    root = unzip_table(tmp_path, zip_name)
    assert table_version(root) == version
    partitions = data_partitions(root)
    files = completed_commit_files(root)
    counts: dict[str, int] = {}
    for f in files:
        action = f.name.rsplit(".", 1)[1]
        counts[action] = counts.get(action, 0) + 1
        raw = f.read_bytes()
        assert raw.startswith(am.AVRO_MAGIC) == (version >= 8), f.name
        md = am.parse_commit_metadata(raw)

        assert SHAPE_KEYS <= set(md), f.name
        assert "version" not in md
        assert isinstance(md["operationType"], str) and md["operationType"], f.name
        assert md["compacted"] is False
        json.loads(md["extraMetadata"]["schema"])  # the writer schema every commit records
        assert md["partitionToWriteStats"], f.name
        written_ids = set()
        for partition, stats in md["partitionToWriteStats"].items():
            assert partition in partitions, (f.name, partition, partitions)
            for stat in stats:
                for key in STAT_KEYS:
                    assert key in stat, (f.name, key)
                assert stat["partitionPath"] == partition
                data_file = root / stat["path"]
                assert data_file.is_file(), (f.name, stat["path"])
                assert data_file.name.startswith(stat["fileId"] + "_")
                assert stat["fileSizeInBytes"] == data_file.stat().st_size
                # numWrites counts every record in the new file, copied-over ones included
                assert stat["numWrites"] >= stat["numInserts"] + stat["numUpdateWrites"]
                assert "baseFile" not in stat and "logFiles" not in stat  # COW: base-file stats only
                written_ids.add(stat["fileId"])

        if action == "replacecommit":
            replaced = md["partitionToReplaceFileIds"]
            assert replaced, f.name
            for partition, file_ids in replaced.items():
                assert partition in partitions
                assert file_ids and set(file_ids) <= file_ids_in(root, partition), (f.name, partition)
                assert not set(file_ids) & written_ids  # replacing makes new file groups
        else:
            assert md["partitionToReplaceFileIds"] == {}
    assert counts == expected_counts


def test_avro_and_json_stats_have_the_same_keys_for_the_same_kind_of_write(tmp_path):
    v6 = unzip_table(tmp_path, "cow/v6_simplekeygen_nonhivestyle_overwritetable.zip")
    v8 = unzip_table(tmp_path, "cow/v8_simplekeygen_nonhivestyle.zip")
    json_stat = next(iter(am.parse_commit_metadata(completed_commit_files(v6)[0].read_bytes())
                          ["partitionToWriteStats"].values()))[0]
    avro_stat = next(iter(am.parse_commit_metadata(completed_commit_files(v8)[0].read_bytes())
                          ["partitionToWriteStats"].values()))[0]
    # 1.x has a few more counters; everything the 0.x JSON carries must be there too.
    missing = set(json_stat) - set(avro_stat)
    assert missing == set(), missing
    assert avro_stat["runtimeStats"].keys() == json_stat["runtimeStats"].keys()


def test_v6_requested_replace_is_avro_with_a_null_plan(tmp_path):
    root = unzip_table(tmp_path, "cow/v6_simplekeygen_nonhivestyle_overwritetable.zip")
    raw = (root / ".hoodie" / "20240707001303088.replacecommit.requested").read_bytes()
    record = am.decode_instant_avro(raw)
    assert record == {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    written = am.writer_schema(raw)
    assert am.full_names(written)[0] == f"{NS}.HoodieRequestedReplaceMetadata"
    # Our definition is the 0.14/0.15 one, field for field.
    assert json.dumps(written, separators=(",", ":")) == json.dumps(
        am.schema_for(am.REQUESTED_REPLACE_METADATA), separators=(",", ":"))
    with pytest.raises(HoodieTimelineError):
        am.parse_commit_metadata(raw)  # a plan, not commit metadata
    # The 0.x inflight next to it is JSON commit metadata (the workload profile).
    inflight_file = root / ".hoodie" / "20240707001303088.replacecommit.inflight"
    inflight = am.parse_commit_metadata(inflight_file.read_bytes())
    assert inflight["operationType"] == "INSERT_OVERWRITE_TABLE"
    assert (root / ".hoodie" / "20240707001302376.commit.requested").read_bytes() == b""


def test_v9_clustering_plan_names_the_file_groups_its_replacecommit_replaces(tmp_path):
    root = unzip_table(tmp_path, "cow/v9_txns_simple_meta.zip")
    timeline = root / ".hoodie" / "timeline"
    plan = am.decode_instant_avro((timeline / "20260307162454799.clustering.requested").read_bytes())
    assert plan["operationType"] == "CLUSTER"
    planned = {(s["partitionPath"], s["fileId"])
               for group in plan["clusteringPlan"]["inputGroups"] for s in group["slices"]}
    [completed] = timeline.glob("20260307162454799_*.replacecommit")
    md = am.parse_commit_metadata(completed.read_bytes())
    replaced = {(p, fid) for p, ids in md["partitionToReplaceFileIds"].items() for fid in ids}
    assert planned == replaced
    assert md["operationType"] == "CLUSTER"


def _sync_split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """(header without marker, marker, blocks without trailing marker)."""
    marker = data[-am.SYNC_SIZE:]
    first = data.index(marker)
    return data[:first], marker, data[first + am.SYNC_SIZE:-am.SYNC_SIZE]


ROLLBACK_PLAN = {
    "instantToRollback": {"commitTime": "20250101000000000", "action": "commit"},
    "RollbackRequests": [
        {"partitionPath": "10", "fileId": "", "latestBaseInstant": "",
         "filesToBeDeleted": ["/t/10/abc-0_0-1-1_20250101000000000.parquet"], "logBlocksToBeDeleted": {}},
        {"partitionPath": "20", "fileId": "def-0", "latestBaseInstant": "20241231000000000",
         "logBlocksToBeDeleted": {"file:/t/20/.def-0_20241231000000000.log.1_0-1-1": 1234}},
    ],
}
ROLLBACK_METADATA = {
    "startRollbackTime": "20250101000001000",
    "timeTakenInMillis": 17,
    "totalFilesDeleted": 1,
    "commitsRollback": ["20250101000000000"],
    "partitionMetadata": {
        "10": {"partitionPath": "10", "successDeleteFiles": ["/t/10/abc-0_0-1-1_20250101000000000.parquet"],
               "failedDeleteFiles": [], "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}},
    },
    "instantsRollback": [{"commitTime": "20250101000000000", "action": "commit"}],
}


@pytest.mark.parametrize("kind,record,names", [
    (am.ROLLBACK_PLAN, ROLLBACK_PLAN,
     [f"{NS}.HoodieRollbackPlan", f"{NS}.HoodieInstantInfo", f"{NS}.HoodieRollbackRequest"]),
    (am.ROLLBACK_METADATA, ROLLBACK_METADATA,
     [f"{NS}.HoodieRollbackMetadata", f"{NS}.HoodieRollbackPartitionMetadata", f"{NS}.HoodieInstantInfo"]),
])
def test_rollback_round_trip_writes_what_java_expects(kind, record, names):
    data = am.encode_instant_avro(kind, record)
    assert data.startswith(am.AVRO_MAGIC)
    header, marker, blocks = _sync_split(data)
    assert header.endswith(b"\x00") and marker not in blocks  # map terminator, one block

    reader = fastavro.reader(io.BytesIO(data))
    assert list(reader.metadata) == ["avro.schema"]  # no avro.codec key, like Hudi's files
    assert reader.codec == "null"
    assert am.full_names(json.loads(reader.metadata["avro.schema"])) == names
    decoded = am.decode_instant_avro(data)
    assert decoded["version"] == 1  # defaults are filled like Java's builders do
    if kind == am.ROLLBACK_PLAN:
        assert decoded["RollbackRequests"][1]["filesToBeDeleted"] == []
        assert decoded["instantToRollback"] == record["instantToRollback"]
    else:
        assert decoded["partitionMetadata"] == record["partitionMetadata"]
        assert decoded["instantsRollback"] == record["instantsRollback"]
    assert am.encode_instant_avro(kind, decoded, sync_marker=marker) == data


@pytest.mark.parametrize("name,kind", [
    ("20250126040936578.rollback.requested", am.ROLLBACK_PLAN),
    ("20250126040936578.rollback", am.ROLLBACK_METADATA),
])
def test_rollback_files_from_hudi_reencode_to_identical_records(tmp_path, name, kind):
    """A 0.x MOR table with a real rollback: our schema must produce the very same datum bytes."""
    root = unzip_table(tmp_path, "mor/parquet/v6_nonpartitioned_rollback.zip")
    assert (root / ".hoodie" / "20250126040936578.rollback.inflight").read_bytes() == b""
    raw = (root / ".hoodie" / name).read_bytes()
    record = am.decode_instant_avro(raw)
    ours = am.encode_instant_avro(kind, record, sync_marker=raw[-am.SYNC_SIZE:])
    assert _sync_split(ours)[1:] == _sync_split(raw)[1:]
    theirs_schema = am.writer_schema(raw)
    assert am.full_names(theirs_schema) == am.full_names(am.schema_for(kind))
    assert (to_parsing_canonical_form(fastavro.parse_schema(theirs_schema))
            == to_parsing_canonical_form(fastavro.parse_schema(am.schema_for(kind))))


@pytest.mark.parametrize("zip_name,pattern,kind", [
    ("cow/v8_simplekeygen_nonhivestyle.zip", "*_*.commit", am.COMMIT_METADATA),
    ("cow/v9_txns_simple_meta.zip", "*_*.replacecommit", am.REPLACE_COMMIT_METADATA),
    ("cow/v9_txns_simple_meta.zip", "?" * 17 + ".inflight", am.COMMIT_METADATA),  # not clustering.inflight
])
def test_our_1x_commit_schemas_match_hudis(tmp_path, zip_name, pattern, kind):
    root = unzip_table(tmp_path, zip_name)
    for f in (root / ".hoodie" / "timeline").glob(pattern):
        raw = f.read_bytes()
        theirs = am.writer_schema(raw)
        assert (to_parsing_canonical_form(fastavro.parse_schema(theirs))
                == to_parsing_canonical_form(fastavro.parse_schema(am.schema_for(kind)))), f.name
        record = am.decode_instant_avro(raw)
        ours = am.encode_instant_avro(kind, record, sync_marker=raw[-am.SYNC_SIZE:])
        assert _sync_split(ours)[1:] == _sync_split(raw)[1:], f.name


def test_kinds_accept_hudi_record_names():
    by_kind = am.encode_instant_avro(am.ROLLBACK_PLAN, {}, sync_marker=b"\x01" * 16)
    assert am.encode_instant_avro("HoodieRollbackPlan", {}, sync_marker=b"\x01" * 16) == by_kind
    assert am.encode_instant_avro(f"{NS}.HoodieRollbackPlan", {}, sync_marker=b"\x01" * 16) == by_kind
    assert am.decode_instant_avro(by_kind) == {
        "instantToRollback": None, "RollbackRequests": None, "version": 1}


def test_encode_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown instant Avro kind"):
        am.encode_instant_avro("clean_plan", {})
    with pytest.raises(ValueError, match="unknown field"):
        am.encode_instant_avro(am.ROLLBACK_PLAN, {"rollbackRequests": []})  # Hudi capitalises it
    with pytest.raises(ValueError, match="missing field 'startRollbackTime'"):
        am.encode_instant_avro(am.ROLLBACK_METADATA, {})
    with pytest.raises(ValueError, match=r"(?s)does not match HoodieRollbackMetadata.*totalFilesDeleted"):
        bad = dict(ROLLBACK_METADATA, totalFilesDeleted="one")
        am.encode_instant_avro(am.ROLLBACK_METADATA, bad)
    with pytest.raises(ValueError, match="sync marker"):
        am.encode_instant_avro(am.ROLLBACK_PLAN, {}, sync_marker=b"short")


def test_parse_commit_metadata_edge_cases():
    assert am.parse_commit_metadata(b"") == am.empty_commit_metadata()
    assert am.parse_commit_metadata(b" \n") == am.empty_commit_metadata()
    md = am.parse_commit_metadata(b'\n {"partitionToWriteStats": null, "operationType": "UPSERT"}')
    assert md == {"partitionToWriteStats": {}, "partitionToReplaceFileIds": {}, "extraMetadata": {},
                  "operationType": "UPSERT", "compacted": False}
    with pytest.raises(HoodieTimelineError):
        am.parse_commit_metadata(b"PAR1....")
    with pytest.raises(HoodieTimelineError):
        am.parse_commit_metadata(b"{not json")
    with pytest.raises(HoodieTimelineError):
        am.decode_instant_avro(b"")
    with pytest.raises(HoodieTimelineError):
        am.parse_commit_metadata(am.AVRO_MAGIC + b"\x00garbage")


def test_avro_commit_metadata_keeps_delta_fields_when_a_log_write_sets_them():
    record = {
        "partitionToWriteStats": {"p": [{
            "fileId": "f-0", "path": "p/.f-0_1.log.1_0-1-1", "partitionPath": "p",
            "baseFile": "f-0_0-1-1_1.parquet", "logFiles": [".f-0_1.log.1_0-1-1"],
            "logVersion": 1, "logOffset": 0, "numWrites": 1}]},
        "operationType": "UPSERT",
    }
    md = am.commit_metadata_from_avro(am.encode_instant_avro(am.COMMIT_METADATA, record))
    stat = md["partitionToWriteStats"]["p"][0]
    assert stat["baseFile"] == "f-0_0-1-1_1.parquet" and stat["logFiles"] == [".f-0_1.log.1_0-1-1"]
    assert stat["logVersion"] == 1 and stat["numDeletes"] is None
    assert md["partitionToReplaceFileIds"] == {} and md["compacted"] is False and md["extraMetadata"] == {}


# Every fixture holding a compaction plan: its own (MOR) or its metadata table's; (zip, plans in it).
ZIPS_WITH_COMPACTION_PLANS = [
    ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", 2),
    ("quickstart_trips_table/mor/avro/v9_trips_lance.zip", 1),
    ("sample_table/cow/v9_lance_txns_nonpart.zip", 1),
    ("sample_table/cow/v9_lance_txns_simple.zip", 1),
    ("sample_table/cow/v9_txns_complex_meta.zip", 1),
    ("sample_table/cow/v9_txns_nonpart_meta.zip", 1),
    ("sample_table/cow/v9_txns_simple_meta.zip", 1),
    ("sample_table/mor/avro/v9_txns_complex_meta.zip", 2),
    ("sample_table/mor/avro/v9_txns_complex_nometa.zip", 1),
    ("sample_table/mor/avro/v9_txns_nonpart_meta.zip", 2),
    ("sample_table/mor/avro/v9_txns_nonpart_nometa.zip", 1),
    ("sample_table/mor/avro/v9_txns_simple_meta.zip", 2),
    ("sample_table/mor/avro/v9_txns_simple_nometa.zip", 1),
]


def _without_docs(schema):
    if isinstance(schema, dict):
        return {k: _without_docs(v) for k, v in schema.items() if k != "doc"}
    if isinstance(schema, list):
        return [_without_docs(v) for v in schema]
    return schema


@pytest.mark.parametrize("zip_name,count", ZIPS_WITH_COMPACTION_PLANS, ids=[z for z, _ in ZIPS_WITH_COMPACTION_PLANS])
def test_compaction_plans_from_hudi_reencode_to_identical_bytes(tmp_path, zip_name, count):
    root = unzip_fixture(zip_name, tmp_path)
    plans = sorted(root.rglob("*.compaction.requested"))
    assert len(plans) == count
    for f in plans:
        raw = f.read_bytes()
        theirs = am.writer_schema(raw)
        # The schema Java embeds equals ours except for two "doc" strings on HoodieCompactionStrategy.
        assert json.dumps(_without_docs(theirs), separators=(",", ":")) == json.dumps(
            am.schema_for(am.COMPACTION_PLAN), separators=(",", ":")), f
        assert am.full_names(theirs) == [f"{NS}.HoodieCompactionPlan", f"{NS}.HoodieCompactionOperation",
                                         f"{NS}.HoodieCompactionStrategy"]
        record = am.decode_instant_avro(raw)
        ours = am.encode_instant_avro("HoodieCompactionPlan", record, sync_marker=raw[-am.SYNC_SIZE:])
        assert _sync_split(ours)[1:] == _sync_split(raw)[1:], f
        assert record["version"] == 2 and record["strategy"] is None
        assert record["preserveHoodieMetadata"] is False and record["missingSchedulePartitions"] == []
        for op in record["operations"]:
            # Version 2 plans name files; the partition path says where they are.
            assert "/" not in (op["dataFilePath"] or "") and all("/" not in p for p in op["deltaFilePaths"])
            assert (f.parents[2] / op["partitionPath"]).is_dir()  # table of the timeline
        assert f.with_name(f.name.replace(".requested", ".inflight")).read_bytes() == b""


def test_compaction_plan_defaults_fill_like_javas_builder():
    plan = {"operations": [{"baseInstantTime": "1", "fileId": "f-0"}]}
    decoded = am.decode_instant_avro(am.encode_instant_avro(am.COMPACTION_PLAN, plan))
    assert decoded == {
        "operations": [{"baseInstantTime": "1", "deltaFilePaths": None, "dataFilePath": None, "fileId": "f-0",
                        "partitionPath": None, "metrics": None, "bootstrapFilePath": None}],
        "extraMetadata": None, "version": 1, "strategy": None, "preserveHoodieMetadata": False,
        "missingSchedulePartitions": None}
    with pytest.raises(ValueError, match="missing field 'fileId'"):
        am.encode_instant_avro(am.COMPACTION_PLAN, {"operations": [{"baseInstantTime": "1"}]})
