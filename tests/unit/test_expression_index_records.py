"""An expression index's records per file, its definition as Hudi writes it, which slices its records
let a query skip, and the filters a SQL WHERE hands the reader."""
import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from hudi_engine.bloom import deserialize_bloom_filter
from hudi_engine.errors import HoodieValidationError
from hudi_engine.expr.skipping import ColumnRange, filter_arrow, lenient_predicates, predicates, time_zone_safe
from hudi_engine.file_group.fs_view import BaseFile, FileSlice, LogFile
from hudi_engine.metadata_table.expression_index import (
    BloomSettings,
    file_records,
    file_tombstones,
    file_values,
    java_strings,
    partition_records,
)
from hudi_engine.metadata_table.index_defs import expression_index_definition
from hudi_engine.metadata_table.keys import (EXPRESSION_INDEX, PARTITION_STATS, bloom_filter_key, column_index_id,
                                            column_stats_key, file_group_id, partition_index_id)
from hudi_engine.metadata_table.records import bloom_filter_of, column_stats_of
from hudi_engine.read import expression_index as pruning
from hudi_engine.sql.queries import expression_filters

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("driver", pa.string())])
DAY = expression_index_definition("idx_day", "ts", "column_stats", {"expr": "from_unixtime", "format": "yyyy-MM-dd"}, 9)
DRIVER = expression_index_definition("idx_driver", "driver", "bloom_filters", {"expr": "lower", "fpp": "0.001"}, 9)
BLOOM = BloomSettings("DYNAMIC_V0", 1000, 0.000000001, 10000)


def test_definitions_are_hudis():
    assert DAY.to_json_obj() == {"indexName": "expr_index_idx_day", "indexType": "column_stats",
                                 "indexFunction": "from_unixtime", "sourceFields": ["ts"],
                                 "indexOptions": {"expr": "from_unixtime", "format": "yyyy-MM-dd"}, "version": "V1"}
    assert "version" not in expression_index_definition("i", "c", "bloom_filters", {"expr": "lower"}, 8).to_json_obj()
    assert DAY.user_name == "idx_day"
    assert file_group_id(EXPRESSION_INDEX, 1, DAY.name) == "expr-index-idx-day-0001-0"


def test_a_files_records_hold_the_expressions_range_or_bloom_filter():
    source = pa.array([1_700_000_000, 1_700_090_000, None], pa.int64())
    found = file_values(DAY, "p1/f1_0-1-0_001.parquet", source, 1000, None)
    [record] = file_records(DAY, found, "001", 9)
    assert record["key"] == column_stats_key("ts", "p1", "f1_0-1-0_001.parquet")
    s = column_stats_of(record)
    assert (s.column_name, s.min_value, s.max_value, s.null_count, s.value_count, s.total_size,
            s.total_uncompressed_size) == ("ts", "2023-11-14", "2023-11-15", 1, 3, 1000, 2000)

    drivers = pa.array(["Ann", "BOB", None])
    found = file_values(DRIVER, "p1/.f1_001.log.1_0-1-0", drivers, 10, BLOOM)
    [record] = file_records(DRIVER, found, "002", 9, "DYNAMIC_V0")
    assert record["key"] == bloom_filter_key("p1", ".f1_001.log.1_0-1-0")
    info = bloom_filter_of(record)
    bloom = deserialize_bloom_filter(info.serialized, info.type)
    assert bloom.might_contain("ann") and bloom.might_contain("bob") and not bloom.might_contain("Ann")
    assert java_strings(pa.array([3, None, 5])) == ["3", "5"]
    assert column_stats_of(file_tombstones(DAY, "p1/f1_0-1-0_001.parquet", "003", 9)[0]).is_deleted
    # Seconds that are millis (a year past 9999, which Spark writes +55687 and Arrow cannot): the
    # range is left unbounded, and a bloom filter is not made (no record: the file is always read).
    millis = pa.array([1_695_159_649_087, 5, None], pa.int64())
    s = column_stats_of(file_records(DAY, file_values(DAY, "p1/f2_0-1-0_001.parquet", millis, 10, None), "004", 9)[0])
    assert (s.min_value, s.max_value, s.null_count, s.value_count) == (None, None, 1, 3)
    hours = expression_index_definition("h", "ts", "bloom_filters", {"expr": "from_unixtime"}, 9)
    assert file_records(hours, file_values(hours, "p1/f2_0-1-0_001.parquet", millis, 10, BLOOM), "004", 9) == []
    assert bloom_filter_of(file_tombstones(DRIVER, "p1/f1_0-1-0_001.parquet", "003", 9)[0]).is_deleted


