"""The window of upstream commits one HoodieIncrSource fetch takes."""
from hudi_jobs.sources.hudi_incr import incremental_window

COMMITS = ["001", "002", "003", "004", "005", "006", "007"]


def test_no_checkpoint_reads_from_the_first_commit_in_steps_of_num_instants():
    assert incremental_window(COMMITS, None, 5, None) == ("0", "005")
    assert incremental_window(COMMITS, "005", 5, None) == ("005", "007")
    assert incremental_window(COMMITS, "007", 5, None) is None


def test_missing_checkpoint_strategies():
    assert incremental_window(COMMITS, None, 2, "READ_UPTO_LATEST_COMMIT") == ("0", "007")
    assert incremental_window(COMMITS, None, 2, "READ_LATEST") == ("006", "007")
    assert incremental_window(["001"], None, 2, "READ_LATEST") == ("0", "001")


def test_empty_upstream_and_at_least_one_instant():
    assert incremental_window([], None, 5, None) is None
    assert incremental_window(COMMITS, "003", 0, None) == ("003", "004")
