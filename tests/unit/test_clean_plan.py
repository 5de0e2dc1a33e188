"""Clean planning against Hudi's CleanPlanner rules: each policy, savepoints, pending compaction and
clustering, replaced file groups, CDC logs, the trigger and the time-travel bound."""
from __future__ import annotations

import datetime as _dt

import pytest

from hudi_engine.errors import HoodieTimelineError
from hudi_engine.file_group.fs_view import BaseFile, FileGroup, FileSlice, LogFile
from hudi_engine.services import clean_plan as cp
from hudi_engine.table import retention
from hudi_engine.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, Instant, State

DONE = State.COMPLETED


def ts(n: int) -> str:
    return f"2025010110{n:02d}00000"


def commits(n: int, action: str = COMMIT) -> list[Instant]:
    return [Instant(ts(i), action, DONE) for i in range(1, n + 1)]


def group(fid: str, versions: list[int], partition: str = "p", logs: bool = False) -> FileGroup:
    slices = []
    for v in versions:
        base = BaseFile(f"{partition}/{fid}_0-1-0_{ts(v)}.parquet", fid, ts(v), 10)
        log_files = [LogFile(f"{partition}/.{fid}_{ts(v)}.log.1_0-1-0", fid, ts(v), 1, 5)] if logs else []
        slices.append(FileSlice(partition, fid, ts(v), base, log_files))
    return FileGroup(partition, fid, slices)


def names(files: dict[str, list[str]]) -> set[str]:
    return {f.rsplit("/", 1)[-1] for paths in files.values() for f in paths}


NOW = _dt.datetime(2025, 1, 1, 12, 0)


def test_keep_latest_commits_keeps_window_and_the_slice_queries_at_its_start_read():
    instants = commits(6)
    keep = cp.Retention(cp.KEEP_LATEST_COMMITS, commits=2)
    earliest = cp.earliest_commit_to_retain(instants, keep, NOW)
    assert earliest.timestamp == ts(5)
    # slices at 1, 2, 4, 6: 6 is latest, 4 is what a query at 5 reads; 1 and 2 go
    files = cp.files_to_clean([group("f1", [1, 2, 4, 6])], keep, earliest.timestamp, cp.TableState())
    assert names(files) == {f"f1_0-1-0_{ts(1)}.parquet", f"f1_0-1-0_{ts(2)}.parquet"}


def test_nothing_to_clean_while_the_window_holds_every_commit():
    keep = cp.Retention(cp.KEEP_LATEST_COMMITS, commits=10)
    assert cp.earliest_commit_to_retain(commits(10), keep, NOW) is None
    assert cp.files_to_clean([group("f1", [1, 2])], keep, None, cp.TableState()) == {}


def test_earliest_retained_never_passes_a_pending_write():
    instants = commits(6) + [Instant(ts(3), DELTA_COMMIT, State.INFLIGHT)]
    instants.sort()
    earliest = cp.earliest_commit_to_retain(instants, cp.Retention(commits=2), NOW)
    assert earliest.timestamp == ts(3)


def test_keep_latest_file_versions():
    keep = cp.Retention(cp.KEEP_LATEST_FILE_VERSIONS, file_versions=2)
    files = cp.files_to_clean([group("f1", [1, 2, 3, 4], logs=True), group("f2", [1])], keep, None,
                              cp.TableState())
    assert names(files) == {f"f1_0-1-0_{ts(1)}.parquet", f".f1_{ts(1)}.log.1_0-1-0",
                            f"f1_0-1-0_{ts(2)}.parquet", f".f1_{ts(2)}.log.1_0-1-0"}


def test_keep_latest_by_hours_retains_commits_newer_than_the_cutoff():
    keep = cp.Retention(cp.KEEP_LATEST_BY_HOURS, hours=1)
    instants = commits(5)  # 10:01 .. 10:05
    assert cp.earliest_commit_to_retain(instants, keep, _dt.datetime(2025, 1, 1, 11, 3)).timestamp == ts(3)
    assert cp.earliest_commit_to_retain(instants, keep, _dt.datetime(2025, 1, 1, 13, 0)) is None


