"""The hudi-operator chart's observability: the PodMonitor that scrapes the pipelines' Spark drivers,
the ServiceMonitor of the operator, the PrometheusRule's alerts and the Grafana dashboards.

Checked with the real tools: the monitors against the Prometheus operator's CRDs (from the vendored
kube-prometheus-stack), the alerts with ``promtool test rules`` (unit tests in ``promtool/``), and -
the slow test - every dashboard query run by a real Prometheus that scraped a real streamer run
(planned from a HudiTable and a HudiPipeline by the operator's planner) and the operator's metrics
endpoint, through the scrape jobs the Prometheus operator would make of the chart's monitors."""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest
import yaml

from hudi_engine.table.meta_client import HoodieTable
from hudi_operator.api import load
from hudi_operator.metrics import Metrics
from hudi_operator.planner import OperatorSettings, plan_pipeline
from hudi_operator.planner.spark_app import JOB_CONFIG_KEY, job_config_yaml
from hudi_operator.reconcile import table_status
from tests.support.helm import by_kind, CHARTS, built_umbrella, helm, load_all, refusal, template, vendored_charts
from tests.support.prometheus import (api, discovered_pod, exported_series_names, monitor_scrape_config, query,
                                      start_prometheus)
from tests.support.services import free_port

OPERATOR = CHARTS / "hudi-operator"
DASHBOARDS = OPERATOR / "files" / "dashboards"
PROMTOOL_TESTS = Path(__file__).parent / "promtool"
ALL_ON = {"metrics.serviceMonitor.enabled": "true", "metrics.podMonitor.enabled": "true",
          "metrics.prometheusRule.enabled": "true", "metrics.dashboards.enabled": "true"}
JOB_NAMESPACES = ("lakehouse", "analytics")
WATCHING = {**ALL_ON, "watchNamespaces": "{" + ",".join(JOB_NAMESPACES) + "}"}
MONITORING_KINDS = ("PodMonitor", "ServiceMonitor", "PrometheusRule")
# Grafana's own variables, as a dashboard over the last hour would set them.
GRAFANA_BUILTINS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")
_LABEL_VALUES = re.compile(r"label_values\((.+),\s*(\w+)\)")


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = by_kind(objects, kind)
    return found


# --- the monitors ------------------------------------------------------------------------------------
def monitoring_crd_schemas() -> dict[str, dict]:
    """openAPIV3Schema by kind of the Prometheus operator's CRDs, from the kube-prometheus-stack
    archive of the version the umbrella chart pins."""
    deps = yaml.safe_load((CHARTS / "hudi-lakehouse" / "Chart.yaml").read_text())["dependencies"]
    version = next(d["version"] for d in deps if d["name"] == "kube-prometheus-stack")
    schemas = {}
    with tarfile.open(vendored_charts() / f"kube-prometheus-stack-{version}.tgz") as archive:
        for kind in MONITORING_KINDS:
            member = f"kube-prometheus-stack/charts/crds/crds/crd-{kind.lower()}s.yaml"
            crd = yaml.safe_load(archive.extractfile(member).read())
            (served,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
            schemas[kind] = served["schema"]["openAPIV3Schema"]
    return schemas


def test_monitors_and_rules_validate_against_the_prometheus_operators_crds():
    schemas = monitoring_crd_schemas()
    objects = template(OPERATOR, WATCHING)
    for kind in MONITORING_KINDS:
        obj = one(objects, kind)
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in jsonschema.Draft7Validator(schemas[kind]).iter_errors(obj)]
        assert errors == [], f"{kind}: {errors}"
    assert not any(by_kind(template(OPERATOR), kind) for kind in (*MONITORING_KINDS, "ConfigMap")), \
        "monitoring objects are opt-in"


