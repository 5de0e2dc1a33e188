"""Which Kafka offsets the next batch reads, and the checkpoint after it (Hudi's KafkaOffsetGen).

Pure: the driver asks Kafka for each partition's earliest and latest offsets, and everything else
is decided here. The checkpoint is Hudi's string, ``<topic>,<partition>:<next offset>,...``, one
entry per partition, so a Hudi table written by Hudi Streamer resumes here and vice versa.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from hudi_engine.errors import HoodieConfigError, HoodieError

from ..keys import kafka as K

EARLIEST, LATEST, NONE = "EARLIEST", "LATEST", "NONE"
_ENTRY = re.compile(r"\s*(\d+)\s*:\s*(\d+)\s*")


class KafkaDataLossError(HoodieError):
    """The checkpoint points at offsets Kafka no longer has, and failOnDataLoss is on."""


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Offsets ``start`` (inclusive) to ``end`` (exclusive) of one partition: one Spark task."""
    partition: int
    start: int
    end: int

    @property
    def count(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Plan:
    topic: str
    ranges: tuple[OffsetRange, ...]     # what to read, by partition then offset; empty: nothing new
    start: Mapping[int, int]            # where this batch starts, every partition of the topic
    next_offsets: Mapping[int, int]     # where the next batch starts, every partition of the topic

    @property
    def num_events(self) -> int:
        return sum(r.count for r in self.ranges)

    @property
    def checkpoint(self) -> str:
        return format_checkpoint(self.topic, self.next_offsets)

    def lag(self, latest: Mapping[int, int]) -> int:
        """Events still waiting in Kafka after this batch."""
        return sum(max(0, end - self.next_offsets.get(p, end)) for p, end in latest.items())

    def describe(self) -> str:
        if not self.ranges:
            return f"kafka topic {self.topic}: nothing new"
        merged = merge_by_partition(self.ranges)
        spans = ", ".join(f"{r.partition}:{r.start}-{r.end}" for r in merged)
        return (f"kafka topic {self.topic}: {self.num_events} events from {len(merged)} "
                f"partition{'s' if len(merged) != 1 else ''} ({spans})")


def parse_checkpoint(text: str, topic: str) -> dict[int, int]:
    """Partition → next offset of a Hudi Kafka checkpoint for ``topic``."""
    head, _, rest = text.partition(",")
    entries = [_ENTRY.fullmatch(e) for e in rest.split(",")] if rest else []
    if not head.strip() or not entries or not all(entries):
        raise HoodieConfigError(
            f"checkpoint {text!r} is not a Kafka checkpoint (expected '<topic>,<partition>:<offset>,...', "
            f"e.g. '{topic},0:120,1:98'); pass --checkpoint in that form, or --ignore-checkpoint <any "
            f"new value> to start where {K.AUTO_OFFSET_RESET.key} says")
    if head.strip() != topic:
        raise HoodieConfigError(
            f"checkpoint {text!r} is for topic {head.strip()!r}, but {K.TOPIC.key} is {topic!r}; pass "
            f"--checkpoint '{topic},<partition>:<offset>,...' or --ignore-checkpoint <any new value> "
            f"to start the new topic where {K.AUTO_OFFSET_RESET.key} says")
    offsets: dict[int, int] = {}
    for match in entries:
        partition, offset = int(match.group(1)), int(match.group(2))
        if partition in offsets:
            raise HoodieConfigError(f"checkpoint {text!r} names partition {partition} twice")
        offsets[partition] = offset
    return offsets


def format_checkpoint(topic: str, offsets: Mapping[int, int]) -> str:
    return ",".join([topic, *(f"{p}:{offsets[p]}" for p in sorted(offsets))])


def start_offsets(topic: str, checkpoint: Mapping[int, int] | None, earliest: Mapping[int, int],
                  latest: Mapping[int, int], reset: str, fail_on_data_loss: bool) -> dict[int, int]:
    """Where each partition of the topic starts. Without a checkpoint, ``reset`` decides; with
    one, partitions it does not name are new and start at their earliest offset, and a position
    Kafka no longer has (aged out, or beyond the end of a recreated topic) either fails or restarts
    that partition at its earliest offset. (Hudi restarts every partition then, re-reading the
    ones that were fine; only the lost ones restart here.)"""
    if checkpoint is None:
        reset = reset.upper()
        if reset == NONE:
            raise HoodieConfigError(
                f"topic {topic} has no checkpoint to resume from and {K.AUTO_OFFSET_RESET.key}=none; "
                f"pass --checkpoint '{topic},<partition>:<offset>,...', or set {K.AUTO_OFFSET_RESET.key} "
                "to earliest or latest")
        return dict(earliest if reset == EARLIEST else latest)
    lost = {p: o for p, o in checkpoint.items()
            if p not in latest or not earliest[p] <= o <= latest[p]}
    if lost:
        detail = ", ".join(f"partition {p}: checkpoint {o}, " +
                           (f"retained {earliest[p]}-{latest[p]}" if p in latest else "no such partition now")
                           for p, o in sorted(lost.items()))
        message = (f"Kafka no longer has the offsets the checkpoint points at in topic {topic} ({detail}): "
                   "the records were aged out by retention or the topic was recreated, so some may "
                   "never be ingested")
        if fail_on_data_loss:
            raise KafkaDataLossError(
                f"{message}. Set {K.FAIL_ON_DATA_LOSS.key}=false to go on from the earliest retained "
                f"offsets, or pass --checkpoint with offsets inside the retained ranges")
    return {p: earliest[p] if p in lost else checkpoint.get(p, earliest[p]) for p in latest}


def allocate(start: Mapping[int, int], latest: Mapping[int, int], num_events: int) -> dict[int, int]:
    """How many events each partition gives, at most ``num_events`` in all: every partition gets an
    equal share, and what a partition cannot use goes to the others (lowest partition first for
    the indivisible rest), so one busy partition cannot starve the rest."""
    available = {p: max(0, latest[p] - start[p]) for p in sorted(latest)}
    taken = {p: 0 for p in available}
    remaining = min(max(0, num_events), sum(available.values()))
    open_ = [p for p, n in available.items() if n > 0]
    while remaining > 0 and open_:
        share = remaining // len(open_)
        if share == 0:
            for p in open_[:remaining]:
                taken[p] += 1
            break
        for p in open_:
            extra = min(share, available[p] - taken[p])
            taken[p] += extra
            remaining -= extra
        open_ = [p for p in open_ if taken[p] < available[p]]
    return taken


def split(ranges: list[OffsetRange], min_partitions: int) -> list[OffsetRange]:
    """Ranges cut into about ``min_partitions`` pieces of similar size, when that is more than
    there are ranges (Hudi's minPartitions)."""
    total = sum(r.count for r in ranges)
    if min_partitions <= len(ranges) or total == 0:
        return ranges
    size = max(1, -(-total // min_partitions))
    return [OffsetRange(r.partition, s, min(s + size, r.end))
            for r in ranges for s in range(r.start, r.end, size)]


def merge_by_partition(ranges: tuple[OffsetRange, ...] | list[OffsetRange]) -> list[OffsetRange]:
    spans: dict[int, tuple[int, int]] = {}
    for r in ranges:
        lo, hi = spans.get(r.partition, (r.start, r.end))
        spans[r.partition] = (min(lo, r.start), max(hi, r.end))
    return [OffsetRange(p, lo, hi) for p, (lo, hi) in sorted(spans.items())]


def plan_batch(topic: str, checkpoint: str | None, earliest: Mapping[int, int], latest: Mapping[int, int],
               reset: str, fail_on_data_loss: bool, num_events: int, min_partitions: int) -> Plan:
    """The next batch of ``topic`` given its partitions' retained offsets ``earliest``/``latest``
    (latest = the next offset Kafka will write)."""
    parsed = parse_checkpoint(checkpoint, topic) if checkpoint else None
    start = start_offsets(topic, parsed, earliest, latest, reset, fail_on_data_loss)
    taken = allocate(start, latest, num_events)
    ranges = [OffsetRange(p, start[p], start[p] + n) for p, n in sorted(taken.items()) if n > 0]
    next_offsets = {p: start[p] + taken[p] for p in sorted(start)}
    return Plan(topic, tuple(split(ranges, min_partitions)), start, next_offsets)
