"""Long work reports its Spark tasks to the progress sink, which the CLI draws as a bar (real
Spark, real files)."""
import io
import logging

import pytest

from hudi_engine import logs, progress, read, write
from hudi_engine.api import HoodieTable, run_compactions, schedule_compaction
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA

pytestmark = pytest.mark.spark


@pytest.fixture
def reports():
    seen = []
    previous = progress.set_sink(lambda what, done, total, final=False: seen.append((what, done, total, final)))
    yield seen
    progress.set_sink(previous)


def test_a_write_and_a_compaction_report_their_tasks(spark, table_path, reports):
    opts = {**FRUIT_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    rows = [(f"p{i}", "apple", "eu" if i % 2 else "us", 1) for i in range(40)]
    first = write(spark.createDataFrame(rows, FRUIT_SCHEMA), table_path, opts)
    second = write(spark.createDataFrame([("p1", "kiwi", "eu", 2)], FRUIT_SCHEMA), table_path, opts)
    planned = schedule_compaction(HoodieTable.load(table_path), opts, force=True)
    [compacted] = run_compactions(spark, HoodieTable.load(table_path), options=opts)

    assert compacted == planned.timestamp
    by_work = {}
    for what, done, total, final in reports:
        assert 0 <= done <= total
        by_work.setdefault(what, []).append((done, total, final))
    assert set(by_work) == {f"upsert {first}", f"upsert {second}", f"compaction {compacted}"}
    for counts in by_work.values():
        assert [f for *_, f in counts] == [False] * (len(counts) - 1) + [True]   # one final report, last
        assert counts[-1][0] == counts[-1][1] > 0          # ends with every task done
        assert [d for d, *_ in counts] == sorted(d for d, *_ in counts)
    fruit = {r["name"]: r["fruit"] for r in read(spark, table_path).collect()}
    assert len(fruit) == 40 and fruit["p1"] == "kiwi" and fruit["p2"] == "apple"


def test_the_terminal_bar_redraws_one_line_per_piece_of_work():
    out = io.StringIO()
    bar = progress.TerminalBar(out, width=10)
    bar("upsert 1", 2, 2)           # a job done while the next stage is not known yet
    bar("upsert 1", 2, 4)
    bar("upsert 1", 4, 4, final=True)
    bar("compaction 2", 1, 3)
    bar("clean 3", 1, 1, final=True)
    lines = out.getvalue().split("\n")
    assert lines[0].split("\r")[1:] == ["[hudi] upsert 1: [##########]    2/2 tasks",
                                        "[hudi] upsert 1: [#####.....]    2/4 tasks",
                                        "[hudi] upsert 1: [##########]    4/4 tasks"]
    assert lines[1] == "\r[hudi] compaction 2: [###.......]    1/3 tasks"
    assert lines[2] == "\r[hudi] clean 3: [##########]    1/1 tasks"
    assert lines[3] == ""


def test_a_log_message_ends_a_bar_drawn_halfway(capsys):
    logger = logging.getLogger(logs.ENGINE_LOGGER)
    before = (logger.level, list(logger.handlers), progress.set_sink(progress.TerminalBar()))
    try:
        logs.show_progress()
        progress.sink()("upsert 1", 1, 4)
        logging.getLogger("hudi_engine.write.operations").info("upsert 1: merging and writing")
        progress.sink()("upsert 1", 4, 4, final=True)
        assert capsys.readouterr().err.split("\n") == [
            "\r[hudi] upsert 1: [#######.......................]    1/4 tasks",
            "[hudi] upsert 1: merging and writing",
            "\r[hudi] upsert 1: [##############################]    4/4 tasks", ""]
    finally:
        logger.setLevel(before[0])
        logger.handlers[:] = before[1]
        progress.set_sink(before[2])
