"""A real S3 server for the tests: Ceph's RADOS Gateway (Debian's ``radosgw``, ``ceph-mon`` and
``ceph-osd``, installed by ``.ci/install-services``) on a tiny cluster of its own: one monitor and
one OSD keeping its objects in memory (memstore), pools of one replica, no authentication inside
the cluster. Ceph 16.2 has no RADOS-less backend, hence the cluster. Its conf file, data, logs,
sockets and pid files live in the caller's folder; it binds 127.0.0.1 on free ports only, and
never reads or writes /etc/ceph or /var/lib/ceph. The packages' system daemons are never used.

Without the packages a test is skipped, except under CI (``CI=true``), where they must exist."""
from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import socket
import string
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from hudi_engine.storage.options import CHECKSUM_ENV
from tests.support.services import free_port, not_installed, stop_group

if TYPE_CHECKING:
    from pyarrow.fs import S3FileSystem

log = logging.getLogger(__name__)

BINARIES = ("monmaptool", "ceph-mon", "ceph-osd", "ceph", "radosgw-admin", "radosgw")
START_TIMEOUT_S = 120       # 1-2 s is usual (see paxos_propose_interval); a slow host may need far more
COMMAND_TIMEOUT_S = 60
STOP_TIMEOUT_S = 15
PORT_ATTEMPTS = 3
REGION = "us-east-1"        # radosgw checks signatures made for any region; this one sends no
                            # LocationConstraint, which radosgw would check when creating a bucket
USER = "hudi-tests"
# CHECKSUM_ENV: radosgw 16.2 answers 411 MissingContentLength to the AWS SDKs' default flexible
# checksums; the engine sets these for a non-AWS endpoint, and this module for its own clients.


def binaries() -> None:
    """Skip the test (fail under CI) when a Ceph program the server needs is missing."""
    missing = [b for b in BINARIES if not shutil.which(b)]
    if missing:
        not_installed("Ceph radosgw is not installed (Debian packages radosgw ceph-mon ceph-osd); "
                      "run .ci/install-services")


def ceph_conf(folder: Path, fsid: str, mon_v2: int, mon_v1: int) -> str:
    """One conf for every daemon and command; each path Ceph defaults under /etc or /var is
    redirected into ``folder``. radosgw's port is on its command line, to retry it alone."""
    settings = {
        "fsid": fsid,
        "mon_host": f"[v2:127.0.0.1:{mon_v2},v1:127.0.0.1:{mon_v1}]",
        "public_addr": "127.0.0.1",
        "cluster_addr": "127.0.0.1",
        "ms_bind_retry_delay": "1",     # not 5 s: a port taken meanwhile is retried with another
        # No cephx: nothing to bootstrap. radosgw's monitor client then needs crc mode offered.
        "auth_cluster_required": "none",
        "auth_service_required": "none",
        "auth_client_required": "none",
        "ms_mon_client_mode": "crc secure",
        "run_dir": f"{folder}/run",
        "admin_socket": f"{folder}/run/$name.asok",
        "pid_file": f"{folder}/run/$name.pid",
        "log_file": f"{folder}/log/$name.log",
        "log_to_stderr": "false",
        "err_to_stderr": "true",
        "mon_cluster_log_file": f"{folder}/log/cluster.log",
        "mon_debug_dump_location": f"{folder}/log/$name.tdump",
        "crash_dir": f"{folder}/crash",
        "keyring": f"{folder}/keyring",
        "mon_data": f"{folder}/mon/$id",
        "osd_data": f"{folder}/osd/$id",
        "mgr_data": f"{folder}/mgr/$id",
        "mds_data": f"{folder}/mds/$id",
        "rgw_data": f"{folder}/rgw",
        # The monitor stops below 5% free disk by default and warns below 30%: the host's disk is
        # not its concern here.
        "mon_data_avail_crit": "0",
        "mon_data_avail_warn": "0",
        # Commit cluster map changes without the default 1 s batching: with it, creating
        # radosgw's pools one after another makes the start take 12-25 s instead of 1-2 s.
        "paxos_propose_interval": "0.05",
        "paxos_min_wait": "0.01",
        # Objects in RAM. The size is only the capacity the OSD reports (memory is taken as data
        # is written), far above what tests write, so the full ratios are never reached.
        "osd_objectstore": "memstore",
        "memstore_device_bytes": str(4 << 30),
        "osd_pool_default_size": "1",
        "osd_pool_default_min_size": "1",
        "mon_allow_pool_size_one": "true",
        "mon_warn_on_pool_no_redundancy": "false",
        "osd_pool_default_pg_num": "8",
        "osd_pool_default_pgp_num": "8",
        "osd_pool_default_pg_autoscale_mode": "off",
        "mon_max_pg_per_osd": "1000",
        "osd_crush_chooseleaf_type": "0",
        "osd_op_num_shards": "1",
        "osd_op_num_threads_per_shard": "2",
        "rgw_thread_pool_size": "32",
        # Lifecycle workers sleep 5 s between attempts, and radosgw waits for them when it stops.
        "rgw_enable_lc_threads": "false",
        # The data of deleted objects is garbage-collected after 2 h by default: memory held until
        # the run ends.
        "rgw_gc_obj_min_wait": "1",
        "rgw_gc_processor_period": "2",
    }
    return "[global]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class PortTaken(RuntimeError):
    """A port chosen for the cluster was taken by another process before the daemon bound it."""


