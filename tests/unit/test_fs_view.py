"""File group visibility from a listing and a timeline alone (no storage touched)."""
import json

from hudi_engine.file_group.fs_view import FileSystemView
from hudi_engine.storage import FileInfo
from hudi_engine.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from hudi_engine.timeline.timeline import Timeline


class _Details:
    """Stands in for storage under the timeline: instant files by path."""
    def __init__(self, files):
        self.files = files

    def read_bytes(self, rel):
        return self.files[rel]


def view(instants, files, details=None):
    timeline = Timeline(_Details(details or {}), tuple(sorted(instants)))
    return FileSystemView(None, timeline, [FileInfo(p, 10) for p in files])


def test_only_committed_slices_are_visible_and_as_of_picks_older_ones():
    v = view([Instant("001", COMMIT, State.COMPLETED), Instant("002", COMMIT, State.COMPLETED),
              Instant("003", COMMIT, State.INFLIGHT)],
             ["p/fg1-0_0-1-1_001.parquet", "p/fg1-0_0-2-2_002.parquet", "p/fg1-0_0-3-3_003.parquet",
              "p/fg2-0_0-3-4_003.parquet", "p/.hoodie_partition_metadata"])
    [latest] = v.latest_file_slices()
    assert (latest.file_id, latest.base_instant) == ("fg1-0", "002")
    [old] = v.latest_file_slices(as_of="001")
    assert old.base_file.path == "p/fg1-0_0-1-1_001.parquet"
    assert v.latest_file_slices(as_of="000") == []


def test_replaced_file_groups_disappear_from_the_replace_instant_on():
    replace = {"partitionToWriteStats": {}, "partitionToReplaceFileIds": {"p": ["fg1-0"]}}
    v = view([Instant("001", COMMIT, State.COMPLETED), Instant("002", REPLACE_COMMIT, State.COMPLETED)],
             ["p/fg1-0_0-1-1_001.parquet", "p/fg2-0_0-2-2_002.parquet"],
             {".hoodie/002.replacecommit": json.dumps(replace).encode()})
    assert [s.file_id for s in v.latest_file_slices()] == ["fg2-0"]
    assert [s.file_id for s in v.latest_file_slices(as_of="001")] == ["fg1-0"]
    assert v.partitions() == ["p"]


def layout2_view(instants, files):
    timeline = Timeline(_Details({}), tuple(sorted(instants)), layout_version=2)
    return FileSystemView(None, timeline, [FileInfo(p, 10) for p in files])


def test_v6_logs_join_the_slice_named_in_them_and_a_pending_compaction_folds_back():
    v = view([Instant("001", DELTA_COMMIT, State.COMPLETED), Instant("002", DELTA_COMMIT, State.COMPLETED),
              Instant("003", COMPACTION, State.REQUESTED), Instant("004", DELTA_COMMIT, State.COMPLETED)],
             ["p/fg1-0_0-1-1_001.parquet", "p/.fg1-0_001.log.1_0-2-2", "p/.fg1-0_001.log.2_1-0-1",
              "p/.fg1-0_003.log.1_0-4-4"])
    [s] = v.latest_file_slices()
    # The compaction at 003 has no base file yet: its log merges onto the 001 slice, in log order.
    assert s.base_instant == "001"
    assert [f.path.rsplit("/", 1)[1] for f in s.log_files] == [
        ".fg1-0_001.log.1_0-2-2", ".fg1-0_001.log.2_1-0-1", ".fg1-0_003.log.1_0-4-4"]


def test_v6_completed_compaction_starts_a_new_slice():
    v = view([Instant("001", DELTA_COMMIT, State.COMPLETED), Instant("003", COMMIT, State.COMPLETED),
              Instant("004", DELTA_COMMIT, State.COMPLETED)],
             ["p/fg1-0_0-1-1_001.parquet", "p/.fg1-0_001.log.1_0-2-2", "p/fg1-0_0-3-3_003.parquet",
              "p/.fg1-0_003.log.1_0-4-4"])
    [group] = v.file_groups()
    assert [(s.base_instant, len(s.log_files)) for s in group.slices] == [("001", 1), ("003", 1)]
    [old] = v.latest_file_slices(as_of="002")
    assert old.base_instant == "001" and len(old.log_files) == 1


def test_layout2_logs_join_the_slice_by_completion_time():
    # Delta commit 002 was requested before compaction 003 but completed after it: its log belongs
    # on top of the compacted base, as Hudi 1.x slices by completion time.
    v = layout2_view([Instant("001", DELTA_COMMIT, State.COMPLETED, "0015"),
                      Instant("002", DELTA_COMMIT, State.COMPLETED, "0040"),
                      Instant("003", COMMIT, State.COMPLETED, "0035"),
                      Instant("005", DELTA_COMMIT, State.INFLIGHT)],
                     ["p/fg1-0_0-1-1_001.parquet", "p/fg1-0_0-3-3_003.parquet",
                      "p/.fg1-0_002.log.1_0-2-2", "p/.fg1-0_005.log.1_0-5-5"])
    [group] = v.file_groups()
    assert [(s.base_instant, [f.instant for f in s.log_files]) for s in group.slices] == [
        ("001", []), ("003", ["002", "005"])]
