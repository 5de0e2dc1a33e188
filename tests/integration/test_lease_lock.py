"""The Kubernetes Lease lock provider against kmock, an HTTP stand-in of the Kubernetes API (no API
server can run here), through the official Kubernetes client. The stand-in (tests/support/kube_api.py)
behaves as the API server does on Leases: resourceVersion conflicts (409), AlreadyExists on a second
create, MicroTime decoding and the Lease's validation, 403 where RBAC grants nothing. Holders that die or
freeze are real processes killed with SIGKILL or frozen with SIGSTOP."""
from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hudi_engine import write
from hudi_engine.concurrency.lease_lock import (KubernetesLeaseLockProvider, default_lease_name, micro_time,
                                                 parse_time)
from hudi_engine.config import LEASE_LOCK_PROVIDER
from hudi_engine.errors import HoodieLockError
from tests.integration.test_multi_writer import assert_no_leftovers, opts, race, table_rows
from tests.support.data import FRUIT_SCHEMA
from tests.support.kube_api import LEASES, ApiServer, api_client, declare, serving_in_thread, write_kubeconfig
from tests.support.processes import kill_tree

ROOT = Path(__file__).resolve().parents[2]
NS, NAME = "data", "hudi-lock-fruit-0123abcd"
DURATION = 2                 # seconds: short, so expiry is seen within a test


@pytest.fixture
def api():
    """The stand-in serving Leases: (server, url)."""
    server = ApiServer()
    declare(server, LEASES, "Lease")
    with serving_in_thread(server) as url:
        yield server, url


def provider(url: str, user: str = "writer", duration: int = DURATION) -> KubernetesLeaseLockProvider:
    return KubernetesLeaseLockProvider(NS, NAME, duration, 50, f"a test as {user}", api_client(url, user))


def lease(server: ApiServer) -> dict:
    return json.loads(json.dumps(server.objects[LEASES, NS, NAME].raw))


def lease_options(duration: int = DURATION, name: str | None = NAME) -> dict[str, str]:
    """The Lease lock's options; ``name`` None: derived from the table."""
    return {"hoodie.write.lock.provider": LEASE_LOCK_PROVIDER,
            **({"hoodie.write.lock.kubernetes.lease.name": name} if name else {}),
            "hoodie.write.lock.kubernetes.lease.duration.seconds": str(duration),
            "hoodie.write.lock.wait_time_ms_between_retry": "50"}


class Holder:
    """tests/support/lease_holder.py as a process reaching the stand-in through its kubeconfig."""

    def __init__(self, url: str, tmp_path: Path, name: str = "holder"):
        kubeconfig = write_kubeconfig(tmp_path / f"{name}.kubeconfig", url, name, NS)
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "platform"), str(ROOT / "jobs"), str(ROOT / "operator")])}
        self.log = open(tmp_path / f"{name}.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.lease_holder", str(tmp_path / "table"), json.dumps(lease_options())],
            env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            start_new_session=True)
        self.identity = self.answer()["holder"]

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, f"the holder ended: {self.proc.wait()}"
        return json.loads(line)

    def ask(self) -> dict:
        """Whether it still holds the lock, by its own check_held."""
        self.proc.stdin.write("check\n")
        self.proc.stdin.flush()
        return self.answer()

    def stop(self) -> None:
        if self.proc.poll() is None:
            kill_tree(self.proc.pid)
        self.proc.wait()
        self.log.close()


@pytest.fixture
def holders(tmp_path):
    started: list[Holder] = []

    def start(url: str, name: str = "holder") -> Holder:
        started.append(Holder(url, tmp_path, name))
        return started[-1]
    yield start
    for holder in started:
        holder.stop()


def test_a_second_writer_waits_and_gets_the_lease_once_the_first_releases_it_from_the_api_stand_in(api):
    server, url = api
    first, second = provider(url, "first"), provider(url, "second")
    try:
        assert first.try_lock(1)
        assert lease(server)["spec"]["holderIdentity"] == first.identity
        assert lease(server)["spec"]["leaseTransitions"] == 0
        got: list[tuple[bool, float]] = []
        waiter = threading.Thread(target=lambda: got.append((second.try_lock(10), time.monotonic())))
        waiter.start()
        time.sleep(DURATION * 1.5)                 # beyond the lease's duration: renewals keep it held
        assert got == [] and lease(server)["spec"]["holderIdentity"] == first.identity
        released = time.monotonic()
        first.unlock()
        waiter.join(10)
        (acquired, when), = got
        assert acquired and when - released < 1.0, "the waiter took the released lease at its next poll"
        spec = lease(server)["spec"]
        assert (spec["holderIdentity"], spec["leaseTransitions"]) == (second.identity, 1)
        assert first.identity not in second.holder() and "transitions" in second.holder()
        second.unlock()
        assert lease(server)["spec"]["holderIdentity"] == "", "released by clearing the holder, not deleted"
    finally:
        first.close()
        second.close()


