"""HFile, the metadata table's file format: every HFile and HFile log block in the fixture tables
(written by Hudi 1.0 through HBase's writer and by Hudi 1.1's native writer) reads, seeks and
decodes; our writer reproduces Hudi 1.1's files byte for byte and round-trips anything else."""
import io
import json
import os
import struct
import zipfile
from pathlib import Path

import fastavro
import pytest

from hudi_engine.errors import HoodieCorruptFileError, HoodieError, HoodieValidationError
from hudi_engine.file_group.log_file import BlockType as LogBlockType
from hudi_engine.file_group.log_file import (
    LogWriter,
    data_block_records,
    encode_block,
    hfile_block_reader,
    hfile_block_records,
    hfile_data_block,
    read_log_file,
)
from hudi_engine.file_group.naming import parse_log_file_name
from hudi_engine.hfile import BlockType, Codec, HFileReader, Trailer, read_trailer, write_hfile
from hudi_engine.hfile.block import encode_block as encode_hfile_block
from hudi_engine.hfile.format import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    COMPARATOR_CLASS_NAME,
    CREATE_TIME_TS,
    FILE_INFO_PB_MAGIC,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    SCHEMA_KEY,
)
from hudi_engine.hfile.java_hashmap import hashmap_order
from hudi_engine.hfile.proto import encode_file_info_message
from hudi_engine.hfile.varint import decode_hadoop_vint, decode_uvarint, encode_hadoop_vint, encode_uvarint
from hudi_engine.hfile.writer import cell_bytes, encode_trailer
from hudi_engine.java_hash import java_string_hash
from hudi_engine.storage import Storage
from tests.conftest import FIXTURES, unzip_fixture

WRITER_INFO = {LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, CREATE_TIME_TS, KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY}


def _has_metadata_hfiles(archive: Path) -> bool:
    with zipfile.ZipFile(archive) as zf:
        return any("/.hoodie/metadata/" in n and n.endswith(".hfile") and not n.startswith("__MACOSX")
                   for n in zf.namelist())


WITH_MDT = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("**/*.zip") if _has_metadata_hfiles(p))


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mdt")
    return {rel: unzip_fixture(rel, root / rel.replace("/", "_")) for rel in WITH_MDT}


def test_fixture_hfiles_read_by_range_answer_as_read_whole(tables):
    """Ranged lookups (trailer and load-on-open section, then the blocks keys fall in) of every
    metadata HFile Hudi wrote give the whole-file reader's answers, meta blocks included."""
    seen = 0
    for base in tables.values():
        for _, path in metadata_files(base)[0]:
            whole = HFileReader(path.read_bytes(), path=str(path))
            ranged = HFileReader.open(Storage(str(path.parent)), path.name)
            keys = [k for k, _ in whole.items()]
            assert ranged.file_info == whole.file_info and ranged.meta_index == whole.meta_index
            assert list(ranged.get_many(keys[::2] + [b"\x00absent"])) == list(whole.get_many(keys[::2]))
            assert list(ranged.items()) == list(whole.items())
            for name in whole.meta_index:
                assert ranged.meta_block(name) == whole.meta_block(name)
            seen += 1
    assert seen


def metadata_files(base: Path):
    """(partition, path) of the metadata table's HFiles and log files."""
    hfiles, logs = [], []
    for folder, _, names in os.walk(base / ".hoodie" / "metadata"):
        partition = os.path.relpath(folder, base / ".hoodie" / "metadata").split(os.sep)[0]
        for name in sorted(names):
            if name.endswith(".hfile"):
                hfiles.append((partition, Path(folder) / name))
            elif parse_log_file_name(name):
                logs.append((partition, Path(folder) / name))
    return hfiles, logs


def hfile_log_blocks(base: Path):
    """(partition, log path, block) of every HFile data block of the metadata table."""
    storage = Storage(str(base))
    _, logs = metadata_files(base)
    return [(partition, path, block) for partition, path in logs
            for block in read_log_file(storage, str(path.relative_to(base)))
            if block.block_type == LogBlockType.HFILE_DATA_BLOCK]


def real_hfiles(base: Path):
    """(partition, name, bytes) of every real HFile: base files and log block contents."""
    hfiles, _ = metadata_files(base)
    out = [(partition, str(path), path.read_bytes()) for partition, path in hfiles]
    out += [(partition, f"{path}@{block.offset}", block.content) for partition, path, block in hfile_log_blocks(base)]
    return out


