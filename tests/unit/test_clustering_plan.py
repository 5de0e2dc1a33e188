"""Clustering plans against Hudi's size-based strategy, and the plan real Hudi wrote (a hudi-rs
fixture table); the space-filling curves that order clustered rows."""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError
from hudi_engine.services import clustering_plan as clp
from hudi_engine.services import layout
from hudi_engine.table.pending import is_clustering
from hudi_engine.timeline import avro_models as am
from hudi_engine.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from tests.conftest import unzip_fixture
from tests.unit.test_compaction_plan import fslice, latest_slices_before, replaced_before

MB = 1024 * 1024


def cfg(**options) -> HoodieConfig:
    return HoodieConfig({k.replace("_", "."): str(v) for k, v in options.items()})


def uri(path: str) -> str:
    return f"file:/lake/t/{path}"


def groups_of(plan):
    return [[s["fileId"] for s in g["slices"]] for g in plan["clusteringPlan"]["inputGroups"]]


# --- the plan Hudi wrote ------------------------------------------------------------------------

def test_our_plan_for_the_slices_hudi_saw_is_hudis_plan(tmp_path):
    root = unzip_fixture("sample_table/cow/v9_txns_simple_meta.zip", tmp_path)
    timeline = root / ".hoodie" / "timeline"
    [requested] = timeline.glob("*.clustering.requested")
    instant = requested.name[:17]
    theirs = am.decode_instant_avro(requested.read_bytes())
    slices = [s for s in latest_slices_before(root, instant)
              if (s.partition, s.file_id) not in replaced_before(timeline, instant)]
    base = "file:/tmp/v9-gen/warehouse/v9_txns_cow_simple_meta/"
    ours = clp.plan_clustering(slices, HoodieConfig({}), lambda p: base + p)
    theirs["clusteringPlan"].pop("missingSchedulePartitions")   # a 1.x field this engine does not write
    assert ours == theirs
    assert is_clustering(theirs) and not is_clustering({"operationType": "INSERT_OVERWRITE",
                                                                "clusteringPlan": None})


# --- grouping ------------------------------------------------------------------------------------

def test_small_slices_are_grouped_largest_first_up_to_the_group_size():
    slices = [fslice("p", f"f{i}", size * MB, []) for i, size in enumerate([10, 40, 30, 20, 5])]
    plan = clp.plan_clustering(slices, cfg(hoodie_clustering_plan_strategy_max_bytes_per_group=60 * MB,
                                           hoodie_clustering_plan_strategy_target_file_max_bytes=25 * MB), uri)
    assert groups_of(plan) == [["f1"], ["f2", "f3", "f0"], ["f4"]]
    assert [g["numOutputFileGroups"] for g in plan["clusteringPlan"]["inputGroups"]] == [2, 3, 1]
    info = plan["clusteringPlan"]["inputGroups"][0]["slices"][0]
    assert info == {"dataFilePath": "file:/lake/t/p/f1_0-1-1_001.parquet", "deltaFilePaths": [],
                    "fileId": "f1", "partitionPath": "p", "bootstrapFilePath": "", "version": 1}


def test_large_files_pending_groups_and_other_partitions_stay_out():
    slices = [fslice("a", "big", 400 * MB, []), fslice("a", "s1", MB, []), fslice("a", "s2", MB, [100]),
              fslice("b", "s3", MB, []), fslice("b", "busy", MB, [])]
    plan = clp.plan_clustering(slices, cfg(), uri, excluded={("b", "busy")})
    assert groups_of(plan) == [["s1", "s2"], ["s3"]]
    group = plan["clusteringPlan"]["inputGroups"][0]
    assert group["slices"][1]["deltaFilePaths"] == ["file:/lake/t/a/.s2_002.log.1_0-1-1"]
    assert group["metrics"]["TOTAL_LOG_FILES"] == 1.0 and group["metrics"]["TOTAL_LOG_FILES_SIZE"] == 100.0
    # Without single-group clustering a lone slice is not worth rewriting.
    plan = clp.plan_clustering(slices, cfg(hoodie_clustering_plan_strategy_single_group_clustering_enabled="false"),
                               uri, excluded={("b", "busy")})
    assert groups_of(plan) == [["s1", "s2"]]
    assert clp.plan_clustering([fslice("a", "big", 400 * MB, [])], cfg(), uri) is None


