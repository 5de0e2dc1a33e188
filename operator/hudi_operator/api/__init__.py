"""The lakehouse API (lakehouse.hudi.dev/v1alpha1): the HudiTable and HudiPipeline model, its
validation (``load``, ``check_update``) and the CRDs generated from it (``crd_manifests``)."""
from __future__ import annotations

from .common import (API_GROUP, API_VERSION, PYSPARK_VERSION, SPARK_DEFAULTS, Capabilities, ConfigMapKeyRef,
                     DriverSpec, ExecutorSpec, ObjectMeta, PodSecurityContext, RestartPolicySpec, SecretKeyRef,
                     SecurityContext, SecurityProfile, SparkSpec, TableRef)
from .errors import SpecError
from .fields import to_json
from .load import Resource, check_update, load, load_spark
from .pipeline import (DebeziumSource, ErrorTableSpec, FilesSource, HudiIncrementalSource, HudiPipelineResource,
                       HudiPipelineSpec, JdbcSource, KafkaSecurity, KafkaSource, MetricsSpec, ModeSpec, PostgresSource,
                       QualityRule, SchemaRegistrySpec, SourceSpec, Transformation, UpgradeSpec)
from .status import (ConcurrencyStatus, Condition, HudiPipelineStatus, HudiTableStatus, ReconciliationStatus, ServiceStatus,
                     SparkApplicationStatus)
from .table import (ArchivalSpec, CatalogSyncTarget, CdcSpec, CleaningSpec, ClusteringSpec, ColumnSpec, ConcurrencySpec,
                    CompactionSpec, FileSizingSpec, HudiTableResource, HudiTableSpec, IndexSpec, LockSpec, SavepointSpec,
                    SchemaSpec, ServicesSpec, StorageSpec)

__all__ = [
    "API_GROUP", "API_VERSION", "PYSPARK_VERSION", "SPARK_DEFAULTS", "SpecError", "Resource", "load",
    "check_update", "load_spark", "crd_manifests", "to_json", "ObjectMeta",
    "HudiTableResource", "HudiTableSpec", "HudiTableStatus", "HudiPipelineResource", "HudiPipelineSpec",
    "HudiPipelineStatus", "SparkSpec", "DriverSpec", "ExecutorSpec", "RestartPolicySpec", "PodSecurityContext",
    "SecurityContext", "SecurityProfile", "Capabilities", "SecretKeyRef", "ConfigMapKeyRef",
    "TableRef", "Condition", "ServiceStatus", "ReconciliationStatus", "SparkApplicationStatus",
    "ColumnSpec", "SchemaSpec", "IndexSpec", "FileSizingSpec", "CdcSpec", "CompactionSpec", "CleaningSpec",
    "ClusteringSpec", "ArchivalSpec", "ServicesSpec", "CatalogSyncTarget", "SavepointSpec", "StorageSpec",
    "SourceSpec", "FilesSource", "KafkaSource", "KafkaSecurity", "SchemaRegistrySpec", "HudiIncrementalSource",
    "DebeziumSource", "PostgresSource", "JdbcSource", "Transformation", "QualityRule", "ModeSpec", "ErrorTableSpec", "UpgradeSpec",
    "MetricsSpec", "ConcurrencySpec", "LockSpec", "ConcurrencyStatus",
]


def crd_manifests() -> list[dict]:
    """The CustomResourceDefinitions of HudiTable and HudiPipeline (apiextensions.k8s.io/v1).
    Imported on call so ``python -m hudi_operator.api.crds`` runs that module once."""
    from .crds import crd_manifests as build
    return build()
