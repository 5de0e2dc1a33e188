import os
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("HUDI_RS_FIXTURES", ROOT.parent / "shared" / "fixtures" / "hudi-rs-tables"))


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (startup costs seconds)."""
    from hudi_engine.spark import local_spark

    session = local_spark("hudi-engine-tests", cores=2, memory="3g")
    yield session
    session.stop()


@pytest.fixture
def table_path(tmp_path):
    return str(tmp_path / "table")


def unzip_fixture(relative: str, dest: Path) -> Path:
    """Extract one fixture table written by real Hudi and return its base path."""
    archive = FIXTURES / relative
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if not n.startswith("__MACOSX")]
        zf.extractall(dest, members=names)
    top = {n.split("/")[0] for n in names}
    assert len(top) == 1, f"{archive} holds {top}"
    return dest / top.pop()
