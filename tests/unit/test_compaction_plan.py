"""Compaction scheduling against Hudi's rules and the plans real Hudi wrote (hudi-rs fixture tables)."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.file_group.fs_view import BaseFile, FileSlice, LogFile
from hudi_engine.file_group.naming import parse_base_file_name, parse_log_file_name
from hudi_engine.services import compaction_plan as cp
from hudi_engine.storage import Storage
from hudi_engine.table import pending
from hudi_engine.timeline import avro_models as am
from hudi_engine.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from hudi_engine.timeline.timeline import Timeline
from tests.conftest import unzip_fixture

MB = 1024 * 1024
DONE, INFLIGHT, REQUESTED = State.COMPLETED, State.INFLIGHT, State.REQUESTED


def cfg(**options) -> HoodieConfig:
    """Options by keyword, underscores standing for dots."""
    return HoodieConfig({k.replace("_", "."): v for k, v in options.items()})


def dc(ts: str, state: State = DONE) -> Instant:
    return Instant(ts, DELTA_COMMIT, state)


def at(second: int, millis: int = 0) -> str:
    """An instant time ``second`` seconds after 2025-01-01 10:00:00."""
    hours, rest = divmod(second, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"20250101{10 + hours:02d}{minutes:02d}{seconds:02d}{millis:03d}"


def log(partition: str, file_id: str, instant: str, size: int, version: int = 1) -> LogFile:
    prefix = f"{partition}/" if partition else ""
    return LogFile(f"{prefix}.{file_id}_{instant}.log.{version}_0-1-1", file_id, instant, version, size)


def fslice(partition: str, file_id: str, base_size: int | None, log_sizes: list[int], base: str = "001") -> FileSlice:
    """A slice with a base file of ``base_size`` bytes (None: none) and one log file per size."""
    prefix = f"{partition}/" if partition else ""
    base_file = None if base_size is None else BaseFile(f"{prefix}{file_id}_0-1-1_{base}.parquet", file_id, base,
                                                        base_size)
    logs = [log(partition, file_id, f"{int(base) + i + 1:03d}", size) for i, size in enumerate(log_sizes)]
    return FileSlice(partition, file_id, base, base_file, logs)


# --- trigger: counting delta commits ------------------------------------------------------------

def test_nothing_to_count_on_an_empty_timeline_or_one_without_completed_delta_commits():
    assert pending.delta_commits_since_compaction([]) is None
    assert pending.delta_commits_since_compaction([dc("001", INFLIGHT), Instant("002", REPLACE_COMMIT, DONE)]) is None


def test_without_compaction_completed_delta_commits_count_from_the_first():
    timeline = [dc("001"), dc("002"), Instant("003", REPLACE_COMMIT, DONE), dc("004"), dc("005", INFLIGHT)]
    assert pending.delta_commits_since_compaction(timeline) == pending.DeltaCommitInfo(3, "001")


def test_a_completed_compaction_restarts_the_count_and_clustering_does_not():
    timeline = [dc("001"), dc("002"), Instant("003", COMMIT, DONE), dc("004"),
                Instant("005", REPLACE_COMMIT, DONE), dc("006"), dc("007", REQUESTED)]
    assert pending.delta_commits_since_compaction(reversed(timeline)) == pending.DeltaCommitInfo(2, "003")
    # A compaction commit alone is something to count from, even with nothing after it.
    assert pending.delta_commits_since_compaction([Instant("003", COMMIT, DONE)]) == pending.DeltaCommitInfo(0, "003")


def test_after_last_request_counts_from_a_pending_compaction_and_takes_pending_delta_commits():
    timeline = [dc("001"), Instant("002", COMMIT, DONE), dc("003"), dc("004"),
                Instant("005", COMPACTION, REQUESTED), dc("006"), dc("007", INFLIGHT)]
    assert pending.delta_commits_since_compaction(timeline) == pending.DeltaCommitInfo(3, "002")
    assert pending.delta_commits_since_compaction(timeline, after_last_request=True) == pending.DeltaCommitInfo(2, "005")
    inflight = [i if i.timestamp != "005" else Instant("005", COMPACTION, INFLIGHT) for i in timeline]
    assert pending.delta_commits_since_compaction(inflight, after_last_request=True) == pending.DeltaCommitInfo(2, "005")
    # With no compaction pending it counts from the last completed one (pending delta commits too).
    no_request = [i for i in timeline if i.action != COMPACTION]
    assert pending.delta_commits_since_compaction(no_request, after_last_request=True) == pending.DeltaCommitInfo(4, "002")


def test_elapsed_seconds_cut_each_time_to_the_second_first():
    assert cp.elapsed_seconds(at(0, 999), at(1, 0)) == 1
    assert cp.elapsed_seconds(at(0, 0), at(0, 999)) == 0
    assert cp.elapsed_seconds(at(0), at(3600)) == 3600
    assert cp.elapsed_seconds("20241231235959000", "20250101000000000") == 1


# --- trigger: strategies ------------------------------------------------------------------------

@pytest.mark.parametrize("strategy,commits,seconds,due", [
    ("NUM_COMMITS", 5, 0, True), ("NUM_COMMITS", 4, 10**6, False),
    ("NUM_COMMITS_AFTER_LAST_REQUEST", 5, 0, True), ("NUM_COMMITS_AFTER_LAST_REQUEST", 4, 10**6, False),
    ("TIME_ELAPSED", 0, 3600, True), ("TIME_ELAPSED", 100, 3599, False),
    ("NUM_AND_TIME", 5, 3600, True), ("NUM_AND_TIME", 4, 3600, False), ("NUM_AND_TIME", 5, 3599, False),
    ("NUM_OR_TIME", 5, 0, True), ("NUM_OR_TIME", 0, 3600, True), ("NUM_OR_TIME", 4, 3599, False),
    ("num_or_time", 5, 0, True),
])
def test_trigger_thresholds_are_inclusive(strategy, commits, seconds, due):
    assert cp.compaction_due(strategy, 5, 3600, commits, seconds) is due


def test_unknown_trigger_strategy_names_the_key():
    with pytest.raises(HoodieConfigError, match="hoodie.compact.inline.trigger.strategy.*NUM_OR_TIME"):
        cp.compaction_due("EVERY_COMMIT", 5, 3600, 5, 0)


def five_delta_commits(start: int = 0) -> list[Instant]:
    return [dc(at(start + 60 * i)) for i in range(5)]


def test_num_commits_fires_at_the_fifth_delta_commit_by_default():
    timeline = five_delta_commits()
    assert cp.should_schedule_compaction(timeline, at(600), cfg()) is True
    assert cp.should_schedule_compaction(timeline[:4], at(600), cfg()) is False
    assert cp.should_schedule_compaction(timeline[:3], at(600), cfg(hoodie_compact_inline_max_delta_commits=3))
    # After a completed compaction the count starts again.
    done = timeline + [Instant(at(300), COMMIT, DONE), dc(at(360))]
    assert cp.should_schedule_compaction(done, at(600), cfg()) is False


def test_nothing_is_due_without_delta_commits_whatever_the_strategy():
    for strategy in cp.TRIGGER_STRATEGIES:
        options = cfg(**{"hoodie_compact_inline_trigger_strategy": strategy,
                         "hoodie_compact_inline_max_delta_commits": 0,
                         "hoodie_compact_inline_max_delta_seconds": 0})
        assert cp.should_schedule_compaction([dc(at(0), INFLIGHT)], at(10), options) is False


def test_after_last_request_waits_for_new_delta_commits_after_a_pending_compaction():
    timeline = five_delta_commits() + [Instant(at(290), COMPACTION, REQUESTED)] + [dc(at(300 + i)) for i in range(4)]
    # Nine completed delta commits and no completed compaction: NUM_COMMITS fires again...
    assert cp.should_schedule_compaction(timeline, at(600), cfg()) is True
    # ...NUM_COMMITS_AFTER_LAST_REQUEST counts only the four after the pending request.
    after = cfg(hoodie_compact_inline_trigger_strategy="NUM_COMMITS_AFTER_LAST_REQUEST")
    assert cp.should_schedule_compaction(timeline, at(600), after) is False
    assert cp.should_schedule_compaction(timeline + [dc(at(310), INFLIGHT)], at(600), after) is True


def test_time_elapsed_counts_from_the_first_delta_commit_then_from_the_last_compaction():
    timed = cfg(hoodie_compact_inline_trigger_strategy="TIME_ELAPSED", hoodie_compact_inline_max_delta_seconds=600)
    timeline = [dc(at(0, 500)), dc(at(100))]
    assert cp.should_schedule_compaction(timeline, at(600, 0), timed) is True
    assert cp.should_schedule_compaction(timeline, at(599, 999), timed) is False
    compacted = timeline + [Instant(at(200), COMMIT, DONE), dc(at(300))]
    assert cp.should_schedule_compaction(compacted, at(799), timed) is False
    assert cp.should_schedule_compaction(compacted, at(800), timed) is True


def test_num_and_time_needs_both_and_num_or_time_either():
    timeline = five_delta_commits()
    both = cfg(hoodie_compact_inline_trigger_strategy="NUM_AND_TIME")
    either = cfg(hoodie_compact_inline_trigger_strategy="num_or_time")
    assert cp.should_schedule_compaction(timeline, at(3599), both) is False
    assert cp.should_schedule_compaction(timeline, at(3600), both) is True
    assert cp.should_schedule_compaction(timeline[:4], at(3600), both) is False
    assert cp.should_schedule_compaction(timeline[:4], at(3599), either) is False
    assert cp.should_schedule_compaction(timeline[:4], at(3600), either) is True
    assert cp.should_schedule_compaction(timeline, at(300), either) is True


# --- plan strategies ----------------------------------------------------------------------------

@pytest.mark.parametrize("value,name", [
    (None, cp.LOG_FILE_SIZE_BASED),
    ("org.apache.hudi.table.action.compact.strategy.LogFileNumBasedCompactionStrategy", cp.LOG_FILE_NUM_BASED),
    ("BoundedIOCompactionStrategy", cp.BOUNDED_IO),
    (" UnBoundedCompactionStrategy ", cp.UNBOUNDED),
])
def test_strategy_is_named_by_full_or_simple_class_name(value, name):
    options = {} if value is None else {"hoodie.compaction.strategy": value}
    assert cp.compaction_strategy(HoodieConfig(options)) == name


@pytest.mark.parametrize("value", ["org.apache.hudi.table.action.compact.strategy.DayBasedCompactionStrategy",
                                   "com.example.LogFileSizeBasedCompactionStrategy", "logfilesizebased"])
def test_unsupported_strategies_are_refused_with_the_choices(value):
    with pytest.raises(HoodieConfigError, match="hoodie.compaction.strategy") as err:
        cp.plan_compaction([fslice("p", "a-0", 10, [1])], HoodieConfig({"hoodie.compaction.strategy": value}))
    for name in cp.STRATEGIES:
        assert f"{cp.STRATEGY_PACKAGE}.{name}" in str(err.value)


def test_metrics_are_whole_megabytes_and_a_missing_base_file_costs_a_full_one_to_write():
    m = pending.slice_metrics(fslice("p", "a-0", 3 * MB, [MB, MB // 2 + 7]), 120 * MB)
    assert list(m) == ["TOTAL_LOG_FILES", "TOTAL_IO_MB", "TOTAL_IO_READ_MB", "TOTAL_LOG_FILES_SIZE",
                       "TOTAL_IO_WRITE_MB"]  # Java HashMap order, as in Hudi's plans
    assert m == {"TOTAL_LOG_FILES": 2.0, "TOTAL_IO_MB": 7.0, "TOTAL_IO_READ_MB": 4.0,
                 "TOTAL_LOG_FILES_SIZE": float(MB + MB // 2 + 7), "TOTAL_IO_WRITE_MB": 3.0}
    m = pending.slice_metrics(fslice("p", "a-0", None, [MB - 1]), 125829120)
    assert (m["TOTAL_IO_READ_MB"], m["TOTAL_IO_WRITE_MB"], m["TOTAL_IO_MB"]) == (0.0, 120.0, 120.0)
    assert pending.slice_metrics(fslice("p", "a-0", 0, [1]), 5 * MB)["TOTAL_IO_WRITE_MB"] == 5.0


def test_operations_name_files_and_order_log_files():
    s = fslice("2024/01", "a-0", 10, [1, 2, 3])
    s.log_files.reverse()
    op = pending.compaction_operation(s, 120 * MB)
    assert op["dataFilePath"] == "a-0_0-1-1_001.parquet" and op["partitionPath"] == "2024/01"
    assert op["deltaFilePaths"] == [".a-0_002.log.1_0-1-1", ".a-0_003.log.1_0-1-1", ".a-0_004.log.1_0-1-1"]
    assert (op["baseInstantTime"], op["fileId"], op["bootstrapFilePath"]) == ("001", "a-0", None)
    s = FileSlice("p", "b-0", "005", None, [log("p", "b-0", "005", 9, version=2), log("p", "b-0", "005", 9)])
    assert pending.compaction_operation(s, 0)["deltaFilePaths"] == [".b-0_005.log.1_0-1-1", ".b-0_005.log.2_0-1-1"]
    assert pending.compaction_operation(s, 0)["dataFilePath"] is None


def ops(plan):
    return [(op["partitionPath"], op["fileId"]) for op in plan["operations"]]


def test_default_strategy_orders_by_log_size_and_drops_file_groups_below_the_threshold():
    slices = [fslice("p1", "a-0", 10, [100]), fslice("p1", "b-0", 10, [300]), fslice("p2", "c-0", 10, [50, 250]),
              fslice("p2", "d-0", 10, [300]), fslice("p3", "e-0", 10, [])]
    plan = cp.plan_compaction(slices, cfg())
    assert ops(plan) == [("p1", "b-0"), ("p2", "c-0"), ("p2", "d-0"), ("p1", "a-0")]  # ties keep listing order
    assert plan["missingSchedulePartitions"] == []
    plan = cp.plan_compaction(slices, cfg(hoodie_compaction_logfile_size_threshold=300))
    assert ops(plan) == [("p1", "b-0"), ("p2", "c-0"), ("p2", "d-0")]
    assert plan["missingSchedulePartitions"] == ["p1"]
    assert cp.plan_compaction(slices, cfg(hoodie_compaction_logfile_size_threshold=301)) is None


def test_log_file_num_strategy_orders_by_log_count_and_filters_by_it():
    num = {"hoodie.compaction.strategy": "LogFileNumBasedCompactionStrategy"}
    slices = [fslice("p1", "a-0", 10, [900]), fslice("p2", "b-0", 10, [1, 1, 1]), fslice("p1", "c-0", 10, [5, 5])]
    assert ops(cp.plan_compaction(slices, HoodieConfig(num))) == [("p2", "b-0"), ("p1", "c-0"), ("p1", "a-0")]
    plan = cp.plan_compaction(slices, HoodieConfig({**num, "hoodie.compaction.logfile.num.threshold": "2"}))
    assert ops(plan) == [("p2", "b-0"), ("p1", "c-0")]
    assert plan["missingSchedulePartitions"] == ["p1"]


def test_io_bound_takes_operations_while_budget_remains():
    # Log-only slices cost 120 MB each (a full base file to write).
    slices = [fslice(f"p{i % 2}", f"f{i}-0", None, [1000 - i]) for i in range(4)]
    bounded = {"hoodie.compaction.strategy": "BoundedIOCompactionStrategy"}
    plan = cp.plan_compaction(slices, HoodieConfig({**bounded, "hoodie.compaction.target.io": "250"}))
    assert ops(plan) == [("p0", "f0-0"), ("p1", "f1-0"), ("p0", "f2-0")]  # 250 -> 130 -> 10 -> -110
    assert plan["missingSchedulePartitions"] == ["p1"]
    plan = cp.plan_compaction(slices, HoodieConfig({**bounded, "hoodie.compaction.target.io": "240"}))
    assert ops(plan) == [("p0", "f0-0"), ("p1", "f1-0")]  # 240 -> 120 -> 0: budget spent
    assert plan["missingSchedulePartitions"] == ["p0", "p1"]
    assert cp.plan_compaction(slices, HoodieConfig({**bounded, "hoodie.compaction.target.io": "0"})) is None
    # The default strategy ranks first, then bounds.
    ranked = cp.plan_compaction(list(reversed(slices)), cfg(hoodie_compaction_target_io=121))
    assert ops(ranked) == [("p0", "f0-0"), ("p1", "f1-0")]


def test_unbounded_takes_every_candidate_in_listing_order():
    slices = [fslice("p", "a-0", 10, [1]), fslice("p", "b-0", 10, [9, 9]), fslice("p", "c-0", 10, [])]
    unbounded = HoodieConfig({"hoodie.compaction.strategy": "UnBoundedCompactionStrategy",
                              "hoodie.compaction.target.io": "0", "hoodie.compaction.logfile.size.threshold": "99"})
    plan = cp.plan_compaction(slices, unbounded)
    assert ops(plan) == [("p", "a-0"), ("p", "b-0")] and plan["missingSchedulePartitions"] == []


def test_file_groups_of_pending_plans_and_slices_without_logs_are_not_candidates():
    slices = [fslice("p", "a-0", 10, [1]), fslice("p", "b-0", 10, [2]), fslice("q", "a-0", 10, [3]),
              fslice("p", "c-0", 10, [])]
    assert ops(cp.plan_compaction(slices, cfg(), excluded={("p", "b-0"), ("q", "a-0")})) == [("p", "a-0")]
    assert cp.plan_compaction(slices, cfg(), excluded={("p", "a-0"), ("p", "b-0"), ("q", "a-0")}) is None
    assert cp.plan_compaction([], cfg()) is None


def test_planned_file_groups_of_compaction_and_clustering_plans():
    compaction = cp.plan_compaction([fslice("p", "a-0", 10, [1]), fslice("", "b-0", None, [1])], cfg())
    assert pending.planned_file_groups(compaction) == {("p", "a-0"), ("", "b-0")}
    clustering = {"operationType": "CLUSTER", "clusteringPlan": {"inputGroups": [
        {"slices": [{"partitionPath": "p", "fileId": "c-0"}, {"partitionPath": "q", "fileId": "d-0"}]},
        {"slices": [{"partitionPath": "p", "fileId": "e-0"}]}]}}
    assert pending.planned_file_groups(clustering) == {("p", "c-0"), ("q", "d-0"), ("p", "e-0")}
    assert pending.planned_file_groups({"operationType": "INSERT_OVERWRITE", "clusteringPlan": None}) == set()


def test_a_plan_is_the_record_hudi_writes_and_round_trips_through_avro():
    plan = cp.plan_compaction([fslice("p", "a-0", 10, [1])], cfg(), extra_metadata={"k": "v"})
    assert plan["version"] == 2 and plan["extraMetadata"] == {"k": "v"} and plan["strategy"] is None
    assert plan["preserveHoodieMetadata"] is False
    assert cp.plan_compaction([fslice("p", "a-0", 10, [1])], cfg())["extraMetadata"] == {}
    assert am.decode_instant_avro(am.encode_instant_avro(am.COMPACTION_PLAN, plan)) == plan


# --- against real Hudi tables -------------------------------------------------------------------

DATA_TABLE_PLANS = [
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "sample_table/mor/avro/v9_txns_complex_meta.zip",
    "sample_table/mor/avro/v9_txns_complex_nometa.zip",
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip",
    "sample_table/mor/avro/v9_txns_nonpart_nometa.zip",
    "sample_table/mor/avro/v9_txns_simple_meta.zip",
    "sample_table/mor/avro/v9_txns_simple_nometa.zip",
]
METADATA_TABLE_PLANS = [
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "quickstart_trips_table/mor/avro/v9_trips_lance.zip",
    "sample_table/cow/v9_txns_simple_meta.zip",
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip",
]


def the_plan(timeline: Path) -> tuple[str, dict, bytes]:
    [requested] = timeline.glob("*.compaction.requested")
    raw = requested.read_bytes()
    return requested.name[:17], am.decode_instant_avro(raw), raw


def replaced_before(timeline: Path, instant: str) -> set[tuple[str, str]]:
    replaced = set()
    for f in timeline.glob("*_*.replacecommit"):
        if f.name[:17] < instant:
            md = am.parse_commit_metadata(f.read_bytes())
            replaced |= {(p, fid) for p, ids in md["partitionToReplaceFileIds"].items() for fid in ids}
    return replaced


def latest_slices_before(root: Path, instant: str) -> list[FileSlice]:
    """The table's latest file slices just before ``instant``, from a listing alone (1.x naming:
    a log file carries its delta commit's time; files of later instants are left out)."""
    bases: dict[tuple[str, str], BaseFile] = {}
    logs: dict[tuple[str, str], list[LogFile]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".hoodie"]
        rel = Path(dirpath).relative_to(root).as_posix()
        partition = "" if rel == "." else rel
        for name in filenames:
            path, size = f"{partition}/{name}".lstrip("/"), (Path(dirpath) / name).stat().st_size
            base, lf = parse_base_file_name(name), parse_log_file_name(name)
            if base is not None and base.instant < instant:
                if (partition, base.file_id) not in bases or bases[(partition, base.file_id)].instant < base.instant:
                    bases[(partition, base.file_id)] = BaseFile(path, base.file_id, base.instant, size)
            elif lf is not None and lf.instant < instant:
                logs.setdefault((partition, lf.file_id), []).append(
                    LogFile(path, lf.file_id, lf.instant, lf.version, size))
    slices = []
    for key in sorted(bases):
        base = bases[key]
        slices.append(FileSlice(*key, base.instant, base, [f for f in logs.get(key, []) if f.instant > base.instant]))
    return slices