@dataclass
class Daemon:
    name: str           # Ceph's name of it: mon.a, osd.0, client.rgw
    process: subprocess.Popen
    folder: Path

    def logs(self) -> str:
        """The tail of its output and of its Ceph log, for an error message."""
        return (f"--- {self.name} output:\n{tail(self.folder / 'log' / f'{self.name}.out')}\n"
                f"--- {self.name} log:\n{tail(self.folder / 'log' / f'{self.name}.log')}")

    def bind_failed(self) -> bool:
        return "Address already in use" in tail(self.folder / "log" / f"{self.name}.out")


_ACCESS_LINE = re.compile(r'beast: \S+ \S+ - \S* \[[^\]]*\] "(\w+) ([^? ]*)\??(\S*) HTTP/[\d.]+" (\d+) (\d+)')


@dataclass(frozen=True)
class Request:
    method: str
    path: str       # /bucket/key
    query: str
    status: int
    bytes: int

    @property
    def kind(self) -> str:
        """GET, PUT, LIST, DELETE, HEAD or POST (multipart and batch-delete calls)."""
        if self.method == "GET" and ("list-type" in self.query or self.path.count("/") == 1):
            return "LIST"
        return self.method


@dataclass
class S3Server:
    endpoint: str
    access_key: str
    secret_key: str
    region: str
    folder: Path
    daemons: list[Daemon] = field(default_factory=list, repr=False)   # in stopping order

    def filesystem(self, **options) -> S3FileSystem:
        """A pyarrow client for this server, path-style over plain HTTP; ``options`` are more
        ``S3FileSystem`` arguments (``allow_delayed_open=True`` writes a small file in one PUT
        instead of a multipart upload). Sets CHECKSUM_ENV in this process's environment, as
        the SDK reads it when a client is made."""
        from pyarrow.fs import S3FileSystem

        os.environ.update(CHECKSUM_ENV)
        return S3FileSystem(**{"access_key": self.access_key, "secret_key": self.secret_key,
                               "region": self.region, "scheme": "http",
                               "endpoint_override": self.endpoint.removeprefix("http://"),
                               "force_virtual_addressing": False, **options})

    def create_bucket(self, name: str) -> None:
        """A new bucket (3-63 characters: lower-case letters, digits, dots and hyphens)."""
        self.filesystem(allow_bucket_creation=True).create_dir(name)

    def options(self) -> dict[str, str]:
        """Hadoop S3A settings that reach this server."""
        return {"fs.s3a.endpoint": self.endpoint, "fs.s3a.access.key": self.access_key,
                "fs.s3a.secret.key": self.secret_key, "fs.s3a.path.style.access": "true",
                "fs.s3a.endpoint.region": self.region}

    def object_store(self, bucket: str):
        """An obstore client of ``bucket``: it lists the objects themselves, markers included."""
        from obstore.store import from_url

        return from_url(f"s3://{bucket}", config={"endpoint": self.endpoint, "access_key_id": self.access_key,
                                                  "secret_access_key": self.secret_key, "region": self.region},
                        client_options={"allow_http": True})

    def directory_markers(self, bucket: str) -> list[str]:
        """Objects standing for folders: keys that other keys sit under (obstore drops their '/')."""
        import obstore

        keys = [meta["path"] for batch in obstore.list(self.object_store(bucket)) for meta in batch]
        prefixes = {k.rsplit("/", i)[0] for k in keys for i in range(1, k.count("/") + 1)}
        return sorted(k for k in keys if k in prefixes)

    def requests(self) -> list[Request]:
        """Every request radosgw has served so far, from its access log (``debug_rgw = 1``)."""
        log = self.folder / "log" / "client.rgw.log"
        return [Request(*m.groups()[:3], int(m.group(4)), int(m.group(5)))
                for m in map(_ACCESS_LINE.search, log.read_text(errors="replace").splitlines()) if m]

    def answers(self) -> bool:
        """Whether this server lists its buckets for these keys (a radosgw of another cluster
        on the same port would refuse them)."""
        from pyarrow.fs import AwsStandardS3RetryStrategy, FileSelector

        try:
            self.filesystem(connect_timeout=1, request_timeout=2,
                            retry_strategy=AwsStandardS3RetryStrategy(max_attempts=1)
                            ).get_file_info(FileSelector(""))
            return True
        except OSError:
            return False


