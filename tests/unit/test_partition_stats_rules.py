"""Partition stats as Hudi 1.x keeps them: one column's range over a whole partition, folded from its
files' ranges (min of mins, max of maxes, counts and sizes summed), written tight; merged over an
older value, a tight range replaces it and a loose one widens it; a tombstone hides it."""
import datetime as dt
import decimal

import pyarrow as pa
import pytest

from hudi_engine.file_group.log_file import LogWriter, avro_data_block, delete_block, rollback_command_block
from hudi_engine.file_group.log_scanner import Visibility
from hudi_engine.metadata_table.keys import partition_stats_key
from hudi_engine.metadata_table.merge import is_live, merge
from hudi_engine.metadata_table.partition_stats import fold, partition_stats_records
from hudi_engine.metadata_table.records import column_stats_of, decode, encode, partition_stats_record
from hudi_engine.metadata_table.stats import ColumnRange, arrow_column_ranges
from hudi_engine.schema.avro import arrow_to_avro, to_json
from hudi_engine.storage import Storage
from hudi_engine.transaction.metadata.log_ranges import LogRanges


def rng(column, lo, hi, nulls=0, count=10, size=100, typ=pa.int64()):
    return ColumnRange(column, typ, lo, hi, nulls, count, size, size * 2)


def test_fold_is_min_of_mins_max_of_maxes_and_sums():
    folded = fold([rng("x", 5, 9, 1, 10, 100), rng("x", -3, 4, 0, 7, 50), rng("x", None, None, 4, 4, 10)])
    assert folded == ColumnRange("x", pa.int64(), -3, 9, 5, 21, 160, 320)
    with pytest.raises(ValueError):
        fold([rng("x", 1, 2), rng("y", 1, 2)])


def test_fold_compares_values_of_either_form():
    """Footers give datetimes and Decimals; a version 8 record gives a timestamp as its long."""
    ts = pa.timestamp("us", tz="UTC")
    early = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    late_micros = 1_735_689_600_000_000                      # 2025-01-01 as micros
    folded = fold([ColumnRange("t", ts, early, early, 0, 1, 0, 0),
                   ColumnRange("t", ts, late_micros, late_micros, 0, 1, 0, 0)])
    assert (folded.min_value, folded.max_value) == (early, late_micros)
    dec = pa.decimal128(10, 2)
    folded = fold([ColumnRange("d", dec, decimal.Decimal("9.50"), decimal.Decimal("10.00"), 0, 1, 0, 0),
                   ColumnRange("d", dec, decimal.Decimal("-1.25"), decimal.Decimal("2.00"), 0, 1, 0, 0)])
    assert (folded.min_value, folded.max_value) == (decimal.Decimal("-1.25"), decimal.Decimal("10.00"))


def test_records_are_tight_keyed_by_column_and_partition_and_tombstone_unbounded_columns():
    records = partition_stats_records("city=sf", ["x", "v"], [rng("x", 1, 5), rng("x", 3, 8)], table_version=9)
    by_column = {column_stats_of(r).column_name: r for r in records}
    x = by_column["x"]
    assert x["key"] == partition_stats_key("city=sf", "x") and x["type"] == 6
    stats = column_stats_of(x)
    assert (stats.file_name, stats.min_value, stats.max_value, stats.value_count) == ("city=sf", 1, 8, 20)
    assert stats.is_tight_bound and not stats.is_deleted
    assert column_stats_of(by_column["v"]).is_deleted and not is_live(by_column["v"])
    # what is written decodes to the same record (Hudi's bytes: schemaless Avro of the version-9 schema)
    assert decode(encode(x), key=x["key"]) == x


def record(lo, hi, count, tight, deleted=False):
    return partition_stats_record("p", "x", arrow_type=pa.int64(), min_value=lo, max_value=hi, value_count=count,
                                  null_count=0, total_size=count, total_uncompressed_size=count,
                                  is_tight_bound=tight, is_deleted=deleted)


def test_a_tight_range_replaces_the_older_and_a_loose_one_widens_it():
    older = record(10, 20, 5, tight=True)
    replaced = column_stats_of(merge([older, record(12, 14, 2, tight=True)]))
    assert (replaced.min_value, replaced.max_value, replaced.value_count) == (12, 14, 2)
    widened = column_stats_of(merge([older, record(0, 15, 2, tight=False)]))
    assert (widened.min_value, widened.max_value, widened.value_count, widened.total_size) == (0, 20, 7, 7)
    gone = merge([older, partition_stats_records("p", ["x"], [])[0]])
    assert not is_live(gone)
    back = column_stats_of(merge([older, partition_stats_records("p", ["x"], [])[0], record(1, 2, 1, tight=False)]))
    assert (back.min_value, back.max_value, back.is_deleted) == (1, 2, False)


def test_log_block_ranges_count_values_and_nulls_without_sizes():
    table = pa.table({"x": pa.array([3, None, -1], pa.int64()), "s": ["b", "a", None],
                      "n": pa.array([None, None, None], pa.int32()),
                      "nested": pa.array([[1], [2], []], pa.list_(pa.int64()))})
    got = {r.column: r for r in arrow_column_ranges(table, ["x", "s", "n", "nested", "absent"])}
    assert set(got) == {"x", "s", "n"}
    assert got["x"] == ColumnRange("x", pa.int64(), -1, 3, 1, 3, 0, 0)
    assert (got["s"].min_value, got["s"].max_value, got["s"].null_count) == ("a", "b", 1)
    assert (got["n"].min_value, got["n"].max_value, got["n"].null_count) == (None, None, 3)


def test_a_log_files_ranges_fold_its_counting_data_blocks_one_at_a_time(tmp_path):
    """What a Spark task (or this process) reports for one log file: the data blocks of the
    instants that count, folded; a rolled-back block and a delete block add nothing."""
    schema = pa.schema([("x", pa.int64()), ("s", pa.string())])
    avro = to_json(arrow_to_avro(schema, "t"))
    storage = Storage(str(tmp_path))
    writer = LogWriter(storage, "p", "f1-0", "001")
    for instant, xs in (("001", [5, 7]), ("002", [100]), ("003", [None, -2])):
        writer.append(avro_data_block(pa.table({"x": pa.array(xs, pa.int64()), "s": ["a"] * len(xs)}, schema),
                                      avro, instant))
    writer.append(rollback_command_block("002", "004"))
    writer.append(delete_block({"record_key": ["k"], "partition_path": ["p"]}, "003"))
    [written] = writer.close()
    task = LogRanges(storage, (written.path,), Visibility(frozenset({"001", "002", "003"})), ("x", "s"))
    got = {r.column: r for r in task.ranges(written.path)}
    assert (got["x"].min_value, got["x"].max_value, got["x"].null_count, got["x"].value_count) == (-2, 7, 1, 4)
    assert (got["s"].min_value, got["s"].max_value, got["s"].value_count) == ("a", "a", 4)
    only_rolled_back = LogRanges(storage, (written.path,), Visibility(frozenset({"002"})), ("x",))
    assert only_rolled_back.ranges(written.path) is None