def test_a_partitions_record_folds_its_files_ranges_under_hudis_prefix():
    """Hudi's partition-level records of an expression index: key ColumnIndexID("ts") +
    PartitionIndexID("__partition_stat__") + PartitionIndexID(partition), type partition stats."""
    day = pa.array([1_700_000_000, None], pa.int64())
    later = pa.array([1_700_200_000], pa.int64())
    ranges = [file_values(DAY, f"p1/{n}", a, 10, None).range for n, a in (("f1_0-1-0_001.parquet", day),
                                                                          (".f1_001.log.1_0-1-0", later))]
    [record] = partition_records(DAY, "p1", ranges, 9)
    assert record["key"] == column_index_id("ts") + partition_index_id("__partition_stat__") + partition_index_id("p1")
    assert record["type"] == PARTITION_STATS.record_type
    s = column_stats_of(record)
    assert (s.file_name, s.min_value, s.max_value, s.null_count, s.value_count, s.is_deleted) == (
        "p1", "2023-11-14", "2023-11-17", 1, 3, False)
    # A file without a record, or an unbounded range (values Arrow cannot format as Spark): a tombstone.
    millis = file_values(DAY, "p1/f2_0-1-0_001.parquet", pa.array([1_695_159_649_087], pa.int64()), 10, None).range
    assert column_stats_of(partition_records(DAY, "p1", ranges + [millis], 9)[0]).is_deleted
    assert column_stats_of(partition_records(DAY, "p1", ranges + [None], 9)[0]).is_deleted
    assert column_stats_of(partition_records(DAY, "", [], 9)[0]).is_deleted          # no files left
    assert partition_records(DRIVER, "p1", [None], 9) == []                          # bloom filters: none


class _Reader:
    """The two lookups pruning makes, over records made here."""

    def __init__(self, ranges=None, blooms=None):
        self.ranges, self.blooms = ranges or {}, blooms or {}

    def has(self, partition):
        return True

    def column_ranges(self, columns, partitions, index_partition):
        return self.ranges

    def bloom_filters(self, index_partition, files):
        return {f: self.blooms[f] for f in files if f in self.blooms}


def _slice(fid, *logs):
    return FileSlice("p", fid, "001", BaseFile(f"p/{fid}_0-1-0_001.parquet", fid, "001", 1),
                     [LogFile(f"p/.{fid}_001.log.{i + 1}_0-1-0", fid, "002", i + 1, 1) for i, _ in enumerate(logs)])


