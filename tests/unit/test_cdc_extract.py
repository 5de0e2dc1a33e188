"""Planning CDC reads from synthetic timelines: every inference case, as HoodieCDCExtractor decides."""
import pytest

from hudi_engine.cdc import CDCSplit, Commit, FileGroupIndex, InferenceCase, LoggingMode, extract_splits
from hudi_engine.errors import HoodieError
from hudi_engine.file_group.fs_view import BaseFile, FileGroup, FileSlice, LogFile

P = "p"
ALL_MODES = list(LoggingMode)


def base(file_id, instant):
    return BaseFile(f"{P}/{file_id}_0-0-0_{instant}.parquet", file_id, instant, 100)


def log(file_id, base_instant, version):
    path = f"{P}/.{file_id}_{base_instant}.log.{version}_0-0-0"
    return LogFile(path, file_id, base_instant, version, 0, "0-0-0")


def name(path):
    return path.rsplit("/", 1)[-1]


def stat(file_id, path, prev="null", writes=0, inserts=0, updates=0, deletes=0, cdc=None, **extra):
    return {"fileId": file_id, "path": path, "prevCommit": prev, "numWrites": writes, "numInserts": inserts,
            "numUpdateWrites": updates, "numDeletes": deletes, "cdcStats": cdc, "partitionPath": P, **extra}


def commit(instant, operation, stats=(), action="commit", replaced=None):
    meta = {"partitionToWriteStats": {P: list(stats)} if stats else {}, "operationType": operation}
    if replaced is not None:
        meta["partitionToReplaceFileIds"] = {P: replaced}
    return Commit(instant, action, meta)


def slices(*groups):
    """An index over groups given as (file id, [slice, ...])."""
    return FileGroupIndex.of(FileGroup(P, fid, list(ss)) for fid, ss in groups)


def cow_slice(file_id, instant):
    return FileSlice(P, file_id, instant, base(file_id, instant))


INSERT = commit("001", "INSERT", [stat("fg1", base("fg1", "001").path, writes=3, inserts=3)])
CDC_FILE = f"{P}/.fg1_002.log.1_0-0-0-cdc"
UPSERT = commit("002", "UPSERT", [stat("fg1", base("fg1", "002").path, prev="001", writes=3, updates=1,
                                       cdc={CDC_FILE: 120})])
COW = slices(("fg1", [cow_slice("fg1", "001"), cow_slice("fg1", "002")]))


def only(splits):
    [(key, [split])] = splits.items()
    return split


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_new_base_file_is_all_inserts(mode):
    split = only(extract_splits([INSERT], mode, COW))
    path = base("fg1", "001").path
    assert split == CDCSplit("001", P, "fg1", InferenceCase.BASE_FILE_INSERT, (path,),
                             after=FileSlice(P, "fg1", "001", BaseFile(path, "fg1", "001", 0)))


def test_cdc_files_are_read_as_is_and_the_mode_says_which_slices_fill_in():
    full = only(extract_splits([UPSERT], LoggingMode.DATA_BEFORE_AFTER, COW))
    assert (full.case, full.cdc_files, full.before, full.after) == (
        InferenceCase.AS_IS, (CDC_FILE,), None, None)
    before_only = only(extract_splits([UPSERT], LoggingMode.DATA_BEFORE, COW))
    assert before_only.before is None and before_only.after.base_file.path == base("fg1", "002").path
    keys_only = only(extract_splits([UPSERT], LoggingMode.OP_KEY_ONLY, COW))
    assert keys_only.before == cow_slice("fg1", "001")
    assert keys_only.after.base_file.path == base("fg1", "002").path


def test_cdc_files_come_in_log_version_order():
    files = {f"{P}/.fg1_002.log.{v}_0-0-0-cdc": 1 for v in (10, 2, 1)}
    upsert = commit("002", "UPSERT", [stat("fg1", base("fg1", "002").path, prev="001", writes=3, updates=1,
                                           cdc=files)])
    assert [f.split(".log.")[1][:2] for f in only(extract_splits([upsert], LoggingMode.DATA_BEFORE_AFTER,
                                                                 COW)).cdc_files] == ["1_", "2_", "10"]


