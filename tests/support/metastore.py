"""A real Hive Metastore (thrift, Hive 2.3 from pyspark's jars) on a free local port, with its
Derby database in a temp folder: started once per test session, stopped at the end.

Started by hudictl's local_metastore, with its lock manager on (transaction tables, DbTxnManager
housekeeping) for the Hive Metastore lock provider. Starting returns soon and the first use of
``uri`` waits until it listens (~15 s), so the JVM boots while the tests write their tables."""
from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport

from hudictl import local_metastore
from hudi_engine.local_jvm import spark_jars
from hudictl.local_metastore import LocalMetastore
from tests.support.services import free_port

# The metastore's lock manager as the chart configures it: its transaction tables (which
# DataNucleus' autoCreateAll does not make) and its settings.
CHART_FILES = Path(__file__).resolve().parents[2] / "charts" / "hive-metastore" / "files"
TXN_SCHEMA = CHART_FILES / "hive-txn-schema-2.3.0.sql"
# How long the metastore keeps a lock nobody heartbeats (hive.txn.timeout; 300 s in the chart),
# short so that the tests see a dead holder's lock expire; its housekeeping runs every second.
TXN_TIMEOUT_S = 4


def lock_manager_settings() -> dict[str, str]:
    lines = (line.strip() for line in (CHART_FILES / "lock-manager.properties").read_text().splitlines())
    settings = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    return {**settings, "hive.txn.timeout": f"{TXN_TIMEOUT_S}s",
            "hive.timedout.txn.reaper.start": "1s", "hive.timedout.txn.reaper.interval": "1s"}
# The bucket whose s3a:// locations the metastore accepts. A metastore checks and makes a table's
# folder through Hadoop; pyspark's jars carry no S3A connector (hadoop-aws) and none can be
# downloaded here, so Hadoop's ViewFileSystemOverloadScheme stands in for it, mounting this bucket
# on a local folder: only the metastore's folder checks go there, the table itself is on the real
# S3 server. A production metastore image carries hadoop-aws instead.
S3A_BUCKET = "hive-sync-lakehouse"
_CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.s3a.impl</name><value>org.apache.hadoop.fs.viewfs.ViewFileSystemOverloadScheme</value></property>
  <property><name>fs.viewfs.overload.scheme.target.file.impl</name><value>org.apache.hadoop.fs.LocalFileSystem</value></property>
  <property><name>fs.viewfs.mounttable.{bucket}.linkFallback</name><value>file://{folder}</value></property>
</configuration>
"""


def derby_txn_schema() -> str:
    """The chart's PostgreSQL DDL in Derby's words: only the binary column type differs (Hive's own
    Derby script uses VARCHAR FOR BIT DATA where the PostgreSQL one has BYTEA)."""
    return TXN_SCHEMA.read_text().replace("BYTEA", "VARCHAR(2048) FOR BIT DATA")


def create_txn_tables(database_url: str, workdir: Path) -> None:
    """Run the transaction tables' DDL on the Derby database with Derby's own ij tool (the database
    is embedded, so before the metastore opens it)."""
    script = workdir / "hive-txn-schema.derby.sql"
    script.write_text(derby_txn_schema())
    classpath = ":".join(str(j) for j in spark_jars().glob("derby*.jar"))
    done = subprocess.run(["java", f"-Dij.database={database_url}", "-cp", classpath, "org.apache.derby.tools.ij",
                           str(script)], capture_output=True, text=True, timeout=120, cwd=workdir)
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR")]
    if done.returncode or errors:
        raise RuntimeError(f"creating the metastore's transaction tables failed: {errors or done.stderr}")


def start_metastore(workdir: Path) -> LocalMetastore:
    create_txn_tables(local_metastore.derby_url(workdir), workdir)
    (workdir / "s3a-stand-in").mkdir(exist_ok=True)
    return local_metastore.start(workdir, free_port(), lock_manager_settings(),
                                 {"core-site.xml": _CORE_SITE.format(bucket=S3A_BUCKET, folder=workdir / "s3a-stand-in")})


@contextmanager
def thrift(metastore):
    """A plain thrift client, independent of the code under test, to ask the metastore."""
    uri = urlparse(metastore.uri)
    transport = TBufferedTransport(TSocket(uri.hostname, uri.port))
    transport.open()
    try:
        yield ThriftHiveMetastore.Client(TBinaryProtocol(transport))
    finally:
        transport.close()
