"""Conflict detection between concurrent writers (pure: instants, metadata and plans in)."""
import pytest

from hudi_engine import HoodieConfigError
from hudi_engine.concurrency.conflicts import (COMPLETED_SINCE_START, PLANNED_SINCE_START, Touch, candidates,
                                               conflict_error, find_conflicts, marker_file_groups,
                                               our_file_groups, written_file_groups)
from hudi_engine.concurrency.settings import concurrency
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieError, HoodieWriteConflictError
from hudi_engine.timeline.instant import Instant, State

OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}


def done(ts, action="commit"):
    return Instant(ts, action, State.COMPLETED)


def pending(ts, action="commit", state=State.INFLIGHT):
    return Instant(ts, action, state)


def stat(partition, file_id):
    return {"partitionPath": partition, "fileId": file_id, "path": f"{partition}/{file_id}_0-1-0_1.parquet"}


def test_written_file_groups_from_write_stats_and_replaced_ids():
    meta = {"partitionToWriteStats": {"eu": [stat("eu", "f1"), stat("eu", "f2")], "us": [stat("us", "f3")]},
            "partitionToReplaceFileIds": {"asia": ["f9"]}}
    assert written_file_groups(meta) == {("eu", "f1"), ("eu", "f2"), ("us", "f3"), ("asia", "f9")}
    # A workload profile's planned inserts carry no file id: they name no file group.
    assert written_file_groups({"partitionToWriteStats": {"eu": [{"partitionPath": "eu", "fileId": ""}]}}) == set()


def test_our_file_groups_include_replaced_groups():
    assert our_file_groups([stat("eu", "a")], {"us": ["b"]}) == {("eu", "a"), ("us", "b")}
    assert our_file_groups([stat("", "a")], None) == {("", "a")}


def test_candidates_are_commits_completed_since_start_and_plans_made_since():
    at_start = {"001": True, "002": False, "003": True, "004": False}
    now = [done("001"), done("002", "deltacommit"), done("003"), pending("004", "compaction", State.REQUESTED),
           pending("005"),                                        # ours
           done("006", "replacecommit"), pending("007", "compaction", State.REQUESTED),
           pending("008", "deltacommit"), done("009", "clean"), done("010", "rollback")]
    found = candidates(now, at_start, "005")
    # 002 started before us and completed after: a candidate although older than the last commit
    # we saw (start times alone would miss it). 004 was planned before we started: we saw it.
    assert [i.timestamp for i in found] == ["002", "006", "007"]


def test_disjoint_file_groups_do_not_conflict():
    other = Touch(done("006"), frozenset({("us", "x")}), COMPLETED_SINCE_START)
    assert find_conflicts({("eu", "a"), ("eu", "new")}, [other]) == []


def test_inserts_into_new_file_groups_by_two_writers_do_not_conflict():
    ours = our_file_groups([stat("eu", "11111111-aaaa-0")], None)
    theirs = written_file_groups({"partitionToWriteStats": {"eu": [stat("eu", "22222222-bbbb-0")]}})
    assert find_conflicts(ours, [Touch(done("2"), frozenset(theirs), COMPLETED_SINCE_START)]) == []


def test_same_file_group_conflicts_and_error_names_instant_and_groups():
    touches = [Touch(done("006"), frozenset({("eu", "a"), ("us", "z")}), COMPLETED_SINCE_START),
               Touch(pending("007", "compaction", State.REQUESTED), frozenset({("eu", "b")}), PLANNED_SINCE_START),
               Touch(done("008"), frozenset({("asia", "q")}), COMPLETED_SINCE_START)]
    conflicts = find_conflicts({("eu", "a"), ("eu", "b"), ("eu", "c")}, touches)
    assert [(c.instant.timestamp, set(c.file_groups)) for c in conflicts] == [
        ("006", {("eu", "a")}), ("007", {("eu", "b")})]
    err = conflict_error("trips", "005", conflicts)
    assert isinstance(err, HoodieWriteConflictError) and isinstance(err, HoodieError)
    message = str(err)
    assert "write 005 to table trips conflicts with commit 006" in message
    assert "eu/a" in message and "eu/b" in message and "compaction 007" in message
    assert "rolled back" in message and "retry" in message


def test_two_writers_adding_inserts_to_the_same_small_file_conflict():
    # Both chose small file "s" (same file id, new version each): a file-group conflict, as in Hudi.
    ours = our_file_groups([stat("eu", "s"), stat("eu", "new1")], None)
    theirs = written_file_groups({"partitionToWriteStats": {"eu": [stat("eu", "s"), stat("eu", "new2")]}})
    [c] = find_conflicts(ours, [Touch(done("9"), frozenset(theirs), COMPLETED_SINCE_START)])
    assert c.file_groups == {("eu", "s")}