@pytest.mark.parametrize("zip_name", DATA_TABLE_PLANS)
def test_our_plan_for_the_slices_hudi_saw_is_hudis_plan_byte_for_byte(tmp_path, zip_name):
    root = unzip_fixture(zip_name, tmp_path)
    timeline = root / ".hoodie" / "timeline"
    instant, theirs, raw = the_plan(timeline)
    slices = [s for s in latest_slices_before(root, instant)
              if (s.partition, s.file_id) not in replaced_before(timeline, instant)]
    # What differs between writes, not between planners: the extra metadata the scheduling write passed.
    ours = cp.plan_compaction(slices, HoodieConfig({}), extra_metadata=theirs["extraMetadata"])
    assert ours == theirs
    encoded = am.encode_instant_avro(am.COMPACTION_PLAN, ours, sync_marker=raw[-am.SYNC_SIZE:])
    marker = raw[-am.SYNC_SIZE:]
    assert encoded[encoded.index(marker):] == raw[raw.index(marker):]


@pytest.mark.parametrize("zip_name", DATA_TABLE_PLANS)
def test_hudis_completed_compaction_commit_accounts_for_every_operation(tmp_path, zip_name):
    root = unzip_fixture(zip_name, tmp_path)
    timeline = root / ".hoodie" / "timeline"
    instant, plan, _ = the_plan(timeline)
    assert (timeline / f"{instant}.compaction.inflight").read_bytes() == b""
    [completed] = timeline.glob(f"{instant}_*.commit")
    md = am.parse_commit_metadata(completed.read_bytes())
    assert md["operationType"] == "COMPACT" and md["compacted"] is True and "schema" in md["extraMetadata"]
    stats = {(s["partitionPath"], s["fileId"]): s for group in md["partitionToWriteStats"].values() for s in group}
    assert set(stats) == set(ops(plan))
    for op in plan["operations"]:
        stat = stats[(op["partitionPath"], op["fileId"])]
        assert stat["prevCommit"] == op["baseInstantTime"] and stat["prevBaseFile"] == op["dataFilePath"]
        assert stat["totalLogFilesCompacted"] == len(op["deltaFilePaths"])
        assert stat["totalLogSizeCompacted"] == op["metrics"]["TOTAL_LOG_FILES_SIZE"]
        assert parse_base_file_name(stat["path"].rsplit("/", 1)[-1]).instant == instant  # new base, same group


