"""``hudictl quickstart`` end to end in its own process, both table types; the table it leaves is
checked with hudi-rs."""
import subprocess
import sys

import pytest

from hudi_engine.table.meta_client import HoodieTable
from tests.support.hudi_rs import hudi_rs_read, rows

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_demo_leaves_the_three_commit_table(tmp_path, table_type):
    path = tmp_path / "fruit_basket"
    done = subprocess.run([sys.executable, "-m", "hudictl.cli", "quickstart", "--path", str(path),
                           "--table-type", table_type], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert rows(hudi_rs_read(path), ["name", "fruit"]) == [("jack", "banana"), ("sarah", "orange")]
    table = HoodieTable.load(str(path))
    assert table.table_type == table_type
    actions = [i.action for i in table.timeline.completed_writes()]
    if table_type == "MERGE_ON_READ":
        assert actions == ["deltacommit"] * 3 + ["commit"]   # the demo's compaction
        assert rows(hudi_rs_read(path, read_optimized=True), ["name", "fruit"]) == [
            ("jack", "banana"), ("sarah", "orange")]
    else:
        assert actions == ["commit"] * 3
