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
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from .render import add_resource_arguments, load_resources, report

EXAMPLE = """examples:
  hudictl run -f lake.yaml --once                  # one batch of every pipeline, in dependency order
  hudictl run -f lake.yaml --once --table-services # ... then each table's scheduled services, once
  hudictl run -f orders.yaml -f orders-pipeline.yaml --secrets-dir ./secrets
      # continuous pipelines keep running until Ctrl-C (each finishes its batch, then stops);
      # ./secrets/kafka-user/password holds the 'password' key of Secret 'kafka-user'

Pipelines run in dependency order: a hudiIncremental pipeline after the pipelines writing its upstream
table. A scheduled pipeline runs once (there is no scheduler here); with --once continuous ones do too.
Suspended pipelines are skipped. Inline table services run inside the pipelines as they would in the
cluster; the scheduled ones (compaction, catalog sync) run once after the pipelines with
--table-services (catalog sync needs the table's metastore to be reachable from here).
"""
EXIT_FAILED = 1


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run the pipelines of HudiTable/HudiPipeline resources on this machine",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_resource_arguments(p)
    p.add_argument("--secrets-dir", default="./secrets", metavar="DIR",
                   help="folder of Secrets as files <DIR>/<secret>/<key> (default ./secrets)")
    p.add_argument("--once", action="store_true",
                   help="one batch per pipeline, continuous ones included (tests, demos)")
    p.add_argument("--table-services", action="store_true",
                   help="after the pipelines, run each table's scheduled services once")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hudi_operator.planner import OperatorSettings
    from hudi_operator.planner.resource_set import ResourceError

    secrets_dir = Path(args.secrets_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="hudictl-run-") as work:
        settings = OperatorSettings(namespace=args.namespace, secrets_dir=str(secrets_dir),
                                    config_dir=str(Path(work) / "config"))
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
        done = _run_jobs(jobs, secrets_dir, args.once)
        if done != 0 or not args.table_services:
            return done
        return _run_services(services, secrets_dir)


def _write_config_maps(config_maps: dict[tuple[str, str], dict[str, str]], root: Path) -> None:
    """The files given ConfigMaps, where the plan mounts them: <config_dir>/<name>/<key>."""
    for (_, name), data in config_maps.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for key, value in data.items():
            (folder / key).write_text(value)


def _run_jobs(jobs: list, secrets_dir: Path, once: bool) -> int:
    """Run-once jobs to completion one after another; continuous ones started and left running
    while the next start, then waited for. The first failure stops everything."""
    running: list[tuple[str, subprocess.Popen]] = []
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        from hudi_operator.planner.spark_app import job_config_yaml
        for pipeline, job, job_dir in jobs:
            name = f"HudiPipeline/{pipeline.metadata.name}"
            if pipeline.spec.state == "suspended":
                _say(f"{name}: suspended, not run")
                continue
            document = _local_job_config(job.job_config, once)
            process = _start(job, "hudi_jobs.streamer", job_config_yaml(document), job_dir, secrets_dir)
            how = "continuously" if document["continuous"] else "once"
            _say(f"{name}: running {document['sourceClass']} into {document['targetBasePath']} {how}")
            if document["continuous"]:
                running.append((name, process))
            elif process.wait() != 0:
                return _failed(name, process.returncode)
        for name, process in running:
            if process.wait() != 0:
                return _failed(name, process.returncode)
    except KeyboardInterrupt:
        _say("stopping: each running pipeline finishes its batch and commits it")
        for _, process in running:
            process.send_signal(signal.SIGTERM)
        for _, process in running:
            process.wait()
        return EXIT_FAILED
    finally:
        signal.signal(signal.SIGTERM, previous)
        for _, process in running:
            if process.poll() is None:
                process.terminate()
                process.wait()
    return 0


def _run_services(services: list, secrets_dir: Path) -> int:
    """Each table's scheduled services, once, one after another (what their cron would start)."""
    from hudi_operator.planner.spark_app import job_config_yaml
    for table, job, job_dir in services:
        name = f"HudiTable/{table.metadata.name} {job.service}"
        _say(f"{name}: running once")
        code = _start(job, "hudi_jobs.table_service", job_config_yaml(job.job_config), job_dir, secrets_dir).wait()
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
        conf[MK.PROMETHEUS_PORT.key] = "0"
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
    app = job.application["spec"]
    app = app.get("template", app)
    env = dict(os.environ)
    prefix = "spark.kubernetes.driverEnv."
    env.update({k[len(prefix):]: v for k, v in app.get("sparkConf", {}).items() if k.startswith(prefix)})
    # The Hadoop settings (spark.hadoop.*: how to reach the table's store) reach the local session
    # as spark-submit's --conf would give them; the rest of the sparkConf is the cluster's.
    hadoop = [arg for k, v in app.get("sparkConf", {}).items() if k.startswith("spark.hadoop.")
              for arg in ("--conf", f"{k}={v}")]
    if hadoop:
        env["PYSPARK_SUBMIT_ARGS"] = shlex.join([*hadoop, "pyspark-shell"])
    for source in app["driver"].get("envFrom", ()):
        env.update(_secret_env(secrets_dir, source["secretRef"]["name"]))
    # its own session: Ctrl-C reaches hudictl only, which passes one SIGTERM on (a second one
    # would make the job abandon its batch)
    return subprocess.Popen([sys.executable, "-m", module, "--job-config", str(job_dir / JOB_CONFIG_KEY)],
                            env=env, start_new_session=True)


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
