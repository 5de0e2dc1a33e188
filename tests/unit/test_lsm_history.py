"""The LSM history's pure parts (names, manifests, records, what to merge and clean) against what
Hudi 1.x's LSMTimeline, LSMTimelineWriter and HoodieLSMTimelineManifest define, and the history
on local storage: a killed write invisible, merges and cleans as Hudi orders them."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from hudi_engine.storage import Storage
from hudi_engine.table.archive_conversion import entries_from_records, records_from_entries
from hudi_engine.table.lsm_history import LSMHistory
from hudi_engine.timeline import lsm
from hudi_engine.timeline.avro_models import (CLEANER_PLAN, COMPACTION_PLAN, decode_instant_avro,
                                              encode_instant_avro)
from hudi_engine.timeline.commit_metadata import commit_metadata, encode_commit_metadata
from hudi_engine.timeline.instant import CLEAN, COMMIT, COMPACTION, REPLACE_COMMIT, Instant, State
from hudi_engine.timeline.lsm import HistoryFile, LSMRecord

T = "2025010110{:02d}00000"


def ts(n: int) -> str:
    return T.format(n)


def test_file_names_as_hudi_parses_them():
    assert lsm.file_name(ts(1), ts(9), 0) == f"{ts(1)}_{ts(9)}_0.parquet"
    assert lsm.parse_file_name(f"{ts(1)}_{ts(9)}_2.parquet", 7) == HistoryFile(ts(1), ts(9), 2, 7)
    for other in ("_version_", "manifest_3", f"{ts(1)}_{ts(9)}_10.parquet", f"{ts(1)}_{ts(9)}_0.parquet.crc"):
        assert lsm.parse_file_name(other) is None
    assert lsm.manifest_name(12) == "manifest_12" and lsm.manifest_version("manifest_12") == 12
    assert lsm.manifest_version("manifest_x") is None


def test_manifest_is_jacksons_pretty_print_of_the_file_entries():
    files = [HistoryFile(ts(1), ts(2), 1, 100), HistoryFile(ts(3), ts(4), 0, 20)]
    text = lsm.encode_manifest(files).decode()
    assert text == ('{\n  "files" : [ {\n    "fileName" : "%s",\n    "fileLen" : 100\n  }, {\n'
                    '    "fileName" : "%s",\n    "fileLen" : 20\n  } ]\n}') % (files[0].name, files[1].name)
    assert json.loads(text) == {"files": [{"fileName": f.name, "fileLen": f.size} for f in files]}
    assert lsm.decode_manifest(text.encode(), "m") == files
    assert lsm.encode_manifest([]) == b'{\n  "files" : [ ]\n}'      # Jackson's empty array
    with pytest.raises(ValueError, match="manifest_9 lists 'x.parquet'"):
        lsm.decode_manifest(b'{"files": [{"fileName": "x.parquet", "fileLen": 1}]}', "manifest_9")


def test_a_layer_merges_once_it_holds_a_batch_oldest_first_within_the_size_limit():
    layer0 = [HistoryFile(ts(i), ts(i), 0, 10) for i in range(1, 6)]
    assert lsm.files_to_compact(layer0[:2], 0, 3) == []                     # not a batch yet
    assert lsm.files_to_compact(layer0, 0, 3) == layer0[:3]
    assert lsm.files_to_compact(layer0 + [HistoryFile(ts(1), ts(5), 1, 50)], 1, 3) == []
    # a file past the size limit on its own is skipped; the gathering stops past the limit
    big = [HistoryFile(ts(1), ts(1), 0, 500)] + layer0[1:]
    assert lsm.files_to_compact(big, 0, 3, max_bytes=100) == layer0[1:4]
    assert lsm.files_to_compact([HistoryFile(ts(i), ts(i), 0, 80) for i in range(1, 4)], 0, 3, max_bytes=100) == \
        [HistoryFile(ts(1), ts(1), 0, 80), HistoryFile(ts(2), ts(2), 0, 80)]
    assert lsm.compacted_file(layer0[:3]) == HistoryFile(ts(1), ts(3), 1)
    assert lsm.versions_to_clean([1, 2, 3, 4, 5], 3) == [2, 1]


def test_a_record_carries_the_completed_file_and_the_plan_hudi_keeps():
    meta = encode_commit_metadata(commit_metadata([], "compact", None), 2)
    plan = encode_instant_avro(COMPACTION_PLAN, {"operations": []})
    done = Instant(ts(1), COMMIT, State.COMPLETED, ts(2))
    record = lsm.record_for({Instant(ts(1), COMPACTION, State.REQUESTED): plan,
                             Instant(ts(1), COMPACTION, State.INFLIGHT): b"", done: meta})
    assert record == LSMRecord(ts(1), ts(2), COMMIT, meta, plan)
    profile = encode_commit_metadata(commit_metadata([], "insert_overwrite", None), 2)
    replace = lsm.record_for({Instant(ts(3), REPLACE_COMMIT, State.REQUESTED): b"",
                              Instant(ts(3), REPLACE_COMMIT, State.INFLIGHT): profile,
                              Instant(ts(3), REPLACE_COMMIT, State.COMPLETED, ts(4)): meta})
    assert replace.plan == profile
    plain = lsm.record_for({Instant(ts(5), COMMIT, State.REQUESTED): b"",
                            Instant(ts(5), COMMIT, State.COMPLETED, ts(6)): b""})
    assert plain == LSMRecord(ts(5), ts(6), COMMIT)


def test_records_round_trip_through_the_parquet_schema_hudi_writes():
    records = [LSMRecord(ts(1), ts(2), COMMIT, b"meta", None), LSMRecord(ts(3), None, CLEAN, None, b"plan")]
    table = lsm.records_table(records)
    assert [f.name for f in table.schema] == ["instantTime", "completionTime", "action", "metadata", "plan", "version"]
    assert not table.schema.field("version").nullable and table.column("version").to_pylist() == [1, 1]
    assert lsm.table_records(table) == records
    assert json.loads(lsm.AVRO_SCHEMA_JSON)["name"] == "HoodieLSMTimelineInstant"
    assert lsm.latest_records(records + [LSMRecord(ts(1), ts(2), COMMIT, b"again")])[0].metadata == b"again"


def test_version_6_entries_and_lsm_records_convert_both_ways():
    cleaner_plan = encode_instant_avro(CLEANER_PLAN, {"earliestInstantToRetain": None, "policy": "KEEP_LATEST_COMMITS",
                                                      "filesToBeDeletedPerPartition": {}, "version": 2})
    meta = encode_commit_metadata(commit_metadata([], "upsert", "{}"), 2)
    records = [LSMRecord(ts(1), None, COMMIT, meta), LSMRecord(ts(2), None, CLEAN, b"", cleaner_plan)]
    entries = entries_from_records(records)
    assert [(e["commitTime"], e["actionType"], e["actionState"]) for e in entries] == [
        (ts(1), COMMIT, "COMPLETED"), (ts(2), CLEAN, "REQUESTED"), (ts(2), CLEAN, "COMPLETED")]
    back = records_from_entries(entries)
    assert [(r.instant_time, r.action) for r in back] == [(ts(1), COMMIT), (ts(2), CLEAN)]
    assert decode_instant_avro(back[0].metadata)["operationType"] == "UPSERT"
    assert decode_instant_avro(back[1].plan)["policy"] == "KEEP_LATEST_COMMITS"


def history(tmp_path) -> LSMHistory:
    return LSMHistory(Storage(str(tmp_path)), ".hoodie/timeline/history", "zstd")


def batch(first: int, last: int) -> list[LSMRecord]:
    return [LSMRecord(ts(i), ts(i) + "1", COMMIT, f"m{i}".encode()) for i in range(first, last + 1)]


def test_a_file_no_manifest_lists_is_invisible_and_written_again(tmp_path, monkeypatch):
    h = history(tmp_path)
    h.add(batch(1, 2))
    monkeypatch.setattr(LSMHistory, "_commit", lambda self, files: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        h.add(batch(3, 4))
    monkeypatch.undo()
    assert (tmp_path / f".hoodie/timeline/history/{ts(3)}_{ts(4)}_0.parquet").exists()
    assert [r.instant_time for r in h.records()] == [ts(1), ts(2)]
    h.add(batch(3, 4))
    h.add(batch(3, 4))                       # already listed: kept as it is
    assert [r.instant_time for r in h.records()] == [ts(i) for i in range(1, 5)]
    assert h.latest_version() == 2
    (tmp_path / ".hoodie/timeline/history/_version_").unlink()      # killed before _version_: newest manifest
    assert h.latest_version() == 2


def test_full_layers_merge_and_old_snapshots_are_cleaned(tmp_path):
    h = history(tmp_path)
    for i in range(1, 5):
        h.add(batch(2 * i - 1, 2 * i))
        h.compact_and_clean(2, 3)
    names = sorted(f.name for f in h.files())
    assert names == [f"{ts(1)}_{ts(8)}_2.parquet"]
    assert [r.instant_time for r in h.records()] == [ts(i) for i in range(1, 9)]
    folder = tmp_path / ".hoodie/timeline/history"
    manifests = sorted(p.name for p in folder.glob("manifest_*"))
    assert len(manifests) <= 3 + 2 and (folder / "_version_").read_text() == str(h.latest_version())
    kept = {f.name for v in h.manifest_versions() for f in h.manifest(v)}
    assert {p.name for p in folder.glob("*.parquet")} == kept
    footer = pq.read_metadata(folder / names[0]).metadata
    assert footer[b"parquet.avro.schema"] == lsm.AVRO_SCHEMA_JSON.encode() and footer[b"writer.model.name"] == b"avro"
