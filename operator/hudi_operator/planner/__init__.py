"""The planner: HudiTable/HudiPipeline specs → streamer job-configs and the Spark operator objects
that run them. Pure (no cluster, no PySpark), shared by the operator and ``hudictl``."""
from __future__ import annotations

from .errors import PlanError
from .plan import Plan, PlannedJob, plan_pipeline, plan_table, triggered_run
from .settings import LockServices, OperatorSettings

__all__ = ["LockServices", "OperatorSettings", "Plan", "PlanError", "PlannedJob", "plan_pipeline", "plan_table", "triggered_run"]
