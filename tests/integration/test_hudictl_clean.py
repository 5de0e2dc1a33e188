"""``hudictl clean``, ``archive`` and ``savepoint`` on a table Spark wrote: what they print and what
they leave on disk and on the timeline, read back by hudi-rs."""
from pathlib import Path

import pytest

from hudi_engine import write
from hudi_engine.table.meta_client import HoodieTable
from hudictl.cli import build_parser, main
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark
NO_CLEAN = {**FRUIT_OPTIONS, "hoodie.datasource.write.operation": "upsert", "hoodie.clean.automatic": "false"}


@pytest.mark.parametrize("command", [["clean"], ["archive"], ["savepoint"], ["savepoint", "restore"]])
def test_every_command_has_help_with_an_example(command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    assert "examples:\n  hudictl " in capsys.readouterr().out


def test_clean_savepoint_restore_from_the_command_line(spark, table_path, capsys):
    def commit(ts, fruit):
        return write(spark.createDataFrame([("jack", fruit, "eu", ts)], FRUIT_SCHEMA), table_path, NO_CLEAN)

    _, c2, c3 = commit(1, "apple"), commit(2, "banana"), commit(3, "cherry")
    assert main(["savepoint", "create", "--base-path", table_path, "--instant-time", c2, "--comments", "q4"]) == 0
    assert main(["savepoint", "list", "--base-path", table_path]) == 0
    listed = capsys.readouterr().out
    assert c2 in listed and "q4" in listed
    assert main(["clean", "--base-path", table_path, "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]) == 0
    assert "completed clean" in capsys.readouterr().out
    left = {p.name.rsplit("_", 1)[-1][:-len(".parquet")] for p in Path(table_path, "eu").glob("*.parquet")}
    assert left == {c2, c3}      # c1 cleaned, c2 savepointed, c3 latest
    assert main(["archive", "--base-path", table_path]) == 0
    assert "nothing to archive" in capsys.readouterr().out
    assert main(["savepoint", "restore", "--base-path", table_path, "--instant-time", c2]) == 0
    assert rows(hudi_rs_read(table_path), ["name", "fruit"]) == [("jack", "banana")]
    assert main(["savepoint", "delete", "--base-path", table_path, "--instant-time", c2]) == 0
    assert not HoodieTable.load(table_path).timeline.filter(["savepoint"])
