"""Kafka offset planning (Hudi's KafkaOffsetGen): checkpoints, event caps spread fairly over the
partitions, new partitions, positions Kafka no longer has, reset policies."""
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.sources.kafka_offsets import (KafkaDataLossError, OffsetRange, allocate, format_checkpoint,
                                             parse_checkpoint, plan_batch, split, start_offsets)


def plan(checkpoint, earliest, latest, *, reset="EARLIEST", fail=False, events=1000, min_partitions=0):
    return plan_batch("orders", checkpoint, earliest, latest, reset, fail, events, min_partitions)


# --- checkpoint strings -----------------------------------------------------------------------------

def test_checkpoint_round_trip_in_hudis_format():
    text = format_checkpoint("orders", {2: 456, 0: 123, 1: 0})
    assert text == "orders,0:123,1:0,2:456"
    assert parse_checkpoint(text, "orders") == {0: 123, 1: 0, 2: 456}


def test_checkpoint_written_by_hudi_with_spaces_parses():
    assert parse_checkpoint("orders, 0:5 ,1: 7", "orders") == {0: 5, 1: 7}


@pytest.mark.parametrize("text", ["orders", "orders,", "orders,0", "orders,0:x", "orders,a:1", ",0:1",
                                  "1700000000000", "orders,0:1,,1:2", "orders,0:-1"])
def test_malformed_checkpoint_is_refused_with_the_expected_form(text):
    with pytest.raises(HoodieConfigError, match="not a Kafka checkpoint.*'orders,0:120,1:98'"):
        parse_checkpoint(text, "orders")


def test_checkpoint_of_another_topic_is_refused():
    with pytest.raises(HoodieConfigError, match="for topic 'payments'.*hoodie.streamer.source.kafka.topic"):
        parse_checkpoint("payments,0:1", "orders")


def test_checkpoint_naming_a_partition_twice_is_refused():
    with pytest.raises(HoodieConfigError, match="partition 0 twice"):
        parse_checkpoint("orders,0:1,0:2", "orders")


# --- where a batch starts ------------------------------------------------------------------------------

EARLIEST = {0: 10, 1: 0, 2: 5}
LATEST = {0: 50, 1: 40, 2: 5}


@pytest.mark.parametrize("reset, expected", [("EARLIEST", EARLIEST), ("earliest", EARLIEST),
                                             ("LATEST", LATEST), ("latest", LATEST)])
def test_without_checkpoint_the_reset_policy_decides(reset, expected):
    assert start_offsets("orders", None, EARLIEST, LATEST, reset, False) == expected


def test_reset_none_without_checkpoint_asks_for_one():
    with pytest.raises(HoodieConfigError, match="no checkpoint.*auto.offset.reset=none.*--checkpoint"):
        start_offsets("orders", None, EARLIEST, LATEST, "none", False)


def test_reset_policy_does_not_apply_when_there_is_a_checkpoint():
    assert start_offsets("orders", {0: 20, 1: 3, 2: 5}, EARLIEST, LATEST, "LATEST", False) == {0: 20, 1: 3, 2: 5}


def test_new_partition_starts_at_its_earliest_offset_whatever_the_reset_policy():
    earliest, latest = {0: 0, 1: 0, 2: 7}, {0: 9, 1: 9, 2: 12}
    assert start_offsets("orders", {0: 4, 1: 9}, earliest, latest, "LATEST", False) == {0: 4, 1: 9, 2: 7}


def test_checkpoint_below_retention_restarts_only_that_partition_at_earliest():
    assert start_offsets("orders", {0: 3, 1: 20, 2: 5}, EARLIEST, LATEST, "LATEST", False) == {0: 10, 1: 20, 2: 5}


def test_checkpoint_beyond_the_end_of_a_recreated_topic_restarts_at_earliest():
    assert start_offsets("orders", {0: 99, 1: 20, 2: 5}, EARLIEST, LATEST, "LATEST", False) == {0: 10, 1: 20, 2: 5}


def test_fail_on_data_loss_names_each_lost_partition_and_the_switch():
    with pytest.raises(KafkaDataLossError) as caught:
        start_offsets("orders", {0: 3, 1: 20, 2: 5, 7: 1}, EARLIEST, LATEST, "EARLIEST", True)
    message = str(caught.value)
    assert "partition 0: checkpoint 3, retained 10-50" in message
    assert "partition 7: checkpoint 1, no such partition now" in message
    assert "partition 1" not in message
    assert "hoodie.streamer.source.kafka.enable.failOnDataLoss=false" in message


