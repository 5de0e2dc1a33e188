"""The secondary index's pure parts: index.json as Hudi writes it (checked against the files real
Hudi 1.0 and 1.1 wrote), the entries inserts, updates and deletes make, their file groups (against
real Hudi's secondary-index files), the value strings, and the index DDL's text."""
import datetime as dt
import glob
import posixpath

import pyarrow as pa
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.expr.skipping import Predicate
from hudi_engine.metadata_table.codec import base_values
from hudi_engine.metadata_table.index_defs import (
    IndexDefinition,
    index_metadata_json,
    parse_index_metadata,
    secondary_index_definition,
)
from hudi_engine.metadata_table.keys import file_group_index_of_id, secondary_index_file_group, split_secondary_index_key
from hudi_engine.metadata_table.secondary_index import (
    changes,
    check_indexable,
    entries,
    entry_file_groups,
    java_double_string,
    lookup_prefixes,
    value_strings,
)
from hudi_engine.read.secondary_index import values_wanted
from hudi_engine.sql.index_statements import CreateIndex, DropIndex, ShowIndexes, parse_index_statement
from tests.conftest import unzip_fixture

V9 = "sample_table/cow/v9_txns_simple_meta.zip"
V8 = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"


def test_index_json_is_byte_for_byte_what_hudi_writes(tmp_path):
    for fixture in (V9, V8):
        text = (unzip_fixture(fixture, tmp_path) / ".hoodie/.index_defs/index.json").read_text()
        assert index_metadata_json(parse_index_metadata(text)) == text


def test_create_index_writes_the_definition_hudi_1_1_and_1_0_write(tmp_path):
    v9 = parse_index_metadata((unzip_fixture(V9, tmp_path) / ".hoodie/.index_defs/index.json").read_text())
    assert secondary_index_definition("merchant_idx", "merchant_name", 9).to_json_obj() == \
        v9["secondary_index_merchant_idx"]
    v8 = parse_index_metadata((unzip_fixture(V8, tmp_path) / ".hoodie/.index_defs/index.json").read_text())
    assert secondary_index_definition("rider_idx", "rider", 8).to_json_obj() == v8["secondary_index_rider_idx"]
    parsed = IndexDefinition.from_json_obj(v9["secondary_index_txn_date_idx"])
    assert (parsed.user_name, parsed.source_fields, parsed.index_version) == ("txn_date_idx", ("txn_date",), 2)
    assert IndexDefinition.from_json_obj(v8["secondary_index_rider_idx"]).index_version == 1


def test_entries_land_in_the_file_groups_real_hudi_put_them_in(tmp_path):
    """Version 2 hashes ``<value>$``: every entry of the v9 fixture sits in the file group its
    value hashes to, and its value is the Avro value's string (a date is its epoch day)."""
    base = unzip_fixture(V9, tmp_path) / ".hoodie/metadata"
    seen = 0
    for partition in ("secondary_index_merchant_idx", "secondary_index_txn_date_idx"):
        for path in glob.glob(str(base / partition / "*.hfile")):
            group = file_group_index_of_id(posixpath.basename(path).split("_")[0])
            for key, value in base_values(open(path, "rb").read(), path):
                value_text, record_key = split_secondary_index_key(key)
                made = changes(entries(pa.array([]), pa.array([], pa.string())),
                               entries(pa.array([record_key]), pa.array([value_text])))
                assert made.column("si_key").to_pylist() == [key]
                assert entry_file_groups(made, 10, 2).to_pylist() == [group]
                assert secondary_index_file_group(key, 10, 2) == group
                assert value["SecondaryIndexMetadata"] == {"isDeleted": False}
                seen += 1
    assert seen >= 20
    assert value_strings(pa.array([dt.date(2024, 1, 15)])).to_pylist() == ["19737"]


def _pairs(keys, values):
    return entries(pa.array(keys), pa.array(values, pa.string()))


