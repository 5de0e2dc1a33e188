"""Markers: one empty file per data file a write starts, so the files of a failed or retried task
can be found (and rolled back) without guessing."""
from __future__ import annotations

from ..storage import Storage
from ..timeline.timeline import META_DIR


def marker_dir(instant: str) -> str:
    return f"{META_DIR}/.temp/{instant}"


def marker_path(instant: str, partition: str, file_name: str, io_type: str) -> str:
    folder = marker_dir(instant) + (f"/{partition}" if partition else "")
    return f"{folder}/{file_name}.marker.{io_type}"


def marked_files(storage: Storage, instant: str) -> dict[str, str]:
    """Data files (relative to the base path) that the instant's markers name → their I/O type
    (CREATE, MERGE or APPEND)."""
    root = marker_dir(instant)
    return dict(m.path[len(root) + 1:].rsplit(".marker.", 1) for m in storage.list(root, recursive=True))


def marked_data_files(storage: Storage, instant: str) -> set[str]:
    return set(marked_files(storage, instant))
