"""What the planner takes from the operator's installation rather than from a spec: the Spark
image, where jobs find their files inside it, how the Spark operator retries and keeps runs."""
from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from hudi_jobs.placeholders import DEFAULT_SECRETS_DIR


def _project_version() -> str:
    try:
        return version("hudi-lakehouse")
    except PackageNotFoundError:
        return "latest"


DEFAULT_IMAGE = f"ghcr.io/hudi-lakehouse/spark-jobs:{_project_version()}"


@dataclass(frozen=True)
class OperatorSettings:
    image: str = DEFAULT_IMAGE                   # SparkSpec.image when a spec leaves it out
    service_account: str | None = None           # the jobs' service account when a spec names none
    namespace: str = "default"                   # for resources without metadata.namespace
    main_application_file: str = "local:///opt/hudi/jobs/main.py"
    job_config_dir: str = "/etc/hudi/job"        # the job-config ConfigMap's mount in the driver
    secrets_dir: str = DEFAULT_SECRETS_DIR       # Secrets mount at <secrets_dir>/<secret name>
    config_dir: str = "/etc/hudi/config"         # referenced ConfigMaps mount at <config_dir>/<name>
    on_failure_retries: int = 3                  # continuous pipelines: restarts after a failure ...
    on_failure_retry_interval_seconds: int = 30  # ... this many seconds apart
    on_submission_failure_retries: int = 3
    on_submission_failure_retry_interval_seconds: int = 30
    catalog_sync_schedule: str = "@hourly"      # the scheduled catalog sync of tables with catalogSync
    successful_run_history_limit: int = 3        # ScheduledSparkApplication runs kept
    failed_run_history_limit: int = 3
