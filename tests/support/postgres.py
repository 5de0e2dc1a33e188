"""Real PostgreSQL 15 servers (Debian's postgresql package) for tests, each in a temp folder on a
free loopback port, trusting local connections (hudictl's local_postgres starts them): the
metastore's production backend and the sources' database. Removed when stopped."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hudictl import local_postgres
from tests.support.services import free_port, not_installed

USER = "metastore"


class Postgres(local_postgres.LocalPostgres):
    def stop(self, fast: bool = True) -> None:
        super().stop(fast)
        shutil.rmtree(self.folder, ignore_errors=True)


def start_postgres(**settings: str) -> Postgres:
    """A new server; ``settings`` are server parameters (``wal_level="logical"``, ...)."""
    if not local_postgres.installed():
        not_installed(f"{local_postgres.INSTALL_HINT} (.ci/install-services installs it)")
    server = local_postgres.start(Path(tempfile.mkdtemp(prefix="postgres-")), free_port(), USER, **settings)
    return Postgres(server.folder, server.port, server.superuser, server.run_as)
