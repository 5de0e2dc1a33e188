"""Cleaning, savepoints and restore with real Spark, real files and hudi-rs: files on disk, timeline
instants and rows read back by both readers; time travel inside and outside retention; a clean
killed after its plan was written, finished by the next run."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieTimelineError
from hudi_engine.services.clean import delete_files, run_clean
from hudi_engine.services.savepoint import create_savepoint, delete_savepoint, list_savepoints, restore_to_savepoint
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from hudi_engine.timeline.avro_models import decode_instant_avro
from hudi_engine.timeline.instant import CLEAN, RESTORE, SAVEPOINT, WRITE_ACTIONS
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
COLS = ["name", "fruit"]
RETAIN_1 = {"hoodie.cleaner.commits.retained": "1"}


def upsert(spark, path, people, ts, **extra):
    df = spark.createDataFrame([(n, f, "eu", ts) for n, f in people], FRUIT_SCHEMA)
    return write(df, path, {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "upsert", **extra})


def state(spark, path, **opts):
    return sorted((r["name"], r["fruit"]) for r in read(spark, path, opts).select(*COLS).collect())


def agree(spark, path, expected):
    assert state(spark, path) == expected
    assert rows(hudi_rs_read(path), COLS) == expected


def data_files(path) -> set[str]:
    names = (f.path.rsplit("/", 1)[-1] for f in Storage(str(path)).list("eu"))
    return {n for n in names if not n.startswith(".hoodie")}


def instants(path, action):
    return [i for i in HoodieTable.load(path).timeline.instants if i.action == action]


def test_inline_clean_keeps_the_window_and_time_travel_outside_it_fails(spark, base_path):
    commits = [upsert(spark, base_path, [("jack", f), ("sarah", "kiwi")], n, **RETAIN_1)
               for n, f in enumerate(["apple", "banana", "cherry", "date"], 1)]
    files = data_files(base_path)
    # retained=1: the latest slice and the one a query at the last commit... is the same slice
    assert {f.rsplit("_", 1)[-1].split(".")[0] for f in files if f.endswith(".parquet")} <= set(commits[-2:])
    assert not any(c in f for f in files for c in commits[:2])
    cleans = [i for i in instants(base_path, CLEAN) if i.is_completed]
    assert cleans
    meta = decode_instant_avro(HoodieTable.load(base_path).timeline.read_details(cleans[-1]))
    assert meta["policy"] == "KEEP_LATEST_COMMITS" and meta["earliestCommitToRetain"] == commits[-1]
    agree(spark, base_path, [("jack", "date"), ("sarah", "kiwi")])
    with pytest.raises(HoodieTimelineError, match=f"earliest instant still queryable is {commits[-1]}"):
        read(spark, base_path, {"as.of.instant": commits[0]}).collect()
    assert state(spark, base_path, **{"as.of.instant": commits[-1]}) == [("jack", "date"), ("sarah", "kiwi")]
    assert rows(hudi_rs_read(base_path, as_of=commits[-1]), COLS) == [("jack", "date"), ("sarah", "kiwi")]


def test_mor_clean_removes_compacted_slices(spark, base_path):
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
           "hoodie.compact.inline.max.delta.commits": "2", "hoodie.clean.automatic": "false"}
    for n, fruit in enumerate(["apple", "banana", "cherry", "date", "fig"], 1):
        upsert(spark, base_path, [("jack", fruit)], n, **mor)
    before = data_files(base_path)
    assert len([f for f in before if f.endswith(".parquet")]) >= 2
    done = run_clean(HoodieTable.load(base_path),
                     {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                      "hoodie.cleaner.fileversions.retained": "1"}, spark)
    assert len(done) == 1
    after = data_files(base_path)
    [base] = [f for f in after if f.endswith(".parquet")]
    assert after < before
    base_instant = base.rsplit("_", 1)[-1][:-len(".parquet")]
    assert any(".log." in f for f in before - after)                         # old slices' logs went too
    assert all(f.split("_")[1].split(".")[0] >= base_instant for f in after if ".log." in f)
    agree(spark, base_path, [("jack", "fig")])


def test_savepoint_survives_cleaning_and_restore_brings_it_back(spark, base_path):
    upsert(spark, base_path, [("jack", "apple"), ("sarah", "kiwi")], 1, **RETAIN_1)
    c2 = upsert(spark, base_path, [("jack", "banana")], 2, **RETAIN_1)
    at_savepoint = state(spark, base_path)
    create_savepoint(HoodieTable.load(base_path), c2, user="tester", comments="before the big change")
    [sp] = list_savepoints(HoodieTable.load(base_path))
    assert (sp.instant, sp.savepointed_by, sp.comments) == (c2, "tester", "before the big change")
    kept = {f for f in data_files(base_path) if c2 in f}
    later = [upsert(spark, base_path, [("jack", f), ("tom", "plum")], n, **RETAIN_1)
             for n, f in enumerate(["cherry", "date", "fig"], 3)]
    assert instants(base_path, CLEAN)
    assert kept <= data_files(base_path), "the cleaner deleted savepointed files"
    agree(spark, base_path, [("jack", "fig"), ("sarah", "kiwi"), ("tom", "plum")])

    restore_to_savepoint(HoodieTable.load(base_path), c2)
    agree(spark, base_path, at_savepoint)
    timeline = HoodieTable.load(base_path).timeline
    assert [i.timestamp for i in timeline.completed_writes()][-1] == c2
    assert not [i for i in timeline.instants if i.timestamp in later]
    [restore] = [i for i in timeline.instants if i.action == RESTORE]
    meta = decode_instant_avro(timeline.read_details(restore))
    assert restore.is_completed and sorted(meta["instantsToRollback"]) == sorted(later)
    # the table takes writes again, and the savepoint can go
    upsert(spark, base_path, [("jack", "grape")], 9)
    agree(spark, base_path, [("jack", "grape"), ("sarah", "kiwi")])
    delete_savepoint(HoodieTable.load(base_path), c2)
    assert not instants(base_path, SAVEPOINT)


KILLED_CLEAN = textwrap.dedent("""
    import os, signal, sys
    from hudi_engine.services.clean import schedule_clean, _delete_batch
    from hudi_engine.table.meta_client import HoodieTable
    from hudi_engine.timeline.avro_models import decode_instant_avro
    table = HoodieTable.load(sys.argv[1])
    requested = schedule_clean(table, {"hoodie.cleaner.commits.retained": "1"}, force=True)
    table = table.reload()
    table.timeline.transition_to_inflight(requested, table.timeline.read_details(requested))
    plan = decode_instant_avro(table.timeline.read_details(requested))
    first = next(iter(plan["filePathsToBeDeletedPerPartition"].values()))[0]["filePath"]
    _delete_batch(table.storage, [first.split(sys.argv[1].rstrip("/") + "/", 1)[1]])
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_clean_is_completed_by_the_next_run(spark, table_path):
    no_clean = {"hoodie.clean.automatic": "false"}
    for n, fruit in enumerate(["apple", "banana", "cherry"], 1):
        upsert(spark, table_path, [("jack", fruit)], n, **no_clean)
    proc = subprocess.run([sys.executable, "-c", KILLED_CLEAN, str(table_path)], env=os.environ.copy())
    assert proc.returncode == -signal.SIGKILL
    [pending] = instants(table_path, CLEAN)
    assert not pending.is_completed
    agree(spark, table_path, [("jack", "cherry")])  # readable at its last commit meanwhile
    assert run_clean(HoodieTable.load(table_path), {"hoodie.clean.max.commits": "99"}) == [pending.timestamp]
    [done] = instants(table_path, CLEAN)
    assert done.is_completed
    assert len([f for f in data_files(table_path) if f.endswith(".parquet")]) == 2
    agree(spark, table_path, [("jack", "cherry")])
    assert all(i.is_completed for i in HoodieTable.load(table_path).timeline.filter(WRITE_ACTIONS))


