"""Helpers for the services tests start as real processes (Prometheus, Pushgateway, the Hive
metastore). Free of PySpark, which ``metastore`` loads, so ``prometheus`` can use them too."""
from __future__ import annotations

import os
from typing import NoReturn

import pytest

from hudictl.local_process import free_port as free_port, stop_group as stop_group   # re-exported


def not_installed(reason: str) -> NoReturn:
    """A service the tests start is missing: skip locally, fail under CI, whose setup installs it."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true requires it)")
    pytest.skip(reason)