def test_a_killed_holder_loses_the_lease_after_its_duration_and_the_next_takes_over_from_the_api_stand_in(
        api, holders):
    server, url = api
    holder = holders(url)
    held = lease(server)["spec"]
    assert held["holderIdentity"] == holder.identity
    contender = provider(url, "contender")
    try:
        assert not contender.try_lock(DURATION * 1.5), "a renewed lease is never taken over"
        assert lease(server)["spec"]["renewTime"] > held["renewTime"]
        kill_tree(holder.proc.pid)
        assert contender.try_lock(DURATION * 5)
        spec = lease(server)["spec"]
        last_renewal = [json.loads(r.text)["spec"]["renewTime"] for r in server
                        if r.method == "PUT" and r.headers.get("Authorization") == "Bearer token-holder"][-1]
        unrenewed = parse_time(spec["acquireTime"]) - parse_time(last_renewal)
        assert unrenewed.total_seconds() >= DURATION, "taken over only after a whole duration unrenewed"
        assert spec["holderIdentity"] == contender.identity
        assert spec["leaseTransitions"] == held["leaseTransitions"] + 1
        assert spec["acquireTime"] > held["acquireTime"]
        contender.check_held()
        contender.unlock()
    finally:
        contender.close()


def test_two_writers_racing_for_an_expired_lease_exactly_one_wins_on_the_api_stand_in(api):
    """Both read the same expired Lease and both replace it with that resourceVersion at once: the
    stand-in, like the API server, takes the first and answers the second 409; the loser keeps waiting."""
    server, url = api
    long_ago = micro_time(dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
    server.objects[LEASES, NS, NAME] = {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": NAME, "namespace": NS, "resourceVersion": "expired-1", "uid": "u-1"},
        "spec": {"holderIdentity": "gone_1_dead", "leaseDurationSeconds": 1, "acquireTime": long_ago,
                 "renewTime": long_ago, "leaseTransitions": 4}}
    racers = [provider(url, f"racer-{i}", duration=30) for i in range(2)]
    both_read = threading.Barrier(2, timeout=20)
    for racer in racers:
        take = racer._take

        def take_together(lease_read, take=take):
            if lease_read["metadata"]["resourceVersion"] == "expired-1":
                both_read.wait()
            return take(lease_read)
        racer._take = take_together
    results: dict[int, bool] = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, racers[i].try_lock(4))) for i in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(results.values()) == [False, True]
        winner = racers[[i for i, won in results.items() if won][0]]
        spec = lease(server)["spec"]
        assert (spec["holderIdentity"], spec["leaseTransitions"]) == (winner.identity, 5)
        sent = [json.loads(r.text) for r in server if r.method == "PUT"]        # as sent (the server fills in data)
        stale_puts = [body for body in sent if body["metadata"]["resourceVersion"] == "expired-1"]
        assert len(stale_puts) == 2, "both sent a replace carrying the version they read"
        winner.unlock()
    finally:
        for racer in racers:
            racer.close()


def test_a_frozen_holder_whose_lease_was_taken_over_finds_out_in_check_held_on_the_api_stand_in(api, holders):
    server, url = api
    holder = holders(url)
    assert holder.ask() == {"held": True}
    os.kill(holder.proc.pid, signal.SIGSTOP)          # a stalled process: no renewals, no progress
    contender = provider(url, "contender")
    try:
        assert contender.try_lock(DURATION * 5)
        os.kill(holder.proc.pid, signal.SIGCONT)
        answer = holder.ask()
        assert "was lost while held" in answer["lost"] and contender.identity.split("_")[1] in answer["lost"]
        assert lease(server)["spec"]["holderIdentity"] == contender.identity, "the frozen holder wrote nothing back"
        contender.unlock()
    finally:
        contender.close()


def test_a_forbidden_lease_names_the_namespace_the_lease_and_the_rbac_needed_on_the_api_stand_in(api):
    server, url = api
    server.deny("intruder", LEASES)
    intruder = provider(url, "intruder")
    try:
        with pytest.raises(HoodieLockError) as refused:
            intruder.try_lock(5)
        message = str(refused.value)
        for needed in (f"namespace {NS}", NAME, "403", "coordination.k8s.io", "leases", "get, create, update",
                       "spark-jobs Role", 'User "intruder" cannot get resource "leases"'):
            assert needed in message, needed
    finally:
        intruder.close()


