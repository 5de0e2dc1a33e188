"""The umbrella chart's lock services, rendered with all its dependencies offline and validated as
tests/charts/test_umbrella.py validates the platform: the Spark jobs' Role may use Kubernetes Leases
(the KubernetesLeaseLockProvider's table locks) in each job namespace and nowhere else; an optional
ZooKeeper (1 or 3 servers, restricted Pod Security, limits) or an existing ensemble; and the operator's
platform lock (the address it gives every job) is this release's ZooKeeper or metastore, as the
values charts/README.md documents make it, or rendering fails naming the value to set."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from hudi_engine import config as C
from hudi_operator.api.table import THRIFT_URIS, ZK_HOSTS, ZNODE_PATH
from hudi_operator.planner import plan_pipeline
from hudi_operator.settings import Settings
from tests.charts.test_umbrella import (BUCKET, NAMESPACE, RELEASE, containers, env_of, named, pod_spec,
                                        readme_job_namespaces_values, readme_values, restricted_violations)
from tests.support.helm import CHARTS, built_umbrella, by_kind, refusal, template
from tests.unit.test_planner_manifests import pipeline, table
from tests.support.kubernetes_schemas import render_errors

JOBS = ["sales", "marketing"]
LEASE_RULE = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}
VALUES = {
    "default": f"global: {{storage: {{bucket: {BUCKET}}}}}\n",
    "quorum": f"global: {{storage: {{bucket: {BUCKET}}}}}\nzookeeper: {{enabled: true, replicas: 3}}\n"
              + readme_job_namespaces_values(),
    "single": f"global: {{storage: {{bucket: {BUCKET}}}}}\nzookeeper: {{enabled: true}}\n",
    "external": f"global: {{storage: {{bucket: {BUCKET}}}}}\n"
                "zookeeper: {external: 'zk-1.infra.svc:2181,zk-2.infra.svc:2181'}\n"
                # the same ensemble, spelt with the operator's port
                "hudi-operator: {lock: {provider: zookeeper, zookeeper: {url: 'zk-1.infra.svc,zk-2.infra.svc'}}}\n",
    "zookeeper-lock": f"global: {{storage: {{bucket: {BUCKET}}}}}\n" + readme_values("provider: zookeeper"),
    "metastore-lock": f"global: {{storage: {{bucket: {BUCKET}}}}}\n" + readme_values("provider: hiveMetastore"),
}


@pytest.fixture(scope="module")
def render(tmp_path_factory) -> Callable[[str], list[dict[str, Any]]]:
    chart = built_umbrella(tmp_path_factory.mktemp("umbrella"))
    folder = tmp_path_factory.mktemp("values")
    cache: dict[str, list[dict[str, Any]]] = {}

    def rendered(name: str) -> list[dict[str, Any]]:
        if name not in cache:
            path = folder / f"{name}.yaml"
            path.write_text(VALUES[name])
            cache[name] = template(chart, namespace=NAMESPACE, release=RELEASE, values_files=(path,))
        return cache[name]
    rendered.chart = chart                                  # type: ignore[attr-defined]
    return rendered


def zookeeper_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "zookeeper"]


@pytest.mark.parametrize("name", ["default", "quorum"])
def test_the_spark_jobs_may_use_leases_in_each_job_namespace_and_nowhere_else(render, name):
    objects = render(name)
    namespaces = ["lakehouse"] if name == "default" else JOBS
    roles = [r for r in by_kind(objects, "Role") if r["metadata"]["name"] == "hudi-spark"]
    assert sorted(r["metadata"]["namespace"] for r in roles) == sorted(namespaces)
    for role in roles:
        assert [rule for rule in role["rules"] if "coordination.k8s.io" in rule["apiGroups"]] == [LEASE_RULE]
    bound = {(b["metadata"]["namespace"], b["roleRef"]["name"]) for b in by_kind(objects, "RoleBinding")
             if {"kind": "ServiceAccount", "name": "hudi-spark", "namespace": b["metadata"]["namespace"]} in b["subjects"]}
    assert bound == {(n, "hudi-spark") for n in namespaces}
    for binding in by_kind(objects, "ClusterRoleBinding"):                 # nothing cluster-wide for the jobs
        assert all(s.get("name") != "hudi-spark" for s in binding["subjects"]), binding["metadata"]["name"]


def test_no_zookeeper_by_default_and_the_platform_lock_is_a_lease(render):
    objects = render("default")
    assert zookeeper_objects(objects) == []
    assert operator_settings(objects).lock_provider == "kubernetesLease"


def operator_settings(objects: list[dict[str, Any]]) -> Settings:
    """The settings the operator starts with, from the environment the umbrella renders for it."""
    (operator,) = [d for d in by_kind(objects, "Deployment") if d["metadata"]["name"].endswith("-hudi-operator")]
    return Settings.from_env({k: v for k, v in env_of(containers(pod_spec(operator))[0]).items() if v is not None})


def test_a_three_server_zookeeper_forms_a_quorum_under_restricted_pod_security_with_limits(render):
    objects = render("quorum")
    assert render_errors(zookeeper_objects(objects)) == []
    name, headless = f"{RELEASE}-zookeeper", f"{RELEASE}-zookeeper-headless"
    servers = named(objects, "StatefulSet", name)
    assert (servers["metadata"]["namespace"], servers["spec"]["replicas"]) == (NAMESPACE, 3)
    assert servers["spec"]["serviceName"] == headless and servers["spec"]["podManagementPolicy"] == "Parallel"
    pod = pod_spec(servers)
    (container,) = containers(pod)
    assert container["image"] == "docker.io/library/zookeeper:3.9.5"
    assert restricted_violations(pod) == [] and {"cpu", "memory"} <= set(container["resources"]["limits"])
    env = env_of(container)
    assert env["ZOO_SERVERS"].split() == [f"server.{i + 1}={name}-{i}.{headless}.{NAMESPACE}.svc:2888:3888;2181"
                                          for i in range(3)]
    service = named(objects, "Service", headless)["spec"]
    assert service["clusterIP"] == "None" and service["publishNotReadyAddresses"] is True
    assert {p["port"] for p in service["ports"]} == {2181, 2888, 3888}
    selector = servers["spec"]["selector"]["matchLabels"]
    assert selector.items() <= servers["spec"]["template"]["metadata"]["labels"].items()
    assert named(objects, "Service", name)["spec"]["selector"] == selector == service["selector"]
    assert named(objects, "PodDisruptionBudget", name)["spec"] == {"maxUnavailable": 1,
                                                                   "selector": {"matchLabels": selector}}
    volume = servers["spec"]["volumeClaimTemplates"][0]
    assert {m["name"]: m["mountPath"] for m in container["volumeMounts"]}[volume["metadata"]["name"]] == "/data"


def test_one_zookeeper_server_runs_standalone(render):
    objects = render("single")
    servers = named(objects, "StatefulSet", f"{RELEASE}-zookeeper")
    assert servers["spec"]["replicas"] == 1 and "ZOO_SERVERS" not in env_of(containers(pod_spec(servers))[0])
    assert [o["kind"] for o in by_kind(objects, "PodDisruptionBudget") if "zookeeper" in o["metadata"]["name"]] == []


def zookeeper_hosts(url: str, port: int) -> list[str]:
    """What a ZooKeeper client connects to (the engine's reading of url and port)."""
    return [h if ":" in h else f"{h}:{port}" for h in url.split(",")]


@pytest.mark.parametrize("name, hosts", [
    ("zookeeper-lock", [f"{RELEASE}-zookeeper.{NAMESPACE}.svc:2181"]),
    ("external", ["zk-1.infra.svc:2181", "zk-2.infra.svc:2181"]),
])
def test_the_platform_zookeeper_lock_is_the_release_s_zookeeper(render, name, hosts):
    """A table that names no lock gets the operator's default: a ZooKeeper lock on this release's
    ensemble, the bundled one's client Service, at the base path the operator's chart sets."""
    objects = render(name)
    settings = operator_settings(objects)
    services = settings.lock_services
    assert settings.lock_provider == "zookeeper"
    assert zookeeper_hosts(services.zookeeper_url, services.zookeeper_port) == hosts
    if name == "zookeeper-lock":
        host, port = hosts[0].rsplit(":", 1)
        service = named(objects, "Service", host.split(".")[0])
        assert (service["metadata"]["namespace"], host.split(".")[1]) == (NAMESPACE, NAMESPACE)
        assert {p["port"] for p in service["spec"]["ports"]} == {int(port)}
        assert named(objects, "StatefulSet", service["metadata"]["name"])["spec"]["replicas"] == 3
    else:
        assert zookeeper_objects(objects) == []
    lock = plan_pipeline(several_writers(), pipeline(), settings.planner).concurrency.lock
    assert (lock.options[C.LOCK_PROVIDER.key], lock.options[C.ZK_BASE_PATH.key]) == (C.ZK_LOCK_PROVIDER, "/hudi/locks")
    assert zookeeper_hosts(lock.options[C.ZK_CONNECT_URL.key], int(lock.options[C.ZK_PORT.key])) == hosts


def test_the_platform_metastore_lock_is_the_release_s_metastore(render):
    objects = render("metastore-lock")
    settings = operator_settings(objects)
    uri = f"thrift://{RELEASE}-hive-metastore.{NAMESPACE}.svc:9083"
    assert (settings.lock_provider, settings.lock_services.hive_metastore_uris) == ("hiveMetastore", uri)
    service = named(objects, "Service", f"{RELEASE}-hive-metastore")
    assert service["metadata"]["namespace"] == NAMESPACE and 9083 in {p["port"] for p in service["spec"]["ports"]}
    lock = plan_pipeline(several_writers(), pipeline(), settings.planner).concurrency.lock
    assert (lock.options[C.LOCK_PROVIDER.key], lock.options[C.HMS_LOCK_URIS.key]) == (C.HMS_LOCK_PROVIDER, uri)


def several_writers():
    """A table that names no lock, written by a pipeline and its scheduled cleaning."""
    return table(services={"cleaning": {"mode": "scheduled", "schedule": "@hourly"}})


BUNDLED_ZK = "release-zookeeper.default.svc:2181"                 # refusal() renders release "release" in "default"
BUNDLED_HMS = "thrift://release-hive-metastore.default.svc:9083"


@pytest.mark.parametrize("values, complaint", [
    ({"zookeeper.enabled": "true", "hudi-operator.lock.provider": "zookeeper",
      "hudi-operator.lock.zookeeper.url": "zk.elsewhere"},
     f'hudi-operator.lock.zookeeper.url is "zk.elsewhere" (port 2181) but this release\'s ZooKeeper (zookeeper.enabled) '
     f'is {BUNDLED_ZK}: set hudi-operator.lock.zookeeper.url to "{BUNDLED_ZK}"'),
    ({"zookeeper.enabled": "true", "hudi-operator.lock.provider": "zookeeper",
      "hudi-operator.lock.zookeeper.url": "release-zookeeper.default.svc", "hudi-operator.lock.zookeeper.port": "2182"},
     f'set hudi-operator.lock.zookeeper.url to "{BUNDLED_ZK}"'),
    # a table that chooses zookeeper gets the operator's url too, whatever the default provider
    ({"zookeeper.enabled": "true", "hudi-operator.lock.zookeeper.url": "zk.elsewhere"},
     "hudi-operator.lock.zookeeper.url is \"zk.elsewhere\""),
    ({"zookeeper.external": "zk-1.infra.svc:2181", "hudi-operator.lock.provider": "zookeeper",
      "hudi-operator.lock.zookeeper.url": "zk-2.infra.svc"},
     'this release\'s ZooKeeper (zookeeper.external) is zk-1.infra.svc:2181: set hudi-operator.lock.zookeeper.url '
     'to "zk-1.infra.svc:2181"'),
    ({"hudi-operator.lock.provider": "hiveMetastore", "hudi-operator.lock.hiveMetastore.uris": "thrift://hms:9083"},
     f'hudi-operator.lock.hiveMetastore.uris is "thrift://hms:9083" but this release\'s metastore '
     f'(hive-metastore.enabled) is {BUNDLED_HMS}: set hudi-operator.lock.hiveMetastore.uris to "{BUNDLED_HMS}"'),
    ({"hudi-operator.lock.provider": "zookeeper"}, "/lock/zookeeper/url"),      # the operator's own schema
], ids=["bundled zookeeper, another url", "bundled zookeeper, another port", "bundled zookeeper, url only",
        "external zookeeper", "bundled metastore", "zookeeper without url"])
def test_a_platform_lock_that_is_not_this_release_s_is_refused_naming_the_value(render, values, complaint):
    assert complaint in refusal(render.chart, {"global.storage.bucket": BUCKET, **values})


def test_a_platform_lock_elsewhere_is_taken_as_written_when_this_release_runs_none(render):
    """Without a ZooKeeper of its own (or with its metastore off), the release has nothing to compare."""
    objects = template(render.chart, {"global.storage.bucket": BUCKET, "hudi-operator.lock.provider": "zookeeper",
                                      "hudi-operator.lock.zookeeper.url": "zk.elsewhere"})
    assert operator_settings(objects).lock_services.zookeeper_url == "zk.elsewhere"


@pytest.mark.parametrize("values, complaint", [
    ({"zookeeper.enabled": "true", "zookeeper.replicas": "2"}, "/zookeeper/replicas"),
    ({"zookeeper.enabled": "true", "zookeeper.external": "zk:2181"}, "set only one"),
    ({"zookeeper.external": "zk://nope"}, "/zookeeper/external"),
])
def test_bad_zookeeper_values_are_refused_naming_the_value(render, values, complaint):
    assert complaint in refusal(render.chart, {"global.storage.bucket": BUCKET, **values})


def test_the_chart_files_stay_what_this_test_renders():
    """The values documented in values.yaml are the ones rendered here (zookeeper off unless asked)."""
    values = yaml.safe_load((Path(__file__).resolve().parents[2] / "charts/hudi-lakehouse/values.yaml").read_text())
    assert values["zookeeper"]["enabled"] is False and values["zookeeper"]["external"] == ""
    assert values["zookeeper"]["image"]["tag"].startswith("3.9.")


def test_the_charts_lock_addresses_accept_what_a_tables_lock_section_accepts():
    """The operator's platform lock (chart values) and a HudiTable's spec.concurrency.lock take the
    same ZooKeeper hosts, znode paths and metastore URIs; the chart's may also be empty (none)."""
    lock = json.loads((CHARTS / "hudi-operator" / "values.schema.json").read_text())["properties"]["lock"]
    fields = lock["properties"]

    def optional(regex: str) -> str:
        return f"^({regex[1:-1]})?$"
    assert fields["zookeeper"]["properties"]["url"]["pattern"] == optional(ZK_HOSTS.regex)
    assert fields["zookeeper"]["properties"]["basePath"]["pattern"] == ZNODE_PATH.regex
    assert fields["hiveMetastore"]["properties"]["uris"]["pattern"] == optional(THRIFT_URIS.regex)
