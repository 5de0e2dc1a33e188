"""A write killed between its metadata-table commit and its own: the failure every metadata index
must survive (the next writer rolls the instant back in both tables)."""
import importlib
from contextlib import contextmanager

import pytest

from hudi_engine.transaction.metadata import writer as mdt_writer


@contextmanager
def dying_after_metadata_commit(monkeypatch):
    """The write in this block commits to the metadata table, then dies (and raises no further)."""
    real_sync = mdt_writer.sync_commit

    def sync_then_die(*args, **kwargs):
        real_sync(*args, **kwargs)
        raise RuntimeError("killed between the metadata commit and the data commit")
    monkeypatch.setattr(importlib.import_module("hudi_engine.transaction.metadata.listener"), "sync_commit", sync_then_die)
    try:
        with pytest.raises(RuntimeError, match="killed"):
            yield
    finally:
        monkeypatch.undo()
