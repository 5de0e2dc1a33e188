"""The three-commit example on a merge-on-read table (real Spark, real files): log files on disk,
every query type read by our reader, the ``hudi`` data source and hudi-rs, before and after
compaction."""
import pyarrow.parquet as pq
import pytest

from hudi_engine import read, write
from hudi_engine.file_group.log_file import BlockType, read_log_file
from hudi_engine.services.compaction import run_compactions, schedule_compaction
from hudi_engine.storage import Storage
from hudi_engine.table.meta_client import HoodieTable
from tests.support.data import three_commits, window_ends
from tests.support.hudi_rs import hudi_rs_read, rows

# Every test twice: writes run in this process (small inputs) and as Spark stages (big ones).
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("write_plane")]
COLS = ["name", "fruit"]
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
INCR = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"}


def ours(spark, path, **opts):
    return sorted((r["name"], r["fruit"]) for r in read(spark, path, opts).select(*COLS).collect())


def via_datasource(spark, path, **opts):
    df = spark.read.format("hudi").options(**opts).load(str(path))
    return sorted((r["name"], r["fruit"]) for r in df.select(*COLS).collect())


def log_blocks(path):
    storage = Storage(str(path))
    found = []
    for info in sorted(storage.list("", recursive=True), key=lambda f: f.path):
        if ".log." in info.path and not info.path.startswith(".hoodie"):
            found += [(info.path, b.block_type, b.instant_time) for b in read_log_file(storage, info.path)]
    return found


@pytest.fixture
def mor_table(spark, base_path):
    return (base_path, *three_commits(spark, write, base_path, MOR))


def test_updates_and_deletes_go_to_log_blocks(mor_table):
    path, c1, c2, c3 = mor_table
    timeline = HoodieTable.load(str(path)).timeline
    assert [(i.timestamp, i.action) for i in timeline.completed_writes()] == [
        (c1, "deltacommit"), (c2, "deltacommit"), (c3, "deltacommit")]
    blocks = log_blocks(path)
    assert [(b[1], b[2]) for b in blocks] == [(BlockType.AVRO_DATA_BLOCK, c2), (BlockType.DELETE_BLOCK, c3)]
    # Table version 6 names log files after their slice's base instant, versions counting up;
    # 8 and 9 after their own delta commit, each at version 1.
    versions = [p.rsplit("/", 1)[-1].split(".log.")[1][0] for p, _, _ in blocks]
    if HoodieTable.load(str(path)).version == 6:
        assert versions == ["1", "2"] and all(f"_{c1}.log." in p for p, _, _ in blocks)
    else:
        assert versions == ["1", "1"] and [f"_{c}.log." in p for (p, _, _), c in zip(blocks, (c2, c3))] == [True] * 2


def test_every_query_type_matches_hudi_rs(spark, mor_table):
    path, c1, c2, c3 = mor_table
    latest = [("jack", "banana"), ("sarah", "orange")]
    assert ours(spark, path) == latest == via_datasource(spark, path)
    assert rows(hudi_rs_read(path), COLS) == latest

    base_only = [("jack", "apple"), ("john", "pineapple"), ("sarah", "orange")]
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    assert ours(spark, path, **ro) == base_only == via_datasource(spark, path, **ro)
    assert rows(hudi_rs_read(path, read_optimized=True), COLS) == base_only

    assert ours(spark, path, **{"as.of.instant": c2}) == [
        ("jack", "banana"), ("john", "pineapple"), ("sarah", "orange")]
    assert rows(hudi_rs_read(path, as_of=c2), COLS) == ours(spark, path, **{"as.of.instant": c2})
    assert ours(spark, path, **{"as.of.instant": c1}) == base_only

    assert ours(spark, path, **INCR, **{"hoodie.datasource.merge.type": "skip_merge"}) == [
        ("jack", "apple"), ("jack", "banana"), ("john", "pineapple"), ("sarah", "orange")]
    assert ours(spark, path, **INCR, **{"hoodie.datasource.merge.type": "payload_combine"}) == latest
    assert ours(spark, path, **INCR) == rows(hudi_rs_read(path, begin="0"), COLS)
    w1, w2 = window_ends(path, c1, c2)            # completion times from version 8 on
    window = {"hoodie.datasource.read.begin.instanttime": w1, "hoodie.datasource.read.end.instanttime": w2}
    assert ours(spark, path, **{**INCR, **window}) == [("jack", "banana")]
    assert rows(hudi_rs_read(path, begin=w1, end=w2), COLS) == [("jack", "banana")]


def test_compaction_keeps_every_answer(spark, mor_table):
    path, c1, c2, c3 = mor_table
    before = {q: ours(spark, path, **o) for q, o in
              {"snapshot": {}, "incr": INCR, "travel": {"as.of.instant": c2}}.items()}
    table = HoodieTable.load(str(path))
    requested = schedule_compaction(table, force=True)
    assert requested is not None
    options = {"hoodie.parquet.compression.codec": "snappy"}
    assert run_compactions(spark, table.reload(), options=options) == [requested.timestamp]

    table = HoodieTable.load(str(path))
    commit = table.timeline.get(requested.timestamp)
    assert commit.action == "commit" and commit.is_completed
    latest = table.fs_view().latest_file_slices()
    compacted = [s for s in latest if s.base_instant == requested.timestamp]
    assert len(compacted) == 1 and not compacted[0].log_files
    storage = Storage(str(path))
    footer = pq.read_metadata(storage.full(compacted[0].base_file.path), filesystem=storage.fs)
    assert footer.row_group(0).column(0).compression == "SNAPPY"   # the compaction's options apply
    for query, opts in {"snapshot": {}, "incr": INCR, "travel": {"as.of.instant": c2}}.items():
        assert ours(spark, path, **opts) == before[query], query
    assert rows(hudi_rs_read(path), COLS) == before["snapshot"]
    # Read optimized now sees the compacted base file; compaction keeps each row's commit time.
    assert ours(spark, path, **{"hoodie.datasource.query.type": "read_optimized"}) == before["snapshot"]
    jack = [r for r in read(spark, path).collect() if r["name"] == "jack"][0]
    assert jack["_hoodie_commit_time"] == c2