@pytest.mark.slow
def test_merge_on_read_restore_voids_later_delta_commits(spark, table_path):
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false"}
    upsert(spark, table_path, [("jack", "apple"), ("sarah", "kiwi")], 1, **mor)
    c2 = upsert(spark, table_path, [("jack", "banana")], 2, **mor)
    at_savepoint = state(spark, table_path)
    create_savepoint(HoodieTable.load(table_path), c2)
    upsert(spark, table_path, [("jack", "cherry"), ("tom", "plum")], 3, **mor)
    upsert(spark, table_path, [("sarah", "lime")], 4, **{**mor, "hoodie.compact.inline": "true",
                                                         "hoodie.compact.inline.max.delta.commits": "1"})
    agree(spark, table_path, [("jack", "cherry"), ("sarah", "lime"), ("tom", "plum")])
    restore_to_savepoint(HoodieTable.load(table_path), c2)
    agree(spark, table_path, at_savepoint)
    timeline = HoodieTable.load(table_path).timeline
    assert [i.timestamp for i in timeline.completed_writes()][-1] == c2
    assert not timeline.pending()


KILLED_RESTORE = textwrap.dedent("""
    import os, signal, sys
    from hudi_engine.services.savepoint import schedule_restore
    from hudi_engine.table.meta_client import HoodieTable
    from hudi_engine.transaction.recovery import rollback
    table = HoodieTable.load(sys.argv[1])
    requested = schedule_restore(table, sys.argv[2])
    table = table.reload()
    table.timeline.transition_to_inflight(requested)
    newest = [i for i in table.timeline.completed_writes() if i.timestamp > sys.argv[2]][-1]
    rollback(table, newest)          # the first of the plan's rollbacks, then the process dies
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_restore_is_finished_by_the_next_writer(spark, table_path):
    upsert(spark, table_path, [("jack", "apple")], 1)
    c2 = upsert(spark, table_path, [("jack", "banana"), ("sarah", "kiwi")], 2)
    create_savepoint(HoodieTable.load(table_path), c2)
    later = [upsert(spark, table_path, [("jack", f)], n) for n, f in enumerate(["cherry", "date"], 3)]
    proc = subprocess.run([sys.executable, "-c", KILLED_RESTORE, str(table_path), c2], env=os.environ.copy())
    assert proc.returncode == -signal.SIGKILL
    [pending] = instants(table_path, RESTORE)
    assert not pending.is_completed
    upsert(spark, table_path, [("tom", "plum")], 9)    # finishes the restore first, then writes
    [restore] = instants(table_path, RESTORE)
    assert restore.is_completed
    timeline = HoodieTable.load(table_path).timeline
    assert not [i for i in timeline.instants if i.timestamp in later]
    agree(spark, table_path, [("jack", "banana"), ("sarah", "kiwi"), ("tom", "plum")])


def test_file_groups_an_insert_overwrite_replaced_are_cleaned_after_retention(spark, table_path):
    no_clean = {"hoodie.clean.automatic": "false"}
    upsert(spark, table_path, [("jack", "apple"), ("sarah", "kiwi")], 1, **no_clean)
    old_files = data_files(table_path)
    df = spark.createDataFrame([("tom", "plum", "eu", 2)], FRUIT_SCHEMA)
    write(df, table_path, {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "insert_overwrite", **no_clean})
    assert run_clean(HoodieTable.load(table_path), RETAIN_1) == []      # the replacecommit is retained
    upsert(spark, table_path, [("tom", "pear")], 3, **no_clean)
    assert run_clean(HoodieTable.load(table_path), RETAIN_1)
    assert not old_files & data_files(table_path)
    agree(spark, table_path, [("tom", "pear")])


def test_large_plans_delete_on_spark_executors_small_ones_on_threads(spark, tmp_path):
    storage = Storage(str(tmp_path))
    paths = [f"p/f{i}.parquet" for i in range(600)]
    for p in paths:
        storage.write_bytes(p, b"x")
    results = delete_files(storage, paths + ["p/never-there.parquet"], spark, parallelism=4, distribute_at=500)
    assert all(results.values()) and len(results) == len(paths) + 1
    assert storage.list("p") == []
    for p in paths[:50]:
        storage.write_bytes(p, b"x")
    assert all(delete_files(storage, paths[:50], spark).values()) and storage.list("p") == []
