"""A new log file takes the next version of its slice whatever the other files' write tokens:
readers order a slice's log files by version, then by token as a string, and tokens carry Spark
stage ids ("0-116-158" sorts before "0-83-95"), so equal versions would put a later commit's block
before an earlier one's (the record index then kept a moved key's old partition)."""
from __future__ import annotations

from hudi_engine.file_group.fs_view import FileSystemView
from hudi_engine.file_group.log_file import next_log_version
from hudi_engine.metadata_table.file_groups import write_log
from hudi_engine.metadata_table.reader import SliceReader
from hudi_engine.metadata_table.records import encode, record_index_record
from hudi_engine.storage import Storage
from hudi_engine.timeline.timeline import Timeline

GROUP, BASE = "record-index-0000-0", "00000000000000010"


def located(storage: Storage, instants: list[str]) -> str:
    view = FileSystemView(storage, Timeline(storage, ()), storage.list("record_index"))
    (file_slice,) = view.file_groups(include_replaced=True)[0].slices
    reader = SliceReader(storage, frozenset(instants), frozenset(instants))
    return reader.read(file_slice)["k"]["recordIndexMetadata"]["partitionName"]


def test_later_commits_get_later_versions_whatever_their_tokens(tmp_path):
    storage = Storage(str(tmp_path))
    moves = [("20261126090240623", "0-83-95", "p1"), ("20261126090243345", "0-116-158", "p2")]
    for instant, token, partition in moves:
        value = encode(record_index_record("k", partition, "06d77816-faa9-41bd-b81e-e64bd5fb6345-0", instant))
        stat = write_log(storage, "record_index", GROUP, BASE, instant, token, [(b"k", value)], [])
        assert stat["logVersion"] == len(storage.list("record_index"))
    assert next_log_version(storage, "record_index", GROUP, BASE) == 3
    assert next_log_version(storage, "record_index", GROUP, "20261126090243345") == 1   # another slice
    assert located(storage, [i for i, _, _ in moves]) == "p2"
