"""Where a write's data steps run: Spark (``SparkPlane``) or this process (``ArrowPlane``).

The operations (``operations``) plan on the driver from counts and file lists and are written once
against this interface; a plane holds the rows. Spark scales out to any input; in-process, a small
change is tagged, merged and written with no Spark stage at all (Hudi's own writers pay a Spark
job per step whatever the size). ``Rows`` is a Spark DataFrame or an Arrow table, as the plane has it.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable, Protocol, Sequence

from .planner import GroupKey, InsertBucket, Target
from .tasks import Prepare

Rows = Any


class Plane(Protocol):
    def prepared(self, prepare: Prepare) -> Rows:
        """The input with record key, partition path and operation columns."""

    def tag(self, prepared: Rows) -> Rows:
        """``prepared`` with ``TARGET``: the file group the index finds each key in, null if new."""

    def untagged(self, prepared: Rows) -> Rows:
        """``prepared`` with a null ``TARGET`` (nothing looked up)."""

    def found(self, tagged: Rows, stored: bool) -> Rows:
        """The tagged rows the index found stored (``stored``) or not."""

    def kept(self, rows: Rows) -> AbstractContextManager[Rows]:
        """``rows`` held for the steps that read them more than once."""

    def count_by(self, rows: Rows, columns: list[str]) -> list[tuple]:
        """(values of ``columns``..., count) per distinct value."""

    def distinct(self, rows: Rows, column: str) -> list:
        """The distinct values of ``column``."""

    def dedup(self, prepared: Rows) -> Rows:
        """One record per key and partition: the largest ordering value, else the last arrival."""

    def assign_inserts(self, inserts: Rows, buckets: Sequence[InsertBucket]) -> Rows:
        """``inserts`` with ``TARGET``: the planned file group whose key-hash range holds each key."""

    def union(self, first: Rows, second: Rows) -> Rows:
        """The rows of both (same columns)."""

    def with_buckets(self, prepared: Rows, adder: Callable) -> Rows:
        """``prepared`` with ``BUCKET_COLUMN``, computed by ``adder`` (an Arrow batch function)."""

    def routed(self, bucketed: Rows, routes: list[tuple[str, int, str]]) -> Rows:
        """Rows of the routed (partition, bucket) pairs, with ``TARGET`` the file id routed to."""

    def merge_groups(self, rows: Rows, targets: dict[GroupKey, Target], appends: dict) -> list[dict]:
        """Merge and write (or log) each file group's rows, a group being (partition path, ``TARGET``);
        the write stats."""

    def bulk_insert(self, prepare: Prepare, sort_mode: str, parallelism: int) -> list[dict]:
        """The input written into new file groups, nothing looked up; the write stats."""
