"""Torn and damaged log files read the way HoodieLogFileReader reads them: never an exception for a
broken block, a CORRUPT block in its place, and reading resumes at the next magic."""
import struct

import pytest

from hudi_engine.file_group.log_file import (MAGIC, BlockType, HeaderKey, LogBlock, delete_block, encode_block,
                                             iter_log_blocks, read_log_file, rollback_command_block)
from hudi_engine.storage import Storage


def blocks(n: int) -> list[bytes]:
    return [encode_block(delete_block({"record_key": [f"key-{i}"] * (i + 1), "partition_path": ["p"] * (i + 1)},
                                      f"00{i}")) for i in range(n)]


def kinds(data: bytes) -> list[tuple[BlockType, str | None]]:
    return [(b.block_type, b.instant_time) for b in iter_log_blocks(data)]


def test_a_clean_file_and_its_block_positions(tmp_path):
    one, two, three = blocks(3)
    (tmp_path / "f.log").write_bytes(one + two + three)
    read = read_log_file(Storage(str(tmp_path)), "f.log")
    assert [encode_block(b) for b in read] == [one, two, three]
    assert [(b.offset, b.size) for b in read] == [(0, len(one)), (len(one), len(two)), (len(one) + len(two), len(three))]


@pytest.mark.parametrize("keep", [3, len(MAGIC) + 4, len(MAGIC) + 20, -9, -1])
def test_a_truncated_last_block_comes_back_corrupt(keep):
    one, two, three = blocks(3)
    tail = three[:keep]
    read = list(iter_log_blocks(one + two + tail))
    if len(tail) < len(MAGIC):   # shorter than a magic: EOF, as for Hudi
        assert [encode_block(b) for b in read] == [one, two]
        return
    assert [encode_block(b) for b in read[:2]] == [one, two]
    assert read[2].is_corrupt and read[2].content == tail[len(MAGIC):]
    assert (read[2].offset, read[2].size) == (len(one + two), len(tail))
    assert read[2].header == {} and read[2].instant_time is None


def test_a_torn_block_between_two_blocks_is_skipped_to_the_next_magic():
    one, two, three = blocks(3)
    torn = two[:len(two) // 2]   # a writer died mid-block; the next writer appended after it
    assert kinds(one + torn + three) == [(BlockType.DELETE_BLOCK, "000"), (BlockType.CORRUPT_BLOCK, None),
                                         (BlockType.DELETE_BLOCK, "002")]


def test_garbage_before_the_first_magic_is_a_corrupt_block():
    one, two = blocks(2)
    read = list(iter_log_blocks(b"garbage!" + one + two))
    assert read[0].is_corrupt and read[0].content == b"garbage!" and read[0].offset == 0
    assert [encode_block(b) for b in read[1:]] == [one, two]


def test_a_block_followed_by_something_else_than_a_magic_is_corrupt_as_in_hudi():
    """Hudi accepts a block only if the next magic (or EOF) follows it; here the block and the junk
    after it become one corrupt block, and the block after the junk is read."""
    one, two, three = blocks(3)
    read = list(iter_log_blocks(one + two + b"junk-without-magic" + three))
    assert encode_block(read[0]) == one
    assert read[1].is_corrupt and read[1].content == two[len(MAGIC):] + b"junk-without-magic"
    assert encode_block(read[2]) == three


def test_a_reverse_pointer_that_disagrees_makes_the_block_corrupt():
    one, two = blocks(2)
    bad = one[:-8] + struct.pack(">q", len(one) - 7)
    assert kinds(bad + two) == [(BlockType.CORRUPT_BLOCK, None), (BlockType.DELETE_BLOCK, "001")]


def test_fields_that_do_not_fill_the_frame_make_the_block_corrupt():
    block = bytearray(encode_block(rollback_command_block("001", "002")))
    at = len(block) - 8 - 4 - 8   # the content length, before the empty footer and the reverse pointer
    assert block[at:at + 8] == struct.pack(">q", 0)
    block[at:at + 8] = struct.pack(">q", 1)
    assert kinds(bytes(block)) == [(BlockType.CORRUPT_BLOCK, None)]


def test_unknown_block_types_and_header_keys_raise_rather_than_vanish():
    known = rollback_command_block("001", "002")
    future_type = bytearray(encode_block(known))
    future_type[len(MAGIC) + 8 + 4:len(MAGIC) + 8 + 8] = struct.pack(">i", 42)
    with pytest.raises(NotImplementedError, match="type ordinal 42"):
        list(iter_log_blocks(bytes(future_type)))
    future_key = LogBlock(BlockType.COMMAND_BLOCK, {HeaderKey.INSTANT_TIME: "002"})
    data = bytearray(encode_block(future_key))
    key_at = len(MAGIC) + 8 + 4 + 4 + 4
    data[key_at:key_at + 4] = struct.pack(">i", 99)
    with pytest.raises(NotImplementedError, match="ordinal 99"):
        list(iter_log_blocks(bytes(data)))


def test_corrupt_blocks_are_not_writable():
    [corrupt] = iter_log_blocks(MAGIC + b"\x00" * 3)
    with pytest.raises(ValueError):
        encode_block(corrupt)
