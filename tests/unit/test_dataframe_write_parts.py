"""The pure parts of ``df.write.format("hudi")``: Hudi's save modes, option keys spelled back after
Spark lower-cased them, and the hand-off of a write from Spark's commit worker to the driver's
Python process (a real Unix socket, no Spark)."""
import pytest

from hudi_engine.config import canonical_keys
from hudi_engine.errors import HoodieConfigError, HoodieError, HoodieValidationError
from hudi_engine.sql.handoff import WriteServer, call, check_reachable
from hudi_engine.sql.save_mode import check_mode, deletes_table


def test_append_writes_into_the_table_of_the_same_name():
    assert not deletes_table("upsert", False, "/t", "fruit", "FRUIT")
    assert not deletes_table("upsert", False, "/t", None, "fruit")
    assert not deletes_table("insert", False, "/t", "fruit", None)
    with pytest.raises(HoodieConfigError, match="hoodie table with name fruit already exists at /t, can not append "
                                                "data to the table with another name veg"):
        deletes_table("upsert", False, "/t", "veg", "fruit")


def test_overwrite_deletes_an_existing_table_unless_it_replaces_its_file_groups():
    assert deletes_table("upsert", True, "/t", "veg", "fruit")
    assert deletes_table("bulk_insert", True, "/t", "fruit", "fruit")
    assert deletes_table("insert_overwrite", True, "/t", "fruit", "fruit")
    assert not deletes_table("insert_overwrite_table", True, "/t", "fruit", "fruit")
    assert not deletes_table("upsert", True, "/t", "fruit", None)


@pytest.mark.parametrize("operation", ["delete", "delete_partition"])
def test_deletes_are_append_only(operation):
    check_mode(operation, False)
    with pytest.raises(HoodieConfigError, match=f'Append is the only save mode applicable for the {operation} '
                                                r'operation: write \.mode\("append"\)'):
        check_mode(operation, True)
    with pytest.raises(HoodieConfigError):
        deletes_table(operation, True, "/t", "fruit", None)


def test_option_keys_are_spelled_as_defined():
    import hudi_jobs.keys.kafka  # noqa: F401  (defines camel-cased streamer keys)

    lowered = {"hoodie.table.name": "t", "hoodie.streamer.kafka.source.maxevents": "5", "my.own.key": "X"}
    assert canonical_keys(lowered) == {"hoodie.table.name": "t", "hoodie.streamer.kafka.source.maxEvents": "5",
                                       "my.own.key": "X"}


def test_a_request_runs_in_the_serving_process_and_its_failure_comes_back():
    def handle(request):
        if request["kind"] == "config":
            raise HoodieConfigError("hoodie.datasource.write.recordkey.field is required")
        if request["kind"] == "validation":
            raise HoodieValidationError("null record key")
        if request["kind"] == "other":
            raise KeyError("surprise")
        return request["n"] * 2

    address = WriteServer(handle).address
    check_reachable(address)
    assert call(address, {"kind": "ok", "n": 21}) == 42
    with pytest.raises(HoodieConfigError, match="recordkey.field is required"):
        call(address, {"kind": "config"})
    with pytest.raises(HoodieValidationError, match="null record key"):
        call(address, {"kind": "validation"})
    with pytest.raises(HoodieError, match="KeyError: 'surprise'"):
        call(address, {"kind": "other"})


def test_no_serving_process_is_a_clear_error(tmp_path):
    for attempt in (check_reachable, lambda address: call(address, {})):
        with pytest.raises(HoodieError, match=r"call register\(spark\) in the session that writes"):
            attempt(str(tmp_path / "nobody"))


def test_staging_abandoned_for_a_day_is_swept_and_fresh_staging_kept(tmp_path):
    import os

    from hudi_engine.sql.staging import ABANDONED_AFTER_S, TEMP_DIR, new_staging_dir, sweep_abandoned
    from hudi_engine.storage import Storage

    storage = Storage(str(tmp_path))
    old, fresh = new_staging_dir(), new_staging_dir()
    for folder in (old, fresh):
        storage.write_bytes(f"{folder}/part.parquet", b"rows")
    marker = f"{TEMP_DIR}/20260101000000000/p/f.marker.CREATE"      # Hudi's markers are not ours
    storage.write_bytes(marker, b"")
    now = os.path.getmtime(storage.full(f"{fresh}/part.parquet"))
    os.utime(storage.full(f"{old}/part.parquet"), (now - ABANDONED_AFTER_S - 60,) * 2)
    os.utime(storage.full(marker), (now - 10 * ABANDONED_AFTER_S,) * 2)
    assert sweep_abandoned(storage, now) == [old]
    assert storage.exists(f"{fresh}/part.parquet") and storage.exists(marker)
    assert not storage.exists(f"{old}/part.parquet")
