"""File group visibility from a listing and a timeline alone (no storage touched)."""
import json

from hudi_engine.file_group.fs_view import FileSystemView
from hudi_engine.storage import FileInfo
from hudi_engine.timeline.instant import COMMIT, REPLACE_COMMIT, Instant, State
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
