"""A real Hive Metastore (thrift, Hive 2.3 from pyspark's jars) on a free local port, with its
Derby database in a temp folder: started once per test session, stopped at the end.

Starting returns at once and the first use of :attr:`Metastore.uri` waits until it listens
(~15 s), so the JVM boots while the tests write their tables."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pyspark

from tests.support.services import free_port, stop_group

JARS = Path(pyspark.__file__).parent / "jars"
START_TIMEOUT_S = 120
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


class Metastore:
    def __init__(self, process: subprocess.Popen, port: int, log: Path):
        self.process, self.port, self.log = process, port, log
        self._ready = False

    @property
    def address(self) -> str:
        """The URI without waiting (for a process that connects later)."""
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def uri(self) -> str:
        if not self._ready:
            self._wait_until_listening()
        return self.address

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the metastore exited with {self.process.returncode}; see {self.log}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                self._ready = True
                return
            except OSError:
                time.sleep(0.25)
        raise RuntimeError(f"the metastore did not listen on {self.port} within {START_TIMEOUT_S}s; see {self.log}")

    def stop(self) -> None:
        stop_group(self.process, timeout_s=20)


def start_metastore(workdir: Path) -> Metastore:
    port, log = free_port(), workdir / "metastore.log"
    conf = workdir / "conf"
    conf.mkdir(exist_ok=True)
    (workdir / "s3a-stand-in").mkdir(exist_ok=True)
    (conf / "core-site.xml").write_text(_CORE_SITE.format(bucket=S3A_BUCKET, folder=workdir / "s3a-stand-in"))
    command = [
        "java", "-Xmx512m", "-cp", f"{conf}:{JARS}/*", "-Dhive.async.log.enabled=false",
        "-DLog4jContextSelector=org.apache.logging.log4j.core.selector.ClassLoaderContextSelector",
        f"-Djavax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={workdir}/metastore_db;create=true",
        "-Ddatanucleus.schema.autoCreateAll=true", "-Dhive.metastore.schema.verification=false",
        f"-Dhive.metastore.warehouse.dir={workdir}/warehouse",
        "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(port)]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=workdir,
                                   start_new_session=True)
    return Metastore(process, port, log)