def decode_avro(value: bytes, schema) -> dict:
    """The value as one Avro datum of ``schema``, which must consume it exactly."""
    buf = io.BytesIO(value)
    record = fastavro.schemaless_reader(buf, schema, None)
    assert buf.tell() == len(value), "trailing bytes after the Avro datum"
    return record


def check_reader(reader: HFileReader) -> list[tuple[bytes, bytes]]:
    """Every invariant a reader must keep; returns its items."""
    items = list(reader.items())
    assert len(items) == len(reader) == reader.trailer.entry_count
    keys = [k for k, _ in items]
    assert all(a < b for a, b in zip(keys, keys[1:])), "keys not strictly increasing"
    for key, value in items:
        assert reader.get(key) == value
    prefixes = {b"", b"\x00", b"\xff", b"zzz-not-there"} | {k[:n] for k in keys[:50] for n in (1, 3, len(k) // 2)}
    for prefix in prefixes:
        assert list(reader.scan_prefix(prefix)) == [(k, v) for k, v in items if k.startswith(prefix)], prefix
    return items


# --- every real HFile --------------------------------------------------------------------------------

def test_fixtures_hold_both_writers_files(tables):
    """Hudi 1.0 (table version 8) wrote metadata HFiles through HBase (CRC32C checksums), Hudi 1.1
    (version 9) with its native writer (NULL checksums)."""
    checksum_types = set()
    for base in tables.values():
        for _, _, data in real_hfiles(base):
            checksum_types.add(data[24])
    assert checksum_types == {0, 2}


@pytest.mark.parametrize("fixture", WITH_MDT)
def test_every_real_hfile_reads_seeks_and_decodes(tables, fixture):
    base = tables[fixture]
    found = real_hfiles(base)
    assert found
    for partition, name, data in found:
        reader = HFileReader(data, path=name)
        assert reader.trailer.version == 3 and reader.trailer.comparator_class_name == COMPARATOR_CLASS_NAME
        assert reader.codec == Codec.GZ and reader.trailer.num_data_index_levels == 1
        items = check_reader(reader)
        assert reader.get(b"") is None and reader.get(b"\xff" * 8) is None
        schema = fastavro.parse_schema(json.loads(reader.file_info[SCHEMA_KEY]))
        for _, value in items:
            decode_avro(value, schema)
        if items:   # [int16 row length][row], then (HBase) the rest of the KeyValue key
            last = reader.file_info[LAST_KEY]
            assert last[2:2 + struct.unpack(">H", last[:2])[0]] == items[-1][0]


@pytest.mark.parametrize("fixture", WITH_MDT)
def test_hfile_log_blocks_decode_with_their_header_schema(tables, fixture):
    base = tables[fixture]
    partition_lists = []
    blocks = hfile_log_blocks(base)
    assert blocks
    for partition, path, block in blocks:
        schema_json, records = hfile_block_records(block)
        assert schema_json == block.schema and records
        schema = fastavro.parse_schema(json.loads(schema_json))
        for key, value in records:
            record = decode_avro(value, schema)
            # Hudi blanks the key field of the datum: the HFile key holds it
            assert record["key"] == ""
            if partition == "files" and key == b"__all_partitions__":
                partition_lists.append(record)
        with pytest.raises(NotImplementedError, match="hfile_block_records"):
            data_block_records(block)
    # also in the files partition's base files
    for partition, path in metadata_files(base)[0]:
        if partition == "files":
            reader = HFileReader(path.read_bytes(), path=str(path))
            value = reader.get(b"__all_partitions__")
            if value is not None:
                partition_lists.append(decode_avro(value, fastavro.parse_schema(
                    json.loads(reader.file_info[SCHEMA_KEY]))))
    assert partition_lists, "no __all_partitions__ record in the files partition"
    assert all(r["type"] == 1 for r in partition_lists)   # METADATA_TYPE_PARTITION_LIST


# --- byte identity with Hudi -------------------------------------------------------------------------

def rewrite(reader: HFileReader, layout: str) -> bytes:
    """The same entries, Hudi's file info and meta blocks, written by us."""
    info = {k: v for k, v in reader.file_info.items() if k not in WRITER_INFO}
    (created,) = struct.unpack(">q", reader.file_info[CREATE_TIME_TS])
    return write_hfile(list(reader.items()), compression=reader.codec, file_info=info,
                       meta_blocks={n: reader.meta_block(n) for n in reader.meta_index},
                       create_time_ms=created, layout=layout)


def shape(reader: HFileReader) -> tuple:
    t = reader.trailer
    return (reader.block_types(), t.version, t.comparator_class_name, t.entry_count, t.data_index_count,
            t.meta_index_count, t.num_data_index_levels, t.compression_codec)


def compressed_blocks(reader: HFileReader) -> list[bytes]:
    """Each data block's stored data, header and checksums left out."""
    blocks = [reader._block(offset) for offset, _ in reader._blocks]
    return [reader.data[b.offset + 33:b.offset + 33 + struct.unpack_from(">i", reader.data, b.offset + 29)[0] - 33]
            for b in blocks]


def index_payload(reader: HFileReader) -> bytes:
    return reader._block(reader.trailer.load_on_open_data_offset).payload


@pytest.mark.parametrize("fixture", WITH_MDT)
def test_writer_gives_hudis_bytes(tables, fixture):
    """Hudi 1.1 files (native writer): layout "1.1" reproduces them byte for byte, base files and
    log block contents alike.

    Hudi 1.0 files were written by HBase's writer, which we do not imitate: it stores CRC32C
    checksums (we write NULL ones, as Hudi's writer does), sorts the file info (a TreeMap; Hudi's is
    a HashMap), counts the whole KeyValue key in AVG_KEY_LEN, records CREATE_TIME_TS 0, a
    total_uncompressed_bytes trailer field, minor version 3 and previous-block offsets of index
    blocks. For those, the block layout and trailer counts match and the entries are the same; with
    layout "current" (full KeyValue index keys, as HBase writes them) every data block's compressed
    bytes and the root data index are even identical to HBase's."""
    base = tables[fixture]
    identical = 0
    for _, name, data in real_hfiles(base):
        real = HFileReader(data, path=name)
        native = data[24] == 0
        for layout in ("1.1", "current"):
            ours = rewrite(real, layout)
            if layout == "1.1" and native:
                assert ours == data, name
                identical += 1
            back = HFileReader(ours)
            assert shape(back) == shape(real), name
            if layout == "current" and not native:
                assert compressed_blocks(back) == compressed_blocks(real), name
                assert index_payload(back) == index_payload(real), name
            assert list(back.items()) == list(real.items())
            assert {k: v for k, v in back.file_info.items() if k != AVG_KEY_LEN} == \
                {k: v for k, v in real.file_info.items() if k != AVG_KEY_LEN} | (
                    {} if native else {k: back.file_info[k] for k in (LAST_KEY, CREATE_TIME_TS)})
    assert identical or fixture.split("/")[-1].startswith("v8_")


def test_hfile_log_block_content_is_hudis_bytes(tables):
    """hfile_data_block rebuilds a real metadata log block's content exactly (layout "1.1")."""
    compared = 0
    for fixture, base in tables.items():
        for _, _, block in hfile_log_blocks(base):
            if block.content[24] != 0:
                continue
            reader = hfile_block_reader(block)
            (created,) = struct.unpack(">q", reader.file_info[CREATE_TIME_TS])
            ours = hfile_data_block(list(reader.items()), block.schema, block.instant_time,
                                    layout="1.1", create_time_ms=created)
            assert ours.content == block.content
            compared += 1
    assert compared >= 10


def test_java_hashmap_order():
    assert java_string_hash("schema") == (-907987551) & 0xFFFFFFFF   # "schema".hashCode()
    assert java_string_hash("") == 0
    keys = [MAX_MEMSTORE_TS_KEY, "bloomFilterTypeCode", "minRecordKey", "maxRecordKey", SCHEMA_KEY, LAST_KEY,
            AVG_KEY_LEN, CREATE_TIME_TS, AVG_VALUE_LEN, KEY_VALUE_VERSION]
    # the order Hudi 1.1's file info blocks show
    assert [k for k, _ in hashmap_order((k, None) for k in keys)] == [
        SCHEMA_KEY, "bloomFilterTypeCode", LAST_KEY, AVG_VALUE_LEN, "minRecordKey", AVG_KEY_LEN, "maxRecordKey",
        KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY, CREATE_TIME_TS]
    many = [(f"k{i}", i) for i in range(40)]   # past two resizes: still every entry once
    assert sorted(hashmap_order(many)) == sorted(many)


# --- round trips -------------------------------------------------------------------------------------

def sample_items(n: int, value_size: int = 37) -> list[tuple[bytes, bytes]]:
    items = [(f"key-{i:06d}".encode(), bytes((i * 7 + j) % 256 for j in range(i % value_size))) for i in range(n)]
    items.insert(0, (b"", b"empty key"))
    items.append((b"\xff\xfe\x00binary", b""))
    return items


@pytest.mark.parametrize("compression", ["GZ", "NONE"])
@pytest.mark.parametrize("layout", ["current", "1.1"])
def test_round_trip_many_blocks(compression, layout):
    items = sample_items(3000)
    data = write_hfile(items, block_size=512, compression=compression, layout=layout,
                       file_info={"minRecordKey": b"a", SCHEMA_KEY: b"{}"}, meta_blocks={"bloomFilter": b"bits"},
                       create_time_ms=42)
    reader = HFileReader(data)
    assert reader.block_count > 50 and reader.codec == Codec[compression]
    assert check_reader(reader) == items
    assert reader.file_info["minRecordKey"] == b"a" and reader.file_info[SCHEMA_KEY] == b"{}"
    assert reader.file_info[CREATE_TIME_TS] == struct.pack(">q", 42)
    assert reader.file_info[LAST_KEY] == struct.pack(">H", len(items[-1][0])) + items[-1][0]
    assert reader.meta_block("bloomFilter") == b"bits" and reader.meta_block("nope") is None
    types = reader.block_types()
    assert types[:reader.block_count] == [BlockType.DATA] * reader.block_count
    assert types[reader.block_count:] == [BlockType.META, BlockType.ROOT_INDEX, BlockType.ROOT_INDEX,
                                          BlockType.FILE_INFO]
    for missing in (b"a", b"key-000100x", b"key-0029999", b"zzz", b"\xff\xff"):
        assert reader.get(missing) is None
    assert [k for k, _ in reader.scan_prefix(b"key-0012")] == [f"key-0012{i:02d}".encode() for i in range(100)]
    assert list(reader.scan_prefix(b"key-1")) == []


def test_previous_block_offsets():
    """Fixed layout: each data block points at the one before; Hudi 1.1 wrote the block's own offset."""
    for layout in ("current", "1.1"):
        reader = HFileReader(write_hfile(sample_items(500), block_size=256, layout=layout))
        offsets = [o for o, _ in reader._blocks]
        prevs = [reader._block(o).prev_offset for o in offsets]
        assert prevs[0] == -1
        assert prevs[1:] == (offsets[:-1] if layout == "current" else offsets[1:])


def test_get_reads_one_block(monkeypatch):
    reader = HFileReader(write_hfile(sample_items(2000), block_size=1024))
    read = []
    original = HFileReader._cells
    monkeypatch.setattr(HFileReader, "_cells", lambda self, i: (read.append(i), original(self, i))[1])
    assert reader.get(b"key-001500") is not None
    assert len(read) == 1
    read.clear()
    assert [k for k, _ in reader.scan_prefix(b"key-00150")] == [f"key-00150{i}".encode() for i in range(10)]
    assert len(read) <= 2


def test_get_many_reads_each_block_once(monkeypatch):
    """Many keys cost a read of each block that may hold one, not a seek per key nor a scan."""
    items = sample_items(2000)
    reader = HFileReader(write_hfile(items, block_size=1024))
    read = []
    original = HFileReader._cells
    monkeypatch.setattr(HFileReader, "_cells", lambda self, i: (read.append(i), original(self, i))[1])
    wanted = [b"key-000003", b"key-000004", b"key-001500", b"key-001500", b"missing", b"\xff\xfe\x00binary", b""]
    got = list(reader.get_many(wanted))
    assert got == sorted((k, v) for k, v in items if k in set(wanted))
    assert len(read) == len(set(read)) <= 4 < reader.block_count
    assert list(reader.get_many([])) == [] and list(reader.get_many([b"zzz", b"a"])) == []


def test_long_keys():
    """Index keys of 126+ bytes need a multi-byte length: the fixed layout's Hadoop VInt reads back;
    Hudi 1.1's Protobuf varint would be unreadable by Hudi, so that layout refuses them."""
    items = [(b"k" * 300 + f"{i:05d}".encode(), b"v" * 10) for i in range(200)]
    reader = HFileReader(write_hfile(items, block_size=1000))
    assert reader.block_count > 10 and check_reader(reader) == items
    with pytest.raises(HoodieValidationError, match="too long"):
        write_hfile(items, block_size=1000, layout="1.1")


def test_empty_file():
    """Like Hudi's (the fixtures hold several): no data block, an empty root index."""
    reader = HFileReader(write_hfile([], file_info={SCHEMA_KEY: b"{}"}))
    assert len(reader) == 0 and reader.block_count == 0 and list(reader.items()) == []
    assert reader.get(b"x") is None and list(reader.scan_prefix(b"")) == []
    assert reader.trailer.first_data_block_offset == -1 and reader.file_info[LAST_KEY] == b""


def test_keys_must_be_sorted_and_unique():
    with pytest.raises(HoodieValidationError, match="b'b'.*smaller than.*b'c'"):
        write_hfile([(b"a", b""), (b"c", b""), (b"b", b"")])
    with pytest.raises(HoodieValidationError, match="b'a' repeats"):
        write_hfile([(b"a", b"1"), (b"a", b"2")])
    with pytest.raises(HoodieValidationError, match="appears twice"):
        hfile_data_block([("x", b"1"), ("x", b"2")], "{}", "001")
    with pytest.raises(ValueError, match="compression"):
        write_hfile([], compression="brotli")


def test_varints():
    for n in (0, 1, 127, 128, 300, 2**31 - 1, -1, -112, -113, -200, 2**40):
        assert decode_hadoop_vint(encode_hadoop_vint(n), 0) == (n, len(encode_hadoop_vint(n)))
    for n in (0, 127, 128, 300, 2**63):
        assert decode_uvarint(encode_uvarint(n), 0) == (n, len(encode_uvarint(n)))
    assert encode_hadoop_vint(130) == b"\x8f\x82" and encode_uvarint(130) == b"\x82\x01"


def test_multi_level_index():
    """HBase writes leaf (and intermediate) index blocks once the root index grows; Hudi never does,
    but must read them. Built here: 20 data blocks, 4 leaf index blocks, a root of 4 entries."""
    codec = Codec.GZ
    items = sample_items(200)
    out, data_index, offset = [], [], 0
    for start in range(0, len(items), 11):
        chunk = items[start:start + 11]
        raw = encode_hfile_block(BlockType.DATA, b"".join(cell_bytes(k, v) for k, v in chunk), codec)
        full_key = struct.pack(">H", len(chunk[0][0])) + chunk[0][0] + b"\x00" + b"\x7f" + b"\xff" * 7 + b"\x04"
        data_index.append((full_key, offset, len(raw)))
        out.append(raw)
        offset += len(raw)
    root = []
    for start in range(0, len(data_index), 5):
        group = data_index[start:start + 5]
        entries = [struct.pack(">qi", o, s) + k for k, o, s in group]
        rel = [0]
        for e in entries:
            rel.append(rel[-1] + len(e))
        payload = struct.pack(f">i{len(rel)}i", len(entries), *rel) + b"".join(entries)
        raw = encode_hfile_block(BlockType.LEAF_INDEX, payload, codec)
        root.append((group[0][0], offset, len(raw)))
        out.append(raw)
        offset += len(raw)
    load_on_open = offset
    out.append(encode_hfile_block(BlockType.ROOT_INDEX, b"".join(
        struct.pack(">qi", o, s) + encode_hadoop_vint(len(k)) + k for k, o, s in root), codec))
    out.append(encode_hfile_block(BlockType.ROOT_INDEX, b"", codec))
    file_info_offset = load_on_open + len(out[-1]) + len(out[-2])
    message = encode_file_info_message([(KEY_VALUE_VERSION.encode(), struct.pack(">i", 1)),
                                        (MAX_MEMSTORE_TS_KEY.encode(), bytes(8))])
    out.append(encode_hfile_block(BlockType.FILE_INFO,
                                  FILE_INFO_PB_MAGIC + encode_uvarint(len(message)) + message, codec))
    out.append(encode_trailer(Trailer(
        file_info_offset=file_info_offset, load_on_open_data_offset=load_on_open, data_index_count=len(root),
        meta_index_count=0, entry_count=len(items), num_data_index_levels=2, first_data_block_offset=0,
        comparator_class_name=COMPARATOR_CLASS_NAME, compression_codec=int(codec), minor_version=3)))
    reader = HFileReader(b"".join(out))
    assert reader.block_count == len(data_index) and reader.trailer.num_data_index_levels == 2
    assert check_reader(reader) == items


# --- HFile log blocks through the log file writer and reader --------------------------------------------

@pytest.mark.parametrize("compression", ["GZ", "NONE"])
def test_hfile_log_block_round_trip(tmp_path, compression):
    schema = json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "key", "type": "string"}, {"name": "n", "type": "long"}]})
    parsed = fastavro.parse_schema(json.loads(schema))

    def datum(n: int) -> bytes:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, {"key": "", "n": n})
        return buf.getvalue()

    records = [(f"rk-{i:04d}", datum(i)) for i in reversed(range(5000))]   # any order in
    blocks = [hfile_data_block(records, schema, "20260101000000000", compression=compression),
              hfile_data_block([("only", datum(7))], schema, "20260101000000001", compression=compression)]
    storage = Storage(str(tmp_path))
    writer = LogWriter(storage, "files", "files-0000-0", "20260101000000000")
    for block in blocks:
        writer.append(block)
    (written,) = writer.close()
    read = read_log_file(storage, written.path)
    assert [b.block_type for b in read] == [LogBlockType.HFILE_DATA_BLOCK] * 2
    assert [encode_block(b) for b in read] == [encode_block(b) for b in blocks]
    schema_back, pairs = hfile_block_records(read[0])
    assert schema_back == schema
    assert pairs == sorted((k.encode(), v) for k, v in records)
    assert [decode_avro(v, parsed)["n"] for _, v in pairs[:3]] == [0, 1, 2]
    reader = hfile_block_reader(read[0])
    assert reader.file_info[SCHEMA_KEY] == schema.encode() and reader.codec == Codec[compression]
    assert decode_avro(reader.get(b"rk-4321"), parsed)["n"] == 4321
    assert hfile_block_records(read[1]).records == [(b"only", datum(7))]


