"""What the planner takes from the operator's installation rather than from a spec: the Spark
image, where jobs find their files inside it, the platform's defaults of every job's Spark
settings, how the Spark operator keeps scheduled runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version

from hudi_jobs.placeholders import DEFAULT_SECRETS_DIR

from ..api import SparkSpec
from hudi_operator.images import SPARK_JOBS


def _project_version() -> str:
    try:
        return version("hudi-lakehouse")
    except PackageNotFoundError:
        return "latest"


DEFAULT_IMAGE = SPARK_JOBS.ref(_project_version())


@dataclass(frozen=True)
class LockServices:
    """Where the platform's ZooKeeper and Hive Metastore locks are (None: the platform has none)."""
    zookeeper_url: str | None = None             # host or host:port, comma separated
    zookeeper_port: int = 2181                   # of the hosts that name none
    zookeeper_base_path: str = "/hudi/locks"     # the znode under which every table's lock lives
    hive_metastore_uris: str | None = None       # thrift://host:port, comma separated


@dataclass(frozen=True)
class OperatorSettings:
    image: str = DEFAULT_IMAGE                   # SparkSpec.image when a spec leaves it out
    service_account: str | None = None           # the jobs' service account when a spec names none
    namespace: str = "default"                   # for resources without metadata.namespace
    main_application_file: str = "local:///opt/hudi/jobs/main.py"
    job_config_dir: str = "/etc/hudi/job"        # the job-config ConfigMap's mount in the driver
    secrets_dir: str = DEFAULT_SECRETS_DIR       # Secrets mount at <secrets_dir>/<secret name>
    config_dir: str = "/etc/hudi/config"         # referenced ConfigMaps mount at <config_dir>/<name>
    # Where Spark writes inside the image (the official image's work-dir, and /tmp): emptyDir volumes
    # there when the containers' root filesystem is read-only.
    scratch_dirs: tuple[tuple[str, str], ...] = (("scratch-tmp", "/tmp"), ("scratch-work-dir", "/opt/spark/work-dir"))
    # The platform's Spark settings (the chart's jobDefaults), between SPARK_DEFAULTS and each table's.
    job_defaults: SparkSpec = field(default_factory=SparkSpec)
    catalog_sync_schedule: str = "@hourly"      # the scheduled catalog sync of tables with catalogSync
    # The lock of tables whose spec.concurrency names none (the chart's lock.provider): kubernetesLease on
    # a cluster; None where there is none (hudictl), see planner/concurrency.py.
    default_lock_provider: str | None = "kubernetesLease"
    # The platform's lock services (the chart's lock.zookeeper/lock.hiveMetastore), for the fields a
    # table's spec.concurrency.lock.<provider> leaves out: the platform default lock needs no section.
    lock_services: LockServices = field(default_factory=LockServices)
    successful_run_history_limit: int = 3        # ScheduledSparkApplication runs kept
    failed_run_history_limit: int = 3
