"""Clustering with real Spark: plans on the timeline, execution to a replacecommit, linear and
curve layouts, merge-on-read slices, writers beside a pending clustering, an interrupted run and
inline clustering. Every table state is read back by our reader and by hudi-rs."""
import pyarrow.parquet as pq
import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieClusteringUpdateError, HoodieError
from hudi_engine.file_group.markers import marker_path
from hudi_engine.services.clustering import run_clusterings, schedule_clustering
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.pending import pending_clustering_groups, requested_plan
from hudi_engine.timeline.instant import CLUSTERING, REPLACE_COMMIT, State
from tests.support.data import window_ends
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
OPTIONS = {
    "hoodie.table.name": "events",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.parquet.small.file.limit": "0",       # every insert batch makes new file groups
}
COLS = ["id", "p", "x", "y", "v"]


def insert_batches(spark, path, batches=4, size=500, **extra):
    commits = []
    for b in range(batches):
        df = spark.range(b * size, (b + 1) * size).selectExpr(
            "cast(id as string) as id", "cast(id % 2 as string) as p", "id as ts",
            "cast((id * 7919) % 1000 as int) as x", "cast((id * 104729) % 997 as int) as y", "'a' as v")
        commits.append(write(df, path, {**OPTIONS, "hoodie.datasource.write.operation": "insert", **extra}))
    return commits


def ours(spark, path, **opts):
    return rows(read(spark, path, opts).toArrow(), COLS)


def agree(spark, path):
    """Our reader and hudi-rs return the same rows; returns them."""
    mine = ours(spark, path)
    assert rows(hudi_rs_read(path), COLS) == mine
    return mine


def latest_files(path):
    table = HoodieTable.load(path)
    return [table.storage.full(s.base_file.path) for s in table.fs_view().latest_file_slices()]