@pytest.mark.parametrize("zip_name", DATA_TABLE_PLANS + [f"{z}#metadata" for z in METADATA_TABLE_PLANS])
def test_every_operation_hudi_planned_is_the_one_we_build_from_its_files(tmp_path, zip_name):
    """Metrics and names per operation, metadata tables included (HFile bases, log-only slices)."""
    zip_name, _, table = zip_name.partition("#")
    root = unzip_fixture(zip_name, tmp_path)
    if table:
        root = root / ".hoodie" / "metadata"
    _, plan, _ = the_plan(root / ".hoodie" / "timeline")
    rng = random.Random(7)
    for op in plan["operations"]:
        folder, prefix = root / op["partitionPath"], f"{op['partitionPath']}/".lstrip("/")
        logs = []
        for name in op["deltaFilePaths"]:
            parsed = parse_log_file_name(name)
            logs.append(LogFile(prefix + name, parsed.file_id, parsed.instant, parsed.version,
                                (folder / name).stat().st_size))
        rng.shuffle(logs)
        base = None
        if op["dataFilePath"] is not None:
            base = BaseFile(prefix + op["dataFilePath"], op["fileId"], op["baseInstantTime"],
                            (folder / op["dataFilePath"]).stat().st_size)
        s = FileSlice(op["partitionPath"], op["fileId"], op["baseInstantTime"], base, logs)
        assert pending.compaction_operation(s, 125829120) == op


def test_the_v8_fixture_compacted_when_the_default_trigger_fired(tmp_path):
    root = unzip_fixture("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", tmp_path)
    instant, _, _ = the_plan(root / ".hoodie" / "timeline")
    before = [i for i in Timeline.load(Storage(str(root)), layout_version=2).instants if i.timestamp < instant]
    deltas = [i for i in before if i.action == DELTA_COMMIT]
    assert len(deltas) == 5 and any(i.action != DELTA_COMMIT for i in before)  # an indexing instant too
    assert cp.should_schedule_compaction(before, instant, HoodieConfig({})) is True
    one_less = [i for i in before if i != deltas[-1]]
    assert cp.should_schedule_compaction(one_less, instant, HoodieConfig({})) is False
