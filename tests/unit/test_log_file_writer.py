"""Writing the log files of a file group: one whole file per writer session, rolling over to the
next version past the size threshold with the same write token, never touching existing files."""
from hudi_engine.file_group.log_file import (UNKNOWN_WRITE_TOKEN, LogWriter, delete_block, encode_block,
                                             log_file_name, read_log_file, rollback_command_block)
from hudi_engine.file_group.naming import parse_log_file_name
from hudi_engine.storage import Storage

FILE_ID = "2f9d5b4e-6c1a-4c7e-9a7b-1f3c2d4e5f60-0"


def deletes(i: int):
    return delete_block({"record_key": [f"key-{i}"], "partition_path": ["p=1"]}, f"2024010100000000{i}")


def test_log_file_names_are_hudis():
    name = log_file_name(FILE_ID, "20240101000000000", 3, "0-12-34")
    assert name == f".{FILE_ID}_20240101000000000.log.3_0-12-34"
    parsed = parse_log_file_name(name)
    assert (parsed.file_id, parsed.instant, parsed.version, parsed.write_token) == (
        FILE_ID, "20240101000000000", 3, "0-12-34")


def test_rollover_past_max_size_gives_versions_1_2_3_with_the_same_token(tmp_path):
    storage = Storage(str(tmp_path))
    blocks = [deletes(i) for i in range(5)]
    size = len(encode_block(blocks[0]))
    writer = LogWriter(storage, "p=1", FILE_ID, "20240101000000000", write_token="0-7-9", max_size=size + 1)
    for block in blocks:
        writer.append(block)
    written = writer.close()
    # a file takes blocks until it is past max_size: two blocks each, the last one gets the fifth
    assert [(w.version, w.num_blocks) for w in written] == [(1, 2), (2, 2), (3, 1)]
    names = [parse_log_file_name(w.path.split("/")[-1]) for w in written]
    assert {(n.file_id, n.instant, n.write_token) for n in names} == {(FILE_ID, "20240101000000000", "0-7-9")}
    assert all(w.path.startswith("p=1/.") for w in written)
    assert [w.size for w in written] == [storage.size(w.path) for w in written]
    read = [b for w in written for b in read_log_file(storage, w.path)]
    assert [encode_block(b) for b in read] == [encode_block(b) for b in blocks]


def test_existing_log_files_are_never_overwritten(tmp_path):
    storage = Storage(str(tmp_path))
    storage.write_bytes(log_file_name(FILE_ID, "001", 1, UNKNOWN_WRITE_TOKEN), b"someone else's")
    writer = LogWriter(storage, "", FILE_ID, "001")
    assert writer.path == log_file_name(FILE_ID, "001", 2, UNKNOWN_WRITE_TOKEN)
    writer.append(rollback_command_block("000", "001"))
    [written] = writer.close()
    assert written.version == 2 and written.path == writer.path
    assert storage.read_bytes(log_file_name(FILE_ID, "001", 1, UNKNOWN_WRITE_TOKEN)) == b"someone else's"
    [block] = read_log_file(storage, written.path)
    assert block.target_instant_time == "000"


def test_a_writer_without_blocks_writes_nothing(tmp_path):
    storage = Storage(str(tmp_path))
    assert LogWriter(storage, "p", FILE_ID, "001").close() == []
    assert storage.list("", recursive=True) == []


def test_blocks_stay_in_memory_until_the_file_is_complete(tmp_path):
    storage = Storage(str(tmp_path))
    writer = LogWriter(storage, "p", FILE_ID, "001")
    writer.append(deletes(1))
    assert writer.current_size == len(encode_block(deletes(1)))
    assert not storage.exists(writer.path)
    writer.close()
    assert storage.exists(writer.path)