def test_insert_overwrites_of_one_partition_conflict_through_replaced_groups():
    ours = our_file_groups([stat("eu", "n1")], {"eu": ["old1", "old2"]})
    theirs = written_file_groups({"partitionToWriteStats": {"eu": [stat("eu", "n2")]},
                                  "partitionToReplaceFileIds": {"eu": ["old1", "old2"]}})
    [c] = find_conflicts(ours, [Touch(done("9", "replacecommit"), frozenset(theirs), COMPLETED_SINCE_START)])
    assert c.file_groups == {("eu", "old1"), ("eu", "old2")}


def test_marker_file_groups_parse_base_and_log_markers():
    names = ["eu/abc-0_1-2-3_20240101000000000.parquet.marker.MERGE",
             "us/west/.def-0_20240101000000000.log.1_1-0-1.marker.APPEND",
             "ghi-0_0-1-1_20240101000000000.parquet.marker.CREATE",
             "eu/not-a-data-file.marker.CREATE"]
    assert marker_file_groups(names) == {("eu", "abc-0"), ("us/west", "def-0"), ("", "ghi-0")}


def test_concurrency_settings_single_writer_defaults():
    conc = concurrency(HoodieConfig({}))
    assert not conc.occ and conc.failed_writes == "EAGER" and not conc.heartbeats
    assert conc.heartbeat_expiry_ms == 60000 * 2


def test_occ_implies_lazy_and_refuses_eager():
    conc = concurrency(HoodieConfig(OCC))
    assert conc.occ and conc.failed_writes == "LAZY" and conc.heartbeats
    with pytest.raises(HoodieConfigError, match="LAZY"):
        concurrency(HoodieConfig({**OCC, "hoodie.cleaner.policy.failed.writes": "EAGER"}))


def test_bad_concurrency_options_are_refused():
    with pytest.raises(HoodieConfigError, match="OPTIMISTIC_CONCURRENCY_CONTROL"):
        concurrency(HoodieConfig({"hoodie.write.concurrency.mode": "MULTI"}))
    with pytest.raises(HoodieConfigError, match="once a second"):
        concurrency(HoodieConfig({**OCC, "hoodie.client.heartbeat.interval_in_ms": "10"}))
    with pytest.raises(HoodieConfigError, match="early.conflict.detection"):
        concurrency(HoodieConfig({"hoodie.write.concurrency.early.conflict.detection.enable": "true"}))
    with pytest.raises(HoodieConfigError, match="conflict.resolution.strategy"):
        concurrency(HoodieConfig({**OCC, "hoodie.write.conflict.resolution.strategy": "Mine"}))


def test_heartbeat_expiry_follows_interval_times_tolerable_misses(tmp_path):
    import os
    import time

    from hudi_engine.concurrency.heartbeat import Heartbeat, heartbeat_expired, heartbeat_path
    from hudi_engine.storage import Storage

    storage = Storage(str(tmp_path))
    assert heartbeat_expired(storage, "001", 2000), "an instant without a heartbeat belongs to no live writer"
    beat = Heartbeat(storage, "001", 1000).start()
    try:
        assert not heartbeat_expired(storage, "001", 2000)
        old = time.time() - 3
        os.utime(tmp_path / heartbeat_path("001"), (old, old))
        assert heartbeat_expired(storage, "001", 2000)
        time.sleep(1.3)  # the daemon thread beats again
        assert not heartbeat_expired(storage, "001", 2000) and beat.beats >= 2
    finally:
        beat.stop()
    assert not (tmp_path / heartbeat_path("001")).exists()


def test_bucket_index_conflicts_are_per_bucket_not_per_file_id():
    from hudi_engine.concurrency.conflicts import Touch, find_conflicts
    from hudi_engine.timeline.instant import COMMIT, Instant, State
    theirs = Touch(Instant("002", COMMIT, State.COMPLETED),
                   frozenset({("eu", "00000003-aaaa-0000-0000-000000000000-0")}), "completed")
    ours = {("eu", "00000003-bbbb-0000-0000-000000000000-0"), ("us", "00000003-cccc-0000-0000-000000000000-0")}
    [conflict] = find_conflicts(ours, [theirs], by_bucket=True)
    assert conflict.file_groups == {("eu", "00000003-bbbb-0000-0000-000000000000-0")}
    assert find_conflicts(ours, [theirs]) == []