def test_max_num_groups_bounds_the_plan():
    slices = [fslice(p, f"{p}{i}", MB, []) for p in "abc" for i in range(2)]
    plan = clp.plan_clustering(slices, cfg(hoodie_clustering_plan_strategy_max_num_groups=2), uri)
    assert groups_of(plan) == [["a0", "a1"], ["b0", "b1"]]


def test_sort_columns_go_to_the_strategy_params():
    plan = clp.plan_clustering([fslice("", "f", MB, [])], cfg(hoodie_clustering_plan_strategy_sort_columns="x, y"), uri)
    strategy = plan["clusteringPlan"]["strategy"]
    assert strategy == {"strategyClassName": clp.SORT_AND_SIZE_EXECUTION,
                        "strategyParams": {"hoodie.clustering.plan.strategy.sort.columns": "x,y"}, "version": 1}
    assert plan["clusteringPlan"]["preserveHoodieMetadata"] is True and plan["operationType"] == "CLUSTER"


# --- partitions ------------------------------------------------------------------------------------

PARTS = ["2025/01/01", "2025/01/02", "2025/01/03", "2025/01/04"]


@pytest.mark.parametrize("options, expected", [
    ({}, PARTS),
    ({"hoodie.clustering.plan.strategy.partition.regex.pattern": r"2025/01/0[12]"}, PARTS[:2]),
    ({"hoodie.clustering.plan.strategy.partition.selected": "2025/01/03"}, ["2025/01/03"]),
    ({"hoodie.clustering.plan.partition.filter.mode": "RECENT_DAYS"}, ["2025/01/04", "2025/01/03"]),
    ({"hoodie.clustering.plan.partition.filter.mode": "RECENT_DAYS",
      "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions": "1",
      "hoodie.clustering.plan.strategy.daybased.lookback.partitions": "3"}, ["2025/01/03", "2025/01/02", "2025/01/01"]),
    ({"hoodie.clustering.plan.partition.filter.mode": "SELECTED_PARTITIONS",
      "hoodie.clustering.plan.strategy.cluster.begin.partition": "2025/01/02",
      "hoodie.clustering.plan.strategy.cluster.end.partition": "2025/01/03"}, PARTS[1:3]),
])
def test_partition_filters(options, expected):
    assert clp.filter_partitions(PARTS, HoodieConfig(options)) == expected


@pytest.mark.parametrize("options, message", [
    ({"hoodie.clustering.plan.partition.filter.mode": "SELECTED_PARTITIONS"}, "cluster.begin.partition"),
    ({"hoodie.clustering.plan.partition.filter.mode": "DAY_ROLLING"}, "RECENT_DAYS"),
    ({"hoodie.clustering.plan.strategy.partition.regex.pattern": "("}, "regular expression"),
])
def test_partition_filter_errors(options, message):
    with pytest.raises(HoodieConfigError, match=message):
        clp.filter_partitions(PARTS, HoodieConfig(options))


@pytest.mark.parametrize("options, message", [
    ({"hoodie.clustering.plan.strategy.class": "org.example.Mine"}, "SparkSizeBasedClusteringPlanStrategy"),
    ({"hoodie.clustering.execution.strategy.class": "org.example.Mine"}, "SparkSortAndSizeExecutionStrategy"),
    ({"hoodie.layout.optimize.strategy": "hilbert"}, "set the columns"),
])
def test_unsupported_strategies_are_named(options, message):
    with pytest.raises(HoodieConfigError, match=message):
        clp.plan_clustering([fslice("", "f", MB, [])], HoodieConfig(options), uri)


# --- when ------------------------------------------------------------------------------------------

def test_commits_are_counted_since_the_last_clustering():
    done = State.COMPLETED
    timeline = [Instant("001", COMMIT, done), Instant("002", REPLACE_COMMIT, done), Instant("003", DELTA_COMMIT, done),
                Instant("004", REPLACE_COMMIT, done), Instant("005", COMMIT, State.INFLIGHT), Instant("006", COMMIT, done)]
    assert clp.commits_since_clustering(timeline, {"002"}) == 3       # 003, 004 (an overwrite), 006
    assert clp.commits_since_clustering(timeline, set()) == 5


