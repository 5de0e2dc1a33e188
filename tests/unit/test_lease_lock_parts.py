"""The Kubernetes Lease lock provider's pure parts: MicroTime layout, expiry arithmetic, holder identity
and what a new holder writes, the default Lease name, and the configuration it is built from (no API
server: the protocol against the API stand-in is in tests/integration/test_lease_lock.py)."""
from __future__ import annotations

import datetime as dt
import json
import os
import re

import pytest

from hudi_engine.concurrency.lease_lock import (OWNER_ANNOTATION, KubernetesLeaseLockProvider, default_lease_name,
                                                describe_lease, held_spec, holder_identity, lease_expired,
                                                micro_time, parse_time, released_spec)
from hudi_engine.concurrency.locks import lock_provider
from hudi_engine.config import LEASE_DURATION_SECONDS, LEASE_LOCK_PROVIDER, HoodieConfig
from hudi_engine.errors import HoodieConfigError
from tests.support.kube_api import MICRO_TIME

UTC = dt.timezone.utc
NOON = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def test_micro_time_has_six_fractional_digits_even_at_a_whole_second_and_is_utc():
    assert micro_time(NOON) == "2026-03-01T12:00:00.000000Z"
    berlin = dt.timezone(dt.timedelta(hours=1))
    assert micro_time(dt.datetime(2026, 3, 1, 13, 0, 0, 7, tzinfo=berlin)) == "2026-03-01T12:00:00.000007Z"
    assert MICRO_TIME.fullmatch(micro_time(dt.datetime.now(UTC)))      # what the API stand-in decodes
    assert parse_time(micro_time(NOON)) == NOON
    assert parse_time("2026-03-01T13:00:00.5+01:00") == NOON + dt.timedelta(microseconds=500000)
    assert parse_time(None) is None and parse_time("yesterday") is None


@pytest.mark.parametrize("unchanged_for, renewed_ago, expired", [
    (59.9, 3600, False),      # the version changed less than a duration ago: someone renewed it
    (60.0, 60.0, True),       # unchanged a whole duration by our clock, and renewTime + duration passed
    (120, 30, False),         # unchanged long enough, but renewTime is recent by our clock (holder's clock ahead)
    (60.0, 59.9, False),
])
def test_a_lease_expires_only_unchanged_a_whole_duration_and_past_its_renew_time_plus_duration(
        unchanged_for, renewed_ago, expired):
    spec = {"holderIdentity": "h_1_x", "leaseDurationSeconds": 60,
            "renewTime": micro_time(NOON - dt.timedelta(seconds=renewed_ago))}
    assert lease_expired(spec, unchanged_for, NOON, default_duration=15) is expired


def test_expiry_uses_the_lease_own_duration_else_ours_and_acquire_time_when_never_renewed():
    ten_ago = micro_time(NOON - dt.timedelta(seconds=10))
    assert lease_expired({"leaseDurationSeconds": 5, "renewTime": ten_ago}, 5, NOON, default_duration=60)
    assert not lease_expired({"renewTime": ten_ago}, 11, NOON, default_duration=60)       # ours: 60 s
    assert lease_expired({"acquireTime": ten_ago}, 9, NOON, default_duration=8)
    assert lease_expired({}, 8, NOON, default_duration=8), "no times at all: the observation decides"


def test_holder_identity_is_unique_per_provider_instance():
    info = {"host": "spark-driver-0", "pid": 12, "owner": "abc"}
    assert holder_identity(info) == "spark-driver-0_12_abc"
    one = KubernetesLeaseLockProvider("ns", "lease", api_client=object())
    two = KubernetesLeaseLockProvider("ns", "lease", api_client=object())
    assert one.identity != two.identity and one.identity.split("_")[1] == str(os.getpid())


def test_a_new_holder_counts_a_transition_and_a_renewal_keeps_acquire_time():
    before = {"holderIdentity": "old_1_a", "leaseDurationSeconds": 30, "leaseTransitions": 3,
              "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:01:00.000000Z"}
    taken = held_spec(before, "new_2_b", 60, NOON)
    assert taken == {"holderIdentity": "new_2_b", "leaseDurationSeconds": 60, "leaseTransitions": 4,
                     "acquireTime": micro_time(NOON), "renewTime": micro_time(NOON)}
    later = NOON + dt.timedelta(seconds=20)
    renewed = held_spec(taken, "new_2_b", 60, later)
    assert (renewed["leaseTransitions"], renewed["acquireTime"], renewed["renewTime"]) == \
        (4, micro_time(NOON), micro_time(later))
    released = released_spec(renewed, later)
    assert (released["holderIdentity"], released["leaseDurationSeconds"], released["leaseTransitions"]) == ("", 1, 4)
    assert held_spec(released, "third_3_c", 60, later)["leaseTransitions"] == 5