class Cluster:
    """The daemons started so far (in stopping order) and the deadline for all to come up."""

    def __init__(self, folder: Path, fsid: str):
        self.folder, self.fsid = folder, fsid
        self.conf = folder / "ceph.conf"
        self.daemons: list[Daemon] = []
        self.last_failure = ""      # of a readiness check that failed in a way worth reporting
        self.deadline = time.monotonic() + START_TIMEOUT_S

    def logs(self) -> str:
        return "\n".join(d.logs() for d in self.daemons)

    def run(self, *command: str) -> str:
        """One Ceph command against the cluster; its stdout."""
        timeout = max(1.0, min(COMMAND_TIMEOUT_S, self.deadline - time.monotonic()))
        try:
            done = subprocess.run([command[0], "-c", str(self.conf), *command[1:]], capture_output=True,
                                  text=True, timeout=timeout, cwd=self.folder)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{' '.join(command)} took over {timeout:.0f} s\n{self.logs()}") from None
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}: {done.stderr}\n{self.logs()}")
        return done.stdout

    def start(self, name: str, *command: str) -> Daemon:
        """A daemon in the foreground (``-f``), in a process group of its own."""
        with open(self.folder / "log" / f"{name}.out", "wb") as out:
            process = subprocess.Popen([command[0], "-c", str(self.conf), *command[1:], "-f"],
                                       stdout=out, stderr=subprocess.STDOUT, cwd=self.folder,
                                       start_new_session=True)
        daemon = Daemon(name, process, self.folder)
        self.daemons.insert(0, daemon)
        return daemon

    def drop(self, daemon: Daemon) -> None:
        stop_group(daemon.process, STOP_TIMEOUT_S)
        self.daemons.remove(daemon)

    def wait(self, what: str, ready: Callable[[], bool]) -> None:
        while time.monotonic() < self.deadline:
            for d in self.daemons:
                if d.process.poll() is not None:
                    error = PortTaken if d.bind_failed() else RuntimeError
                    raise error(f"{d.name} exited with {d.process.returncode} while waiting for {what}\n"
                                f"{self.logs()}")
            if ready():
                return
            time.sleep(0.1)
        last = f" (last: {self.last_failure})" if self.last_failure else ""
        raise RuntimeError(f"{what} not within {START_TIMEOUT_S} s{last}\n{self.logs()}")

    def start_monitor(self) -> None:
        """The monitor, on two new ports for each attempt: its addresses are fixed in its store."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            v2, v1 = free_port(), free_port()
            self.conf.write_text(ceph_conf(self.folder, self.fsid, v2, v1))
            shutil.rmtree(self.folder / "mon", ignore_errors=True)
            (self.folder / "mon" / "a").mkdir(parents=True)
            monmap = str(self.folder / "monmap")
            self.run("monmaptool", "--create", "--clobber", "--fsid", self.fsid, "--addv", "a",
                     f"[v2:127.0.0.1:{v2},v1:127.0.0.1:{v1}]", monmap)
            self.run("ceph-mon", "--mkfs", "-i", "a", "--monmap", monmap)
            mon = self.start("mon.a", "ceph-mon", "-i", "a")
            try:
                self.wait("the monitor", lambda: accepts(v2) and self.ours())
                return
            except PortTaken as e:
                self.drop(mon)
                if attempt == PORT_ATTEMPTS:
                    raise
                log.warning("Ceph monitor ports %s, %s were taken; trying others: %s", v2, v1,
                            str(e).splitlines()[0])

    def ours(self) -> bool:
        """Whether the monitor answering is this cluster's, not one on a port it took first."""
        try:
            fsid = self.run("ceph", "--connect-timeout", "3", "fsid").strip()
        except RuntimeError as e:
            self.last_failure = str(e).splitlines()[0]
            return False        # not up yet, or not a monitor: then this one fails to bind
        if fsid != self.fsid:
            raise PortTaken(f"the monitor of another cluster ({fsid}) answers on this one's port")
        return True

    def start_osd(self) -> None:
        """The OSD, which binds free ports itself."""
        osd_uuid = str(uuid.uuid4())
        osd_id = self.run("ceph", "osd", "new", osd_uuid).strip()
        (self.folder / "osd" / osd_id).mkdir(parents=True, exist_ok=True)
        self.run("ceph-osd", "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid)
        self.start(f"osd.{osd_id}", "ceph-osd", "-i", osd_id)
        self.wait("the OSD up", lambda: json.loads(self.run("ceph", "osd", "stat", "-f", "json"))
                  .get("num_up_osds") == 1)

    def start_radosgw(self, access_key: str, secret_key: str) -> S3Server:
        """radosgw, on a new port for each attempt, ready when it takes the user's keys."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            port = free_port()
            # tcp_nodelay: without it beast sends a response's headers and body as two segments,
            # and the second waits for the client's delayed ACK (40 ms per request on Linux)
            rgw = self.start("client.rgw", "radosgw", "-n", "client.rgw",
                             "--rgw_frontends", f"beast endpoint=127.0.0.1:{port} tcp_nodelay=1")
            server = S3Server(f"http://127.0.0.1:{port}", access_key, secret_key, REGION, self.folder,
                              self.daemons)
            try:
                self.wait(f"radosgw answering on {server.endpoint}", server.answers)
                return server
            except PortTaken as e:
                self.drop(rgw)
                if attempt == PORT_ATTEMPTS:
                    raise
                log.warning("radosgw port %s was taken; trying another: %s", port, str(e).splitlines()[0])
        raise AssertionError("unreachable")


def accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def key(length: int, alphabet: str) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def start_s3_server(folder: Path) -> S3Server:
    """Create and start the cluster and radosgw in ``folder``, with a user whose keys the
    returned server holds. A port another process takes between its choice and its use (ports
    are chosen free, then bound by the daemon) is replaced by another."""
    binaries()
    began = time.monotonic()
    for sub in ("run", "log", "crash", "rgw"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    cluster = Cluster(folder, str(uuid.uuid4()))
    try:
        cluster.start_monitor()
        cluster.start_osd()
        access_key = key(20, string.ascii_uppercase + string.digits)
        secret_key = key(40, string.ascii_letters + string.digits)
        cluster.run("radosgw-admin", "user", "create", "--uid", USER, "--display-name", USER,
                    "--access-key", access_key, "--secret-key", secret_key)
        server = cluster.start_radosgw(access_key, secret_key)
    except BaseException:
        stop_daemons(cluster.daemons)
        raise
    log.info("Ceph radosgw on %s started in %.1f s (folder %s)", server.endpoint, time.monotonic() - began,
             folder)
    return server


def stop_daemons(daemons: list[Daemon]) -> None:
    # radosgw first, the monitor last: an OSD stopping waits for the monitor to note it down.
    for d in daemons:
        stop_group(d.process, STOP_TIMEOUT_S)


def stop_s3_server(server: S3Server) -> None:
    """Stop radosgw, the OSD and the monitor (each with every process it started)."""
    stop_daemons(server.daemons)
