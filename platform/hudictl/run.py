"""``hudictl run``: the local executor. Plans HudiTable/HudiPipeline resources exactly as the operator
does, then runs each pipeline's job-config on this machine with local Spark instead of submitting a
SparkApplication — the lakehouse with no cluster.

Each pipeline runs as its own ``python -m hudi_jobs.streamer --job-config`` process, as the driver
would in a pod: continuous pipelines run side by side (one in-process streamer would hold the others
up forever), each job keeps its own SparkSession, signal handling and environment, and a crash stops
only that job. The Spark operator's part is played here: the job-config and its files are written
where the plan says they are mounted, the ConfigMaps of the files given (SQL files, Avro schemas) are
written under the config folder, ``$HUDI_SECRETS_DIR`` points at ``--secrets-dir`` (files
``<dir>/<secret>/<key>``, read for ``${secret:...}`` placeholders), and a Secret the plan passes as
environment (``envFrom``) is read from the same folder."""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .local_process import free_port
from .render import add_resource_arguments, load_resources, report
from .table_services import ServiceScheduler

EXAMPLE = """examples:
  hudictl run -f lake.yaml --once                  # one batch of every pipeline, in dependency order
  hudictl run -f lake.yaml --once --table-services # ... then each table's scheduled services, once
  hudictl run -f orders.yaml -f orders-pipeline.yaml --secrets-dir ./secrets
  hudictl run -f examples/lakehouse/ --metrics-targets /tmp/hudi-targets.json  # for a local Prometheus
      # continuous pipelines keep running until Ctrl-C (each finishes its batch, then stops);
      # ./secrets/kafka-user/password holds the 'password' key of Secret 'kafka-user'

Pipelines run in dependency order: a hudiIncremental pipeline after the pipelines writing its upstream
table. A scheduled pipeline runs once (there is no scheduler here); with --once continuous ones do too.
Suspended pipelines are skipped. Inline table services run inside the pipelines as they would in the
cluster. With --table-services the scheduled ones (compaction, clustering, cleaning, savepoints,
catalog sync) run beside continuous pipelines, each as a process of its own, on its cron schedule and,
with runWhenDue, as soon as Hudi's triggers say it is due; one run per service of a table at a time,
until the pipelines end or Ctrl-C. With --once (or no continuous pipeline) each runs once after the
pipelines. Catalog sync needs the table's metastore to be reachable from here.

Each pipeline serves its metrics on a free port here (in the cluster: the port of spec.metrics);
--metrics-targets writes them, labelled as the chart's PodMonitor labels them (namespace, pipeline,
hudi_table), to a file that Prometheus' file_sd_configs reads:
  scrape_configs: [{job_name: hudi-pipelines, file_sd_configs: [{files: [/tmp/hudi-targets.json]}]}]

Ctrl-C (or SIGTERM) stops the pipelines after their batch and lets running services finish (a second
Ctrl-C stops them too); the exit code is 0 when every job ended cleanly, 1 otherwise.
"""
EXIT_FAILED = 1
SUPERVISE_SECONDS = 1.0      # how often the services beside continuous pipelines are looked at


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run the pipelines of HudiTable/HudiPipeline resources on this machine",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_resource_arguments(p)
    p.add_argument("--secrets-dir", default="./secrets", metavar="DIR",
                   help="folder of Secrets as files <DIR>/<secret>/<key> (default ./secrets)")
    p.add_argument("--once", action="store_true",
                   help="one batch per pipeline, continuous ones included (tests, demos)")
    p.add_argument("--table-services", action="store_true",
                   help="run each table's scheduled services beside continuous pipelines, on their "
                        "schedules and when due (with --once: once, after the pipelines)")
    p.add_argument("--metrics-targets", metavar="FILE",
                   help="write the pipelines' metrics endpoints to FILE, a Prometheus file_sd targets file")
    p.set_defaults(run=run)


def local_settings(namespace: str, **overrides: Any):
    """The planner's settings without a cluster: no platform lock (no Lease to take), so a table
    that several jobs write takes a lock file on local disk and must name its lock on object storage."""
    from hudi_operator.planner import OperatorSettings
    return OperatorSettings(namespace=namespace, default_lock_provider=None, **overrides)


