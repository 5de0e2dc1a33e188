"""Which files make the next batch of a file source, and the checkpoint after it."""
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.storage import FileInfo
from hudi_jobs.sources.file_selection import SourceFile, eligible, iso_millis, select, source_files


def f(path, size, mtime_ms):
    return SourceFile(path, size, mtime_ms)


def paths(selection):
    return [x.path for x in selection.files]


def test_files_go_oldest_first_and_the_checkpoint_is_the_newest_time_taken():
    files = [f("c.json", 10, 3000), f("a.json", 10, 1000), f("b.json", 10, 2000)]
    selection = select(files, None, 0)
    assert paths(selection) == ["a.json", "b.json", "c.json"]
    assert selection.checkpoint == "3000"
    assert selection.oldest_waiting_ms is None


def test_equal_times_are_ordered_by_path():
    files = [f("z.json", 1, 1000), f("a/y.json", 1, 1000), f("a/x.json", 1, 1000)]
    assert paths(select(files, None, 0)) == ["a/x.json", "a/y.json", "z.json"]


def test_only_files_after_the_checkpoint_are_taken():
    files = [f("a", 10, 1000), f("b", 10, 2000), f("c", 10, 3000)]
    selection = select(files, "2000", 0)
    assert paths(selection) == ["c"]
    assert selection.checkpoint == "3000"


def test_nothing_new_keeps_the_checkpoint():
    files = [f("a", 10, 1000), f("b", 10, 2000)]
    assert select(files, "2000", 100) == select([], "2000", 100)
    selection = select(files, "2000", 100)
    assert (selection.files, selection.checkpoint, selection.oldest_waiting_ms) == ((), "2000", None)
    assert select([], None, 0).checkpoint is None


def test_the_limit_stops_before_the_file_that_would_pass_it_and_the_rest_follows_in_order():
    files = [f(f"p{i}", 40, 1000 * (i + 1)) for i in range(5)]
    checkpoint, batches = None, []
    while (selection := select(files, checkpoint, 100)).files:
        batches.append(paths(selection))
        checkpoint = selection.checkpoint
    assert batches == [["p0", "p1"], ["p2", "p3"], ["p4"]]
    assert checkpoint == "5000"


def test_a_batch_may_reach_the_limit_exactly():
    files = [f("a", 50, 1000), f("b", 50, 2000), f("c", 1, 3000)]
    assert paths(select(files, None, 100)) == ["a", "b"]
    assert paths(select(files, None, 99)) == ["a"]


def test_the_first_file_goes_even_when_it_alone_passes_the_limit():
    files = [f("big", 500, 1000), f("small", 1, 2000)]
    selection = select(files, None, 100)
    assert paths(selection) == ["big"]
    assert selection.checkpoint == "1000"


def test_a_limit_of_zero_or_less_takes_everything():
    files = [f(f"p{i}", 10**9, i + 1) for i in range(4)]
    assert len(select(files, None, 0).files) == 4
    assert len(select(files, None, -1).files) == 4


def test_files_sharing_a_time_are_never_split_across_batches():
    # b1 alone would fit after a, but b2 shares its time: the group waits for the next batch whole
    files = [f("a", 40, 1000), f("b1", 40, 2000), f("b2", 40, 2000), f("c", 10, 3000)]
    first = select(files, None, 100)
    assert paths(first) == ["a"]
    assert first.checkpoint == "1000"
    second = select(files, first.checkpoint, 100)
    assert paths(second) == ["b1", "b2", "c"]


def test_a_group_bigger_than_the_limit_goes_whole_when_it_comes_first():
    files = [f(f"g{i}", 60, 5000) for i in range(3)] + [f("later", 1, 6000)]
    selection = select(files, None, 100)
    assert paths(selection) == ["g0", "g1", "g2"]
    assert selection.checkpoint == "5000"
    assert paths(select(files, "5000", 100)) == ["later"]


def test_every_file_is_taken_exactly_once_over_successive_batches():
    files = [f(f"p{i:02d}", 7 + i % 5, 1000 + (i // 3) * 10) for i in range(30)]   # groups of three
    checkpoint, seen = None, []
    for _ in range(40):
        selection = select(files, checkpoint, 25)
        if not selection.files:
            break
        seen += paths(selection)
        assert int(selection.checkpoint) > int(checkpoint or -1)
        checkpoint = selection.checkpoint
    assert sorted(seen) == sorted(x.path for x in files) and len(seen) == len(set(seen))


def test_lag_is_the_age_of_the_oldest_file_left_waiting():
    files = [f("a", 60, 10_000), f("b", 60, 20_000), f("c", 60, 30_000)]
    selection = select(files, None, 100)
    assert selection.oldest_waiting_ms == 20_000
    assert selection.lag_seconds(now_ms=50_000) == 30.0
    assert select(files, None, 0).lag_seconds(now_ms=50_000) == 0.0
    assert select(files, None, 100).lag_seconds(now_ms=0) == 0.0     # clocks that disagree: never negative


def test_hidden_in_progress_and_empty_files_are_not_eligible():
    assert eligible("2026/11/part-0.json", 10)
    assert not eligible("_SUCCESS", 10)
    assert not eligible(".part-0.json.crc", 10)
    assert not eligible("_temporary/0/part-0.json", 10)
    assert not eligible("day=1/.hidden/part-0.json", 10)
    assert not eligible("part-1.json", 0)


def test_a_listing_becomes_eligible_files_with_millisecond_times():
    listing = [FileInfo("a.json", 5, 1_700_000_000_123_456_789), FileInfo("_SUCCESS", 0, 1),
               FileInfo("x/.a.json.crc", 8, 2), FileInfo("empty.json", 0, 3)]
    assert source_files(listing) == [SourceFile("a.json", 5, 1_700_000_000_123)]


def test_files_within_one_millisecond_are_one_group():
    # the checkpoint counts milliseconds, so nanosecond differences must not split a group
    listing = [FileInfo("a", 60, 5_000_000_100), FileInfo("b", 60, 5_000_000_900)]
    selection = select(source_files(listing), None, 100)
    assert paths(selection) == ["a", "b"]
    assert selection.checkpoint == "5000"


def test_a_listing_without_modification_times_is_refused():
    with pytest.raises(HoodieConfigError, match="no modification time for a.json"):
        source_files([FileInfo("a.json", 5, None)])


def test_a_checkpoint_of_another_source_is_refused_with_what_to_do():
    with pytest.raises(HoodieConfigError, match="not a file modification time.*--checkpoint"):
        select([f("a", 1, 1)], "orders,0:100", 0)


def test_hudi_checkpoints_are_read_as_they_are_written():
    # Hudi writes Long.MIN_VALUE when a first run found nothing
    assert paths(select([f("a", 1, 1)], "-9223372036854775808", 0)) == ["a"]


def test_position_describes_the_batch():
    selection = select([f("a", 2 * 1024 * 1024, 1_795_417_200_000), f("b", 10 * 1024 * 1024, 1_795_417_201_000),
                        f("c", 1, 1_795_417_202_000)], None, 12 * 1024 * 1024)
    assert selection.describe() == "2 files, 12.0 MiB, mtime ≤ 2026-11-23T07:00:01Z"
    assert select([f("a", 300, 1_795_417_200_250)], None, 0).describe() == \
        "1 file, 300 B, mtime ≤ 2026-11-23T07:00:00.250Z"
    assert select([], None, 0).describe() == "no new files"
    assert iso_millis(0) == "1970-01-01T00:00:00Z"
