"""A Hive Metastore of one's own on this machine: Hive 2.3's thrift server from pyspark's jars, with
an embedded Derby database in a folder, listening on 127.0.0.1. The demo lakehouse's catalog, and
the tests' metastore (which add its lock manager's settings).

Starting returns at once; :attr:`LocalMetastore.uri` waits until the server listens (the JVM
takes 10-20 s), so callers boot it first and do other work meanwhile."""
from __future__ import annotations

import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hudi_engine.local_jvm import spark_jars

from .local_process import stop_group, wait_until

START_TIMEOUT_S = 120


@dataclass
class LocalMetastore:
    process: subprocess.Popen
    port: int
    log: Path
    _ready: bool = field(default=False, repr=False)

    @property
    def address(self) -> str:
        """The URI without waiting (for a process that connects later)."""
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def uri(self) -> str:
        if not self._ready:
            self.wait_until_listening()
        return self.address

    def wait_until_listening(self, timeout_s: float = START_TIMEOUT_S) -> None:
        def listening() -> bool:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True

        wait_until(self.process, listening, f"the Hive Metastore on port {self.port}", self.log, timeout_s)
        self._ready = True

    def stop(self) -> None:
        stop_group(self.process, timeout_s=20)


def derby_url(folder: Path) -> str:
    return f"jdbc:derby:;databaseName={folder.resolve()}/metastore_db;create=true"


def start(folder: Path, port: int, settings: Mapping[str, str] | None = None,
          conf_files: Mapping[str, str] | None = None) -> LocalMetastore:
    """The metastore of ``folder`` (its Derby database, warehouse and log there) on ``port``, with
    further Hive ``settings`` as system properties and ``conf_files`` (name -> text, e.g.
    ``core-site.xml``) on its classpath."""
    folder = folder.resolve()
    conf = folder / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    for name, text in (conf_files or {}).items():
        (conf / name).write_text(text)
    log = folder / "metastore.log"
    command = [
        "java", "-Xmx512m", "-cp", f"{conf}:{spark_jars()}/*", "-Dhive.async.log.enabled=false",
        "-DLog4jContextSelector=org.apache.logging.log4j.core.selector.ClassLoaderContextSelector",
        f"-Djavax.jdo.option.ConnectionURL={derby_url(folder)}",
        "-Ddatanucleus.schema.autoCreateAll=true", "-Dhive.metastore.schema.verification=false",
        f"-Dhive.metastore.warehouse.dir={folder}/warehouse",
        *(f"-D{key}={value}" for key, value in (settings or {}).items()),
        "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(port)]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=folder,
                                   start_new_session=True)
    return LocalMetastore(process, port, log)
