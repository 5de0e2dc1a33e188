"""The log files of tables written by real Hudi (0.15, 1.0, 1.1): every block parses, re-encodes to
the same bytes, decodes to the records hudi-rs shows, and our encoders give Hudi's content bytes."""
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.file_group.log_file import (BlockType, avro_data_block, command_block_target,
                                             data_block_records, delete_block, delete_block_keys,
                                             encode_block, parquet_data_block, read_log_file,
                                             rollback_command_block)
from hudi_engine.file_group.naming import parse_log_file_name
from hudi_engine.schema.avro import avro_to_arrow
from hudi_engine.storage import Storage
from tests.conftest import FIXTURES, unzip_fixture
from tests.support.hudi_rs import hudi_rs_read

MOR = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("*/mor/*/*.zip"))
DATA_BLOCKS = (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK)


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mor")
    return {rel: unzip_fixture(rel, root / rel.replace("/", "_")) for rel in MOR}


def log_files(base: Path, metadata: bool = True) -> list[str]:
    """Log files under ``base`` (relative paths), the metadata table's included if asked."""
    found = []
    for folder, _, names in os.walk(base):
        rel_dir = os.path.relpath(folder, base)
        if not metadata and rel_dir.split(os.sep)[0] == ".hoodie":
            continue
        found += [os.path.normpath(os.path.join(rel_dir, n)) for n in names if parse_log_file_name(n)]
    return sorted(found)


def blocks_of(base: Path, metadata: bool = True):
    """(log file, block) for every block of every log file."""
    storage = Storage(str(base))
    return [(rel, block) for rel in log_files(base, metadata) for block in read_log_file(storage, rel)]


def test_fixtures_hold_every_kind_of_block(tables):
    kinds = {block.block_type for base in tables.values() for _, block in blocks_of(base)}
    assert kinds == {BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK, BlockType.DELETE_BLOCK,
                     BlockType.COMMAND_BLOCK, BlockType.HFILE_DATA_BLOCK}


@pytest.mark.parametrize("fixture", MOR)
def test_every_log_file_parses_and_reencodes_to_its_bytes(tables, fixture):
    base = tables[fixture]
    storage = Storage(str(base))
    for rel in log_files(base):
        blocks = read_log_file(storage, rel)
        assert blocks and not any(b.is_corrupt for b in blocks), rel
        assert [(b.offset, b.size) for b in blocks] == list(zip(
            [0] + [b.offset + b.size for b in blocks[:-1]], [b.size for b in blocks]))
        assert b"".join(encode_block(b) for b in blocks) == (base / rel).read_bytes(), rel
        for block in blocks:
            assert block.format_version == 1 and block.instant_time
            if block.block_type == BlockType.HFILE_DATA_BLOCK:   # metadata table: content kept raw
                assert block.content.startswith(b"DATABLK*") and block.schema
                with pytest.raises(NotImplementedError):
                    data_block_records(block)


@pytest.mark.parametrize("fixture", MOR)
def test_data_blocks_decode_to_the_records_of_their_write(tables, fixture):
    base = tables[fixture]
    for rel, block in blocks_of(base, metadata=False):
        if block.block_type not in DATA_BLOCKS:
            continue
        records = data_block_records(block)
        assert records.num_rows >= 1
        assert records.column_names == [f.name for f in avro_to_arrow(block.schema)]
        if block.block_type == BlockType.AVRO_DATA_BLOCK:
            assert records.schema == avro_to_arrow(block.schema)
        assert set(records["_hoodie_commit_time"].to_pylist()) == {block.instant_time}
        # Hudi stamps log records with the file group id, not a file name
        assert set(records["_hoodie_file_name"].to_pylist()) == {parse_log_file_name(Path(rel).name).file_id}
        keys = records["_hoodie_record_key"].to_pylist()
        assert all(keys) and len(set(keys)) == len(keys)


@pytest.mark.parametrize("fixture", [
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    "sample_table/mor/parquet/v6_nonpartitioned.zip",
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle.zip",
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "sample_table/mor/avro/v9_txns_complex_meta.zip",
])
def test_logged_updates_are_what_hudi_rs_shows(tables, fixture):
    base = tables[fixture]
    snapshot = {r["_hoodie_record_key"]: r for r in hudi_rs_read(base).to_pylist()}
    compared = 0
    for _, block in blocks_of(base, metadata=False):
        if block.block_type not in DATA_BLOCKS:
            continue
        for row in data_block_records(block).to_pylist():
            latest = snapshot.get(row["_hoodie_record_key"])
            if latest is None or latest["_hoodie_commit_time"] != block.instant_time:
                continue   # deleted or superseded later
            assert {k: latest[k] for k in row if k != "_hoodie_file_name"} == \
                {k: v for k, v in row.items() if k != "_hoodie_file_name"}
            compared += 1
    assert compared >= 1