def test_inserts_updates_and_deletes_make_the_entries_hudi_makes():
    before = _pairs(["k1", "k2", "k3"], ["sf", "ny", "la"])
    after = _pairs(["k1", "k2", "k4"], ["sf", "sea", "ny"])      # k2 changes, k3 deleted, k4 inserted
    got = {(r["si_key"], r["deleted"]) for r in changes(before, after).to_pylist()}
    assert got == {("ny$k2", True), ("sea$k2", False), ("la$k3", True), ("ny$k4", False)}
    assert changes(before, before).num_rows == 0          # an update keeping the value writes nothing


def test_null_values_and_special_characters_are_escaped_as_hudi_escapes_them():
    made = changes(_pairs([], []), _pairs(["a$b", "c"], [None, "x\\y$"]))
    rows = sorted((r["si_key"], r["prefix"]) for r in made.to_pylist())
    assert rows == [("\0$a\\$b", "\0$"), ("x\\\\y\\$$c", "x\\\\y\\$$")]
    assert [split_secondary_index_key(k) for k, _ in rows] == [(None, "a$b"), ("x\\y$", "c")]
    assert lookup_prefixes(["x\\y$"]) == ["x\\\\y\\$$"]


def test_version_1_hashes_the_whole_key():
    made = changes(_pairs([], []), _pairs(["k1", "k2"], ["v", "v"]))
    assert len(set(entry_file_groups(made, 10, 2).to_pylist())) == 1
    assert entry_file_groups(made, 10, 1).to_pylist() == [secondary_index_file_group(k, 10, 1)
                                                          for k in made.column("si_key").to_pylist()]


def test_values_are_the_strings_of_their_avro_values():
    ts = dt.datetime(2024, 1, 15, 12, 0, 0, 500)
    assert value_strings(pa.array([ts], pa.timestamp("us"))).to_pylist() == [str(int(ts.replace(
        tzinfo=dt.timezone.utc).timestamp()) * 1_000_000 + 500)]
    assert value_strings(pa.array([7, None], pa.int32())).to_pylist() == ["7", None]
    assert [java_double_string(x) for x in (19.1, 100.0, 1e10, 1e-4, 12345678.9, float("nan"))] == [
        "19.1", "100.0", "1.0E10", "1.0E-4", "1.23456789E7", "NaN"]


@pytest.mark.parametrize("typ", [pa.bool_(), pa.float32(), pa.decimal128(10, 2), pa.binary(),
                                 pa.list_(pa.string()), pa.struct([("a", pa.int32())])])
def test_unsupported_column_types_are_refused(typ):
    with pytest.raises(HoodieConfigError, match="cannot index column 'c'.*index another column"):
        check_indexable("c", typ)


@pytest.mark.parametrize("typ", [pa.string(), pa.int32(), pa.int64(), pa.date32(), pa.timestamp("us"), pa.float64()])
def test_supported_column_types(typ):
    check_indexable("c", typ)


def test_equality_and_in_filters_pin_values():
    preds = [Predicate("city", "IN", ("sf", "ny")), Predicate("city", "=", "ny"), Predicate("x", "=", 1)]
    assert values_wanted(preds, "city") == ("ny",)
    assert values_wanted([Predicate("city", ">", "a")], "city") is None