def test_checkpoint_at_exactly_the_retained_bounds_is_not_data_loss():
    assert start_offsets("orders", {0: 10, 1: 40, 2: 5}, EARLIEST, LATEST, "EARLIEST", True) == {0: 10, 1: 40, 2: 5}


# --- how many events each partition gives ---------------------------------------------------------------

def test_cap_is_shared_equally_when_every_partition_has_enough():
    assert allocate({0: 0, 1: 0, 2: 0}, {0: 100, 1: 100, 2: 100}, 30) == {0: 10, 1: 10, 2: 10}


def test_what_a_small_partition_cannot_use_goes_to_the_others():
    assert allocate({0: 0, 1: 0, 2: 0}, {0: 1000, 1: 2, 2: 1000}, 30) == {0: 14, 1: 2, 2: 14}


def test_one_busy_partition_does_not_starve_the_others():
    taken = allocate({0: 0, 1: 0, 2: 0}, {0: 10**9, 1: 5, 2: 5}, 100)
    assert taken == {0: 90, 1: 5, 2: 5}


def test_indivisible_rest_goes_to_the_lowest_partitions():
    assert allocate({0: 0, 1: 0, 2: 0}, {0: 9, 1: 9, 2: 9}, 8) == {0: 3, 1: 3, 2: 2}


def test_cap_above_what_is_available_takes_everything():
    assert allocate({0: 5, 1: 0}, {0: 8, 1: 4}, 1000) == {0: 3, 1: 4}


def test_zero_cap_takes_nothing():
    assert allocate({0: 0}, {0: 8}, 0) == {0: 0}


def test_ranges_are_split_for_min_partitions():
    pieces = split([OffsetRange(0, 0, 100), OffsetRange(1, 0, 20)], 6)
    assert pieces == [OffsetRange(0, 0, 20), OffsetRange(0, 20, 40), OffsetRange(0, 40, 60),
                      OffsetRange(0, 60, 80), OffsetRange(0, 80, 100), OffsetRange(1, 0, 20)]


def test_min_partitions_not_above_the_number_of_ranges_changes_nothing():
    ranges = [OffsetRange(0, 0, 100), OffsetRange(1, 0, 20)]
    assert split(ranges, 2) == ranges and split(ranges, 0) == ranges


# --- whole plans ---------------------------------------------------------------------------------------

def test_plan_reads_each_partition_from_its_checkpoint_and_checkpoints_every_partition():
    p = plan("orders,0:20,1:38,2:5", EARLIEST, LATEST, events=12)
    assert p.ranges == (OffsetRange(0, 20, 30), OffsetRange(1, 38, 40))
    assert p.checkpoint == "orders,0:30,1:40,2:5"
    assert p.num_events == 12
    assert p.lag(LATEST) == 20
    assert p.describe() == "kafka topic orders: 12 events from 2 partitions (0:20-30, 1:38-40)"


def test_plan_with_nothing_new_keeps_every_offset():
    p = plan("orders,0:50,1:40,2:5", EARLIEST, LATEST)
    assert p.ranges == () and p.checkpoint == "orders,0:50,1:40,2:5" and p.lag(LATEST) == 0
    assert p.describe() == "kafka topic orders: nothing new"


def test_plan_without_checkpoint_and_latest_reads_nothing_and_starts_at_the_end():
    p = plan(None, EARLIEST, LATEST, reset="LATEST")
    assert p.ranges == () and p.checkpoint == "orders,0:50,1:40,2:5"


def test_empty_checkpoint_string_means_no_checkpoint():
    assert plan("", EARLIEST, LATEST, reset="EARLIEST").start == EARLIEST


def test_capped_batches_cover_every_offset_exactly_once():
    earliest, latest = {0: 0, 1: 3, 2: 0, 3: 0}, {0: 101, 1: 7, 2: 55, 3: 0}
    checkpoint, seen = None, {p: [] for p in latest}
    for _ in range(100):
        p = plan(checkpoint, earliest, latest, events=17, min_partitions=5)
        if not p.ranges:
            break
        assert p.num_events <= 17
        for r in p.ranges:
            seen[r.partition].extend(range(r.start, r.end))
        checkpoint = p.checkpoint
    assert {part: sorted(offsets) for part, offsets in seen.items()} == \
        {part: list(range(earliest[part], latest[part])) for part in latest}
    assert checkpoint == "orders,0:101,1:7,2:55,3:0"


def test_min_partitions_gives_about_that_many_ranges_of_one_batch():
    p = plan(None, {0: 0, 1: 0}, {0: 1000, 1: 1000}, events=2000, min_partitions=8)
    assert len(p.ranges) == 8 and p.num_events == 2000
    assert p.checkpoint == "orders,0:1000,1:1000"