def run(args: argparse.Namespace) -> int:
    from hudi_operator.planner.resource_set import ResourceError

    secrets_dir = Path(args.secrets_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="hudictl-run-") as work:
        settings = local_settings(args.namespace, secrets_dir=str(secrets_dir), config_dir=str(Path(work) / "config"))
        try:
            resources = load_resources(args)
            services = []
            for table in resources.tables.values():               # refuses what the operator refuses
                services += [(table, job, Path(work) / "services" / job.name)
                             for job in resources.plan_table(table, settings).jobs]
            jobs = []
            for pipeline in resources.pipelines_in_order():
                job_dir = Path(work) / "jobs" / pipeline.metadata.name
                plan = resources.plan_pipeline(pipeline, replace(settings, job_config_dir=str(job_dir)))
                jobs.append((pipeline, plan.jobs[0], job_dir))
        except ResourceError as exc:
            return report(exc)
        _write_config_maps(resources.config_maps, Path(settings.config_dir))
        beside = None
        if args.table_services and not args.once and any(_continuous(p, j) for p, j, _ in jobs):
            beside = ServiceScheduler.of(services, lambda job, job_dir: _start_service(job, job_dir, secrets_dir),
                                         _dt.datetime.now(), lambda job: _storage_conf(job, secrets_dir))
        targets = MetricsTargets(Path(args.metrics_targets), args.namespace) if args.metrics_targets else None
        done = _run_jobs(jobs, secrets_dir, args.once, beside, targets)
        if done != 0 or not args.table_services or beside is not None:
            return done
        return _run_services(services, secrets_dir)


def _write_config_maps(config_maps: dict[tuple[str, str], dict[str, str]], root: Path) -> None:
    """The files given ConfigMaps, where the plan mounts them: <config_dir>/<name>/<key>."""
    for (_, name), data in config_maps.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for key, value in data.items():
            (folder / key).write_text(value)


def _continuous(pipeline, job) -> bool:
    return pipeline.spec.state != "suspended" and bool(job.job_config.get("continuous"))


class MetricsTargets:
    """The running pipelines' metrics endpoints as a Prometheus file_sd targets file, rewritten
    whole (write and rename, so Prometheus never reads half of it) as each pipeline starts."""

    def __init__(self, path: Path, namespace: str):
        self.path, self.namespace = path.resolve(), namespace
        self.groups: list[dict[str, Any]] = []
        self._write()

    def add(self, pipeline, port: int) -> None:
        self.groups.append({"targets": [f"127.0.0.1:{port}"],
                            "labels": {"namespace": self.namespace, "pipeline": pipeline.metadata.name,
                                       "hudi_table": pipeline.spec.table_ref.name}})
        self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(f".{self.path.name}.tmp")
        temp.write_text(json.dumps(self.groups, indent=1))
        temp.replace(self.path)


def _run_jobs(jobs: list, secrets_dir: Path, once: bool, beside: ServiceScheduler | None = None,
              targets: MetricsTargets | None = None) -> int:
    """Run-once jobs to completion one after another; continuous ones started and left running
    while the next start, then waited for, with the table services ``beside`` them started as their
    schedules and triggers say. The first failure of a pipeline stops everything."""
    running: list[tuple[str, subprocess.Popen]] = []
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        from hudi_jobs.keys import metrics as MK
        from hudi_operator.planner.spark_app import job_config_yaml
        for pipeline, job, job_dir in jobs:
            name = f"HudiPipeline/{pipeline.metadata.name}"
            if pipeline.spec.state == "suspended":
                _say(f"{name}: suspended, not run")
                continue
            document = _local_job_config(job.job_config, once)
            process = _start(job, "hudi_jobs.streamer", job_config_yaml(document), job_dir, secrets_dir)
            port = document["hoodieConf"].get(MK.PROMETHEUS_PORT.key)
            if targets is not None and port:
                targets.add(pipeline, int(port))
            how = "continuously" if document["continuous"] else "once"
            _say(f"{name}: running {document['sourceClass']} into {document['targetBasePath']} {how}")
            if document["continuous"]:
                running.append((name, process))
            elif process.wait() != 0:
                return _failed(name, process.returncode)
        if beside is not None:
            return _supervise(running, beside)
        for name, process in running:
            if process.wait() != 0:
                return _failed(name, process.returncode)
    except KeyboardInterrupt:
        _say("stopping: each running pipeline finishes its batch and commits it")
        for _, process in running:
            process.send_signal(signal.SIGTERM)
        failed = [name for name, process in running if process.wait() != 0]
        for name in failed:
            _failed(name, dict(running)[name].returncode)
        if beside is not None:
            _say("waiting for the running table services to finish (Ctrl-C again stops them)")
            beside.stop(terminate=False)
            _say(f"table services: {beside.runs} run(s), {len(beside.failures)} failed")
            failed += beside.failures
        return EXIT_FAILED if failed else 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if beside is not None:
            beside.stop(terminate=True)
        for _, process in running:
            if process.poll() is None:
                process.terminate()
                process.wait()
    return 0


def _supervise(running: list[tuple[str, subprocess.Popen]], beside: ServiceScheduler) -> int:
    """The continuous pipelines until they end, the table services started beside them meanwhile;
    then the services still running are waited for."""
    while running:
        beside.tick(_dt.datetime.now())
        for name, process in list(running):
            if process.poll() is None:
                continue
            if process.returncode != 0:
                return _failed(name, process.returncode)
            running.remove((name, process))
        time.sleep(SUPERVISE_SECONDS)
    beside.stop(terminate=False)
    _say(f"table services: {beside.runs} run(s), {len(beside.failures)} failed")
    return EXIT_FAILED if beside.failures else 0


