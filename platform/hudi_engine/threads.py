"""Per-item work in a thread pool of this process (files to read, file groups to merge): pyarrow
reads, compresses and writes outside the GIL, so threads use the cores a small change needs."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def workers() -> int:
    return max(1, min(32, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def parallel_map(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(item) for item in items]``, run on up to ``workers()`` threads; the first error raises."""
    items = list(items)
    if len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers(), len(items)), thread_name_prefix="hudi") as pool:
        return list(pool.map(fn, items))
