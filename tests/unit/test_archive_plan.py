"""Archival's choice of instants (Hudi's rules) and the archived timeline's records, round trip."""
from __future__ import annotations

import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.services.archive import keep_window
from hudi_engine.services.archive_plan import instants_to_archive
from hudi_engine.storage import Storage
from hudi_engine.table import archived_timeline as ar
from hudi_engine.timeline.avro_models import encode_instant_avro
from hudi_engine.timeline.commit_metadata import commit_metadata_json
from hudi_engine.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, ROLLBACK, SAVEPOINT, Instant, State

DONE = State.COMPLETED


def ts(n: int) -> str:
    return f"2025010110{n:02d}00000"


def commits(n: int, action: str = COMMIT) -> list[Instant]:
    return [Instant(ts(i), action, DONE) for i in range(1, n + 1)]


def stamps(instants):
    return [i.timestamp for i in instants]


def test_nothing_until_max_then_down_to_min():
    assert instants_to_archive(commits(5), 2, 5) == []
    assert stamps(instants_to_archive(commits(6), 2, 5)) == [ts(i) for i in range(1, 5)]


def test_never_past_a_savepoint_a_pending_write_or_the_cleaners_window():
    base = commits(8)
    assert stamps(instants_to_archive(base + [Instant(ts(3), SAVEPOINT, DONE)], 2, 5)) == [ts(1), ts(2)]
    assert stamps(instants_to_archive(base + [Instant(ts(9), COMMIT, State.INFLIGHT)], 2, 5)) == stamps(base[:6])
    pending = sorted(base[:3] + base[4:] + [Instant(ts(4), COMMIT, State.INFLIGHT)])
    assert stamps(instants_to_archive(pending, 2, 5)) == [ts(1), ts(2), ts(3)]
    assert stamps(instants_to_archive(base, 2, 5, clean_retains=ts(2))) == [ts(1)]
    assert stamps(instants_to_archive(base + [Instant(ts(5), COMPACTION, State.REQUESTED)], 2, 5)) == stamps(base[:4])


def test_merge_on_read_keeps_the_last_compaction_and_the_delta_commits_since():
    timeline = commits(3, DELTA_COMMIT) + [Instant(ts(4), COMMIT, DONE)] + \
        [Instant(ts(i), DELTA_COMMIT, DONE) for i in range(5, 9)]
    chosen = instants_to_archive(timeline, 1, 4, merge_on_read=True, compacted=[ts(4)])
    assert stamps(chosen) == [ts(1), ts(2), ts(3)]
    assert instants_to_archive(commits(6, DELTA_COMMIT), 1, 4, merge_on_read=True) == []   # nothing compacted


def test_a_metadata_table_keeps_what_its_tables_timeline_still_needs():
    assert stamps(instants_to_archive(commits(8), 2, 5, retain_from=ts(3))) == [ts(1), ts(2)]


def test_cleans_and_rollbacks_before_the_newest_archived_commit_go_too():
    timeline = sorted(commits(8) + [Instant("2025010110015000", CLEAN, DONE),
                                    Instant("2025010110075000", ROLLBACK, DONE)])
    chosen = instants_to_archive(timeline, 4, 6)
    assert [(i.timestamp, i.action) for i in chosen] == [
        (ts(1), COMMIT), ("2025010110015000", CLEAN), (ts(2), COMMIT), (ts(3), COMMIT), (ts(4), COMMIT)]


def test_archived_records_round_trip(tmp_path):
    storage = Storage(str(tmp_path))
    meta = {"partitionToWriteStats": {"eu": [{"fileId": "f1", "path": "eu/f1_0-1-0_x.parquet",
                                              "prevCommit": "null", "numWrites": 3, "recordsStats": {}}]},
            "compacted": False, "extraMetadata": {"schema": "{}"}, "operationType": "UPSERT"}
    rollback = {"startRollbackTime": ts(3), "timeTakenInMillis": 1, "totalFilesDeleted": 0,
                "commitsRollback": [ts(2)], "partitionMetadata": {}}
    entries = [ar.entry_for(Instant(ts(1), COMMIT, State.REQUESTED), b""),
               ar.entry_for(Instant(ts(1), COMMIT, DONE), commit_metadata_json(meta)),
               ar.entry_for(Instant(ts(3), ROLLBACK, DONE), encode_instant_avro("HoodieRollbackMetadata", rollback))]
    folder = ".hoodie/archived"
    first = ar.next_archive_file(storage, folder)
    assert first == f"{folder}/.commits_.archive.1_1-0-1"
    storage.write_bytes(first, ar.archive_block(entries[:2]))
    storage.write_bytes(ar.next_archive_file(storage, folder), ar.archive_block(entries[2:]))
    read = ar.read_archived_entries(storage, folder)
    assert [(e["commitTime"], e["actionType"], e["actionState"]) for e in read] == [
        (ts(1), COMMIT, "REQUESTED"), (ts(1), COMMIT, "COMPLETED"), (ts(3), ROLLBACK, "COMPLETED")]
    stat = read[1]["hoodieCommitMetadata"]["partitionToWriteStats"]["eu"][0]
    assert (stat["fileId"], stat["numWrites"]) == ("f1", 3)
    assert read[2]["hoodieRollbackMetadata"]["commitsRollback"] == [ts(2)]
    assert ar.archived_instants(storage, folder) == [Instant(ts(1), COMMIT, DONE), Instant(ts(3), ROLLBACK, DONE)]


def test_archival_refuses_keep_settings_the_cleaner_could_outrun():
    assert keep_window(HoodieConfig({})) == (20, 30)
    with pytest.raises(HoodieConfigError, match="hoodie.keep.min.commits=10 must be above"):
        keep_window(HoodieConfig({"hoodie.keep.min.commits": "10", "hoodie.cleaner.commits.retained": "10"}))
    with pytest.raises(HoodieConfigError, match="must be below"):
        keep_window(HoodieConfig({"hoodie.keep.min.commits": "30"}))
    assert keep_window(HoodieConfig({"hoodie.keep.min.commits": "5", "hoodie.cleaner.commits.retained": "10",
                               "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})) == (5, 30)