def test_savepointed_slices_are_kept():
    keep = cp.Retention(commits=1)
    state = cp.TableState(savepointed_files=frozenset({f"f1_0-1-0_{ts(1)}.parquet"}))
    files = cp.files_to_clean([group("f1", [1, 2, 3, 5])], keep, ts(5), state)
    assert names(files) == {f"f1_0-1-0_{ts(2)}.parquet"}


def test_pending_compaction_keeps_the_slice_it_reads():
    keep = cp.Retention(cp.KEEP_LATEST_FILE_VERSIONS, file_versions=1)
    state = cp.TableState(compaction_bases={("p", "f1"): ts(2)})
    files = cp.files_to_clean([group("f1", [1, 2, 3])], keep, None, state)
    assert names(files) == {f"f1_0-1-0_{ts(1)}.parquet"}


def test_pending_clustering_groups_are_left_alone():
    keep = cp.Retention(cp.KEEP_LATEST_FILE_VERSIONS, file_versions=1)
    state = cp.TableState(clustering_groups=frozenset({("p", "f1")}))
    assert cp.files_to_clean([group("f1", [1, 2, 3])], keep, None, state) == {}


def test_replaced_groups_go_whole_once_older_than_the_window():
    keep = cp.Retention(commits=2)
    state = cp.TableState(replaced={("p", "old"): ts(3), ("p", "recent"): ts(5)})
    groups = [group("old", [1, 2]), group("recent", [1]), group("new", [3])]
    files = cp.files_to_clean(groups, keep, ts(5), state)
    assert names(files) == {f"old_0-1-0_{ts(1)}.parquet", f"old_0-1-0_{ts(2)}.parquet"}


def test_cdc_logs_go_with_their_slice():
    keep = cp.Retention(cp.KEEP_LATEST_FILE_VERSIONS, file_versions=1)
    cdc = LogFile(f"p/.f1_{ts(1)}.log.1_0-1-0-cdc", "f1", ts(1), 1, 3)
    files = cp.files_to_clean([group("f1", [1, 2])], keep, None, cp.TableState(),
                              {("p", "f1"): {ts(1): [cdc]}})
    assert names(files) == {f"f1_0-1-0_{ts(1)}.parquet", f".f1_{ts(1)}.log.1_0-1-0-cdc"}


def test_trigger_counts_commits_since_the_last_clean():
    instants = commits(3) + [Instant(ts(4), CLEAN, DONE), Instant(ts(5), COMMIT, DONE)]
    assert cp.clean_due(instants, 1)
    assert not cp.clean_due(instants, 2)
    assert not cp.clean_due(instants + [Instant(ts(6), COMPACTION, State.REQUESTED)], 2)


def test_plan_record_uses_full_paths():
    plan = cp.cleaner_plan({"p": ["p/a.parquet"]}, cp.Retention(), Instant(ts(5), COMMIT, DONE), "file:///t/")
    assert plan["filePathsToBeDeletedPerPartition"] == {
        "p": [{"filePath": "file:///t/p/a.parquet", "isBootstrapBaseFile": False}]}
    assert plan["earliestInstantToRetain"] == {"timestamp": ts(5), "action": "commit", "state": "COMPLETED"}


def test_time_travel_bound():
    metas = [{"totalFilesDeleted": 2, "earliestCommitToRetain": ts(3)},
             {"totalFilesDeleted": 0, "earliestCommitToRetain": ts(9)},
             {"totalFilesDeleted": 1, "earliestCommitToRetain": "", "lastCompletedCommitTimestamp": ts(5)}]
    bound = retention.earliest_queryable(metas)
    assert bound == ts(5)
    retention.check_queryable(ts(5), bound, "as.of", "x")
    with pytest.raises(HoodieTimelineError, match=ts(5)):
        retention.check_queryable(ts(4), bound, "as.of", "x")