def test_pod_monitor_selects_the_drivers_of_planned_pipelines_in_the_job_namespaces():
    """The selector matches the planner's driver labels plus Spark's spark-role, not the executors;
    the endpoint is the driver port the planner declares."""
    job = planned_streamer(Path("/lake"), metrics_port=9090)
    app = job.application["spec"]
    monitor = one(template(OPERATOR, WATCHING), "PodMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= {**app["driver"]["labels"], "spark-role": "driver"}.items()
    assert not selector.items() <= {**app["executor"]["labels"], "spark-role": "executor"}.items()
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert [p["name"] for p in app["driver"]["ports"]] == [endpoint["port"]]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": list(JOB_NAMESPACES)}
    assert one(template(OPERATOR, ALL_ON), "PodMonitor")["spec"]["namespaceSelector"] == {"any": True}
    assert {r["targetLabel"] for r in endpoint["relabelings"]} == {"pipeline", "hudi_table"}


def test_operator_service_monitor_honours_the_resources_namespace_label():
    (endpoint,) = one(template(OPERATOR, ALL_ON), "ServiceMonitor")["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True


def operator_samples(metrics: Any) -> dict[tuple[str, frozenset], float]:
    return {(s.name, frozenset(s.labels.items())): s.value for family in metrics.registry.collect()
            for s in family.samples}


def test_operator_series_name_each_resource_and_go_with_it():
    """What the alerts and dashboards select on: namespace and the resource's name on every
    per-resource series; a deleted table or pipeline leaves none behind."""
    metrics = Metrics()
    metrics.pipeline("lake", "orders-ingest", "Failed")
    metrics.table_phase("lake", "orders", "Ready")
    metrics.table("lake", "orders", pending_compactions=2, pending_clusterings=1, last_commit_epoch=time.time() - 90)
    with metrics.timed("HudiTable"):
        pass
    found = operator_samples(metrics)
    table = {("namespace", "lake"), ("table", "orders")}
    assert found[("hudi_operator_pipeline_phase", frozenset({("namespace", "lake"), ("pipeline", "orders-ingest"),
                                                             ("phase", "Failed")}))] == 1
    assert found[("hudi_operator_table_phase", frozenset(table | {("phase", "Ready")}))] == 1
    assert found[("hudi_operator_table_pending_compactions", frozenset(table))] == 2
    assert found[("hudi_operator_table_pending_clusterings", frozenset(table))] == 1
    assert 90 <= found[("hudi_operator_table_last_commit_age_seconds", frozenset(table))] < 120
    assert found[("hudi_operator_reconcile_duration_seconds_count", frozenset({("kind", "HudiTable")}))] == 1
    metrics.pipeline("lake", "orders-ingest", None)
    metrics.forget_table("lake", "orders")
    assert not [key for key in operator_samples(metrics) if ("namespace", "lake") in key[1]]


# --- the alerts --------------------------------------------------------------------------------------
def rendered_rules(values_files: tuple[Path, ...] = ()) -> list[dict[str, Any]]:
    return one(template(OPERATOR, ALL_ON, values_files=values_files), "PrometheusRule")["spec"]["groups"]


def promtool(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("promtool")
    assert exe, "promtool comes with Debian's prometheus package (.ci/install-services)"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


def test_promtool_unit_tests_fire_every_alert_with_its_namespace_and_resource(tmp_path):
    """The chart's rules (default thresholds) against the series in promtool/*.test.yaml; every alert
    is expected to fire at least once there, naming what it is about."""
    groups = rendered_rules()
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}))
    tests = sorted(PROMTOOL_TESTS.glob("*.test.yaml"))
    for test in tests:
        shutil.copy(test, tmp_path)
    done = promtool("test", "rules", *(str(tmp_path / t.name) for t in tests))
    assert done.returncode == 0, done.stdout + done.stderr

    fired: dict[str, list[dict[str, str]]] = {}
    for test in tests:
        for case in yaml.safe_load(test.read_text())["tests"]:
            for check in case["alert_rule_test"]:
                fired.setdefault(check["alertname"], []).extend(a["exp_labels"] for a in check["exp_alerts"])
    names = {"hudi-pipelines": "pipeline", "hudi-tables": "table", "hudi-operator": None}
    for group in groups:
        for rule in group["rules"]:
            assert fired.get(rule["alert"]), f"no promtool test fires {rule['alert']}"
            name = names[group["name"]]
            assert all("namespace" in labels and (name is None or name in labels)
                       for labels in fired[rule["alert"]]), rule["alert"]
            assert "$labels.namespace" in rule["annotations"]["summary"] + rule["annotations"]["description"]
            if name:
                assert f"$labels.{name}" in rule["annotations"]["summary"], rule["alert"]


