"""Where a streamer resumes (Hudi's StreamerCheckpointUtils rules) and the Hudi-incremental window."""
import json

import pytest

from hudi_engine.errors import HoodieError
from hudi_jobs.streamer.checkpoint import (CHECKPOINT_IGNORE_KEY, CHECKPOINT_KEY, CHECKPOINT_RESET_KEY,
                                           CommitInfo, checkpoint_metadata, resolve_checkpoint)


def commit(ts, action="commit", **extra):
    keys = {"key": CHECKPOINT_KEY, "reset": CHECKPOINT_RESET_KEY, "ignore": CHECKPOINT_IGNORE_KEY}
    return CommitInfo(ts, action, {keys[k]: v for k, v in extra.items()})


def test_fresh_table_starts_at_the_beginning_or_the_override():
    assert resolve_checkpoint([], "COPY_ON_WRITE", None, None) is None
    assert resolve_checkpoint([], "COPY_ON_WRITE", "orders,0:10", None) == "orders,0:10"


def test_resumes_from_the_newest_commit_carrying_a_checkpoint():
    commits = [commit("001", key="100"), commit("002", key="200"), commit("003")]  # 003: not the streamer's
    assert resolve_checkpoint(commits, "COPY_ON_WRITE", None, None) == "200"


def test_commits_without_any_checkpoint_read_from_the_beginning():
    assert resolve_checkpoint([commit("001"), commit("002")], "COPY_ON_WRITE", None, None) is None


def test_override_applies_once_then_the_stored_checkpoint_wins():
    first = [commit("001", key="100")]
    assert resolve_checkpoint(first, "COPY_ON_WRITE", "50", None) == "50"
    # the batch started from the override recorded it as its reset key
    after = first + [commit("002", key="60", reset="50")]
    assert resolve_checkpoint(after, "COPY_ON_WRITE", "50", None) == "60"
    assert resolve_checkpoint(after, "COPY_ON_WRITE", "70", None) == "70"   # a new override applies again


def test_ignore_checkpoint_starts_afresh_once():
    stored = [commit("001", key="100")]
    assert resolve_checkpoint(stored, "COPY_ON_WRITE", None, "run-2") is None
    after = stored + [commit("002", key="20", ignore="run-2")]
    assert resolve_checkpoint(after, "COPY_ON_WRITE", None, "run-2") == "20"


def test_merge_on_read_reads_delta_commits_not_compactions():
    commits = [commit("001", "deltacommit", key="10"), commit("002", "commit"), commit("003", "deltacommit", key="30"),
               commit("004", "commit")]
    assert resolve_checkpoint(commits, "MERGE_ON_READ", None, None) == "30"


def test_reset_key_without_checkpoint_is_an_error_that_says_what_to_do():
    with pytest.raises(HoodieError, match="--checkpoint"):
        resolve_checkpoint([commit("001", reset="5")], "COPY_ON_WRITE", None, None)


def test_commit_metadata_records_the_overrides():
    assert checkpoint_metadata("7", None, None) == {CHECKPOINT_KEY: "7"}
    assert checkpoint_metadata("7", "5", "x") == {CHECKPOINT_KEY: "7", CHECKPOINT_RESET_KEY: "5",
                                                  CHECKPOINT_IGNORE_KEY: "x"}


def test_streamers_sharing_a_table_each_resume_from_their_own_checkpoint():
    """Two pipelines into one table (the operator gives each its name as id): however their commits
    interleave, each resumes from its own position, never from the other's."""
    main = checkpoint_metadata("1700000005000", None, None, "orders-main")
    apac = checkpoint_metadata("1700000009000", None, None, "orders-apac")
    assert json.loads(main[CHECKPOINT_KEY]) == {"orders-main": "1700000005000"}
    commits = [CommitInfo("001", "deltacommit", main), CommitInfo("002", "deltacommit", apac),
               CommitInfo("003", "commit", {})]                      # a compaction: no checkpoint
    assert resolve_checkpoint(commits, "MERGE_ON_READ", None, None, "orders-main") == "1700000005000"
    assert resolve_checkpoint(commits, "MERGE_ON_READ", None, None, "orders-apac") == "1700000009000"
    assert resolve_checkpoint(commits, "MERGE_ON_READ", None, None, "orders-new") is None   # its beginning
    with pytest.raises(HoodieError, match="orders-apac, orders-main.*multiwriter.source.checkpoint.id"):
        resolve_checkpoint(commits, "MERGE_ON_READ", None, None)
