"""Merge-on-read writes and compaction with real Spark: inline and scheduled-only compaction by
trigger strategy, writes landing while a compaction is pending, Parquet log blocks, log rollover,
small-file handling. Every state is checked against hudi-rs."""
import pytest

from hudi_engine import read, write
from hudi_engine.file_group.log_file import BlockType, read_log_file
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.table.pending import pending_compaction_groups
from hudi_engine.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
MOR = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COLS = ["name", "fruit"]


def op(operation, **extra):
    return {**MOR, "hoodie.datasource.write.operation": operation, **extra}


def state(spark, path, **opts):
    return sorted((r["name"], r["fruit"]) for r in read(spark, path, opts).select(*COLS).collect())


def upsert(spark, path, people, ts, **extra):
    df = spark.createDataFrame([(n, f, "eu", ts) for n, f in people], FRUIT_SCHEMA)
    return write(df, path, op("upsert", **extra))


def actions(path):
    return [(i.action, i.state.name) for i in HoodieTable.load(path).timeline.instants]


def agree(spark, path, expected):
    assert state(spark, path) == expected
    assert rows(hudi_rs_read(path), COLS) == expected


@pytest.mark.parametrize("strategy, extra, compacts_after", [
    ("NUM_COMMITS", {"hoodie.compact.inline.max.delta.commits": "3"}, 3),
    # Due from the first delta commit on, but there is nothing to compact before the first log.
    ("TIME_ELAPSED", {"hoodie.compact.inline.max.delta.seconds": "0"}, 2),
    ("NUM_AND_TIME", {"hoodie.compact.inline.max.delta.commits": "2",
                      "hoodie.compact.inline.max.delta.seconds": "86400"}, None),
    ("NUM_OR_TIME", {"hoodie.compact.inline.max.delta.commits": "3",
                     "hoodie.compact.inline.max.delta.seconds": "86400"}, 3),
])
def test_inline_compaction_follows_the_trigger_strategy(spark, table_path, strategy, extra, compacts_after):
    inline = {"hoodie.compact.inline": "true", "hoodie.compact.inline.trigger.strategy": strategy, **extra}
    expected = {"jack": "apple"}
    for n in range(1, 4):
        fruit = ["apple", "banana", "cherry"][n - 1]
        expected["jack"] = fruit
        upsert(spark, table_path, [("jack", fruit)], n, **inline)
        compactions = [a for a in actions(table_path) if a[0] == COMMIT]
        assert len(compactions) == (1 if compacts_after is not None and n >= compacts_after else 0), n
        if compacts_after is not None and n >= compacts_after:
            break
    agree(spark, table_path, sorted(expected.items()))


@pytest.mark.parametrize("base_path, version", [("local", "6"), ("local", "9"), ("s3", "9")],
                         indirect=["base_path"])
def test_schedule_inline_leaves_the_plan_for_a_standalone_run(spark, base_path, version):
    opts = {"hoodie.compact.schedule.inline": "true", "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.write.table.version": version}
    upsert(spark, base_path, [("jack", "apple"), ("sarah", "kiwi")], 1, **opts)
    upsert(spark, base_path, [("jack", "banana")], 2, **opts)
    assert actions(base_path)[-1] == (COMPACTION, "REQUESTED")
    table = HoodieTable.load(base_path)
    [requested] = table.timeline.pending([COMPACTION])
    assert set(pending_compaction_groups(table).values()) == {requested.timestamp}

    # A write while the compaction is pending: its log goes to the new slice the plan started,
    # named by that slice's instant at version 6, by its own delta commit at 8 and 9 (which the
    # slice takes by completion time).
    third = upsert(spark, base_path, [("sarah", "mango")], 3, **opts)
    names = [p.rsplit("/", 1)[-1] for p in (f.path for f in Storage(base_path).list("eu")) if ".log." in p]
    named = requested.timestamp if version == "6" else third
    assert any(f"_{named}.log.1_" in n for n in names), names
    expected = [("jack", "banana"), ("sarah", "mango")]
    assert state(spark, base_path) == expected
    # hudi-rs 0.5 leaves out a version 6 log named after a pending compaction (Hudi's own readers
    # merge it onto the previous slice, as ours do): it shows the table without that write until
    # the compaction completes. A version 9 log, named by its own delta commit, it reads.
    assert rows(hudi_rs_read(base_path), COLS) == (
        [("jack", "banana"), ("sarah", "kiwi")] if version == "6" else expected)

    assert run_compactions(spark, HoodieTable.load(base_path)) == [requested.timestamp]
    agree(spark, base_path, expected)
    # The compacted base holds the plan's logs; the later log stays on top of it.
    [latest] = HoodieTable.load(base_path).fs_view().latest_file_slices()
    assert latest.base_instant == requested.timestamp and len(latest.log_files) == 1
    assert state(spark, base_path, **{"hoodie.datasource.query.type": "read_optimized"}) == [
        ("jack", "banana"), ("sarah", "kiwi")]


