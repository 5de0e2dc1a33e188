"""``hudictl status``: the operator's view of tables and pipelines, read from real timelines."""
import json

import pytest
import yaml

from hudi_engine import write
from hudi_engine.table.meta_client import HoodieTable
from hudictl.cli import main
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA

pytestmark = pytest.mark.spark


def resources(base, missing):
    table = {"apiVersion": "lakehouse.hudi.dev/v1alpha1", "kind": "HudiTable", "metadata": {"name": "fruit"},
             "spec": {"basePath": base, "tableType": "MERGE_ON_READ", "recordKey": ["name"],
                      "partitionFields": ["region"], "orderingField": "ts",
                      "services": {"compaction": {"mode": "scheduled", "schedule": "@hourly",
                                                  "maxDeltaCommits": 2}}}}
    other = {**table, "metadata": {"name": "later"}, "spec": {**table["spec"], "basePath": missing}}
    pipeline = {"apiVersion": "lakehouse.hudi.dev/v1alpha1", "kind": "HudiPipeline", "metadata": {"name": "fruit-in"},
                "spec": {"tableRef": {"name": "fruit"},
                         "source": {"type": "files", "files": {"path": "/tmp/in", "format": "json"}}}}
    return [table, other, pipeline]


def test_status_reads_last_commit_due_compaction_and_checkpoint(spark, tmp_path, capsys):
    base = str(tmp_path / "fruit")
    options = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.operation": "upsert"}
    for ts in (1, 2, 3):
        write(spark.createDataFrame([("jack", f"apple-{ts}", "eu", ts)], FRUIT_SCHEMA), base, options,
              extra_metadata={"deltastreamer.checkpoint.key": str(1000 * ts)})
    path = tmp_path / "lake.yaml"
    path.write_text(yaml.safe_dump_all(resources(base, str(tmp_path / "missing"))))
    assert main(["status", "-f", str(path), "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    last = HoodieTable.load(base).timeline.last_completed_write().timestamp
    fruit = rows["fruit"]
    assert (fruit["lastCommitInstant"], fruit["pendingCompactions"], fruit["commitsSinceCompaction"]) == (last, 0, 3)
    assert fruit["compactionDue"] is True and fruit["checkpoint"] == "3000"
    assert rows["later"]["state"].startswith("no table yet")
    assert rows["fruit-in"]["resumesFrom"] == "3000" and rows["fruit-in"]["state"] == "running"