# --- errors ------------------------------------------------------------------------------------------

@pytest.fixture
def small_file() -> bytes:
    return write_hfile(sample_items(300), block_size=400)


def test_corrupt_trailer_magic(small_file):
    data = bytearray(small_file)
    data[-4096] ^= 0xFF
    with pytest.raises(HoodieCorruptFileError,
                       match=rf"my\.hfile: no HFile trailer magic at offset {len(data) - 4096}"):
        HFileReader(bytes(data), path="my.hfile")


def test_truncated_file(small_file):
    with pytest.raises(HoodieCorruptFileError, match="my.hfile.*shorter than an HFile trailer"):
        HFileReader(small_file[:1000], path="my.hfile")
    with pytest.raises(HoodieCorruptFileError, match="my.hfile.*trailer magic"):
        HFileReader(small_file[:-100], path="my.hfile")
    # the front of the file lost: offsets in the trailer point past the data
    with pytest.raises(HoodieCorruptFileError, match="my.hfile: HFile block at offset"):
        HFileReader(small_file[len(small_file) // 2:], path="my.hfile")
    with pytest.raises(HoodieError):
        HFileReader(b"", path="my.hfile")


def test_corrupt_block_magic_and_data(small_file):
    reader = HFileReader(small_file, path="my.hfile")
    second = reader._blocks[1][0]
    data = bytearray(small_file)
    data[second:second + 8] = b"GARBAGE!"
    broken = HFileReader(bytes(data), path="my.hfile")
    assert broken.get(sample_items(300)[0][0]) == sample_items(300)[0][1]   # block 0 is fine
    with pytest.raises(HoodieCorruptFileError,
                       match=rf"my\.hfile: HFile block at offset {second}: unknown block magic"):
        list(broken.items())
    data = bytearray(small_file)
    data[second + 33 + 12] ^= 0x55   # inside the gzip data
    with pytest.raises(HoodieCorruptFileError, match=rf"my\.hfile: HFile block at offset {second}"):
        list(HFileReader(bytes(data), path="my.hfile").items())
    load_on_open = reader.trailer.load_on_open_data_offset
    data = bytearray(small_file)
    data[load_on_open:load_on_open + 8] = b"DATABLK*"
    with pytest.raises(HoodieCorruptFileError, match=f"offset {load_on_open}: expected a ROOT_INDEX block"):
        HFileReader(bytes(data), path="my.hfile")


def test_trailer_reads_alone(small_file):
    trailer = read_trailer(small_file)
    assert (trailer.version, trailer.entry_count, trailer.compression_codec) == (3, 302, int(Codec.GZ))