def _start_service(job, job_dir: Path, secrets_dir: Path) -> subprocess.Popen:
    from hudi_operator.planner.spark_app import job_config_yaml
    return _start(job, "hudi_jobs.table_service", job_config_yaml(job.job_config), job_dir, secrets_dir)


def _run_services(services: list, secrets_dir: Path) -> int:
    """Each table's scheduled services, once, one after another (what their cron would start)."""
    for table, job, job_dir in services:
        name = f"HudiTable/{table.metadata.name} {job.service}"
        _say(f"{name}: running once")
        code = _start_service(job, job_dir, secrets_dir).wait()
        if code != 0:
            return _failed(name, code)
    return 0


def _interrupt(signum, frame) -> None:
    """SIGTERM stops hudictl run as Ctrl-C does: the jobs are told once, then waited for."""
    raise KeyboardInterrupt


def _local_job_config(job_config: dict[str, Any], once: bool) -> dict[str, Any]:
    """The planned job-config with what differs on one machine: ``--once`` runs a single batch, and
    metrics are served on a free port (a Prometheus server here likely holds the default 9090)."""
    from hudi_jobs.keys import metrics as MK

    document = dict(job_config)
    conf = dict(document["hoodieConf"])
    if once and document.get("continuous"):
        document["continuous"] = False
        document.pop("minSyncIntervalSeconds", None)
    if MK.PROMETHEUS_PORT.key in conf:
        conf[MK.PROMETHEUS_PORT.key] = str(free_port())
    document["hoodieConf"] = conf
    return document


def _start(job, module: str, job_config: str, job_dir: Path, secrets_dir: Path) -> subprocess.Popen:
    """The job as the driver pod would run it (``python -m <module> --job-config``): its ConfigMap's
    files written where they are mounted, its environment from the plan's sparkConf driverEnv and
    envFrom Secrets."""
    from hudi_operator.planner.spark_app import JOB_CONFIG_KEY

    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / JOB_CONFIG_KEY).write_text(job_config)
    for key, text in job.files.items():
        (job_dir / key).write_text(text)
    app = _driver_app(job)
    env = dict(os.environ)
    prefix = "spark.kubernetes.driverEnv."
    env.update({k[len(prefix):]: v for k, v in app.get("sparkConf", {}).items() if k.startswith(prefix)})
    # The Hadoop settings (spark.hadoop.*: how to reach the table's store) reach the local session
    # as spark-submit's --conf would give them; the rest of the sparkConf is the cluster's.
    hadoop = [arg for k, v in _hadoop_conf(app).items() for arg in ("--conf", f"{k}={v}")]
    if hadoop:
        env["PYSPARK_SUBMIT_ARGS"] = shlex.join([*hadoop, "pyspark-shell"])
    env.update(_env_secrets(app, secrets_dir))
    # its own session: Ctrl-C reaches hudictl only, which passes one SIGTERM on (a second one
    # would make the job abandon its batch)
    return subprocess.Popen([sys.executable, "-m", module, "--job-config", str(job_dir / JOB_CONFIG_KEY)],
                            env=env, start_new_session=True)


def _driver_app(job) -> dict[str, Any]:
    app = job.application["spec"]
    return app.get("template", app)


def _hadoop_conf(app: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in app.get("sparkConf", {}).items() if k.startswith("spark.hadoop.")}


def _env_secrets(app: dict[str, Any], secrets_dir: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for source in app["driver"].get("envFrom", ()):
        found.update(_secret_env(secrets_dir, source["secretRef"]["name"]))
    return found


# The AWS SDK's environment variables and the S3A keys they stand for.
_AWS_ENV = {"AWS_ACCESS_KEY_ID": "fs.s3a.access.key", "AWS_SECRET_ACCESS_KEY": "fs.s3a.secret.key",
            "AWS_SESSION_TOKEN": "fs.s3a.session.token"}


def _storage_conf(job, secrets_dir: Path) -> dict[str, str]:
    """How this process reads the job's table (the due-service checks): the job's Hadoop settings and
    the credentials of the Secret the job gets as environment."""
    app = _driver_app(job)
    secrets = _env_secrets(app, secrets_dir)
    return {**_hadoop_conf(app), **{key: secrets[env] for env, key in _AWS_ENV.items() if env in secrets}}


def _secret_env(secrets_dir: Path, secret: str) -> dict[str, str]:
    folder = secrets_dir / secret
    if not folder.is_dir():
        raise SystemExit(f"hudictl: the plan passes Secret {secret} to the job as environment "
                         f"(spec.storage.credentialsSecret); put its keys as files in {folder}")
    return {f.name: f.read_text().rstrip("\n") for f in sorted(folder.iterdir()) if f.is_file()}


def _failed(name: str, code: int) -> int:
    _say(f"{name}: the job exited with code {code} (see its output above)")
    return EXIT_FAILED


def _say(message: str) -> None:
    print(f"hudictl run: {message}", file=sys.stderr, flush=True)
