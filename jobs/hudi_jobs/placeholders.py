"""Credentials reach a job as placeholders, never as values: ``${secret:<secret>/<key>}`` reads the
file ``$HUDI_SECRETS_DIR/<secret>/<key>`` (where Kubernetes mounts the Secret; a local folder of
the same layout for ``hudictl run``) and ``${env:NAME}`` an environment variable. The job-config,
its ConfigMap and ``--print-config`` keep the placeholders; only the running job sees values."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping

from hudi_engine.errors import HoodieConfigError

SECRETS_DIR_ENV = "HUDI_SECRETS_DIR"
DEFAULT_SECRETS_DIR = "/etc/hudi/secrets"
_PLACEHOLDER = re.compile(r"\$\{(secret|env):([^}]*)\}")


def resolve_placeholders(props: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The options with every placeholder replaced by its value."""
    environ = os.environ if environ is None else environ
    secrets_dir = Path(environ.get(SECRETS_DIR_ENV, DEFAULT_SECRETS_DIR))

    def value(key: str, match: re.Match) -> str:
        kind, ref = match.group(1), match.group(2)
        if kind == "env":
            if ref not in environ:
                raise HoodieConfigError(f"option {key} refers to ${{env:{ref}}}, but the environment variable "
                                        f"{ref} is not set")
            return environ[ref]
        secret, _, item = ref.partition("/")
        path = secrets_dir / secret / item
        if not secret or not item or ".." in (secret, item):
            raise HoodieConfigError(f"option {key}: ${{secret:{ref}}} must name a Secret and a key, "
                                    "as ${secret:<secret name>/<key>}")
        try:
            return path.read_text().rstrip("\n")
        except OSError:
            raise HoodieConfigError(
                f"option {key} refers to key {item!r} of Secret {secret!r}, expected in the file {path}; "
                f"mount the Secret there (or set {SECRETS_DIR_ENV} to the folder holding <secret>/<key> "
                "files)") from None

    return {k: _PLACEHOLDER.sub(lambda m, k=k: value(k, m), v) for k, v in props.items()}