def test_a_slice_is_read_when_any_of_its_files_may_match_or_has_no_record():
    a, b, c, d = _slice("a"), _slice("b", "log"), _slice("c"), _slice("d")
    ranges = {"a_0-1-0_001.parquet": {"ts": ColumnRange("2023-11-14", "2023-11-14", 0, 5)},
              "b_0-1-0_001.parquet": {"ts": ColumnRange("2023-11-14", "2023-11-14", 0, 5)},
              ".b_001.log.1_0-1-0": {"ts": ColumnRange("2023-11-17", "2023-11-17", 0, 1)},
              "c_0-1-0_001.parquet": {"ts": ColumnRange("2023-11-10", "2023-11-20", 0, 5)}}
    preds = predicates([("from_unixtime(ts, 'yyyy-MM-dd')", "=", "2023-11-17")], SCHEMA)
    reader = _Reader(ranges)
    assert pruning._by_ranges(reader, DAY, [a, b, c, d], preds) == [b, c, d]      # d: no record, read
    other = predicates([("from_unixtime(ts, 'yyyy')", "=", "2023")], SCHEMA)
    assert pruning.matching(DAY, other) == []                                      # another format: not this index
    # Without expr, Hudi's identity: the column's own range, answering filters on the column.
    plain = expression_index_definition("ident", "ts", "column_stats", {}, 9)
    assert plain.function == "identity" and plain.to_json_obj()["indexOptions"] == {}
    on_column = predicates([("ts", ">", 5)], SCHEMA)
    assert pruning.matching(plain, on_column + preds) == on_column

    def info(values):
        return bloom_filter_of(file_records(DRIVER, file_values(DRIVER, "p/x", pa.array(values), 1, BLOOM), "1", 9)[0])
    blooms = {("p", "a_0-1-0_001.parquet"): info(["Ann"]), ("p", "b_0-1-0_001.parquet"): info(["Bob"]),
              ("p", ".b_001.log.1_0-1-0"): info(["Ann"])}
    wanted = predicates([("lower(driver)", "IN", ["bob", "carol"])], SCHEMA)
    assert pruning._by_bloom_filters(_Reader(blooms=blooms), DRIVER, [a, b, d], wanted) == [b, d]
    ranged = predicates([("lower(driver)", ">", "a")], SCHEMA)                    # blooms answer = and IN only
    assert pruning._by_bloom_filters(_Reader(blooms=blooms), DRIVER, [a, b], ranged) == [a, b]


def test_filters_on_expressions_filter_rows_and_refuse_bad_ones():
    rows = pa.table({"id": ["1", "2", "3"], "ts": [1_700_000_000, 1_700_259_200, None], "driver": ["A", "b", None]})
    [pred] = predicates([("from_unixtime(ts, 'yyyy-MM-dd')", ">=", "2023-11-15")], SCHEMA)
    assert filter_arrow(rows, pred).column("id").to_pylist() == ["2"]
    [pred] = predicates([("lower(driver)", "IN", "a,b")], SCHEMA)
    assert filter_arrow(rows, pred).column("id").to_pylist() == ["1", "2"]
    with pytest.raises(HoodieValidationError, match="takes a timestamp or date column"):
        predicates([("year(driver)", "=", 2020)], SCHEMA)
    with pytest.raises(HoodieValidationError, match="or a function of one"):
        predicates([("nosuch(ts)", "=", 1)], SCHEMA)
    assert lenient_predicates([("year(driver)", "=", 2020), ("lower(driver)", "=", "a")], SCHEMA) == \
        predicates([("lower(driver)", "=", "a")], SCHEMA)
    both = predicates([("from_unixtime(ts)", "=", "x"), ("lower(driver)", "=", "a")], SCHEMA)
    assert time_zone_safe(both, "Europe/Paris") == both[1:] and time_zone_safe(both, "UTC") == both


def _filters(sql):
    tree = sqlglot.parse_one(sql, read="spark")
    return expression_filters(next(tree.find_all(exp.Table)))


def test_a_where_hands_its_expression_terms_to_the_reader():
    assert _filters("SELECT * FROM t x WHERE from_unixtime(x.ts, 'yyyy-MM-dd') = '2024-01-01' AND fare > 1 "
                    "AND 'b' <= lower(driver) AND lower(driver) IN ('a', 'b')") == (
        ("FROM_UNIXTIME(x.ts, 'yyyy-MM-dd')", "=", "2024-01-01"), ("LOWER(driver)", ">=", "b"),
        ("LOWER(driver)", "IN", ("a", "b")))
    assert _filters("SELECT * FROM t WHERE year(d) = -1") == (("YEAR(d)", "=", "-1"),)
    assert _filters("SELECT * FROM t WHERE lower(a) = 'x' OR lower(b) = 'y'") == ()       # OR: Spark alone
    assert _filters("SELECT * FROM t JOIN u ON t.k = u.k WHERE lower(t.a) = 'x'") == ()    # a join: Spark alone
    assert _filters("SELECT * FROM t WHERE lower(u.a) = 'x'") == ()                        # another table's column
    assert _filters("SELECT * FROM t WHERE lower(upper(a)) = 'x' AND lower(a) = b") == ()
