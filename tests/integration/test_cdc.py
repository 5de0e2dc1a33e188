"""CDC queries with real Spark and real files: the three-commit example on both table types and
every supplemental logging mode (and with CDC off, by inference), CDC log files on disk, split
windows, replace commits, commit-by-commit batches."""
import json

import pytest

from hudi_engine import read, write
from hudi_engine.file_group.log_file import BlockType, data_block_records, read_log_file
from hudi_engine.read.cdc import cdc_batches
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA, three_commits, window_ends

# Every test twice: writes run in this process (small inputs) and as Spark stages (big ones).
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("write_plane")]
MODES = ["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]


def cdc_options(table_type, mode):
    opts = {"hoodie.datasource.write.table.type": table_type}
    if mode is not None:
        opts.update({"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode})
    return opts


def changes(spark, path, begin="0", end=None):
    opts = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
            "hoodie.datasource.read.begin.instanttime": begin}
    if end:
        opts["hoodie.datasource.read.end.instanttime"] = end
    return sorted(summary(r.asDict()) for r in read(spark, path, opts).collect())


def summary(row):
    before = json.loads(row["before"]) if row["before"] else None
    after = json.loads(row["after"]) if row["after"] else None
    return (row["op"], row["ts_ms"], before and (before["name"], before["fruit"], before["_hoodie_commit_time"]),
            after and (after["name"], after["fruit"], after["_hoodie_commit_time"]))


# Every mode on local disk; on S3 the two ends (inference on copy-on-write, the fullest logging on
# merge-on-read), which between them read every kind of CDC file.
@pytest.mark.parametrize("base_path, table_type, mode", [
    *[("local", t, m) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for m in MODES + [None]],
    ("s3", "COPY_ON_WRITE", None), ("s3", "MERGE_ON_READ", "DATA_BEFORE_AFTER")], indirect=["base_path"])
def test_three_commits_give_the_same_changes_in_every_mode(spark, base_path, table_type, mode):
    c1, c2, c3 = three_commits(spark, write, base_path, cdc_options(table_type, mode))
    expected = sorted([
        ("i", c1, None, ("jack", "apple", c1)), ("i", c1, None, ("sarah", "orange", c1)),
        ("i", c1, None, ("john", "pineapple", c1)),
        ("u", c2, ("jack", "apple", c1), ("jack", "banana", c2)),
        ("d", c3, ("john", "pineapple", c1), None)])
    assert changes(spark, base_path) == expected
    via_source = spark.read.format("hudi").options(**{
        "hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
        "hoodie.datasource.read.begin.instanttime": "0"}).load(base_path)
    assert sorted(summary(r.asDict()) for r in via_source.collect()) == expected
    # Split into two windows (on completion times from version 8 on), the union is the same.
    w1, w3 = window_ends(base_path, c1, c3)
    assert sorted(changes(spark, base_path, "0", w1) + changes(spark, base_path, w1, w3)) == expected
    # Commit by commit, for a pipeline feeding another table.
    batches = [(instant, sorted(summary(r.asDict()) for r in df.collect()))
               for instant, df in cdc_batches(spark, base_path)]
    assert [b[0] for b in batches] == [c1, c2, c3]
    assert sorted(row for _, rows in batches for row in rows) == expected


def test_cdc_log_files_are_written_beside_rewritten_base_files(spark, table_path):
    c1, c2, c3 = three_commits(spark, write, table_path, cdc_options("COPY_ON_WRITE", "DATA_BEFORE_AFTER"))
    table = HoodieTable.load(table_path)
    storage = Storage(table_path)
    for instant in table.timeline.completed_writes()[1:]:
        [stat] = table.timeline.commit_metadata(instant)["partitionToWriteStats"]["eu"]
        [(path, size)] = stat["cdcStats"].items()
        assert path.startswith("eu/.") and path.endswith("-cdc") and f"_{instant.timestamp}.log.1_" in path
        assert storage.size(path) == size
        [block] = read_log_file(storage, path)
        assert block.block_type == BlockType.CDC_DATA_BLOCK and block.instant_time == instant.timestamp
    assert HoodieTable.load(table_path).props["hoodie.table.cdc.supplemental.logging.mode"] == "DATA_BEFORE_AFTER"


def test_replace_commits_delete_every_row_of_the_replaced_groups(spark, table_path):
    opts = {**FRUIT_OPTIONS, **cdc_options("COPY_ON_WRITE", "OP_KEY_ONLY")}
    rows = [("jack", "apple", "eu", 1), ("sarah", "orange", "us", 1)]
    c1 = write(spark.createDataFrame(rows, FRUIT_SCHEMA), table_path,
               {**opts, "hoodie.datasource.write.operation": "insert"})
    c2 = write(spark.createDataFrame([("zoe", "fig", "eu", 2)], FRUIT_SCHEMA), table_path,
               {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    c3 = write(spark.createDataFrame([("x", "y", "us", 3)], FRUIT_SCHEMA), table_path,
               {**opts, "hoodie.datasource.write.operation": "delete_partition",
                "hoodie.datasource.write.partitions.to.delete": "us"})
    assert changes(spark, table_path, *window_ends(table_path, c1)) == sorted([
        ("i", c2, None, ("zoe", "fig", c2)), ("d", c2, ("jack", "apple", c1), None),
        ("d", c3, ("sarah", "orange", c1), None)])


def test_compaction_logs_what_the_log_files_changed_and_queries_skip_it(spark, table_path):
    from hudi_engine.services.compaction import run_compactions, schedule_compaction

    c1, c2, c3 = three_commits(spark, write, table_path, cdc_options("MERGE_ON_READ", "DATA_BEFORE_AFTER"))
    before = changes(spark, table_path)
    requested = schedule_compaction(HoodieTable.load(table_path), force=True)
    run_compactions(spark, HoodieTable.load(table_path))
    table = HoodieTable.load(table_path)
    [stat] = table.timeline.commit_metadata(table.timeline.get(requested.timestamp))["partitionToWriteStats"]["eu"]
    [path] = stat["cdcStats"]
    records = [r for b in read_log_file(Storage(table_path), path) for r in data_block_records(b).to_pylist()]
    assert sorted((r["op"], r["before"]["name"], (r["after"] or {}).get("fruit")) for r in records) == [
        ("d", "john", None), ("u", "jack", "banana")]
    assert changes(spark, table_path) == before
