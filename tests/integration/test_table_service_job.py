"""The table-service job the operator schedules, run as its own process from a job-config file."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_engine import read, write
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def run_job(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, str(ROOT / "jobs" / "main.py"), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_compaction_job_compacts_a_merge_on_read_table(spark, tmp_path):
    base = str(tmp_path / "fruit")
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.operation": "upsert"}
    for ts in (1, 2, 3):
        write(spark.createDataFrame([("jack", f"apple-{ts}", "eu", ts), ("sarah", "orange", "us", ts)],
                                    FRUIT_SCHEMA), base, options)
    config = tmp_path / "job-config.json"
    config.write_text(json.dumps({"basePath": base, "tableName": "fruit", "service": "compaction",
                                  "hoodieConf": {"hoodie.compact.inline.max.delta.commits": "2"}}))
    done = run_job("table-service", "--job-config", str(config))
    assert done.returncode == 0, done.stderr[-3000:]
    table = HoodieTable.load(base)
    assert [i.action for i in table.timeline.completed_writes()][-1] == "commit"      # the compaction
    assert all(not s.log_files for s in table.fs_view().latest_file_slices())
    expected = [("jack", "apple-3"), ("sarah", "orange")]
    assert sorted((r["name"], r["fruit"]) for r in read(spark, base).collect()) == expected
    ro = hudi_rs_read(base, read_optimized=True)
    assert sorted(zip(ro.column("name").to_pylist(), ro.column("fruit").to_pylist())) == expected


def test_clustering_job_waits_for_enough_commits_then_clusters(spark, tmp_path):
    base = str(tmp_path / "fruit")
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "insert", "hoodie.parquet.small.file.limit": "0"}
    people = [("jack", "apple", "eu", 1), ("sarah", "orange", "eu", 1), ("john", "kiwi", "eu", 1)]
    for row in people[:2]:
        write(spark.createDataFrame([row], FRUIT_SCHEMA), base, options)
    config = tmp_path / "job-config.json"
    config.write_text(json.dumps({"basePath": base, "tableName": "fruit", "service": "clustering", "hoodieConf": {
        "hoodie.clustering.async.enabled": "true", "hoodie.clustering.async.max.commits": "3",
        "hoodie.clustering.plan.strategy.sort.columns": "fruit"}}))

    def clustered():
        done = run_job("table-service", "--job-config", str(config))
        assert done.returncode == 0, done.stderr[-3000:]
        return HoodieTable.load(base).timeline.filter(["replacecommit"], completed=True)
    assert clustered() == []                                       # two commits: not due yet
    write(spark.createDataFrame([people[2]], FRUIT_SCHEMA), base, options)
    assert len(clustered()) == 1
    [only] = HoodieTable.load(base).fs_view().latest_file_slices()
    stored = pq.read_table(HoodieTable.load(base).storage.full(only.base_file.path))
    assert stored.column("fruit").to_pylist() == ["apple", "kiwi", "orange"]         # sorted by fruit
    assert sorted(hudi_rs_read(base).column("name").to_pylist()) == ["jack", "john", "sarah"]
    assert len(clustered()) == 1                                   # nothing new since: nothing to do


def test_clean_and_savepoint_jobs(spark, tmp_path):
    base = str(tmp_path / "fruit")
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "upsert", "hoodie.clean.automatic": "false"}

    def commit(ts):
        return write(spark.createDataFrame([("jack", f"apple-{ts}", "eu", ts)], FRUIT_SCHEMA), base, options)

    commits = [commit(ts) for ts in (1, 2, 3)]
    config = tmp_path / "job-config.json"

    def job(service, **fields):
        config.write_text(json.dumps({"basePath": base, "tableName": "fruit", "service": service, **fields}))
        done = run_job("table-service", "--job-config", str(config))
        assert done.returncode == 0, done.stderr[-3000:]

    job("clean", hoodieConf={"hoodie.cleaner.commits.retained": "1"})
    assert sorted(p.name.rsplit("_", 1)[-1][:-len(".parquet")] for p in Path(base, "eu").glob("*.parquet")) \
        == commits[1:]
    job("savepoint", keepSavepoints=1)
    later = commit(4)
    job("savepoint", keepSavepoints=1)
    table = HoodieTable.load(base)
    assert [i.timestamp for i in table.timeline.filter(["savepoint"])] == [later]
    assert sorted(zip(*[hudi_rs_read(base).column(c).to_pylist() for c in ("name", "fruit")])) == [("jack", "apple-4")]


def test_bad_job_configs_exit_2_naming_the_field(tmp_path):
    config = tmp_path / "job-config.yaml"
    config.write_text("basePath: /tmp/x\nservice: cleaning\n")
    done = run_job("table-service", "--job-config", str(config))
    assert done.returncode == 2 and "service 'cleaning' is not one of compaction, clustering, indexing, clean, savepoint, catalogSync" in done.stderr
    config.write_text("basePath: /tmp/x\nservise: compaction\n")
    done = run_job("table-service", "--job-config", str(config))
    assert done.returncode == 2 and "did you mean service" in done.stderr
    assert run_job("nope").returncode == 2