def _call(url: str, method: str, path: str, body: dict | None = None,
          content_type: str = "application/json") -> tuple[int, dict]:
    request = urllib.request.Request(url + path, method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_api_stand_in_refuses_lease_writes_as_the_api_server_does(api):
    """What the provider relies on: stale versions conflict, names are unique, MicroTimes and Lease
    rules are checked."""
    _, url = api
    path = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 5, "renewTime": "2026-01-01T00:00:00.000000Z"}}
    status, created = _call(url, "POST", path, body)
    assert status in (200, 201) and created["metadata"]["resourceVersion"]
    status, again = _call(url, "POST", path, body)
    assert (status, again["reason"]) == (409, "AlreadyExists")
    renewed = {**created, "spec": {**created["spec"], "holderIdentity": "b"}}
    status, replaced = _call(url, "PUT", f"{path}/l", renewed)
    assert status == 200 and replaced["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    status, stale = _call(url, "PUT", f"{path}/l", renewed)                       # the version it replaced
    assert (status, stale["reason"]) == (409, "Conflict") and "the object has been modified" in stale["message"]
    status, stale = _call(url, "PATCH", f"{path}/l", {"metadata": {"resourceVersion": created["metadata"][
        "resourceVersion"]}, "spec": {"holderIdentity": "c"}}, "application/merge-patch+json")
    assert (status, stale["reason"]) == (409, "Conflict")
    unconditional = {**replaced, "metadata": {k: v for k, v in replaced["metadata"].items() if k != "resourceVersion"}}
    assert _call(url, "PUT", f"{path}/l", unconditional)[0] == 422
    for spec, code in [({"renewTime": "2026-01-01T00:00:00Z"}, 400), ({"renewTime": "2026-01-01T00:00:00.1Z"}, 400),
                       ({"leaseDurationSeconds": 0}, 422), ({"leaseTransitions": -1}, 422),
                       ({"holderIdentity": 7}, 422)]:
        bad = {**replaced, "spec": {**replaced["spec"], **spec}}
        assert _call(url, "PUT", f"{path}/l", bad)[0] == code, spec
    status, replaced_whole = _call(url, "PUT", f"{path}/l", {**replaced, "spec": {"leaseDurationSeconds": 5}})
    assert status == 200 and replaced_whole["spec"] == {"leaseDurationSeconds": 5}, "PUT replaces, never merges"


@pytest.mark.spark
def test_two_concurrent_writers_of_disjoint_partitions_both_commit_under_the_lease_lock_on_the_api_stand_in(
        spark, api, tmp_path, monkeypatch):
    """The engine's optimistic concurrency control with the Lease lock: each writer its own process
    (its own SparkSession), reaching the stand-in through its kubeconfig, both in flight together."""
    server, url = api
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kubeconfig", url, "spark-job", NS)))
    table_path = str(tmp_path / "table")
    lock = lease_options(duration=15, name=None)
    write(spark.createDataFrame([("a", "apple", "eu", 1), ("b", "berry", "us", 1)], FRUIT_SCHEMA),
          table_path, opts("insert", **lock))
    (code_eu, out_eu), (code_us, out_us) = race(table_path, tmp_path, {
        "eu": [("a", "apricot", "eu", 2), ("c", "cherry", "eu", 2)],
        "us": [("b", "banana", "us", 2), ("d", "date", "us", 2)]}, options=lock).values()
    assert (code_eu, code_us) == (0, 0), (out_eu, out_us, (tmp_path / "eu.log").read_text()[-3000:])
    assert out_eu["committed"] != out_us["committed"]
    assert table_rows(spark, table_path) == [("a", "apricot", "eu", 2), ("b", "banana", "us", 2),
                                             ("c", "cherry", "eu", 2), ("d", "date", "us", 2)]
    assert_no_leftovers(table_path)
    name = default_lease_name("fruit", table_path)
    spec = server.objects[LEASES, NS, name].raw["spec"]
    assert spec["holderIdentity"] == "", "every critical section released the lease"
    holders = {json.loads(r.text)["spec"]["holderIdentity"] for r in server if r.method in ("POST", "PUT")} - {""}
    hosts_pids = {h.rsplit("_", 2)[1] for h in holders}
    assert len(hosts_pids) == 3 and spec["leaseTransitions"] >= 4, "the test process and both writers took it"