def test_an_update_without_cdc_files_cannot_be_read():
    upsert = commit("002", "UPSERT", [stat("fg1", base("fg1", "002").path, prev="001", writes=3, updates=1)])
    with pytest.raises(HoodieError, match="wrote no CDC log file"):
        extract_splits([upsert], LoggingMode.DATA_BEFORE_AFTER, COW)


def test_a_missing_previous_base_file_is_an_error_only_when_needed():
    index = slices(("fg1", [cow_slice("fg1", "002")]))   # 001's base file was cleaned
    assert only(extract_splits([UPSERT], LoggingMode.DATA_BEFORE, index)).case == InferenceCase.AS_IS
    with pytest.raises(HoodieError, match="cleaned"):
        extract_splits([UPSERT], LoggingMode.OP_KEY_ONLY, index)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_delete_that_empties_a_group_without_cdc_files_deletes_its_previous_base_file(mode):
    delete = commit("003", "DELETE", [stat("fg1", base("fg1", "003").path, prev="002", deletes=3)])
    split = only(extract_splits([delete], mode, COW))
    assert (split.case, split.before, split.after) == (
        InferenceCase.BASE_FILE_DELETE, cow_slice("fg1", "002"), None)


def test_delete_partition_replaces_each_group_with_its_latest_slice():
    drop = commit("003", "DELETE_PARTITION", action="replacecommit", replaced=["fg1", "fg2"])
    index = slices(("fg1", [cow_slice("fg1", "001"), cow_slice("fg1", "002")]),
                   ("fg2", [cow_slice("fg2", "001")]))
    splits = extract_splits([drop], LoggingMode.OP_KEY_ONLY, index)
    assert splits == {
        (P, "fg1"): [CDCSplit("003", P, "fg1", InferenceCase.REPLACE_COMMIT, before=cow_slice("fg1", "002"))],
        (P, "fg2"): [CDCSplit("003", P, "fg2", InferenceCase.REPLACE_COMMIT, before=cow_slice("fg2", "001"))],
    }


def test_insert_overwrite_deletes_the_old_groups_and_inserts_the_new_ones():
    overwrite = commit("003", "INSERT_OVERWRITE", [stat("fg9", base("fg9", "003").path, writes=2, inserts=2)],
                       action="replacecommit", replaced=["fg1"])
    splits = extract_splits([overwrite], LoggingMode.DATA_BEFORE_AFTER, COW)
    assert [(k[1], [s.case for s in v]) for k, v in splits.items()] == [
        ("fg1", [InferenceCase.REPLACE_COMMIT]), ("fg9", [InferenceCase.BASE_FILE_INSERT])]


def test_a_group_replaced_after_a_slice_it_never_had_is_skipped():
    drop = commit("003", "DELETE_PARTITION", action="replacecommit", replaced=["gone"])
    assert extract_splits([drop], LoggingMode.OP_KEY_ONLY, COW) == {}


def test_clustering_and_compaction_change_nothing_unless_compaction_changes_are_asked_for():
    cluster = commit("003", "CLUSTER", [stat("fg5", base("fg5", "003").path, writes=3, inserts=3)],
                     action="replacecommit", replaced=["fg1"])
    compact = commit("004", "COMPACT", [stat("fg1", base("fg1", "004").path, prev="002", writes=3, updates=1,
                                             cdc={f"{P}/.fg1_004.log.1_0-0-0-cdc": 9})])
    assert extract_splits([cluster, compact], LoggingMode.DATA_BEFORE_AFTER, COW) == {}
    split = only(extract_splits([cluster, compact], LoggingMode.DATA_BEFORE_AFTER, COW, from_compaction=True))
    assert (split.instant, split.case) == ("004", InferenceCase.AS_IS)