def test_parquet_log_blocks_and_rollover(spark, table_path):
    opts = {"hoodie.logfile.data.block.format": "parquet", "hoodie.logfile.max.size": "2000",
            "hoodie.logfile.data.block.max.size": "1500"}
    people = [(f"p{i:03d}", "apple") for i in range(200)]
    upsert(spark, table_path, people, 1, **opts)
    changed = [(f"p{i:03d}", "banana") for i in range(0, 200, 2)]
    upsert(spark, table_path, changed, 2, **opts)
    table = HoodieTable.load(table_path)
    [commit] = table.timeline.filter([DELTA_COMMIT], completed=True)[-1:]
    stats = table.timeline.commit_metadata(commit)["partitionToWriteStats"]["eu"]
    assert len(stats) > 1, "the write rolled over to several log files"
    assert [s["logVersion"] for s in stats] == list(range(1, len(stats) + 1))
    assert sum(s["numUpdateWrites"] for s in stats) == 100
    storage = Storage(table_path)
    for s in stats:
        blocks = read_log_file(storage, s["path"])
        assert {b.block_type for b in blocks} == {BlockType.PARQUET_DATA_BLOCK}
        assert s["fileSizeInBytes"] == storage.size(s["path"])
    expected = sorted({**dict(people), **dict(changed)}.items())
    agree(spark, table_path, expected)


def test_inserts_fill_small_file_groups_without_logs(spark, table_path):
    upsert(spark, table_path, [("jack", "apple")], 1)
    [first] = HoodieTable.load(table_path).fs_view().latest_file_slices()
    # An insert-only batch pads the small file group: a new base file version, no log.
    upsert(spark, table_path, [("sarah", "kiwi")], 1)
    [second] = HoodieTable.load(table_path).fs_view().latest_file_slices()
    assert second.file_id == first.file_id and second.base_instant > first.base_instant
    assert not second.log_files
    # Once the group has a log it takes no more inserts: they start a new file group.
    upsert(spark, table_path, [("jack", "banana")], 2)
    upsert(spark, table_path, [("zoe", "fig")], 2)
    groups = HoodieTable.load(table_path).fs_view().latest_file_slices()
    assert len(groups) == 2
    agree(spark, table_path, [("jack", "banana"), ("sarah", "kiwi"), ("zoe", "fig")])


def test_compaction_refused_on_copy_on_write(spark, table_path):
    write(spark.createDataFrame([("jack", "apple", "eu", 1)], FRUIT_SCHEMA), table_path,
          {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "insert"})
    with pytest.raises(Exception, match="only merge-on-read tables compact"):
        schedule_compaction(HoodieTable.load(table_path), force=True)


def test_standalone_compaction_job_from_the_command_line(spark, table_path):
    """``hudictl compact`` in its own process, as the operator will run it."""
    import subprocess
    import sys

    upsert(spark, table_path, [("jack", "apple"), ("sarah", "kiwi")], 1)
    upsert(spark, table_path, [("jack", "banana")], 2)
    help_text = subprocess.run([sys.executable, "-m", "hudictl.cli", "compact", "--help"],
                               capture_output=True, text=True, check=True).stdout
    assert "examples:" in help_text and "--mode" in help_text

    def compact(*args):
        return subprocess.run([sys.executable, "-m", "hudictl.cli", "compact", "--base-path", table_path,
                               *args], capture_output=True, text=True, timeout=300)
    # Not due under the default trigger (5 delta commits): nothing is planned.
    done = compact("--mode", "schedule")
    assert done.returncode == 0 and "no compaction scheduled" in done.stdout
    bad = compact("--hoodie-conf", "hoodie.compaction.strategy=Nope", "--force")
    assert bad.returncode != 0 and "hoodie.compaction.strategy" in bad.stderr
    done = compact("--force")
    assert done.returncode == 0, done.stderr
    [instant] = [line.split()[-1] for line in done.stdout.splitlines() if line.startswith("completed")]
    table = HoodieTable.load(table_path)
    assert table.timeline.get(instant).action == COMMIT
    assert [s.base_instant for s in table.fs_view().latest_file_slices()] == [instant]
    agree(spark, table_path, [("jack", "banana"), ("sarah", "kiwi")])
