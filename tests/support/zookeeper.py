"""A real ZooKeeper server (Debian's ``zookeeper`` package, installed by ``.ci/install-services``)
started on a free loopback port with its own data folder. The package's system daemon (in the
separate ``zookeeperd`` package) is never used.

Without the package a test is skipped, except under CI (``CI=true``), where it must exist."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from hudictl.local_process import wait_until
from tests.support.services import free_port, not_installed, stop_group

JAVA_DIR = Path("/usr/share/java")
# The server's jars from Debian's libzookeeper-java and its dependencies (one logging binding).
JARS = ("zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-nop.jar", "netty-all.jar",
        "commons-io.jar", "commons-cli.jar", "metrics-core.jar", "snappy-java.jar")
START_TIMEOUT_S = 60


def classpath() -> str:
    if not (JAVA_DIR / "zookeeper.jar").exists() or not shutil.which("java"):
        not_installed("ZooKeeper is not installed (Debian package zookeeper); run .ci/install-services")
    return ":".join(str(JAVA_DIR / j) for j in JARS if (JAVA_DIR / j).exists())


@dataclass
class ZooKeeper:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    def wait_until_ready(self) -> None:
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        def answers() -> bool:
            client = KazooClient(hosts=self.url, timeout=5)
            try:
                client.start(timeout=2)
                client.get_children("/")
                return True
            except KazooTimeoutError:
                return False
            finally:
                client.stop()
                client.close()

        wait_until(self.process, answers, f"ZooKeeper on {self.url}", self.log, START_TIMEOUT_S)


def start_zookeeper(folder: Path) -> ZooKeeper:
    cp = classpath()
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cfg = folder / "zoo.cfg"
    cfg.write_text(f"tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={data}\nclientPort={port}\n"
                   "clientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxSessionTimeout=120000\n")
    log = folder / "zookeeper.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            ["java", "-Xmx256m", "-cp", cp, "-Dzookeeper.jmx.log4j.disable=true",
             "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(cfg)],
            stdout=out, stderr=subprocess.STDOUT, cwd=folder, start_new_session=True)
    server = ZooKeeper(process, port, log)
    try:
        server.wait_until_ready()
    except BaseException:
        stop_group(process, 10)
        raise
    return server


def stop_zookeeper(server: ZooKeeper) -> None:
    stop_group(server.process, 10)


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    """A ZooKeeper server for the tests of one module (import this fixture into the module)."""
    server = start_zookeeper(tmp_path_factory.mktemp("zookeeper"))
    yield server
    stop_zookeeper(server)