def target_for(path, outputs):
    """A target file size that cuts each partition's files into ``outputs`` new file groups."""
    table = HoodieTable.load(path)
    sizes = {}
    for s in table.fs_view().latest_file_slices():
        sizes[s.partition] = sizes.get(s.partition, 0) + s.base_file.size
    return str(max(sizes.values()) // outputs + 1)


def ranges(files, column, storage=None):
    out = []
    for f in files:
        values = pq.read_table(f, columns=[column], filesystem=storage and storage.fs)[column].to_pylist()
        out.append((min(values), max(values)))
    return out


def test_linear_clustering_rewrites_small_files_sorted_and_keeps_every_row(spark, base_path):
    commits = insert_batches(spark, base_path)
    before = agree(spark, base_path)
    assert len(latest_files(base_path)) == 8
    planned = schedule_clustering(HoodieTable.load(base_path), {
        "hoodie.clustering.plan.strategy.sort.columns": "x",
        "hoodie.clustering.plan.strategy.target.file.max.bytes": target_for(base_path, 2)})
    table = HoodieTable.load(base_path)
    plan = requested_plan(table.timeline, planned)["clusteringPlan"]
    assert [len(g["slices"]) for g in plan["inputGroups"]] == [4, 4]
    assert plan["strategy"]["strategyParams"] == {"hoodie.clustering.plan.strategy.sort.columns": "x"}
    assert [g["numOutputFileGroups"] for g in plan["inputGroups"]] == [2, 2]
    assert set(pending_clustering_groups(table)) == {(s.partition, s.file_id)
                                                    for s in table.fs_view().latest_file_slices()}
    assert agree(spark, base_path) == before            # a plan alone changes nothing

    assert run_clusterings(spark, table) == [planned.timestamp]
    table = HoodieTable.load(base_path)
    last = table.timeline.instants[-1]
    assert (last.timestamp, last.action, last.state) == (planned.timestamp, REPLACE_COMMIT, State.COMPLETED)
    meta = table.timeline.commit_metadata(last)
    assert meta["operationType"] == "CLUSTER"
    assert sum(len(v) for v in meta["partitionToReplaceFileIds"].values()) == 8
    assert agree(spark, base_path) == before
    # Commit times survive: the clustering wrote no record of its own.
    times = {r[0] for r in read(spark, base_path).select("_hoodie_commit_time").distinct().collect()}
    assert times == set(commits)
    # Files of one partition hold disjoint, ordered ranges of the sort column.
    files = latest_files(base_path)
    assert len(files) == 4
    for partition in ("0", "1"):
        spans = sorted(ranges([f for f in files if f"/{partition}/" in f], "x", Storage(base_path)))
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
    # Time travel before the clustering reads the old file groups; incremental windows holding
    # only the clustering return nothing, by both readers.
    assert ours(spark, base_path, **{"as.of.instant": commits[-1]}) == before
    [last_end] = window_ends(base_path, commits[-1])
    assert ours(spark, base_path, **{"hoodie.datasource.query.type": "incremental",
                                      "hoodie.datasource.read.begin.instanttime": last_end}) == []
    assert hudi_rs_read(base_path, begin=last_end).num_rows == 0
    assert rows(hudi_rs_read(base_path, as_of=commits[-1]), COLS) == before


@pytest.mark.parametrize("layout", ["z-order", "hilbert"])
def test_curve_layouts_narrow_every_sort_column_per_file(spark, table_path, layout):
    insert_batches(spark, table_path, batches=2, size=2000)
    before = agree(spark, table_path)
    opts = {"hoodie.clustering.plan.strategy.sort.columns": "x,y", "hoodie.layout.optimize.strategy": layout,
            "hoodie.clustering.plan.strategy.target.file.max.bytes": target_for(table_path, 8)}
    schedule_clustering(HoodieTable.load(table_path), opts)
    run_clusterings(spark, HoodieTable.load(table_path), options=opts)
    assert agree(spark, table_path) == before
    files = latest_files(table_path)
    assert len(files) == 16
    # Each file covers a fraction of both columns' ranges; random placement would span ~all of them.
    for column in ("x", "y"):
        widths = [hi - lo for lo, hi in ranges(files, column)]
        assert sum(widths) / len(widths) < 0.8 * 1000, (column, widths)
    box = [f for f, (xr, yr) in zip(files, zip(ranges(files, "x"), ranges(files, "y")))
           if xr[0] <= 100 and xr[1] >= 0 and yr[0] <= 100 and yr[1] >= 0]
    assert len(box) < len(files) / 2


def test_merge_on_read_clustering_merges_logs_into_new_base_files(spark, table_path):
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    insert_batches(spark, table_path, batches=2, size=300, **mor)
    update = spark.range(0, 600, 3).selectExpr(
        "cast(id as string) as id", "cast(id % 2 as string) as p", "id + 10000 as ts",
        "cast((id * 7919) % 1000 as int) as x", "cast((id * 104729) % 997 as int) as y", "'b' as v")
    write(update, table_path, {**OPTIONS, **mor, "hoodie.datasource.write.operation": "upsert"})
    delete = spark.range(1, 600, 50).selectExpr("cast(id as string) as id", "cast(id % 2 as string) as p",
                                                "id + 20000 as ts")
    write(delete, table_path, {**OPTIONS, **mor, "hoodie.datasource.write.operation": "delete"})
    before = agree(spark, table_path)
    assert len(before) == 600 - 12 and sum(1 for r in before if r[4] == "b") == 200 - len(
        [i for i in range(1, 600, 50) if i % 3 == 0])
    assert any(s.log_files for s in HoodieTable.load(table_path).fs_view().latest_file_slices())
    schedule_clustering(HoodieTable.load(table_path), {})
    run_clusterings(spark, HoodieTable.load(table_path))
    slices = HoodieTable.load(table_path).fs_view().latest_file_slices()
    assert slices and not any(s.log_files for s in slices)
    assert agree(spark, table_path) == before
    assert rows(hudi_rs_read(table_path, read_optimized=True), COLS) == before


def test_writers_beside_a_pending_clustering(spark, table_path):
    insert_batches(spark, table_path, batches=2, size=100)
    planned = schedule_clustering(HoodieTable.load(table_path), {})
    clustered = set(pending_clustering_groups(HoodieTable.load(table_path)))
    before = agree(spark, table_path)
    # New keys go to new file groups, never into the clustering's small files, and the plan stays.
    fresh = spark.range(1000, 1010).selectExpr(
        "cast(id as string) as id", "cast(id % 2 as string) as p", "id as ts", "cast(id % 1 as int) as x", "cast(id % 1 as int) as y", "'n' as v")
    write(fresh, table_path, {**OPTIONS, "hoodie.parquet.small.file.limit": "104857600",
                              "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable.load(table_path)
    assert table.timeline.get(planned.timestamp).state == State.REQUESTED
    assert all((s.partition, s.file_id) not in clustered for s in table.fs_view().latest_file_slices()
               if s.base_instant > planned.timestamp)
    with_fresh = agree(spark, table_path)
    assert len(with_fresh) == len(before) + 10
    # Updates to file groups under clustering are refused; the failed write leaves nothing behind.
    update = spark.range(0, 5).selectExpr("cast(id as string) as id", "cast(id % 2 as string) as p",
                                          "id + 99 as ts", "cast(id % 1 as int) as x", "cast(id % 1 as int) as y",
                                          "'u' as v")
    with pytest.raises(HoodieClusteringUpdateError, match="pending clustering " + planned.timestamp):
        write(update, table_path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable.load(table_path)
    assert [i.timestamp for i in table.timeline.pending()] == [planned.timestamp]
    assert agree(spark, table_path) == with_fresh
    # Once the clustering ran, the same update goes through.
    run_clusterings(spark, table)
    write(update, table_path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    assert sum(1 for r in agree(spark, table_path) if r[4] == "u") == 5


def test_an_interrupted_clustering_is_rolled_back_and_run_again(spark, table_path):
    """Stands in for a killed job: the instant is inflight and a task's half-written file (with
    its marker) is on disk, as a SIGKILL during execution leaves them."""
    insert_batches(spark, table_path, batches=2, size=100)
    before = agree(spark, table_path)
    planned = schedule_clustering(HoodieTable.load(table_path), {})
    table = HoodieTable.load(table_path)
    table.timeline.transition_to_inflight(planned)
    stray = f"0/deadbeef-0000-0000-0000-000000000000-0_0-1-1_{planned.timestamp}.parquet"
    table.storage.write_bytes(marker_path(planned.timestamp, "0", stray.split("/")[1], "CREATE"), b"")
    table.storage.write_bytes(stray, b"PAR1 torn")
    assert agree(spark, table_path) == before             # readers ignore the inflight instant
    assert run_clusterings(spark, HoodieTable.load(table_path)) == [planned.timestamp]
    assert not HoodieTable.load(table_path).storage.exists(stray)
    assert agree(spark, table_path) == before
    assert HoodieTable.load(table_path).timeline.pending() == []


def test_a_plan_another_job_is_executing_is_left_to_it(spark, table_path):
    """Stands in for a second job: the plan is inflight and its heartbeat is fresh, as while
    another process executes it. Once the heartbeat is gone the plan counts as interrupted."""
    from hudi_engine.concurrency.heartbeat import Heartbeat, heartbeat_path

    insert_batches(spark, table_path, batches=2, size=20)
    before = agree(spark, table_path)
    planned = schedule_clustering(HoodieTable.load(table_path), {})
    table = HoodieTable.load(table_path)
    beat = Heartbeat(table.storage, planned.timestamp, 60000).start()
    try:
        table.timeline.transition_to_inflight(planned)
        assert run_clusterings(spark, HoodieTable.load(table_path)) == []
        assert run_clusterings(spark, HoodieTable.load(table_path), planned.timestamp) == []
        assert HoodieTable.load(table_path).timeline.get(planned.timestamp).state == State.INFLIGHT
    finally:
        beat.stop()
    assert run_clusterings(spark, HoodieTable.load(table_path)) == [planned.timestamp]
    assert agree(spark, table_path) == before
    assert not HoodieTable.load(table_path).storage.exists(heartbeat_path(planned.timestamp))


def test_a_write_does_not_roll_back_a_pending_clustering(spark, table_path):
    insert_batches(spark, table_path, batches=2, size=50)
    planned = schedule_clustering(HoodieTable.load(table_path), {})
    insert_batches(spark, table_path, batches=1, size=10)
    assert HoodieTable.load(table_path).timeline.get(planned.timestamp).state == State.REQUESTED


def test_inline_clustering_runs_after_every_max_commits_writes(spark, table_path):
    inline = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "3"}
    insert_batches(spark, table_path, batches=2, size=50, **inline)
    timeline = HoodieTable.load(table_path).timeline
    assert not timeline.filter([REPLACE_COMMIT])
    insert_batches(spark, table_path, batches=1, size=50, **inline)
    replaces = HoodieTable.load(table_path).timeline.filter([REPLACE_COMMIT], completed=True)
    assert len(replaces) == 1
    assert len(agree(spark, table_path)) == 150
    assert len(latest_files(table_path)) == 2               # one per partition


def test_schedule_inline_only_plans(spark, table_path):
    opts = {"hoodie.clustering.schedule.inline": "true", "hoodie.clustering.async.max.commits": "2"}
    insert_batches(spark, table_path, batches=2, size=20, **opts)
    pending = HoodieTable.load(table_path).timeline.pending([REPLACE_COMMIT, CLUSTERING])   # 6, or 8+
    assert [i.state for i in pending] == [State.REQUESTED]


def test_clear_errors_for_bad_clustering_settings(spark, table_path):
    insert_batches(spark, table_path, batches=1, size=10)
    table = HoodieTable.load(table_path)
    with pytest.raises(HoodieError, match="does not have"):
        schedule_clustering(table, {"hoodie.clustering.plan.strategy.sort.columns": "nope"})
    with pytest.raises(HoodieError, match="sort.columns"):
        schedule_clustering(table, {"hoodie.layout.optimize.strategy": "z-order"})
    with pytest.raises(HoodieError, match="is not valid"):
        schedule_clustering(table, {"hoodie.layout.optimize.strategy": "spiral",
                                    "hoodie.clustering.plan.strategy.sort.columns": "x"})
    with pytest.raises(HoodieError, match="no pending clustering 2099"):
        run_clusterings(spark, table, "20990101000000000")


def test_standalone_clustering_from_the_command_line(spark, table_path):
    """``hudictl cluster`` in its own process, as a scheduled job runs it; ``hudictl table pending``
    shows the plan in between."""
    import json
    import subprocess
    import sys

    from hudi_operator.reconcile.table_status import observe

    insert_batches(spark, table_path, batches=2, size=50)
    before = agree(spark, table_path)

    def hudictl(*args):
        return subprocess.run([sys.executable, "-m", "hudictl.cli", *args], capture_output=True, text=True,
                              timeout=300)
    help_text = hudictl("cluster", "--help").stdout
    assert "examples:" in help_text and "hudictl cluster --base-path" in help_text
    bad = hudictl("cluster", "--base-path", table_path, "--hoodie-conf", "hoodie.layout.optimize.strategy=z-order")
    assert bad.returncode != 0 and "sort.columns" in bad.stderr
    done = hudictl("cluster", "--base-path", table_path, "--mode", "schedule")
    assert done.returncode == 0, done.stderr
    planned = done.stdout.split()[-1]
    pending = json.loads(hudictl("table", "pending", "--base-path", table_path, "--json").stdout)
    action = CLUSTERING if HoodieTable.load(table_path).version >= 8 else REPLACE_COMMIT
    assert pending == [{"instant": planned, "action": action, "state": "REQUESTED", "fileGroups": 4}]
    assert observe(HoodieTable.load(table_path), None, None).pending_clusterings == 1
    done = hudictl("cluster", "--base-path", table_path, "--mode", "execute")
    assert done.returncode == 0, done.stderr
    assert f"completed clustering {planned}" in done.stdout
    assert agree(spark, table_path) == before
    assert len(latest_files(table_path)) == 2


def test_change_data_capture_sees_no_change_from_clustering(spark, table_path):
    cdc = {"hoodie.table.cdc.enabled": "true"}
    insert_batches(spark, table_path, batches=2, size=10, **cdc)
    clustered = schedule_clustering(HoodieTable.load(table_path), {})
    run_clusterings(spark, HoodieTable.load(table_path))
    update = spark.range(0, 2).selectExpr("cast(id as string) as id", "cast(id % 2 as string) as p",
                                          "id + 99 as ts", "cast(id % 1 as int) as x", "cast(id % 1 as int) as y",
                                          "'u' as v")
    write(update, table_path, {**OPTIONS, **cdc, "hoodie.datasource.write.operation": "upsert"})
    changes = read(spark, table_path, {"hoodie.datasource.query.type": "incremental",
                                       "hoodie.datasource.query.incremental.format": "cdc",
                                       "hoodie.datasource.read.begin.instanttime": "0"}).collect()
    assert sorted(r["op"] for r in changes) == ["i"] * 20 + ["u"] * 2
    after_clustering = read(spark, table_path, {"hoodie.datasource.query.type": "incremental",
                                                "hoodie.datasource.query.incremental.format": "cdc",
                                                "hoodie.datasource.read.begin.instanttime": clustered.timestamp})
    updates = after_clustering.collect()
    assert [r["op"] for r in updates] == ["u", "u"]
    assert all('"v":"a"' in r["before"].replace(" ", "") and '"v":"u"' in r["after"].replace(" ", "")
               for r in updates)
