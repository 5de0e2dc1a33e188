"""The umbrella chart as a platform engineer installs it: built with ALL its dependencies offline (the
project's charts packaged, the pinned third-party charts from the vendored archives), rendered once per
values set, and every object checked against Kubernetes' schemas or the CRDs in the same render. Then
what the README promises: a Namespace for every namespace used, the bucket and the storage identity
wherever storage is touched, no rights for `default` service accounts, one list of job namespaces, a
metastore password that no render changes, limits and restricted Pod Security, NOTES commands that
name their namespace, and examples that point at the umbrella's own Kafka and metastore."""
from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import sys
import tarfile
from pathlib import Path
from typing import Any, Callable

import kmock
import pytest
import yaml

from hudi_operator.api import load
from hudi_operator.planner import plan_pipeline
from hudi_operator.settings import Settings
from tests.support.helm import (by_kind, CHARTS, ROOT, UMBRELLA, built_umbrella, helm, load_all, refusal, template,
                                template_text, vendored_charts, vendored_crds)
from tests.support.kube_api import ApiServer, declare
from tests.support.kubernetes_schemas import render_errors

RELEASE, NAMESPACE = "lakehouse", "hudi-platform"          # as README.md installs it
BUCKET = "acme-lake"
PINNED = {"spark-operator": "2.5.2", "strimzi-kafka-operator": "1.2.0", "kube-prometheus-stack": "88.5.3"}
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
# Pods that cannot meet the restricted Pod Security Standard, and why.
PSS_EXCEPTIONS = {
    ("DaemonSet", f"{RELEASE}-prometheus-node-exporter"):
        "node metrics need the host's network and process namespaces and its root file system",
}


def readme_values(marker: str) -> str:
    """The values file of charts/README.md that contains ``marker`` (so the docs are what is tested)."""
    blocks = re.findall(r"```yaml\n(.*?)```", (CHARTS / "README.md").read_text(), re.S)
    (block,) = [b for b in blocks if marker in b]
    return "\n".join(line.strip() and line[2:] for line in block.splitlines())


def readme_job_namespaces_values() -> str:
    """The values file charts/README.md gives for other job namespaces."""
    return readme_values("jobNamespaces: &jobNamespaces")


VALUES: dict[str, str] = {
    "default": f"global: {{storage: {{bucket: {BUCKET}}}}}",
    "storage": f"""global:
  storage:
    bucket: {BUCKET}
    credentialsSecret: lake-keys
    serviceAccountAnnotations: {{eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/lake"}}
""",
    "two-namespaces": f"global: {{storage: {{bucket: {BUCKET}}}}}\n" + readme_job_namespaces_values(),
    "own-charts-only": f"""global: {{storage: {{bucket: {BUCKET}}}}}
spark-operator: {{enabled: false}}
strimzi: {{enabled: false}}
kube-prometheus-stack: {{enabled: false}}
createNamespaces: false
""",
}


@pytest.fixture(scope="module")
def chart(tmp_path_factory) -> Path:
    return built_umbrella(tmp_path_factory.mktemp("umbrella"))


@pytest.fixture(scope="module")
def values_file(tmp_path_factory) -> Callable[[str], Path]:
    folder = tmp_path_factory.mktemp("values")

    def write(name: str) -> Path:
        path = folder / f"{name}.yaml"
        path.write_text(VALUES[name])
        return path
    return write


@pytest.fixture(scope="module")
def render(chart, values_file) -> Callable[[str], list[dict[str, Any]]]:
    """The umbrella's objects for one named values set, rendered once per module."""
    cache: dict[str, list[dict[str, Any]]] = {}

    def rendered(name: str) -> list[dict[str, Any]]:
        if name not in cache:
            cache[name] = template(chart, namespace=NAMESPACE, release=RELEASE, values_files=(values_file(name),))
        return cache[name]
    return rendered


def named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return pod.get("initContainers", []) + pod["containers"]


