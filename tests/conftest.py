import logging
import os
import uuid
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger(__name__)
FIXTURES = Path(os.environ.get("HUDI_RS_FIXTURES", ROOT.parent / "shared" / "fixtures" / "hudi-rs-tables"))
# Every JVM of the run (the Spark sessions, jobs started as processes, the metastore) inherits this:
# they work on small inputs briefly, and the C1 compiler alone gives them what C2 would at a fraction
# of its CPU (test_mor_three_commits 144 s -> 118 s on 2 cores, and the machine less busy).
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")


def pytest_collection_modifyitems(items):
    """Slow tests first: with ``-n 2 --dist worksteal`` (``make test SLOW=1``) one worker starts on
    the soak tests while the other takes the short ones, and no worker is left alone with a
    three-minute test at the end of the run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local SparkSession for the whole run (startup costs seconds); SQL's managed tables go
    under a temporary warehouse."""
    from hudi_engine.spark import local_spark

    warehouse = str(tmp_path_factory.mktemp("spark-warehouse"))
    session = local_spark("hudi-engine-tests", cores=2, memory="3g",
                          extra_conf={"spark.sql.warehouse.dir": warehouse})
    yield session
    session.stop()


@pytest.fixture(params=["in-process", "spark-stages"])
def write_plane(request, monkeypatch):
    """Runs a test twice: small writes' data steps in the writing process (their default), then on
    Spark's executors (``hoodie.write.in.process.max.records`` defaulting to 0, as for big inputs)."""
    import dataclasses

    from hudi_engine import config as C

    if request.param == "spark-stages":
        monkeypatch.setattr(C, "IN_PROCESS_MAX_RECORDS", dataclasses.replace(C.IN_PROCESS_MAX_RECORDS, default=0))
    return request.param


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """One real S3 server (Ceph radosgw on a one-OSD in-memory cluster) for the whole run, started
    by the first test that asks for it (about 2 s)."""
    from tests.support.s3_server import start_s3_server, stop_s3_server

    server = start_s3_server(tmp_path_factory.mktemp("s3-server"))
    try:
        yield server
    finally:
        stop_s3_server(server)


@pytest.fixture(scope="session")
def metastore(tmp_path_factory):
    """One real Hive Metastore (Hive 2.3 from pyspark's jars, Derby, its transaction tables made as
    schematool would) for the whole run: the catalog of Hive sync and the Hive Metastore lock."""
    from tests.support.metastore import start_metastore

    ms = start_metastore(tmp_path_factory.mktemp("hive-metastore"))
    try:
        yield ms
    finally:
        ms.stop()


@pytest.fixture
def s3_bucket(s3_server):
    """A new, empty bucket for one test (its name); emptied and removed afterwards, so the
    in-memory cluster does not grow over the run."""
    name = f"test-{uuid.uuid4().hex}"
    s3_server.create_bucket(name)
    yield name
    try:
        s3_server.filesystem(allow_bucket_deletion=True).delete_dir(name)
    except OSError as e:
        log.warning("could not remove bucket %s: %s", name, e)


@pytest.fixture
def table_path(tmp_path):
    return str(tmp_path / "table")


@pytest.fixture(params=["local", "s3"])
def base_path(request, tmp_path):
    """A table's base path on local disk, then in a fresh bucket of the real S3 server (``s3a://``,
    as Hadoop users write it), for the scenarios that must hold on both. The session finds the
    server as a user's would: ``spark.hadoop.fs.s3a.*`` in its conf."""
    if request.param == "local":
        yield str(tmp_path / "table")
        return
    bucket = request.getfixturevalue("s3_session")
    yield f"s3a://{bucket}/table"
    assert request.getfixturevalue("s3_server").directory_markers(bucket) == [], \
        "the engine wrote directory-marker objects"


@pytest.fixture
def s3_session(spark, s3_server, s3_bucket):
    """The test session configured for the S3 server; the bucket's name."""
    configure_session(spark, s3_server)
    return s3_bucket


def configure_session(spark, s3_server) -> None:
    """``spark.hadoop.fs.s3a.*`` in the session's conf, as a user would reach an S3 store."""
    from hudi_engine.spark import register

    for key, value in s3_server.options().items():
        spark.conf.set(f"spark.hadoop.{key}", value)
    register(spark)


def unzip_fixture(relative: str, dest: Path) -> Path:
    """Extract one fixture table written by real Hudi and return its base path."""
    archive = FIXTURES / relative
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if not n.startswith("__MACOSX")]
        zf.extractall(dest, members=names)
    top = {n.split("/")[0] for n in names}
    assert len(top) == 1, f"{archive} holds {top}"
    return dest / top.pop()