def test_thresholds_come_from_values(tmp_path):
    values = tmp_path / "values.yaml"      # a file: --set gives "0.2" as a string
    values.write_text(yaml.safe_dump({"metrics": {"prometheusRule": {
        "lagSeconds": 120, "pendingClusterings": 9, "recordErrorRatio": 0.2}}}))
    groups = rendered_rules((values,))
    exprs = {r["alert"]: r["expr"] for g in groups for r in g["rules"]}
    assert exprs["HudiPipelineLagging"].endswith("> 120")
    assert exprs["HudiClusteringsPilingUp"].endswith("> 9")
    assert exprs["HudiPipelineRecordErrors"].endswith("> 0.2")
    without_operator_scrape = one(template(OPERATOR, {**ALL_ON, "metrics.serviceMonitor.enabled": "false"}),
                                  "PrometheusRule")
    assert "HudiOperatorDown" not in {r["alert"] for g in without_operator_scrape["spec"]["groups"]
                                      for r in g["rules"]}


@pytest.mark.parametrize("values, field", [
    ({"metrics.prometheusRule.recordErrorRatio": "2"}, "/metrics/prometheusRule/recordErrorRatio"),
    ({"metrics.prometheusRule.lagSeconds": "0"}, "/metrics/prometheusRule/lagSeconds"),
    ({"metrics.podMonitor.interval": "often"}, "/metrics/podMonitor/interval"),
    ({"metrics.dashboards.namespace": "Monitoring_NS"}, "/metrics/dashboards/namespace"),
    ({"metrics.dashboards.folderAnnotation": ""}, "/metrics/dashboards/folderAnnotation"),
])
def test_bad_monitoring_values_are_refused_naming_the_field(values, field):
    assert field in refusal(OPERATOR, values)


# --- the dashboards ----------------------------------------------------------------------------------
def dashboard_files() -> dict[str, dict[str, Any]]:
    return {path.name: json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))}


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", ())          # a collapsed row holds its panels


def variables(dashboard: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in dashboard["templating"]["list"]}


def substitute(expr: str, values: dict[str, str]) -> str:
    """``expr`` with Grafana's variables replaced (KeyError on one the dashboard does not define)."""
    values = {**GRAFANA_BUILTINS, **values}
    return _VARIABLE.sub(lambda m: values[m.group(1) or m.group(2)], expr)


def panel_queries(dashboard: dict[str, Any], values: dict[str, str]) -> dict[str, str]:
    """Every panel query, by "panel title/refId", with the variables replaced."""
    return {f"{panel['title']}/{target['refId']}": substitute(target["expr"], values)
            for panel in panels(dashboard) if panel["type"] != "row" for target in panel["targets"]}


def variable_queries(dashboard: dict[str, Any], values: dict[str, str]) -> dict[str, str]:
    """Each query variable's ``label_values(selector, label)`` as the PromQL that answers it."""
    found = {}
    for name, variable in variables(dashboard).items():
        if variable["type"] == "query":
            selector, label = _LABEL_VALUES.fullmatch(variable["query"]["query"]).groups()
            found[name] = f"group by ({label}) ({substitute(selector, values)})"
    return found


def all_values(dashboard: dict[str, Any], found: dict[str, list[str]] | None = None) -> dict[str, str]:
    """What Grafana substitutes when every variable is "All": its allValue, else a regex of the
    values its query ``found`` (any value when not given)."""
    return {name: v.get("allValue") or ("(" + "|".join(map(grafana_regex_escape, found[name])) + ")" if found else ".+")
            for name, v in variables(dashboard).items() if v["type"] == "query"}


def grafana_regex_escape(value: str) -> str:
    """A value escaped as Grafana's Prometheus data source puts it into a regex matcher (a PromQL
    string, so each backslash doubled)."""
    return re.sub(r"([$^*+?.()|\\{}\[\]])", r"\\\\\1", value)