@pytest.mark.parametrize("options, commits, due", [
    ({}, 0, True),                                                     # standalone: always plans
    ({"hoodie.clustering.inline": "true"}, 3, False),
    ({"hoodie.clustering.inline": "true"}, 4, True),
    ({"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "1"}, 1, True),
    ({"hoodie.clustering.schedule.inline": "true", "hoodie.clustering.async.max.commits": "2"}, 1, False),
    ({"hoodie.clustering.async.enabled": "true"}, 4, True),
])
def test_clustering_due(options, commits, due):
    assert clp.clustering_due(commits, HoodieConfig(options)) is due


# --- curves ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, type_", [
    ([random.randint(-2**40, 2**40) for _ in range(300)] + [0, -1, 1], pa.int64()),
    ([random.randint(-1000, 1000) for _ in range(300)], pa.int32()),
    ([random.uniform(-1e6, 1e6) for _ in range(300)] + [0.0, -0.0, 1e-300, -1e-300], pa.float64()),
    (["".join(random.choices("abcxyz", k=random.randint(0, 10))) for _ in range(300)], pa.string()),
    ([random.randint(0, 2**50) for _ in range(300)], pa.timestamp("us")),
    ([random.randint(0, 30000) for _ in range(300)], pa.date32()),
])
def test_coordinates_keep_the_order_of_values(values, type_):
    arr = pa.array(values, type_)
    coords = layout.coordinates(arr)
    key = (lambda v: v.encode()[:8]) if type_ == pa.string() else (lambda v: v)
    by_value = sorted(range(len(values)), key=lambda i: (key(values[i]), coords[i]))
    assert all(coords[a] <= coords[b] for a, b in zip(by_value, by_value[1:]))


def test_nulls_come_first():
    coords = layout.coordinates(pa.array([5, None, -3], pa.int64()))
    assert coords[1] < coords[2] < coords[0]


def grid_order(strategy, side, dims):
    bits = side.bit_length() - 1
    cells = np.array(np.meshgrid(*[np.arange(side)] * dims, indexing="ij")).reshape(dims, -1)
    table = pa.table({f"c{d}": pa.array(cells[d], pa.uint64()) for d in range(dims)})
    # Spread the values over the coordinates' top bits, as full-range data would.
    coords = [(c.astype(np.uint64) << np.uint64(64 - bits)) for c in cells]
    if strategy == layout.HILBERT:
        coords = layout.hilbert_transpose(coords)
    keys = layout.interleave(coords)
    order = sorted(range(cells.shape[1]), key=lambda i: keys[i].tobytes())
    assert len(layout.curve_key(table, list(table.column_names), strategy)) == cells.shape[1]
    return [tuple(int(cells[d][i]) for d in range(dims)) for i in order]


def test_z_order_visits_quadrants_in_turn():
    assert grid_order(layout.ZORDER, 4, 2)[:8] == [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (0, 3), (1, 2), (1, 3)]


@pytest.mark.parametrize("side, dims", [(8, 2), (4, 3)])
def test_hilbert_steps_to_a_neighbouring_cell_each_time(side, dims):
    order = grid_order(layout.HILBERT, side, dims)
    assert len(set(order)) == side ** dims and order[0] == (0,) * dims
    for a, b in zip(order, order[1:]):
        assert sum(abs(x - y) for x, y in zip(a, b)) == 1, (a, b)


def test_curve_key_errors_name_the_column():
    with pytest.raises(HoodieConfigError, match="'nope'"):
        layout.curve_key(pa.table({"x": [1]}), ["nope"], layout.ZORDER)
    with pytest.raises(HoodieConfigError, match="cannot be ordered"):
        layout.curve_key(pa.table({"x": pa.array([[1]])}), ["x"], layout.ZORDER)
    assert layout.layout_strategy("ZORDER") == layout.ZORDER
    with pytest.raises(HoodieConfigError, match="spiral"):
        layout.layout_strategy("spiral")
