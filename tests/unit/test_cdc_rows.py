"""CDC query rows end to end on in-memory tables: a writer logging as HoodieCDCLogger does, the
extractor planning, and every inference case turned into op/ts_ms/before/after, the same on
copy-on-write and merge-on-read and whatever the logging mode."""
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_engine.cdc import (
    QUERY_SCHEMA,
    Commit,
    FileGroupIndex,
    InferenceCase,
    LoggingMode,
    cdc_data_block,
    cdc_log_file_name,
    cdc_records,
    cdc_schema_json,
    change_rows,
    extract_splits,
    written,
)
from hudi_engine.file_group.fs_view import BaseFile, FileGroup, FileSlice
from hudi_engine.file_group.log_file import data_block_records, encode_block, iter_log_blocks
from hudi_engine.merge.record_merger import MergeSpec
from hudi_engine.read.log_merge import DATA, DELETES, LogPart, merge_slice
from hudi_engine.schema.avro import add_meta_fields, arrow_to_avro

P, FG = "p", "fg1-0"
DATA_SCHEMA = pa.schema([pa.field("name", pa.string()), pa.field("fruit", pa.string())])
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
FILE_SCHEMA = pa.schema([pa.field(n, pa.string()) for n in META] + list(DATA_SCHEMA))
WRITER_SCHEMA = add_meta_fields(arrow_to_avro(DATA_SCHEMA, "fruits"))
SPEC = MergeSpec((), True, False)


def fruits(commit, pairs, file_name):
    return pa.Table.from_pylist([
        {"_hoodie_commit_time": commit, "_hoodie_commit_seqno": f"{commit}_0_{i}", "_hoodie_record_key": k,
         "_hoodie_partition_path": P, "_hoodie_file_name": file_name, "name": k, "fruit": f}
        for i, (k, f) in enumerate(pairs)], schema=FILE_SCHEMA)


def base_path(instant):
    return f"{P}/{FG}_0-0-0_{instant}.parquet"


def without(rows, keys):
    gone = pc.is_in(rows["_hoodie_record_key"], value_set=pa.array(keys, pa.string()))
    return rows.filter(pc.invert(gone))


def stat(path, **counts):
    numbers = {k: counts.pop(k, 0) for k in ("numWrites", "numInserts", "numUpdateWrites", "numDeletes")}
    return {"fileId": FG, "path": path, "prevCommit": counts.pop("prev", "null"),
            "cdcStats": counts.pop("cdc", None), **numbers, **counts}


class CopyOnWrite:
    """Insert jack/apple, sarah/orange, john/pineapple; upsert jack→banana; delete john. Merges
    log their changes in CDC files; the first commit creates the group, so it logs none."""

    def __init__(self, mode):
        self.files, self.commits, slices = {}, [], []
        first = fruits("001", [("jack", "apple"), ("sarah", "orange"), ("john", "pineapple")], "f1")
        self._base("001", first, slices, {"numWrites": 3, "numInserts": 3})
        jack = fruits("002", [("jack", "banana")], "f2")
        self._merge(mode, "002", "001", first, jack, [], slices, {"numWrites": 3, "numUpdateWrites": 1})
        second = self.files[base_path("002")]
        self._merge(mode, "003", "002", second, jack.slice(0, 0), ["john"], slices,
                    {"numWrites": 2, "numDeletes": 1})
        self.index = FileGroupIndex.of([FileGroup(P, FG, slices)])

    def _base(self, instant, rows, slices, counts, **extra):
        self.files[base_path(instant)] = rows
        slices.append(FileSlice(P, FG, instant, BaseFile(base_path(instant), FG, instant, 1)))
        stats = {P: [stat(base_path(instant), **counts, **extra)]}
        meta = {"operationType": "UPSERT", "partitionToWriteStats": stats}
        self.commits.append(Commit(instant, "commit", meta))

    def _merge(self, mode, instant, prev, stored, new, deleted, slices, counts):
        changes = written(stored, new, pa.array(deleted, pa.string()))
        schema_json = cdc_schema_json(mode, WRITER_SCHEMA)
        block = cdc_data_block(cdc_records(changes, mode, instant), schema_json, instant)
        cdc_path = f"{P}/{cdc_log_file_name(FG, instant, 1, '0-0-0')}"
        self.files[cdc_path] = encode_block(block)
        rows = pa.concat_tables([without(stored, new["_hoodie_record_key"].to_pylist() + deleted), new])
        self._base(instant, rows, slices, counts, prev=prev, cdc={cdc_path: len(self.files[cdc_path])})


