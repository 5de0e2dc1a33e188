"""Resources planned together, as ``hudictl`` reads them from files: each pipeline finds its table
and its hudiIncremental upstream by name in the same namespace (what the operator asks the API
server for), and pipelines come in dependency order — a pipeline reading a table after the
pipelines writing it."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Iterable

from ..api import HudiPipelineResource, HudiTableResource, SpecError, load
from .errors import PlanError
from .plan import Plan, plan_pipeline, plan_table
from .settings import OperatorSettings

CONFIG_MAP = "ConfigMap"


class ResourceError(ValueError):
    """A resource that cannot be loaded or planned: which one, the field, and what to do."""

    def __init__(self, resource: str, path: str, message: str):
        self.resource, self.path, self.message = resource, path, message
        super().__init__(f"{resource}: {path}: {message}")


@dataclass
class ResourceSet:
    tables: dict[tuple[str, str], HudiTableResource] = field(default_factory=dict)
    pipelines: list[HudiPipelineResource] = field(default_factory=list)
    config_maps: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (ns, name) → data
    namespace: str = "default"

    @classmethod
    def from_documents(cls, documents: Iterable[tuple[str, Any]], namespace: str) -> ResourceSet:
        """``documents``: (where it was read, the parsed document). HudiTables, HudiPipelines and
        the ConfigMaps they reference are taken; empty documents skipped; anything else refused."""
        found = cls(namespace=namespace)
        for where, doc in documents:
            if doc is None:
                continue
            kind = doc.get("kind") if isinstance(doc, dict) else None
            if kind == CONFIG_MAP and doc.get("apiVersion") == "v1":
                meta = doc.get("metadata") or {}
                found.config_maps[(meta.get("namespace") or namespace, meta.get("name"))] = dict(doc.get("data") or {})
                continue
            try:
                resource = load(doc)
            except SpecError as exc:
                name = (doc.get("metadata") or {}).get("name") if isinstance(doc, dict) else None
                raise ResourceError(f"{where} ({kind or 'no kind'}/{name or 'no name'})", exc.path, exc.message) from None
            key = (found._namespace(resource), resource.metadata.name)
            if isinstance(resource, HudiTableResource):
                if key in found.tables:
                    raise ResourceError(f"{where} (HudiTable/{key[1]})", "metadata.name",
                                        f"HudiTable {key[1]} is given twice in namespace {key[0]}")
                found.tables[key] = resource
            else:
                found.pipelines.append(resource)
        return found

    def _namespace(self, resource) -> str:
        return resource.metadata.namespace or self.namespace

    def table_of(self, pipeline: HudiPipelineResource) -> HudiTableResource:
        table = self.tables.get((self._namespace(pipeline), pipeline.spec.table_ref.name))
        if table is None:
            raise ResourceError(f"HudiPipeline/{pipeline.metadata.name}", "spec.tableRef.name",
                                f"HudiTable {pipeline.spec.table_ref.name} is not among the resources given; "
                                "add the file that declares it (-f)")
        return table

    def pipelines_of(self, table: HudiTableResource) -> list[HudiPipelineResource]:
        """The pipelines in the table's namespace (the planner takes those writing it)."""
        namespace = self._namespace(table)
        return [p for p in self.pipelines if self._namespace(p) == namespace]

    def upstream_of(self, pipeline: HudiPipelineResource) -> dict[str, HudiTableResource]:
        """The HudiTables the pipeline reads, by name: those it names by tableRef (when given here)
        and those declared at a basePath it reads."""
        namespace = self._namespace(pipeline)
        found = {name: self.tables[(namespace, name)] for _, name in pipeline.spec.upstream_refs()
                 if (namespace, name) in self.tables}
        for path in pipeline.spec.upstream_paths():
            table = next((t for t in self.tables.values() if t.spec.base_path.rstrip("/") == path.rstrip("/")), None)
            if table is not None:
                found[table.metadata.name] = table
        return found

    def pipelines_in_order(self) -> list[HudiPipelineResource]:
        """Pipelines in dependency order (stable: file order among independent ones)."""
        writers: dict[tuple[str, str], list[int]] = {}
        for i, pipeline in enumerate(self.pipelines):
            writers.setdefault((self._namespace(pipeline), self.table_of(pipeline).metadata.name), []).append(i)
        needs = {i: {w for t in self.upstream_of(pipeline).values()
                     for w in writers.get((self._namespace(t), t.metadata.name), ())} - {i}
                 for i, pipeline in enumerate(self.pipelines)}
        ordered: list[int] = []
        while len(ordered) < len(self.pipelines):
            ready = [i for i in range(len(self.pipelines)) if i not in ordered and needs[i] <= set(ordered)]
            if not ready:
                stuck = [self.pipelines[i].metadata.name for i in range(len(self.pipelines)) if i not in ordered]
                raise ResourceError(f"HudiPipeline/{stuck[0]}", "spec.source",
                                    f"pipelines {', '.join(stuck)} read each other's tables in a cycle; break it")
            ordered.append(ready[0])
        return [self.pipelines[i] for i in ordered]

    def plan_table(self, table: HudiTableResource, settings: OperatorSettings) -> Plan:
        try:
            return plan_table(table, self._settings(settings), self.pipelines_of(table))
        except PlanError as exc:
            raise ResourceError(exc.resource, exc.path, exc.message) from None

    def plan_pipeline(self, pipeline: HudiPipelineResource, settings: OperatorSettings) -> Plan:
        try:
            table = self.table_of(pipeline)
            return plan_pipeline(table, pipeline, self._settings(settings), self.upstream_of(pipeline),
                                 self.pipelines_of(table))
        except PlanError as exc:
            raise ResourceError(exc.resource, exc.path, exc.message) from None

    def plans(self, settings: OperatorSettings) -> list[tuple[Any, Callable[[], Plan]]]:
        """Every table's plan, then every pipeline's in dependency order: (the resource, the call that
        makes its plan), so a caller can report every resource that fails, not only the first."""
        return [*((t, partial(self.plan_table, t, settings)) for t in self.tables.values()),
                *((p, partial(self.plan_pipeline, p, settings)) for p in self.pipelines_in_order())]

    def _settings(self, settings: OperatorSettings) -> OperatorSettings:
        return replace(settings, namespace=self.namespace)