@pytest.mark.parametrize("fixture, deleted", [
    ("quickstart_trips_table/mor/avro/v6_trips_8i3d.zip",
     {("e96c4396-3fad-413a-a942-4cb36106d721", "city=san_francisco"),
      ("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "city=san_francisco"),
      ("334e26e9-8355-45cc-97c6-c31daf0df330", "city=san_francisco")}),
    ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
     {("c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", "city=chennai"),
      ("e3cf430c-889d-4015-bc98-59bdce1e530c", "city=sao_paulo")}),
])
def test_delete_blocks_give_the_deleted_keys(tables, fixture, deleted):
    base = tables[fixture]
    keys = [delete_block_keys(b) for _, b in blocks_of(base, metadata=False) if b.block_type == BlockType.DELETE_BLOCK]
    found = pa.concat_tables(keys)
    assert set(zip(found["record_key"].to_pylist(), found["partition_path"].to_pylist())) == deleted
    # Hudi wrote no ordering value for these deletes (IntWrapper(0), its "natural order" marker)
    assert found["ordering_value"].null_count == found.num_rows
    remaining = set(hudi_rs_read(base)["_hoodie_record_key"].to_pylist())
    assert not remaining & {key for key, _ in deleted}


def test_rollback_command_block_names_the_rolled_back_delta_commit(tables):
    base = tables["sample_table/mor/parquet/v6_nonpartitioned_rollback.zip"]
    blocks = blocks_of(base, metadata=False)
    [(rel, command)] = [(rel, b) for rel, b in blocks if b.block_type == BlockType.COMMAND_BLOCK]
    assert parse_log_file_name(Path(rel).name).version == 2
    target = command_block_target(command)
    assert target == "20250126040826878"
    assert [b.instant_time for r, b in blocks if r.endswith(".log.1_0-33-43")] == [target]
    assert (base / ".hoodie" / f"{command.instant_time}.rollback").exists()


def test_our_encoders_give_hudis_content_bytes(tables):
    """Re-encoding the decoded records of Hudi's blocks gives the very content Hudi wrote."""
    checked = {BlockType.AVRO_DATA_BLOCK: 0, BlockType.DELETE_BLOCK: 0, BlockType.COMMAND_BLOCK: 0}
    for base in tables.values():
        for _, block in blocks_of(base):
            if block.block_type == BlockType.AVRO_DATA_BLOCK:
                ours = avro_data_block(data_block_records(block), block.schema, block.instant_time)
            elif block.block_type == BlockType.DELETE_BLOCK:
                ours = delete_block(delete_block_keys(block), block.instant_time, block.schema)
            elif block.block_type == BlockType.COMMAND_BLOCK:
                ours = rollback_command_block(command_block_target(block), block.instant_time)
            else:
                continue
            assert ours.content == block.content
            assert ours.header == block.header   # same entries; Hudi's order varies run to run
            # with Hudi's entry order, the whole block is byte-identical too
            ours.header = dict(block.header)
            assert encode_block(ours) == encode_block(block)
            checked[block.block_type] += 1
    assert all(checked.values()), checked


def test_our_parquet_blocks_hold_the_same_records_as_hudis(tables):
    for base in tables.values():
        for _, block in blocks_of(base, metadata=False):
            if block.block_type != BlockType.PARQUET_DATA_BLOCK:
                continue
            records = data_block_records(block)
            hudis = pq.read_metadata(pa.BufferReader(block.content)).row_group(0).column(0).compression
            ours = parquet_data_block(records, block.schema, block.instant_time, compression=hudis)
            assert ours.header == block.header
            assert data_block_records(ours).to_pylist() == records.to_pylist()
            footer = pq.read_metadata(pa.BufferReader(ours.content))
            assert footer.metadata[b"parquet.avro.schema"] == block.schema.encode()
            assert footer.row_group(0).column(0).compression == hudis == "GZIP"
            default = pq.read_metadata(pa.BufferReader(parquet_data_block(records, block.schema, block.instant_time).content))
            assert default.row_group(0).column(0).compression == "ZSTD"   # Hudi's default on Spark 3.5+


@pytest.mark.parametrize("fixture", ["sample_table/mor/parquet/v6_nonpartitioned.zip",
                                     "sample_table/mor/parquet/v6_complexkeygen_hivestyle.zip"])
def test_hudi_rs_reads_our_parquet_blocks_as_it_reads_hudis(tmp_path, fixture):
    """Our Parquet differs from parquet-mr's bytes (writer, page layout, footer keys), not in
    what a reader gets: swapping Hudi's blocks for ours leaves hudi-rs's snapshot unchanged."""
    base = unzip_fixture(fixture, tmp_path)
    before = hudi_rs_read(base).sort_by("_hoodie_record_key")
    storage = Storage(str(base))
    swapped = 0
    for rel in log_files(base, metadata=False):
        blocks = read_log_file(storage, rel)
        for i, block in enumerate(blocks):
            if block.block_type == BlockType.PARQUET_DATA_BLOCK:
                ours = parquet_data_block(data_block_records(block), block.schema, block.instant_time)
                assert ours.content != block.content
                blocks[i] = ours
                swapped += 1
        (base / rel).write_bytes(b"".join(encode_block(b) for b in blocks))
    assert swapped and hudi_rs_read(base).sort_by("_hoodie_record_key").to_pylist() == before.to_pylist()
