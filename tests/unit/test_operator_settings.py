"""The operator's settings from its environment (what the chart sets), and the peering priority that
keeps exactly one replica of a Deployment working."""
import pytest

from hudi_operator.settings import Settings


def test_environment_settings():
    settings = Settings.from_env({"WATCH_NAMESPACES": "data, analytics", "PEERING_NAME": "hudi-operator",
                                  "PEERING_PRIORITY": "7", "PEERING_LIFETIME_SECONDS": "20",
                                  "RESYNC_INTERVAL_SECONDS": "30"})
    assert settings.namespaces == ("data", "analytics") and not settings.clusterwide
    assert (settings.peering, settings.priority, settings.peering_lifetime) == ("hudi-operator", 7, 20)
    assert settings.resync_seconds == 30.0
    assert Settings.from_env({"WATCH_NAMESPACES": "all"}).clusterwide
    assert Settings.from_env({}).peering is None


@pytest.mark.parametrize("name, value", [("PEERING_PRIORITY", "high"), ("PEERING_LIFETIME_SECONDS", "0"),
                                         ("METRICS_PORT", "-1")])
def test_bad_numbers_are_refused_by_name(name, value):
    with pytest.raises(ValueError, match=name):
        Settings.from_env({name: value})


def test_the_replica_started_first_leads_unless_a_priority_is_set():
    settings = Settings()
    first, later = settings.peering_priority(1_800_000_000), settings.peering_priority(1_800_000_001)
    assert first > later                                                # one second is enough
    assert len({settings.peering_priority(1_800_000_000) for _ in range(50)}) > 1    # ties broken at random
    assert Settings(priority=5).peering_priority(1_800_000_000) == 5


def test_job_defaults_come_from_json_and_a_bad_one_stops_the_operator_by_field():
    settings = Settings.from_env({"JOB_DEFAULTS": '{"imagePullSecrets": ["regcred"], "nodeSelector": {"pool": "spark"},'
                                                  ' "restartPolicy": {"type": "Always"}}'})
    defaults = settings.planner.job_defaults
    assert (defaults.image_pull_secrets, defaults.node_selector) == (("regcred",), {"pool": "spark"})
    assert defaults.restart_policy.type == "Always"
    assert Settings.from_env({}).planner.job_defaults == Settings.from_env({"JOB_DEFAULTS": ""}).job_defaults
    with pytest.raises(ValueError, match="JOB_DEFAULTS is not JSON"):
        Settings.from_env({"JOB_DEFAULTS": "imagePullSecrets: [regcred]"})
    with pytest.raises(ValueError, match=r"^JOB_DEFAULTS\.driver\.memory: must be a Spark memory size"):
        Settings.from_env({"JOB_DEFAULTS": '{"driver": {"memory": "2GB"}}'})


def test_the_platform_lock_services_come_from_the_environment():
    services = Settings.from_env({"LOCK_PROVIDER": "zookeeper", "LOCK_ZOOKEEPER_URL": "zk-0.zk,zk-1.zk:2182",
                                  "LOCK_ZOOKEEPER_PORT": "2281", "LOCK_ZOOKEEPER_BASE_PATH": "/lake/locks",
                                  "LOCK_HIVE_METASTORE_URIS": "thrift://hms-0:9083,thrift://hms-1:9083"}
                                 ).planner.lock_services
    assert (services.zookeeper_url, services.zookeeper_port, services.zookeeper_base_path) == \
        ("zk-0.zk,zk-1.zk:2182", 2281, "/lake/locks")
    assert services.hive_metastore_uris == "thrift://hms-0:9083,thrift://hms-1:9083"
    defaults = Settings.from_env({}).planner.lock_services             # a Lease needs no address
    assert (defaults.zookeeper_url, defaults.zookeeper_port, defaults.zookeeper_base_path,
            defaults.hive_metastore_uris) == (None, 2181, "/hudi/locks", None)


@pytest.mark.parametrize("env, complaint", [
    ({"LOCK_PROVIDER": "zookeeper"}, "LOCK_PROVIDER=zookeeper needs LOCK_ZOOKEEPER_URL"),
    ({"LOCK_PROVIDER": "zookeeper", "LOCK_HIVE_METASTORE_URIS": "thrift://hms:9083"},
     "LOCK_PROVIDER=zookeeper needs LOCK_ZOOKEEPER_URL"),
    ({"LOCK_PROVIDER": "hiveMetastore", "LOCK_ZOOKEEPER_URL": "zk"}, "LOCK_PROVIDER=hiveMetastore needs "
                                                                      "LOCK_HIVE_METASTORE_URIS"),
    ({"LOCK_ZOOKEEPER_URL": "zk://zk:2181"}, "LOCK_ZOOKEEPER_URL='zk://zk:2181' is not ZooKeeper hosts"),
    ({"LOCK_ZOOKEEPER_PORT": "0"}, "LOCK_ZOOKEEPER_PORT='0' must be positive"),
    ({"LOCK_ZOOKEEPER_PORT": "70000"}, "LOCK_ZOOKEEPER_PORT=70000 is not a port"),
    ({"LOCK_ZOOKEEPER_BASE_PATH": "hudi/locks"}, "LOCK_ZOOKEEPER_BASE_PATH='hudi/locks' is not an absolute znode"),
    ({"LOCK_HIVE_METASTORE_URIS": "hms:9083"}, "LOCK_HIVE_METASTORE_URIS='hms:9083' is not thrift://host:port"),
])
def test_a_platform_lock_that_cannot_be_taken_stops_the_operator_naming_the_variable(env, complaint):
    with pytest.raises(ValueError) as caught:
        Settings.from_env(env)
    assert str(caught.value).startswith(complaint)
