"""The Hive Metastore lock provider's own logic, with no metastore: which lock it asks for and where
(Hudi's keys and their fallbacks), how it reads the metastore's answers, and what a writer is told
when the metastore cannot be reached (a real closed port)."""
from __future__ import annotations

import pytest
from pymetastore.hive_metastore.ttypes import (DataOperationType, LockLevel, LockResponse, LockState, LockType,
                                               ShowLocksResponseElement)

from hudi_engine.concurrency.hms_lock import (HiveMetastoreLockProvider, HmsLockTarget, granted, heartbeat_cadence,
                                              hive_seconds, holder_of, lock_request, resolve_target)
from hudi_engine.concurrency.locks import lock_provider
from hudi_engine.concurrency.provider import _owner_info
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError, HoodieLockError
from tests.support.services import free_port

HMS = "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider"


def target(**options) -> HmsLockTarget:
    return resolve_target(HoodieConfig(options), options.pop("_table", None))


def test_the_lock_keys_win_over_the_catalog_syncs():
    t = target(**{"hoodie.write.lock.hivemetastore.uris": "thrift://hms-a:9083,thrift://hms-b:9083",
                  "hoodie.write.lock.hivemetastore.database": "Lake", "hoodie.write.lock.hivemetastore.table": "Orders",
                  "hoodie.datasource.hive_sync.metastore.uris": "thrift://sync:9083",
                  "hoodie.datasource.hive_sync.database": "synced", "hoodie.datasource.hive_sync.table": "synced_t",
                  "hoodie.table.name": "orders_hudi"})
    assert t == HmsLockTarget(("thrift://hms-a:9083", "thrift://hms-b:9083"), "lake", "orders")


def test_without_lock_keys_the_catalog_syncs_then_the_tables_own_names_are_used():
    synced = target(**{"hoodie.datasource.hive_sync.metastore.uris": "thrift://sync:9083",
                       "hoodie.datasource.hive_sync.database": "analytics",
                       "hoodie.datasource.hive_sync.table": "trips_rt", "hoodie.table.name": "trips"})
    assert synced == HmsLockTarget(("thrift://sync:9083",), "analytics", "trips_rt")
    named = target(**{"hoodie.database.name": "sales", "hoodie.table.name": "Trips"})
    assert named == HmsLockTarget(("thrift://localhost:9083",), "sales", "trips")


def test_an_unnamed_table_or_a_uri_that_is_not_thrift_is_refused():
    with pytest.raises(HoodieConfigError, match="hoodie.write.lock.hivemetastore.table"):
        target()
    with pytest.raises(HoodieConfigError, match="is not thrift://host:port"):
        target(**{"hoodie.write.lock.hivemetastore.uris": "http://hms:9083", "hoodie.table.name": "t"})


def test_the_request_is_an_exclusive_table_lock_outside_transactions_naming_its_holder():
    info = {**_owner_info("commit of s3://bucket/" + "x" * 200), "host": "writer-pod-" + "h" * 200}
    request = lock_request(HmsLockTarget(("thrift://h:1",), "lake", "orders"), info)
    [component] = request.component
    assert (component.type, component.level, component.operationType) == (
        LockType.EXCLUSIVE, LockLevel.TABLE, DataOperationType.NO_TXN)
    assert (component.dbname, component.tablename, component.partitionname) == ("lake", "orders", None)
    assert request.txnid is None
    assert request.agentInfo.startswith(f"hudi pid {info['pid']} {info['lockThreadName']}: commit of s3://bucket/")
    # HIVE_LOCKS' user, host and agent columns are VARCHAR(128): a longer value would fail the lock
    assert len(request.agentInfo) == len(request.hostname) == 128 and len(request.user) <= 128


@pytest.mark.parametrize("state, expected", [(LockState.ACQUIRED, True), (LockState.WAITING, False)])
def test_acquired_and_waiting_answers(state, expected):
    assert granted(LockResponse(lockid=7, state=state)) is expected


@pytest.mark.parametrize("state", [LockState.ABORT, LockState.NOT_ACQUIRED])
def test_a_refusal_is_an_error_naming_the_state(state):
    with pytest.raises(HoodieLockError, match=f"lock 7: state {LockState._VALUES_TO_NAMES[state]}"):
        granted(LockResponse(lockid=7, state=state))


def test_the_holder_is_the_acquired_lock_of_that_table():
    def element(lockid, state, table, agent):
        return ShowLocksResponseElement(lockid=lockid, dbname="lake", tablename=table, state=state,
                                        type=LockType.EXCLUSIVE, user="spark", hostname=f"pod-{lockid}",
                                        agentInfo=agent, acquiredat=1_700_000_000_000 if state == 1 else None)
    locks = [element(1, LockState.WAITING, "orders", "waiting writer"),
             element(2, LockState.ACQUIRED, "customers", "other table"),
             element(3, LockState.ACQUIRED, "ORDERS", "the holder")]
    described = holder_of(locks, "lake", "orders")
    assert described.startswith("spark@pod-3 (the holder) since ") and described.endswith("metastore lock 3")
    assert holder_of(locks[:2], "lake", "orders") == "nobody (released just now)"


def test_the_engine_picks_this_provider_by_hudis_class_name():
    p = lock_provider("/tables/t", HoodieConfig({"hoodie.write.lock.provider": HMS, "hoodie.table.name": "t",
                                                 "hoodie.write.lock.heartbeat_interval_ms": "2500"}))
    assert isinstance(p, HiveMetastoreLockProvider)
    assert (p.kind, p.name, p.heartbeat_s) == ("Hive Metastore", "default.t on thrift://localhost:9083", 2.5)


def test_an_unreachable_metastore_is_an_error_naming_the_uris_and_what_to_check():
    uris = f"thrift://127.0.0.1:{free_port()},thrift://127.0.0.1:{free_port()}"
    p = lock_provider("/tables/t", HoodieConfig({"hoodie.write.lock.provider": HMS, "hoodie.table.name": "t",
                                                 "hoodie.write.lock.hivemetastore.uris": uris}))
    with pytest.raises(HoodieLockError) as error:
        p.try_lock(1)
    message = str(error.value)
    assert all(uri.split("//")[1] in message for uri in uris.split(","))
    assert "hoodie.write.lock.hivemetastore.uris" in message and "metastore runs" in message
    assert p.lock_id is None
    p.close()


@pytest.mark.parametrize("text, seconds", [("300s", 300), ("300", 300), ("5m", 300), ("1500ms", 1.5),
                                           ("2 min", 120), ("1d", 86400), ("0.5s", 0.5)])
def test_hive_time_settings_are_read_in_seconds(text, seconds):
    assert hive_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", None, "soon", "10x", "-5s"])
def test_what_is_not_a_hive_time_setting_is_none(text):
    assert hive_seconds(text) is None


def test_the_heartbeat_beats_three_times_within_the_metastores_expiry():
    assert heartbeat_cadence(60.0, 300.0) == 60.0             # Hudi's default against Hive's: as configured
    assert heartbeat_cadence(60.0, 4.0) == pytest.approx(4 / 3)
    assert heartbeat_cadence(1.0, 4.0) == 1.0
    assert heartbeat_cadence(60.0, None) == 60.0              # a metastore that does not say