def scalars(node: Any) -> set[Any]:
    if isinstance(node, dict):
        return set().union(*map(scalars, node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*map(scalars, node)) if node else set()
    return {node}


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


# --- pins and schemas ------------------------------------------------------------------------------------
def test_umbrella_pins_exactly_the_vendored_third_party_charts():
    meta = yaml.safe_load((UMBRELLA / "Chart.yaml").read_text())
    values = yaml.safe_load((UMBRELLA / "values.yaml").read_text())
    deps = {d.get("alias", d["name"]): d for d in meta["dependencies"]}
    assert set(deps) == {"hudi-operator", "hive-metastore", "spark-operator", "strimzi", "kube-prometheus-stack"}
    for key, dep in deps.items():
        assert dep["condition"] == f"{key}.enabled" and values[key]["enabled"] is True
    assert {d["name"]: d["version"] for d in meta["dependencies"] if d["repository"].startswith("https://")} == PINNED
    for name, version in PINNED.items():
        with tarfile.open(vendored_charts() / f"{name}-{version}.tgz") as tar:
            packaged = yaml.safe_load(tar.extractfile(f"{name}/Chart.yaml").read())
        assert (packaged["name"], packaged["version"]) == (name, version)
    assert meta["kubeVersion"] == ">=1.30.0-0"           # Strimzi 1.x supports Kubernetes 1.30+


@pytest.mark.parametrize("name", list(VALUES))
def test_every_object_of_the_full_render_validates_against_kubernetes_or_the_rendered_crds(render, name):
    objects = render(name)
    # with the third-party charts off, their CRDs come from where they are installed: the vendored charts
    assert render_errors(objects, vendored_crds() if name == "own-charts-only" else ()) == []
    kinds = {(o["apiVersion"], o["kind"]) for o in objects}
    assert {("kafka.strimzi.io/v1", "Kafka"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition")} <= kinds
    if name != "own-charts-only":
        assert {("monitoring.coreos.com/v1", "Prometheus"), ("monitoring.coreos.com/v1", "PodMonitor"),
                ("kafka.strimzi.io/v1", "KafkaUser")} <= kinds
        images = {c["image"].split("@")[0].rsplit(":", 1)[0].split("/", 1)[1] for o in by_kind(objects, "Deployment")
                  for c in containers(pod_spec(o))}               # without the registry
        assert {"kubeflow/spark-operator/controller", "strimzi/operator", "prometheus-operator/prometheus-operator",
                "hudi-lakehouse/operator"} <= images


def test_the_checks_find_unknown_fields_kinds_without_schema_and_the_yaml_pyyaml_rejects(render):
    """The validation above is not vacuous: a pruned field, a served version that does not exist and a
    kind nobody defines are reported; kube-prometheus-stack's `- =` loads as the string it is."""
    objects = render("default")
    kafka = json.loads(json.dumps(named(objects, "Kafka", "lakehouse-kafka")))
    kafka["spec"]["kafka"]["zookeeper"] = {"replicas": 3}
    old = {**kafka, "apiVersion": "kafka.strimzi.io/v1beta2"}
    unknown = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    problems = render_errors(objects + [kafka, old, unknown])
    assert len(problems) >= 3 and any("zookeeper" in p for p in problems)
    assert any(p.startswith("Kafka lakehouse/lakehouse-kafka") and "v1beta2" in p for p in problems)
    assert any(p.startswith("Gadget /g") for p in problems)
    assert load_all("- =\n- a\n") == [["=", "a"]]
    assert "=" in scalars(objects)                        # the render really has one


def test_kafka_is_strimzi_v1_kraft_at_a_version_the_pinned_strimzi_runs(render):
    objects = render("default")
    for kind in ("Kafka", "KafkaNodePool", "KafkaUser"):
        assert {o["apiVersion"] for o in by_kind(objects, kind)} == {"kafka.strimzi.io/v1"}
    kafka = named(objects, "Kafka", "lakehouse-kafka")
    operator = named(objects, "Deployment", "strimzi-cluster-operator")
    images = env_of(containers(pod_spec(operator))[0])["STRIMZI_KAFKA_IMAGES"]
    supported = {line.split("=")[0].strip() for line in images.splitlines() if line.strip()}
    assert kafka["spec"]["kafka"]["version"] in supported and all(v.startswith("4.") for v in supported)
    (pool,) = by_kind(objects, "KafkaNodePool")
    assert sorted(pool["spec"]["roles"]) == ["broker", "controller"] and "zookeeper" not in kafka["spec"]


def test_kubernetes_older_than_1_30_is_refused(chart):
    done = helm("template", RELEASE, str(chart), "--kube-version", "1.29.9", "--set", f"global.storage.bucket={BUCKET}",
                check=False)
    assert done.returncode != 0 and ">=1.30.0-0" in done.stderr
    helm("template", RELEASE, str(chart), "--kube-version", "1.30.0", "--set", f"global.storage.bucket={BUCKET}")


# --- the install as README.md runs it --------------------------------------------------------------------
def test_the_bucket_is_required_and_bad_values_are_refused_naming_the_field(chart):
    assert "/global/storage/bucket" in refusal(chart, {})
    assert "additional properties 'storage' not allowed" in refusal(chart, {"storage.bucket": BUCKET})
    assert "/global/storage/bucket" in refusal(chart, {"global.storage.bucket": "s3://lake/path"})
    assert "/kafka/replicas" in refusal(chart, {"global.storage.bucket": BUCKET, "kafka.replicas": "0"})
    assert "hudi-operator:\n- at '/replicaCount'" in refusal(chart, {"global.storage.bucket": BUCKET,
                                                                     "hudi-operator.replicaCount": "0"})


def test_bucket_credentials_and_identity_reach_everything_that_touches_storage(render):
    objects = render("storage")
    metastore = named(objects, "Deployment", f"{RELEASE}-hive-metastore")
    operator = named(objects, "Deployment", f"{RELEASE}-hudi-operator")
    (args,) = pod_spec(metastore)["containers"][0]["args"]
    assert f"-Dhive.metastore.warehouse.dir=s3a://{BUCKET}/warehouse " in args
    for workload in (metastore, operator):
        assert pod_spec(workload)["containers"][0]["envFrom"] == [{"secretRef": {"name": "lake-keys"}}]
    role = {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/lake"}
    accounts = {(a["metadata"].get("namespace"), a["metadata"]["name"]): a for a in by_kind(objects, "ServiceAccount")}
    storage_users = [(NAMESPACE, pod_spec(metastore)["serviceAccountName"]),
                     (NAMESPACE, pod_spec(operator)["serviceAccountName"]), ("lakehouse", "hudi-spark")]
    for key in storage_users:
        assert accounts[key]["metadata"]["annotations"] == role, key
    # nothing points at another bucket
    assert {u for u in scalars(objects) if isinstance(u, str) and "s3a://" in u and f"s3a://{BUCKET}/" not in u} == set()


def namespaces_used(objects: list[dict[str, Any]]) -> set[str]:
    used = {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    return used | {s["namespace"] for o in objects for s in o.get("subjects", []) if s.get("namespace")}


@pytest.mark.parametrize("name", ["default", "two-namespaces"])
def test_every_namespace_the_chart_uses_is_created_by_it(render, name):
    """But the release's own (helm install --create-namespace) and kube-system, where kube-prometheus-stack
    puts the Services through which it scrapes the control plane: it exists in every cluster."""
    objects = render(name)
    created = {n["metadata"]["name"] for n in by_kind(objects, "Namespace")}
    assert namespaces_used(objects) - {NAMESPACE, "kube-system"} == created
    assert NAMESPACE not in created
    for namespace in by_kind(objects, "Namespace"):      # uninstalling never deletes the teams' tables
        assert namespace["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep",
                                                        "argocd.argoproj.io/sync-options": "Delete=false"}


def test_namespaces_are_not_created_when_managed_elsewhere(render):
    objects = render("own-charts-only")                 # createNamespaces: false
    assert by_kind(objects, "Namespace") == [] and "lakehouse" in namespaces_used(objects)


@pytest.mark.parametrize("name", ["default", "two-namespaces"])
def test_no_binding_grants_a_default_service_account_and_every_bound_account_is_rendered(render, name):
    objects = render(name)
    accounts = {(a["metadata"].get("namespace", NAMESPACE), a["metadata"]["name"]) for a in by_kind(objects, "ServiceAccount")}
    for binding in by_kind(objects, "RoleBinding") + by_kind(objects, "ClusterRoleBinding"):
        for subject in binding["subjects"]:
            assert subject["name"] != "default", binding["metadata"]
            if subject["kind"] == "ServiceAccount":
                assert (subject["namespace"], subject["name"]) in accounts, binding["metadata"]


def test_one_list_of_job_namespaces_feeds_every_component(render):
    """With charts/README.md's values file for other namespaces, everything serves exactly those."""
    objects = render("two-namespaces")
    jobs = ["sales", "marketing"]
    operator = env_of(containers(pod_spec(named(objects, "Deployment", f"{RELEASE}-hudi-operator")))[0])
    assert operator["WATCH_NAMESPACES"] == "sales,marketing"
    hudi_roles = [r["metadata"]["namespace"] for r in by_kind(objects, "Role") if r["metadata"]["name"] == f"{RELEASE}-hudi-operator"]
    assert sorted(hudi_roles) == sorted(jobs)
    for deployment in ("controller", "webhook"):
        args = containers(pod_spec(named(objects, "Deployment", f"{RELEASE}-spark-operator-{deployment}")))[0]["args"]
        assert "--namespaces=sales,marketing" in args
    strimzi = env_of(containers(pod_spec(named(objects, "Deployment", "strimzi-cluster-operator")))[0])
    assert set(strimzi["STRIMZI_NAMESPACE"].split(",")) == {*jobs, NAMESPACE}
    for kind in ("ServiceAccount", "Role", "RoleBinding"):
        assert sorted(o["metadata"]["namespace"] for o in by_kind(objects, kind) if o["metadata"]["name"] == "hudi-spark") \
            == sorted(jobs)
    assert {n["metadata"]["name"] for n in by_kind(objects, "Namespace")} == set(jobs)
    assert named(objects, "Kafka", "lakehouse-kafka")["metadata"]["namespace"] == "sales"


@pytest.mark.parametrize("copy", ["hudi-operator.watchNamespaces", "spark-operator.spark.jobNamespaces",
                                  "strimzi.watchNamespaces"])
def test_a_copy_of_the_job_namespaces_that_differs_is_refused_by_name(chart, copy):
    lists = {"jobNamespaces": "{sales}", "hudi-operator.watchNamespaces": "{sales}",
             "spark-operator.spark.jobNamespaces": "{sales}", "strimzi.watchNamespaces": "{sales}"}
    message = refusal(chart, {"global.storage.bucket": BUCKET, **lists, copy: "{lakehouse}"})
    assert f'{copy} is ["lakehouse"] but jobNamespaces is ["sales"]' in message


def test_the_spark_operator_chart_makes_no_job_account_of_its_own(chart):
    assert "spark-operator.spark.serviceAccount.create and spark-operator.spark.rbac.create must stay false" in \
        refusal(chart, {"global.storage.bucket": BUCKET, "spark-operator.spark.rbac.create": "true"})
    assert 'spark-operator.spark.serviceAccount.name is "spark"' in \
        refusal(chart, {"global.storage.bucket": BUCKET, "spark-operator.spark.serviceAccount.name": "spark"})


def test_kafka_outside_the_watched_namespaces_is_refused(chart):
    assert 'kafka.namespace "kafka" is neither a job namespace nor the release namespace' in \
        refusal(chart, {"global.storage.bucket": BUCKET, "kafka.namespace": "kafka"})


# --- the metastore's password ----------------------------------------------------------------------------
def test_metastore_password_is_never_rendered_so_every_render_is_the_same(chart, values_file, render):
    objects = render("default")
    assert [s["metadata"]["name"] for s in by_kind(objects, "Secret") if "metastore" in s["metadata"]["name"]] == []
    job = named(objects, "Job", f"{RELEASE}-hive-metastore-password")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    env = env_of(containers(pod_spec(job))[0])
    assert env["SECRET_NAME"] == f"{RELEASE}-hive-metastore-db" and env["NAMESPACE"] == NAMESPACE
    database = named(objects, "StatefulSet", f"{RELEASE}-hive-metastore-postgresql")
    password = next(e for e in containers(pod_spec(database))[0]["env"] if e["name"] == "POSTGRES_PASSWORD")
    assert password["valueFrom"]["secretKeyRef"] == {"name": env["SECRET_NAME"], "key": env["SECRET_KEY"]}
    twice = [template_text(chart, namespace=NAMESPACE, release=RELEASE, values_files=(values_file("default"),))
             for _ in range(2)]
    assert twice[0] == twice[1]                         # what Argo CD's `helm template` sees never churns


@pytest.mark.asyncio
async def test_the_password_hook_creates_the_secret_once_and_keeps_it(tmp_path, render):
    """The hook's script (files/create-password-secret.py, as the Job runs it) against kmock, the API
    server stand-in: the first run makes the Secret, a second run (an upgrade) leaves it as it was."""
    job = named(render("default"), "Job", f"{RELEASE}-hive-metastore-password")
    container = containers(pod_spec(job))[0]
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text("token-hook")
    server = ApiServer()
    declare(server, "v1/secrets", "Secret")
    async with server, kmock.Server(server):
        environ = {**os.environ, **env_of(container), "SERVICE_ACCOUNT_DIR": str(account),
                   "KUBERNETES_API": str(server.url).rstrip("/")}
        kept = []
        for _run in ("install", "upgrade"):
            process = await asyncio.create_subprocess_exec(sys.executable, *container["command"][1:], *container["args"],
                                                           env=environ, stderr=asyncio.subprocess.PIPE)
            _, err = await asyncio.wait_for(process.communicate(), 60)
            assert process.returncode == 0, err.decode()
            kept.append(dict(server.objects["v1/secrets", NAMESPACE, f"{RELEASE}-hive-metastore-db"].raw["stringData"]))
        assert kept[0] == kept[1] and len(kept[0]["password"]) >= 32
        assert [r.method for r in server if "/secrets" in r.url.path] == ["GET", "POST", "GET"]


# --- limits and Pod Security -----------------------------------------------------------------------------
def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """What the restricted Pod Security Standard refuses in a pod spec."""
    found = [f"{field}" for field in ("hostNetwork", "hostPID", "hostIPC") if pod.get(field)]
    found += [f"hostPath volume {v['name']}" for v in pod.get("volumes", []) if "hostPath" in v]
    security = pod.get("securityContext") or {}
    for container in containers(pod):
        own = container.get("securityContext") or {}
        where = container["name"]
        if not own.get("runAsNonRoot", security.get("runAsNonRoot")):
            found.append(f"{where}: runAsNonRoot")
        if 0 in (own.get("runAsUser"), security.get("runAsUser")):
            found.append(f"{where}: runAsUser 0")
        if (own.get("seccompProfile") or security.get("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"):
            found.append(f"{where}: seccompProfile")
        if own.get("allowPrivilegeEscalation") is not False or own.get("privileged"):
            found.append(f"{where}: privilege escalation")
        capabilities = own.get("capabilities") or {}
        if "ALL" not in capabilities.get("drop", []) or set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(f"{where}: capabilities")
        found += [f"{where}: hostPort" for p in container.get("ports", []) if p.get("hostPort")]
    return found


def test_every_pod_has_limits_and_meets_restricted_pod_security_but_the_listed_exceptions(render):
    objects = render("default")
    violating = {}
    for workload in [o for o in objects if o["kind"] in WORKLOADS]:
        pod = pod_spec(workload)
        for container in containers(pod):
            assert {"cpu", "memory"} <= set(container.get("resources", {}).get("limits", {})), \
                f"{workload['metadata']['name']}/{container['name']} has no limits"
        if restricted_violations(pod):
            violating[workload["kind"], workload["metadata"]["name"]] = restricted_violations(pod)
    assert set(violating) == set(PSS_EXCEPTIONS), violating           # no others, and no stale exception
    # the pods other operators make from the rendered resources
    for kind in ("Prometheus", "Alertmanager"):
        (spec,) = [o["spec"] for o in by_kind(objects, kind)]
        assert {"cpu", "memory"} <= set(spec["resources"]["limits"]) and spec["securityContext"]["runAsNonRoot"]
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    kafka = named(objects, "Kafka", "lakehouse-kafka")["spec"]
    limited = [p["spec"]["resources"] for p in by_kind(objects, "KafkaNodePool")] + \
        [kafka["entityOperator"][op]["resources"] for op in ("topicOperator", "userOperator")]
    assert all({"cpu", "memory"} <= set(r["limits"]) for r in limited)
    strimzi = env_of(containers(pod_spec(named(objects, "Deployment", "strimzi-cluster-operator")))[0])
    assert strimzi["STRIMZI_POD_SECURITY_PROVIDER_CLASS"] == "restricted"   # Kafka's own pods


# --- NOTES -----------------------------------------------------------------------------------------------
def notes(chart: Path, *args: str) -> str:
    """NOTES.txt as `helm install` prints it (a client-side dry run: no cluster is contacted)."""
    done = helm("install", RELEASE, str(chart), "-n", NAMESPACE, "--dry-run=client", *args)
    return done.stdout[done.stdout.index("NOTES:"):]


@pytest.mark.parametrize("which", ["umbrella", "hudi-operator", "hive-metastore"])
def test_notes_commands_name_their_namespace(chart, which):
    text = {"umbrella": lambda: notes(chart, "--set", f"global.storage.bucket={BUCKET}"),
            "hudi-operator": lambda: notes(CHARTS / "hudi-operator", "--set", "watchNamespaces={lakehouse}"),
            "hive-metastore": lambda: notes(CHARTS / "hive-metastore", "--set", f"global.storage.bucket={BUCKET}")}[which]()
    commands = [line.strip() for line in text.splitlines() if line.strip().startswith("kubectl ")]
    assert commands
    for command in commands:
        assert re.search(r" -n [a-z0-9-]+( |$)", command), command
    if which == "umbrella":
        assert f"thrift://{RELEASE}-hive-metastore.{NAMESPACE}.svc:9083" in text
        assert "lakehouse-kafka-kafka-bootstrap.lakehouse.svc:9093" in text


# --- the examples use the umbrella's services ------------------------------------------------------------
EXAMPLES = ROOT / "operator" / "examples"


def example_documents() -> list[dict[str, Any]]:
    return [doc for path in sorted(EXAMPLES.glob("*.yaml")) for doc in load_all(path.read_text())]


def kafka_sources(doc: dict[str, Any]) -> list[dict[str, Any]]:
    source = doc["spec"].get("source", {}) if doc["kind"] == "HudiPipeline" else {}
    return [s for s in (source.get("kafka"), source.get("debezium", {}).get("kafka")) if s]


def test_examples_use_the_kafka_and_metastore_the_umbrella_renders(render):
    """Bootstrap address and CA Secret as Strimzi names them for the rendered Kafka, the SASL Secret
    as Strimzi lays it out for the rendered KafkaUser (keys `password` and `sasl.jaas.config`), in the
    Kafka's namespace, and the metastore Service the umbrella renders; the planner turns the JAAS
    reference into the job's sasl.jaas.config Secret placeholder."""
    objects = render("default")
    kafka = named(objects, "Kafka", "lakehouse-kafka")
    (user,) = by_kind(objects, "KafkaUser")
    (listener,) = [li for li in kafka["spec"]["kafka"]["listeners"] if li["tls"]]
    name, namespace = kafka["metadata"]["name"], kafka["metadata"]["namespace"]
    metastore = named(objects, "Service", f"{RELEASE}-hive-metastore")
    metastore_uri = f"thrift://{metastore['metadata']['name']}.{metastore['metadata']['namespace']}.svc:" \
                    f"{metastore['spec']['ports'][0]['port']}"
    documents = example_documents()
    sources = [(doc, s) for doc in documents for s in kafka_sources(doc)]
    assert len(sources) == 2
    for doc, source in sources:
        where = doc["metadata"]["name"]
        assert doc["metadata"]["namespace"] == namespace, where          # Secrets are read in the same namespace
        assert source["bootstrapServers"] == f"{name}-kafka-bootstrap.{namespace}.svc:{listener['port']}", where
        security = source["security"]
        assert security["protocol"] == "SASL_SSL" and listener["authentication"]["type"] == "scram-sha-512"
        assert security["saslMechanism"] == "SCRAM-SHA-512"
        assert security["caSecret"] == {"name": f"{name}-cluster-ca-cert", "key": "ca.crt"}, where
        assert security["jaasConfigSecret"] == {"name": user["metadata"]["name"], "key": "sasl.jaas.config"}, where
        assert "usernameSecret" not in security and "passwordSecret" not in security   # no such keys in Strimzi's Secret
        table = next(d for d in documents if d["kind"] == "HudiTable" and d["metadata"]["name"] == doc["spec"]["tableRef"]["name"])
        (job,) = plan_pipeline(load(table), load(doc), Settings().planner).jobs
        assert job.job_config["hoodieConf"]["sasl.jaas.config"] == "${secret:hudi-pipelines/sasl.jaas.config}", where
    uris = [sync["metastoreUris"] for doc in documents if doc["kind"] == "HudiTable"
            for sync in doc["spec"].get("catalogSync", [])]
    assert uris and set(uris) == {metastore_uri}


def test_umbrella_lints_strictly_with_all_its_dependencies(chart):
    helm("lint", str(chart), "--strict", "--set", f"global.storage.bucket={BUCKET}")


# --- README.md's install section -------------------------------------------------------------------------
def readme_install_commands() -> list[list[str]]:
    """The shell commands of README.md's install section, continuation lines joined, as argv lists."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Installing the platform"):text.index("## Layout")]
    lines = "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S)).replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in lines.splitlines() if line.strip()]


def test_readme_install_section_is_what_the_chart_needs(chart):
    """The repositories it adds are the ones Chart.yaml fetches from, its helm install renders, and the
    service accounts, Kafka and metastore it names are the ones that install makes."""
    commands = readme_install_commands()
    added = {c[4] for c in commands if c[:3] == ["helm", "repo", "add"]}
    meta = yaml.safe_load((UMBRELLA / "Chart.yaml").read_text())
    assert added == {d["repository"] for d in meta["dependencies"] if d["repository"].startswith("https://")}
    (install,) = [c for c in commands if c[:2] == ["helm", "install"]]
    release, namespace = install[2], install[install.index("-n") + 1]
    assert "--create-namespace" in install and (release, namespace) == (RELEASE, NAMESPACE)
    sets = [arg for flag, arg in zip(install, install[1:]) if flag in ("--set", "--set-string")]
    assert any(s.startswith("global.storage.bucket=") for s in sets)
    done = helm("template", release, str(chart), "-n", namespace,
                *[a for s in sets for a in ("--set-string", s)])
    objects = load_all(done.stdout)
    section = (ROOT / "README.md").read_text().split("## Installing the platform")[1].split("## Layout")[0]
    annotated = {(a["metadata"]["namespace"], a["metadata"]["name"]) for a in by_kind(objects, "ServiceAccount")
                 if "eks.amazonaws.com/role-arn" in a["metadata"].get("annotations", {})}
    assert annotated == {("lakehouse", "hudi-spark"), (NAMESPACE, f"{RELEASE}-hudi-operator"),
                         (NAMESPACE, f"{RELEASE}-hive-metastore")}
    for _, name in annotated:
        assert f"`{name}`" in section                      # the accounts a role must trust, named
    (wait,) = [c for c in commands if c[:2] == ["kubectl", "wait"]]
    kind, name = wait[2].split("/")
    assert named(objects, kind.capitalize(), name)["metadata"]["namespace"] == wait[wait.index("-n") + 1]
    assert f"thrift://{named(objects, 'Service', f'{RELEASE}-hive-metastore')['metadata']['name']}.{NAMESPACE}.svc:9083" \
        in section


def chart_values(tar: tarfile.TarFile, chart: str) -> dict[str, Any]:
    """A packaged chart's default values, with each of its subcharts' under the subchart's name."""
    values = yaml.safe_load(tar.extractfile(f"{chart}/values.yaml").read()) or {}
    subcharts = {m.name.split("/")[-2] for m in tar.getmembers()
                 if m.name.count("/") == 3 and m.name.startswith(f"{chart}/charts/") and m.name.endswith("/Chart.yaml")}
    for sub in subcharts:
        values[sub] = merged(chart_values(tar, f"{chart}/charts/{sub}"), values.get(sub) or {})
    return values


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on ``base``, maps merged key by key, as Helm merges a parent's values into a subchart's."""
    return {**base, **{k: merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
                       for k, v in over.items()}}


# Values the charts hand to Kubernetes as they are (their fields are checked by the render's validation).
KUBERNETES_OBJECTS = {"resources", "securityContext", "podSecurityContext", "containerSecurityContext"}


def unknown_keys(ours: dict[str, Any], theirs: dict[str, Any], path: str = "") -> list[str]:
    """Keys we set that the chart does not have (Helm would ignore them silently); free-form maps (an
    empty default such as annotations: {}, or a Kubernetes object) take any key."""
    found = []
    for key, value in ours.items():
        if key not in theirs:
            found.append(f"{path}{key}")
        elif isinstance(value, dict) and isinstance(theirs[key], dict) and theirs[key] and key not in KUBERNETES_OBJECTS:
            found += unknown_keys(value, theirs[key], f"{path}{key}.")
    return found


@pytest.mark.parametrize("key, chart", [("spark-operator", "spark-operator"), ("strimzi", "strimzi-kafka-operator"),
                                        ("kube-prometheus-stack", "kube-prometheus-stack")])
def test_every_value_set_for_a_third_party_chart_is_one_it_reads(key, chart):
    ours = {k: v for k, v in yaml.safe_load((UMBRELLA / "values.yaml").read_text())[key].items() if k != "enabled"}
    with tarfile.open(vendored_charts() / f"{chart}-{PINNED[chart]}.tgz") as tar:
        assert unknown_keys(ours, chart_values(tar, chart)) == []