def test_only_write_actions_count():
    odd = Commit("003", "rollback", {"operationType": "UPSERT",
                                     "partitionToWriteStats": {P: [stat("x", "p/y")]}})
    assert extract_splits([odd], LoggingMode.OP_KEY_ONLY, COW) == {}


MOR_BASE = base("fg1", "001")
LOG1, LOG2 = log("fg1", "001", 1), log("fg1", "001", 2)


def delta(instant, log_file, listed, writes=1, updates=1, deletes=0):
    return commit(instant, "UPSERT", [stat("fg1", log_file.path, prev="001", writes=writes, updates=updates,
                                           deletes=deletes, baseFile=name(MOR_BASE.path),
                                           logFiles=[name(f.path) for f in listed])], action="deltacommit")


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_log_file_is_diffed_against_the_slice_before_it(mode):
    mor_insert = commit("001", "UPSERT", [stat("fg1", MOR_BASE.path, writes=3, inserts=3)],
                        action="deltacommit")
    splits = extract_splits([delta("003", LOG2, [LOG1, LOG2], deletes=1, updates=0, writes=0),
                             mor_insert, delta("002", LOG1, [LOG1])], mode, FileGroupIndex())
    [(key, [first, second, third])] = splits.items()
    assert [s.instant for s in (first, second, third)] == ["001", "002", "003"]
    assert first.case == InferenceCase.BASE_FILE_INSERT
    assert (second.case, second.cdc_files) == (InferenceCase.LOG_FILE, (LOG1.path,))
    assert _files(second.before) == (name(MOR_BASE.path), [])
    assert _files(second.after) == (name(MOR_BASE.path), [name(LOG1.path)])
    assert _files(third.before) == (name(MOR_BASE.path), [name(LOG1.path)])
    assert _files(third.after) == (name(MOR_BASE.path), [name(LOG1.path), name(LOG2.path)])


def test_log_files_of_a_pending_compaction_still_precede_a_later_log_file():
    new_slice_log = log("fg1", "005", 1)   # written after compaction 005 was scheduled
    write = commit("006", "UPSERT", [stat("fg1", new_slice_log.path, prev="005", writes=1, updates=1,
                                          baseFile="", logFiles=[name(new_slice_log.path)])],
                   action="deltacommit")
    plan = {"operations": [{"partitionPath": P, "fileId": "fg1", "dataFilePath": name(MOR_BASE.path),
                            "deltaFilePaths": [name(LOG1.path), name(LOG2.path)]},
                           {"partitionPath": P, "fileId": "other", "deltaFilePaths": ["x"]}]}
    split = only(extract_splits([write], LoggingMode.DATA_BEFORE_AFTER, FileGroupIndex(),
                                pending_compactions=[("005", plan), ("007", {"operations": []})]))
    assert _files(split.before) == (name(MOR_BASE.path), [name(LOG1.path), name(LOG2.path)])
    assert _files(split.after) == (name(MOR_BASE.path), [name(f.path) for f in (LOG1, LOG2, new_slice_log)])


def test_a_version_9_log_that_names_no_slice_is_diffed_against_the_slice_holding_it():
    """Hudi 1.x's append handle names the slice only when CDC is on; with it off, the log file is
    named by its own delta commit and the file system view's slice (by completion time) says."""
    own1, own2 = log("fg1", "002", 1), log("fg1", "003", 1)
    index = slices(("fg1", [FileSlice(P, "fg1", "001", MOR_BASE, [own1, own2])]))
    second = commit("003", "UPSERT", [stat("fg1", own2.path, prev="003", writes=1, updates=1, baseFile="",
                                           logFiles=[name(own2.path)])], action="deltacommit")
    split = only(extract_splits([second], LoggingMode.DATA_BEFORE_AFTER, index, infer_rewrites=True))
    assert _files(split.before) == (name(MOR_BASE.path), [name(own1.path)])
    assert _files(split.after) == (name(MOR_BASE.path), [name(own1.path), name(own2.path)])


def _files(file_slice):
    return (name(file_slice.base_file.path) if file_slice.base_file else None,
            [name(f.path) for f in file_slice.log_files])