def test_index_ddl_is_read_as_hudi_writes_it():
    assert parse_index_statement("CREATE INDEX idx_city ON trips (city)") == CreateIndex("idx_city", "trips", ("city",))
    assert parse_index_statement("create index if not exists idx on table db.trips using secondary_index(city) "
                                 "options (k = 'v')") == CreateIndex("idx", "db.trips", ("city",), "secondary_index",
                                                                     {"k": "v"}, True)
    assert parse_index_statement("DROP INDEX IF EXISTS idx_city ON TABLE `trips`;") == DropIndex("idx_city", "trips", True)
    assert parse_index_statement("SHOW INDEXES FROM trips") == ShowIndexes("trips")
    assert parse_index_statement("SHOW INDEXES IN default.trips") == ShowIndexes("default.trips")
    assert parse_index_statement("SELECT * FROM trips") is None
    # Values as Spark's parser reads string literals: parentheses and commas inside quotes, escapes resolved.
    stmt = parse_index_statement("CREATE INDEX h ON t USING column_stats(url) OPTIONS(expr='regexp_extract', "
                                 "'pattern' = 'https?://([^/,]+)\\\\.com\\'s', idx 1, \"k.v\" = \"a\\tb\")")
    assert stmt.columns == ("url",) and stmt.options == {"expr": "regexp_extract", "pattern": "https?://([^/,]+)\\.com's",
                                                         "idx": "1", "k.v": "a\tb"}
    with pytest.raises(HoodieConfigError, match="cannot read the options at \"x = 'y' z\""):
        parse_index_statement("CREATE INDEX h ON t (url) OPTIONS(a = 'b', x = 'y' z)")


def test_a_writes_file_groups_are_read_before_and_after_it():
    """What the index compares per file group: the slice before the write and the one the commit's
    view has after it; a replaced group only before, a new one only after."""
    from hudi_engine.file_group.fs_view import BaseFile, FileSlice, LogFile
    from hudi_engine.transaction.metadata.commit_view import CommitView
    from hudi_engine.transaction.metadata.secondary_index import touched_groups

    fid, mor, gone = "11111111-1111-1111-1111-111111111111-0", "22222222-2222-2222-2222-222222222222-0", \
        "33333333-3333-3333-3333-333333333333-0"
    cow_old = FileSlice("p", fid, "001", BaseFile(f"p/{fid}_0-1-0_001.parquet", fid, "001", 10))
    log1 = LogFile(f"p/.{mor}_001.log.1_0-1-0", mor, "001", 1, 5, "0-1-0")
    mor_old = FileSlice("p", mor, "001", BaseFile(f"p/{mor}_0-1-0_001.parquet", mor, "001", 10), [log1])
    replaced = FileSlice("q", gone, "001", BaseFile(f"q/{gone}_0-1-0_001.parquet", gone, "001", 10))
    untouched = FileSlice("p", "55555555-5555-5555-5555-555555555555-0", "001")
    before = {("p", fid): cow_old, ("p", mor): mor_old, ("q", gone): replaced, ("p", untouched.file_id): untouched}
    new_fid = "44444444-4444-4444-4444-444444444444-0"
    cow_new = FileSlice("p", fid, "002", BaseFile(f"p/{fid}_0-2-0_002.parquet", fid, "002", 10))
    mor_new = FileSlice("p", mor, "001", mor_old.base_file,
                        [log1, LogFile(f"p/.{mor}_001.log.2_0-2-0", mor, "002", 2, 5, "0-2-0")])
    added = FileSlice("p", new_fid, "002", BaseFile(f"p/{new_fid}_0-2-0_002.parquet", new_fid, "002", 10))
    after = {("p", fid): cow_new, ("p", mor): mor_new, ("p", new_fid): added, ("p", untouched.file_id): untouched}
    meta = {"partitionToWriteStats": {"p": [
        {"fileId": fid, "path": cow_new.base_file.path},
        {"fileId": mor, "path": mor_new.log_files[1].path},
        {"fileId": new_fid, "path": added.base_file.path}]},
        "partitionToReplaceFileIds": {"q": [gone]}}
    groups = {(g.before or g.after).file_id: g for g in
              touched_groups(meta, CommitView(frozenset({"p", "q"}), before, after))}
    assert set(groups) == {fid, mor, new_fid, gone}
    assert (groups[fid].before, groups[fid].after) == (cow_old, cow_new)
    assert (groups[mor].before, groups[mor].after) == (mor_old, mor_new)
    assert groups[new_fid].before is None and groups[new_fid].after is added
    assert groups[gone].before is replaced and groups[gone].after is None