class MergeOnRead:
    """The same three commits as delta commits: a base file, then two log files. Its rows carry the
    same meta values as CopyOnWrite's (Hudi would name a log record's file by its file id, a base
    file's by its name), so the two tables' changes compare equal."""

    def __init__(self, mode):
        first = fruits("001", [("jack", "apple"), ("sarah", "orange"), ("john", "pineapple")], "f1")
        logs = [f"{P}/.{FG}_001.log.{v}_0-0-0" for v in (1, 2)]
        self.files = {base_path("001"): first,
                      logs[0]: LogPart(DATA, fruits("002", [("jack", "banana")], "f2")),
                      logs[1]: LogPart(DELETES, pa.table({"_hoodie_record_key": ["john"]}))}
        delta = {"baseFile": base_path("001").split("/")[1], "prev": "001"}
        self.commits = [
            Commit("001", "deltacommit", {"operationType": "UPSERT", "partitionToWriteStats": {
                P: [stat(base_path("001"), numWrites=3, numInserts=3)]}}),
            Commit("002", "deltacommit", {"operationType": "UPSERT", "partitionToWriteStats": {
                P: [stat(logs[0], numWrites=1, numUpdateWrites=1, logFiles=[logs[0][2:]], **delta)]}}),
            Commit("003", "deltacommit", {"operationType": "DELETE", "partitionToWriteStats": {
                P: [stat(logs[1], numDeletes=1, logFiles=[logs[0][2:], logs[1][2:]], **delta)]}}),
        ]
        self.index = FileGroupIndex()


def query(table, mode):
    """The reader: plan, read each split's files, turn them into rows."""
    out = []
    for splits in extract_splits(table.commits, mode, table.index).values():
        for split in splits:
            records = None
            if split.case is InferenceCase.AS_IS:
                records = pa.concat_tables([data_block_records(b) for f in split.cdc_files
                                            for b in iter_log_blocks(table.files[f])])
            out.append(change_rows(split.case, split.instant, mode, records=records,
                                   before=_rows(table, split.before), after=_rows(table, split.after)))
    return pa.concat_tables(out)


def _rows(table, file_slice):
    if file_slice is None:
        return None
    base = table.files[file_slice.base_file.path] if file_slice.base_file else None
    return merge_slice(base, [table.files[f.path] for f in file_slice.log_files], SPEC)


def image(commit, i, name, fruit, file_name):
    """The JSON of the ``i``-th row ``fruits(commit, ..., file_name)`` wrote: meta columns first."""
    return (f'{{"_hoodie_commit_time":"{commit}","_hoodie_commit_seqno":"{commit}_0_{i}",'
            f'"_hoodie_record_key":"{name}","_hoodie_partition_path":"{P}","_hoodie_file_name":"{file_name}",'
            f'"name":"{name}","fruit":"{fruit}"}}')


JACK, SARAH, JOHN = (image("001", i, k, f, "f1") for i, (k, f) in
                     enumerate([("jack", "apple"), ("sarah", "orange"), ("john", "pineapple")]))
EXPECTED = [
    {"op": "i", "ts_ms": "001", "before": None, "after": JACK},
    {"op": "i", "ts_ms": "001", "before": None, "after": SARAH},
    {"op": "i", "ts_ms": "001", "before": None, "after": JOHN},
    {"op": "u", "ts_ms": "002", "before": JACK, "after": image("002", 0, "jack", "banana", "f2")},
    {"op": "d", "ts_ms": "003", "before": JOHN, "after": None},
]


@pytest.mark.parametrize("mode", list(LoggingMode))
@pytest.mark.parametrize("table_type", [CopyOnWrite, MergeOnRead])
def test_three_commits_give_the_same_changes_on_every_table_type_and_mode(table_type, mode):
    rows = query(table_type(mode), mode)
    assert rows.schema == QUERY_SCHEMA
    assert rows.to_pylist() == EXPECTED


def test_copy_on_write_reads_inserts_from_the_base_file_and_the_rest_as_logged():
    table = CopyOnWrite(LoggingMode.OP_KEY_ONLY)
    cases = [s.case for s in extract_splits(table.commits, LoggingMode.OP_KEY_ONLY, table.index)[(P, FG)]]
    assert cases == [InferenceCase.BASE_FILE_INSERT, InferenceCase.AS_IS, InferenceCase.AS_IS]


BEFORE = fruits("001", [("jack", "apple"), ("sarah", "orange"), ("john", "pineapple")], "f1")


def test_a_log_file_diff_skips_unchanged_rows_and_deletes_of_keys_never_there():
    """John's row comes back identical in every column, meta columns included: no change."""
    parts = [LogPart(DATA, fruits("002", [("zoe", "kiwi"), ("jack", "banana")], FG)),
             LogPart(DATA, BEFORE.slice(2, 1)),
             LogPart(DELETES, pa.table({"_hoodie_record_key": ["ghost", "zoe"]}))]
    after = merge_slice(BEFORE, parts, SPEC)
    rows = change_rows(InferenceCase.LOG_FILE, "002", LoggingMode.OP_KEY_ONLY, before=BEFORE, after=after)
    assert rows.to_pylist() == [
        {"op": "u", "ts_ms": "002", "before": JACK, "after": image("002", 1, "jack", "banana", FG)}]
    limited = change_rows(InferenceCase.LOG_FILE, "002", LoggingMode.OP_KEY_ONLY, before=BEFORE, after=after,
                          keys=pa.array(["zoe", "jack", "ghost", "john"]))
    assert limited.equals(rows)


