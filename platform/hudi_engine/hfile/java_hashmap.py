"""Iteration order of a ``java.util.HashMap<String, ?>``. Hudi's native writer fills the file info
block and the meta blocks from HashMaps, so reproducing its bytes means reproducing that order:
entries by bucket (spread String.hashCode masked by the table size, which starts at 16 and doubles
past a 0.75 load), insertion order within a bucket (a resize keeps it)."""
from __future__ import annotations

from typing import Iterable, TypeVar

from ..java_hash import java_string_hash

V = TypeVar("V")


def hashmap_order(items: Iterable[tuple[str, V]]) -> list[tuple[str, V]]:
    """``items`` put in this order (a repeated key keeps its first place, takes the last value)
    as a HashMap's ``entrySet()`` iterates them."""
    entries: dict[str, V] = {}
    for key, value in items:
        entries[key] = value
    capacity = 16
    while len(entries) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    pairs = list(entries.items())
    order = sorted(range(len(pairs)), key=lambda i: (bucket(pairs[i][0]), i))
    return [pairs[i] for i in order]
