"""A PostgreSQL server of one's own on this machine (Debian's ``postgresql`` package), in a folder,
listening on 127.0.0.1 only: the demo lakehouse's source database, and the tests' servers.

PostgreSQL refuses to run as root, so under root the server runs as the package's ``postgres``
user, which then owns the folder.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

BIN = Path("/usr/lib/postgresql/15/bin")
INSTALL_HINT = "PostgreSQL 15 is not installed: run `make services` (Debian's postgresql package)"


@dataclass(frozen=True)
class LocalPostgres:
    folder: Path                 # the cluster in folder/data; socket and log beside it
    port: int
    superuser: str
    run_as: tuple[str, ...]

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str, user: str | None = None) -> str:
        return f"postgresql://{user or self.superuser}@127.0.0.1:{self.port}/{database}"

    def env(self, database: str) -> dict[str, str]:
        """libpq's variables reaching this server as its superuser."""
        return {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(self.port), "PGUSER": self.superuser,
                "PGDATABASE": database, "PGPASSWORD": "unused (trust)"}

    def psql(self, database: str, sql: str) -> str:
        done = subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", "-tAc", sql], env=self.env(database),
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"psql on {database} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def running(self) -> bool:
        return self._ctl("status").returncode == 0

    def stop(self, fast: bool = False) -> None:
        self._ctl("-m", "immediate" if fast else "fast", "stop")

    def _ctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.run_as, str(BIN / "pg_ctl"), "-D", str(self.data), *args], capture_output=True,
                              text=True)


def installed() -> bool:
    return (BIN / "initdb").exists() and shutil.which("psql") is not None


def start(folder: Path, port: int, superuser: str = "postgres", **settings: str) -> LocalPostgres:
    """The server of ``folder``, created there first if it holds none (local connections trusted),
    started on ``port`` with the server ``settings`` (``wal_level="logical"``, ...)."""
    if not installed():
        raise RuntimeError(INSTALL_HINT)
    run_as = ("runuser", "-u", "postgres", "--") if os.geteuid() == 0 else ()
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if run_as:
        shutil.chown(folder, user="postgres")
    server = LocalPostgres(folder, port, superuser, run_as)
    if not (server.data / "PG_VERSION").exists():
        _run([*run_as, str(BIN / "initdb"), "-D", str(server.data), "-U", superuser, "--auth=trust", "-E", "UTF8"],
             "initdb")
    options = " ".join([f"-p {port} -k {folder} -c listen_addresses=127.0.0.1",
                        *(f"-c {k}={v}" for k, v in settings.items())])
    _run([*run_as, str(BIN / "pg_ctl"), "-D", str(server.data), "-l", str(folder / "postgres.log"), "-w",
          "-o", options, "start"], f"starting the server (log: {folder / 'postgres.log'})")
    return server


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"PostgreSQL {what} failed: {(done.stderr or done.stdout).strip()}")