def test_the_holder_is_described_from_its_annotation():
    owner = {"owner": "u1", "host": "driver", "pid": 7, "lockThreadName": "main", "purpose": "committing 1",
             "lockCreateTime": "2026-03-01 11:59:58.000"}
    lease = {"metadata": {"annotations": {OWNER_ANNOTATION: json.dumps(owner)}},
             "spec": {"holderIdentity": holder_identity(owner), "leaseDurationSeconds": 60, "leaseTransitions": 2,
                      "renewTime": micro_time(NOON - dt.timedelta(seconds=2))}}
    described = describe_lease(lease, NOON)
    assert described.startswith("host driver pid 7 thread main (committing 1)")
    assert "renewed 2.0 s ago" in described and "2 transitions" in described
    assert describe_lease(None, NOON) == "nobody (the Lease does not exist)"
    assert describe_lease({"spec": {"holderIdentity": ""}}, NOON) == "nobody (released)"
    foreign = {"spec": {"holderIdentity": "someone-else"}}
    assert describe_lease(foreign, NOON).startswith("someone-else: never renewed")


def test_the_default_lease_name_is_dns_safe_short_and_the_same_for_every_spelling_of_the_base_path(tmp_path):
    name = default_lease_name("Sales_Orders.v2", "s3a://lake/tables/orders")
    assert re.fullmatch(r"hudi-lock-sales-orders-v2-[0-9a-f]{8}", name)
    assert name == default_lease_name("Sales_Orders.v2", "s3://lake/tables/orders/")
    assert name != default_lease_name("Sales_Orders.v2", "s3://lake/tables/orders2")
    assert default_lease_name("t", str(tmp_path)) == default_lease_name("t", f"file://{tmp_path}")
    long = default_lease_name("x" * 200, "s3://lake/t")
    assert len(long) == 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", long)
    assert re.fullmatch(r"hudi-lock-[0-9a-f]{8}", default_lease_name(None, "s3://lake/t"))


def test_the_engine_builds_the_provider_from_hudi_style_options():
    cfg = HoodieConfig({"hoodie.write.lock.provider": LEASE_LOCK_PROVIDER, "hoodie.table.name": "orders",
                        "hoodie.write.lock.kubernetes.lease.namespace": "sales",
                        "hoodie.write.lock.kubernetes.lease.duration.seconds": "45"})
    client = object()
    provider = KubernetesLeaseLockProvider.for_table("s3://lake/orders", cfg, api_client=client)
    assert (provider.namespace, provider.lease_name, provider.duration_s) == \
        ("sales", default_lease_name("orders", "s3://lake/orders"), 45)
    assert provider.name == f"sales/{provider.lease_name}" and provider.poll_s == 1.0
    named = KubernetesLeaseLockProvider.for_table(
        "s3://lake/orders", HoodieConfig({**cfg.raw(), "hoodie.write.lock.kubernetes.lease.name": "orders-lock"}),
        api_client=client)
    assert named.lease_name == "orders-lock"
    assert HoodieConfig({}).get(LEASE_DURATION_SECONDS) == 60


@pytest.mark.parametrize("option, value, complaint", [
    ("hoodie.write.lock.kubernetes.lease.duration.seconds", "0", "at least 1 second"),
    ("hoodie.write.lock.kubernetes.lease.duration.seconds", "soon", "not a valid int"),
    ("hoodie.write.lock.kubernetes.lease.name", "Orders_Lock", "not a Kubernetes object name"),
])
def test_bad_lease_options_are_refused_naming_the_option(option, value, complaint):
    cfg = HoodieConfig({"hoodie.write.lock.provider": LEASE_LOCK_PROVIDER, "hoodie.table.name": "orders",
                        "hoodie.write.lock.kubernetes.lease.namespace": "sales", option: value})
    with pytest.raises(HoodieConfigError, match=complaint) as refused:
        KubernetesLeaseLockProvider.for_table("s3://lake/orders", cfg, api_client=object())
    assert option in str(refused.value)


def test_off_a_cluster_without_a_kubeconfig_the_error_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    cfg = HoodieConfig({"hoodie.write.lock.provider": LEASE_LOCK_PROVIDER, "hoodie.table.name": "orders",
                        "hoodie.write.lock.kubernetes.lease.namespace": "sales"})
    with pytest.raises(HoodieConfigError, match="needs the Kubernetes API.*KUBECONFIG"):
        lock_provider("s3://lake/orders", cfg)
