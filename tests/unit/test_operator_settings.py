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