def test_dashboards_are_well_formed_for_grafana():
    boards = dashboard_files()
    assert set(boards) == {"pipelines.json", "operator.json"}
    assert len({b["uid"] for b in boards.values()}) == len({b["title"] for b in boards.values()}) == 2
    for name, board in boards.items():
        source = variables(board)["datasource"]        # any Prometheus data source the user picks
        assert (source["type"], source["query"]) == ("datasource", "prometheus"), name
        ids = [p["id"] for p in panels(board)]
        assert len(ids) == len(set(ids)), name
        for panel in panels(board):
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24 and grid["h"] > 0, (name, panel["title"])
            if panel["type"] == "row":
                continue
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            refs = [t["refId"] for t in panel["targets"]]
            assert refs and len(refs) == len(set(refs)), panel["title"]
        for variable in variables(board).values():
            if variable["type"] == "query":
                assert variable["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        panel_queries(board, all_values(board))          # every variable used is defined


def test_every_dashboard_query_is_promql_over_exported_metrics(tmp_path):
    """promtool parses each query (as a recording rule); the metrics it names are the operator's,
    the streamer's or Prometheus' own ``up``."""
    exported = exported_series_names() | {"up"}
    rules = []
    for name, board in dashboard_files().items():
        values = all_values(board)
        for where, expr in {**panel_queries(board, values), **variable_queries(board, values)}.items():
            used = set(re.findall(r"\b(hudi_[a-z_]+|up)\b(?=\s*[{\[)])", expr))
            assert used and used <= exported, f"{name} {where} uses {used - exported}"
            rules.append({"record": f"dashboard:query_{len(rules)}", "expr": expr})
    (tmp_path / "queries.yaml").write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    done = promtool("check", "rules", str(tmp_path / "queries.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_dashboards_render_as_configmaps_for_grafanas_sidecar():
    objects = template(OPERATOR, {**ALL_ON, "metrics.dashboards.namespace": "monitoring",
                                  "metrics.dashboards.label": "team_dashboard", "metrics.dashboards.labelValue": "yes",
                                  "metrics.dashboards.folder": "Lake"})
    maps = {m["metadata"]["name"]: m for m in by_kind(objects, "ConfigMap")}
    assert set(maps) == {"release-hudi-operator-dashboard-operator", "release-hudi-operator-dashboard-pipelines"}
    for config_map in maps.values():
        meta = config_map["metadata"]
        assert (meta["namespace"], meta["labels"]["team_dashboard"], meta["annotations"]) == (
            "monitoring", "yes", {"grafana_folder": "Lake"})
        ((key, text),) = config_map["data"].items()
        assert json.loads(text) == dashboard_files()[key]
    default = by_kind(template(OPERATOR, ALL_ON), "ConfigMap")[0]["metadata"]
    assert (default["namespace"], default["labels"]["grafana_dashboard"]) == ("platform", "1")


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector matches ``labels``."""
    def matches(rule: dict[str, Any]) -> bool:
        present, value = rule["key"] in labels, labels.get(rule["key"])
        return {"In": present and value in rule.get("values", ()), "NotIn": value not in rule.get("values", ()),
                "Exists": present, "DoesNotExist": not present}[rule["operator"]]
    return (selector.get("matchLabels", {}).items() <= labels.items()
            and all(matches(rule) for rule in selector.get("matchExpressions", ())))


def test_the_umbrellas_prometheus_and_grafana_pick_up_the_monitors_rules_and_dashboards(tmp_path):
    """The full umbrella with the vendored kube-prometheus-stack, Grafana turned on: its Prometheus
    selects the chart's monitors and rules, its dashboard sidecar the dashboards' ConfigMaps."""
    chart = built_umbrella(tmp_path)
    objects = load_all(helm("template", "lake", str(chart), "--namespace", "hudi-platform",
                            "--set", "global.storage.bucket=my-lakehouse",
                            "--set", "kube-prometheus-stack.grafana.enabled=true").stdout)
    prometheus = one(objects, "Prometheus")["spec"]
    for kind, selector in (("PodMonitor", "podMonitor"), ("ServiceMonitor", "serviceMonitor"),
                           ("PrometheusRule", "rule")):
        ours = [o for o in by_kind(objects, kind) if o["metadata"]["name"].startswith("lake-hudi-operator")]
        assert ours and all(selects(prometheus[f"{selector}Selector"], o["metadata"]["labels"]) for o in ours), kind
        assert prometheus[f"{selector}NamespaceSelector"] == {}, kind          # every namespace
    (sidecar,) = [c for d in by_kind(objects, "Deployment") if d["metadata"]["name"] == "lake-grafana"
                  for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == "grafana-sc-dashboard"]
    env = {e["name"]: e.get("value") for e in sidecar["env"]}
    dashboards = [m for m in by_kind(objects, "ConfigMap") if m["metadata"]["name"].startswith("lake-hudi-operator-dashboard")]
    assert len(dashboards) == len(dashboard_files())
    for config_map in dashboards:
        meta = config_map["metadata"]
        assert meta["labels"].get(env["LABEL"]) == env["LABEL_VALUE"], meta["name"]
        assert env["NAMESPACE"] == "ALL" or meta["namespace"] in env["NAMESPACE"].split(","), meta["name"]
        assert meta["annotations"][env["FOLDER_ANNOTATION"]] == "Hudi Lakehouse"


# --- every query against a real Prometheus that scraped a real streamer run --------------------------
NAMESPACE, TABLE, PIPELINE = "lakehouse", "orders", "orders-ingest"
API_VERSION = "lakehouse.hudi.dev/v1alpha1"
FILES, RECORDS_PER_FILE = 3, 40
# Panels that must show data after the run; the others may rightly be empty here (no Kafka lag, no
# failed batch, no compaction of a copy-on-write table, nothing degraded, no API error).
MAIN_PANELS = {
    "pipelines.json": {"Pipelines by phase/A", "Records written / s/A", "Records read / s/A",
                       "Source lag (age)/A", "Errors/A", "Commits / s/A", "Commit latency/A", "Commit latency/B",
                       "Time since the last commit/A", "Records in the last batch/A",
                       "Pending compactions/A", "Pending clusterings/A", "Table commit age/A"},
    "operator.json": {"Replicas up/A", "Pipelines by phase/A", "Tables by phase/A", "Reconciliations / s/A",
                      "Reconcile duration/A", "Reconcile duration/B", "Oldest commits/A",
                      "Table services waiting/A", "Table services waiting/B"},
}
# What Spark calls the driver's and an executor's pod and container (spark-operator's defaults).
DRIVER_CONTAINER, EXECUTOR_CONTAINER = "spark-kubernetes-driver", "spark-kubernetes-executor"


def resource(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


def orders_table(root: Path) -> dict[str, Any]:
    return resource("HudiTable", TABLE, {"basePath": str(root / "lake" / TABLE), "recordKey": ["id"],
                                         "partitionFields": ["region"], "orderingField": "ts",
                                         "services": {"cleaning": {"mode": "disabled"}}})


def planned_streamer(root: Path, metrics_port: int, source_limit: int = 0) -> Any:
    """The pipeline's job as the operator plans it: continuous, a batch a second, one landing file per
    batch, a quality rule (its failures go to the error table), metrics served on ``metrics_port``."""
    pipeline = resource("HudiPipeline", PIPELINE, {
        "tableRef": {"name": TABLE}, "source": {"type": "files", "files": {"path": str(root / "landing")}},
        "mode": {"type": "continuous", "minSyncIntervalSeconds": 1}, "sourceLimit": source_limit,
        "qualityRules": [{"name": "amount_positive", "expression": "amount > 0"}],
        "metrics": {"port": metrics_port}})
    settings = OperatorSettings(namespace=NAMESPACE, job_config_dir=str(root / "job"))
    (job,) = plan_pipeline(load(orders_table(root)), load(pipeline), settings).jobs
    return job


def land_orders(folder: Path) -> int:
    """Files of orders, one in each ``RECORDS_PER_FILE`` failing the quality rule, written ten minutes
    ago (the source's lag); returns the largest file's size."""
    folder.mkdir(parents=True)
    started = time.time() - 600
    for n in range(FILES):
        rows = [{"id": f"o{n}-{i}", "region": ("eu", "us")[i % 2], "amount": -1.0 if i == 0 else 10.0 + i, "ts": n}
                for i in range(RECORDS_PER_FILE)]
        path = folder / f"orders-{n}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(path, (started + n, started + n))
    return max(p.stat().st_size for p in folder.iterdir())


def run_streamer(job: Any, root: Path) -> subprocess.Popen:
    """The job as its driver pod runs it: ``python -m hudi_jobs.streamer --job-config`` on the
    planned job-config, with its local Spark."""
    folder = root / "job"
    folder.mkdir()
    (folder / JOB_CONFIG_KEY).write_text(job_config_yaml(job.job_config))
    log = open(root / "streamer.log", "wb")
    with log:
        return subprocess.Popen([sys.executable, "-m", "hudi_jobs.streamer", "--job-config",
                                 str(folder / JOB_CONFIG_KEY)], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def reconcile(metrics: Any, table: Any) -> None:
    """What the operator's handlers record after reconciling the table and the pipeline: the
    table's real timeline read and its status worked out as the operator does."""
    with metrics.timed("HudiTable"):
        now = dt.datetime.now(dt.timezone.utc)
        base_path = table.spec.base_path
        observed = (table_status.observe(HoodieTable.load(base_path), table_status.compaction_trigger(table.spec),
                                         now) if HoodieTable.exists(base_path) else None)
        status = table_status.status(observed, {}, {}, 1, now)
    if observed is not None:
        committed = observed.last_commit_time.timestamp() if observed.last_commit_time else None
        metrics.table(NAMESPACE, TABLE, pending_compactions=observed.pending_compactions,
                      pending_clusterings=observed.pending_clusterings, last_commit_epoch=committed)
    metrics.table_phase(NAMESPACE, TABLE, status["phase"])
    metrics.reconciled("HudiTable", "ok")
    with metrics.timed("HudiPipeline"):
        metrics.pipeline(NAMESPACE, PIPELINE, "Running")
    metrics.reconciled("HudiPipeline", "ok")


def scrape_jobs(objects: list[dict[str, Any]], job: Any, streamer: str, operator: str) -> tuple[dict, ...]:
    """The Prometheus operator's scrape jobs for the chart's monitors, discovering: the streamer's
    driver pod (and an executor of the same job, which must not be scraped), and the operator's pod
    behind its metrics Service (in the release's namespace, "platform")."""
    app = job.application["spec"]
    driver, executor = app["driver"], app["executor"]
    pods = {streamer: discovered_pod(NAMESPACE, f"{job.name}-driver", DRIVER_CONTAINER,
                                     {**driver["labels"], "spark-role": "driver"}, driver["ports"][0]["name"]),
            # the same address, as an executor: no metrics port, spark-role executor
            streamer.replace("127.0.0.1", "localhost"): discovered_pod(
                NAMESPACE, f"{job.name}-exec-1", EXECUTOR_CONTAINER, {**executor["labels"], "spark-role": "executor"})}
    service = next(s for s in by_kind(objects, "Service") if s["metadata"]["name"].endswith("-metrics"))
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]
    operator_pod = discovered_pod("platform", "release-hudi-operator-0", pod["spec"]["containers"][0]["name"],
                                  pod["metadata"]["labels"], service["spec"]["ports"][0]["name"], service)
    return (monitor_scrape_config(one(objects, "PodMonitor"), pods),
            monitor_scrape_config(one(objects, "ServiceMonitor"), {operator: operator_pod}))


def until(check, what: str, timeout_s: float, streamer: subprocess.Popen, root: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert streamer.poll() is None, f"the streamer exited: {(root / 'streamer.log').read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"{what} within {timeout_s}s; {(root / 'streamer.log').read_text()[-3000:]}"
        time.sleep(0.5)


def answer_values(prometheus: Any, promql: str) -> list[float]:
    return [float(r["value"][1]) for r in query(prometheus, promql)]


@pytest.mark.slow
@pytest.mark.spark          # the streamer runs Spark in its own process
def test_every_dashboard_query_answers_from_a_real_streamer_run(tmp_path):
    one_file = land_orders(tmp_path / "landing")
    job = planned_streamer(tmp_path, free_port(), source_limit=one_file + 1)
    table = load(orders_table(tmp_path))
    objects = template(OPERATOR, {**ALL_ON, "watchNamespaces": "{" + NAMESPACE + "}"})
    metrics = Metrics()
    operator_server = metrics.serve(0, "127.0.0.1")
    streamer = run_streamer(job, tmp_path)
    prometheus = None
    try:
        port = job.application["spec"]["driver"]["ports"][0]["containerPort"]
        jobs = scrape_jobs(objects, job, f"127.0.0.1:{port}", f"127.0.0.1:{operator_server.server_address[1]}")
        prometheus = start_prometheus(tmp_path / "prometheus", {}, scrape_configs=jobs,
                                      rule_groups=tuple(one(objects, "PrometheusRule")["spec"]["groups"]))
        selector = f'{{namespace="{NAMESPACE}", pipeline="{PIPELINE}", hudi_table="{TABLE}"}}'

        def ingested() -> bool:
            reconcile(metrics, table)
            return answer_values(prometheus, f"hudi_streamer_batches_total{selector}") == [FILES]
        until(ingested, f"{FILES} batches scraped", 150, streamer, tmp_path)
        time.sleep(2)                                   # a few more scrapes after the last batch
        reconcile(metrics, table)

        # The executor's target was dropped by the PodMonitor's selection; the driver's kept.
        assert [r["metric"]["pod"] for r in query(prometheus, f'up{{namespace="{NAMESPACE}"}}')] == [
            f"{job.name}-driver"]
        assert answer_values(prometheus, f"hudi_streamer_records_errored_total{selector}") == [FILES]
        # The operator's series keep the resource's namespace, not the operator's.
        assert answer_values(prometheus, f'hudi_operator_pipeline_phase{{namespace="{NAMESPACE}", '
                                         f'pipeline="{PIPELINE}", phase="Running"}}') == [1]

        chosen = {"namespace": NAMESPACE, "pipeline": PIPELINE, "job": "release-hudi-operator-metrics"}
        for name, board in dashboard_files().items():
            found = {}
            for variable, promql in variable_queries(board, all_values(board)).items():
                label = _LABEL_VALUES.fullmatch(variables(board)[variable]["query"]["query"]).group(2)
                found[variable] = sorted(r["metric"][label] for r in query(prometheus, promql))
            assert found == {k: [chosen[k]] for k in found}, name      # the one pipeline, the one operator
            for values in (all_values(board, found), {k: chosen[k] for k in found}):
                answers = {where: api(prometheus, "query", query=promql)
                           for where, promql in panel_queries(board, values).items()}
                errors = {where: a.get("error") for where, a in answers.items() if a["status"] != "success"}
                assert errors == {}, (name, values)
                empty = {where for where, a in answers.items() if not a["data"]["result"]}
                assert not empty & MAIN_PANELS[name], (name, values, sorted(empty & MAIN_PANELS[name]))
                assert MAIN_PANELS[name] <= set(answers), name
                if name == "operator.json":       # the operator's own scrape only, not the pipelines'
                    assert [r["value"][1] for r in answers["Replicas up/A"]["data"]["result"]] == ["1"], values
        assert answer_values(prometheus, f"sum(rate(hudi_streamer_records_written_total{selector}[1m]))")[0] > 0
        # While files waited, the lag was their age (ten minutes); caught up, it is 0.
        assert answer_values(prometheus, f"max_over_time(hudi_streamer_source_lag_seconds{selector}[5m])")[0] > 500
        assert answer_values(prometheus, f"hudi_streamer_source_lag_seconds{selector}") == [0]

        # The alert rules evaluate against the same series without error; one record in forty failed
        # the quality rule, over the 1% the error alert allows: it is pending, naming the pipeline.
        rules = [r for g in api(prometheus, "rules")["data"]["groups"] for r in g["rules"]]
        assert {r["name"] for r in rules} >= {"HudiPipelineFailing", "HudiPipelineLagging", "HudiOperatorDown"}
        assert [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"] == []
        assert [(a["labels"], a["state"]) for a in api(prometheus, "alerts")["data"]["alerts"]] == [
            ({"alertname": "HudiPipelineRecordErrors", "namespace": NAMESPACE, "pipeline": PIPELINE,
              "severity": "warning"}, "pending")]
    finally:
        if prometheus is not None:
            prometheus.stop()
        if streamer.poll() is None:
            streamer.send_signal(signal.SIGTERM)
            try:
                streamer.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(streamer.pid, signal.SIGKILL)
                streamer.wait()
        operator_server.shutdown()
        operator_server.server_close()
