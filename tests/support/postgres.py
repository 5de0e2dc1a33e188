"""A real PostgreSQL 15 server (Debian's postgresql package) in a temp folder on a free loopback
port, trusting local connections: the metastore's production backend, for tests of the SQL the
chart runs on it. PostgreSQL refuses to run as root, so under root it runs as the package's
``postgres`` user, in a folder of its own under the system's temp folder (pytest's are private to
root), removed when the server stops."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.services import free_port, not_installed

BIN = Path("/usr/lib/postgresql/15/bin")
USER = "metastore"


@dataclass
class Postgres:
    data: Path
    port: int
    run_as: list[str]

    def env(self, database: str) -> dict[str, str]:
        """libpq's variables reaching this server, as the chart's init container gets them."""
        return {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(self.port), "PGUSER": USER,
                "PGDATABASE": database, "PGPASSWORD": "unused (trust)"}

    def url(self, database: str, user: str = USER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def psql(self, database: str, sql: str) -> str:
        done = subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", "-tAc", sql], env=self.env(database),
                              capture_output=True, text=True, check=True)
        return done.stdout.strip()

    def stop(self) -> None:
        subprocess.run([*self.run_as, str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(self.data.parent, ignore_errors=True)


def start_postgres(**settings: str) -> Postgres:
    """A new server; ``settings`` are server parameters (``wal_level="logical"``, ...)."""
    if not (BIN / "initdb").exists() or not shutil.which("psql"):
        not_installed("PostgreSQL 15 is not installed (.ci/install-services installs it)")
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="postgres-"))
    if run_as:
        shutil.chown(folder, user="postgres")
    data, port = folder / "data", free_port()
    subprocess.run([*run_as, str(BIN / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8"],
                   check=True, capture_output=True)
    subprocess.run([*run_as, str(BIN / "pg_ctl"), "-D", str(data), "-l", str(folder / "postgres.log"), "-w",
                    "-o", " ".join([f"-p {port} -k {folder} -c listen_addresses=127.0.0.1",
                                    *(f"-c {k}={v}" for k, v in settings.items())]), "start"],
                   check=True, capture_output=True)
    return Postgres(data, port, run_as)