def test_a_rewritten_row_counts_as_updated_even_with_the_same_data():
    """Only its meta columns differ, as when a copy-on-write merge logs an upsert of the same data."""
    again = fruits("002", [("sarah", "orange")], FG)
    after = merge_slice(BEFORE, [LogPart(DATA, again)], SPEC)
    rows = change_rows(InferenceCase.LOG_FILE, "002", LoggingMode.OP_KEY_ONLY, before=BEFORE, after=after)
    assert rows.to_pylist() == [
        {"op": "u", "ts_ms": "002", "before": SARAH, "after": image("002", 0, "sarah", "orange", FG)}]


def test_a_log_file_on_a_new_group_is_all_inserts():
    rows = change_rows(InferenceCase.LOG_FILE, "002", LoggingMode.DATA_BEFORE, before=None, after=BEFORE)
    assert [r["op"] for r in rows.to_pylist()] == ["i", "i", "i"]


@pytest.mark.parametrize("case", [InferenceCase.BASE_FILE_DELETE, InferenceCase.REPLACE_COMMIT])
def test_emptied_and_replaced_groups_delete_every_row(case):
    rows = change_rows(case, "009", LoggingMode.DATA_BEFORE_AFTER, before=BEFORE)
    assert rows.to_pylist() == [
        {"op": "d", "ts_ms": "009", "before": old, "after": None} for old in (JACK, SARAH, JOHN)]


def test_images_are_the_same_json_from_cdc_files_and_from_data_files():
    """A wider schema: the AS_IS image (decoded from Avro) renders like the base file row, meta
    columns first; a Hudi 1.x file's ``_hoodie_operation`` is in neither."""
    import datetime as dt
    from decimal import Decimal
    schema = pa.schema([pa.field("k", pa.string()), pa.field("n", pa.int32()), pa.field("x", pa.float64()),
                        pa.field("f", pa.float32()), pa.field("ok", pa.bool_()),
                        pa.field("amount", pa.decimal128(12, 3)), pa.field("day", pa.date32()),
                        pa.field("at", pa.timestamp("us", "UTC")), pa.field("blob", pa.binary()),
                        pa.field("tags", pa.list_(pa.string())),
                        pa.field("attrs", pa.map_(pa.string(), pa.int64())),
                        pa.field("point", pa.struct([("x", pa.float64()), ("y", pa.float64())]))])
    row = {"k": 'a"b\\\n\u0001é', "n": -7, "x": 1e10, "f": 0.1, "ok": True, "amount": Decimal("-12.500"),
           "day": dt.date(1970, 1, 11), "at": dt.datetime(1970, 1, 1, 0, 0, 2, 5, tzinfo=dt.timezone.utc),
           "blob": b"\x00\xff", "tags": ["a", None], "attrs": [("z", 1), ("a", None)],
           "point": {"x": float("nan"), "y": 0.001}}
    meta = dict(zip(META, ["001", "001_0_0", "r1", P, "f1"]), _hoodie_operation="I")
    rows = pa.Table.from_pylist([{**meta, **row}, {"_hoodie_record_key": "r2"}], schema=pa.schema(
        [pa.field(n, pa.string()) for n in META + ["_hoodie_operation"]] + list(schema)))
    expected = ('{"_hoodie_commit_time":"001","_hoodie_commit_seqno":"001_0_0","_hoodie_record_key":"r1",'
                '"_hoodie_partition_path":"p","_hoodie_file_name":"f1",'
                '"k":"a\\"b\\\\\\n\\u0001é","n":-7,"x":1.0E10,"f":0.1,"ok":true,"amount":-12.500,"day":10,'
                '"at":2000005,"blob":"AP8=","tags":["a",null],"attrs":{"z":1,"a":null},'
                '"point":{"x":"NaN","y":0.001}}')
    nulls = ('{"_hoodie_commit_time":null,"_hoodie_commit_seqno":null,"_hoodie_record_key":"r2",'
             '"_hoodie_partition_path":null,"_hoodie_file_name":null,'
             + ",".join(f'"{f.name}":null' for f in schema) + "}")
    inferred = change_rows(InferenceCase.BASE_FILE_INSERT, "001", LoggingMode.OP_KEY_ONLY, after=rows)
    assert inferred["after"].to_pylist() == [expected, nulls]
    changes = written(None, rows, pa.array([], pa.string()))
    avro = add_meta_fields(arrow_to_avro(schema, "wide"), with_operation=True)
    mode = LoggingMode.DATA_BEFORE_AFTER
    block = cdc_data_block(cdc_records(changes, mode, "001"), cdc_schema_json(mode, avro), "001")
    logged = change_rows(InferenceCase.AS_IS, "001", mode, records=data_block_records(block))
    assert logged.equals(inferred)
