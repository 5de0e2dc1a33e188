"""The generated CRDs: in sync with the chart, accepting the examples, and refusing exactly what
``hudi_operator.api.load`` refuses.

No Kubernetes API server can run here, so ``admit`` below is a validator standing in for the API
server's admission of a custom resource, in the API server's order: nulls pruned, the schema's
defaults applied, the structural schema checked with ``jsonschema`` (the CRD schema read as a JSON
Schema draft-7 subset; unknown fields refused, as ``kubectl apply``'s strict field validation
does), then every ``x-kubernetes-validations`` rule evaluated with cel-python (``celpy``) against the
object at the rule's level (transition rules only when an old object is given). The bad-spec table
holds the Python validation and the CRD against each other: each bad spec must be refused by both,
at the same field, and a CEL rule's message must be the one ``load`` gives.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import celpy
import jsonschema
import pytest
import yaml

from hudi_operator.api import SpecError, check_update, crd_manifests, load, to_json
from hudi_operator.api.crds import COMMAND, chart_path, file_name, peering_crds, render
from hudictl.render import substitute

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "operator" / "examples"
LAKEHOUSE = ROOT / "examples" / "lakehouse"
CHART = ROOT / "charts" / "hudi-operator"
CRDS = {m["spec"]["names"]["kind"]: m for m in crd_manifests()}


def openapi(kind: str) -> dict[str, Any]:
    return CRDS[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def example(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / name).read_text())


# --- the stand-in validator -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    layer: str          # "schema" or "cel"
    rule: str = ""


def admit(resource: dict[str, Any], old: dict[str, Any] | None = None) -> list[Problem]:
    """What the API server would say to a create (or, with ``old``, an update) of ``resource``."""
    schema = openapi(resource["kind"])
    obj = apply_defaults(schema, prune_nulls(copy.deepcopy(resource)))
    previous = None if old is None else apply_defaults(schema, prune_nulls(copy.deepcopy(old)))
    return schema_problems(schema, obj) + cel_problems(schema, obj, previous, "")


def prune_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [prune_nulls(v) for v in value]
    return value


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    if isinstance(value, dict) and "properties" in schema:
        for name, sub in schema["properties"].items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                apply_defaults(sub, value[name])
    elif isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for item in value.values():
            apply_defaults(schema["additionalProperties"], item)
    elif isinstance(value, list) and "items" in schema:
        for item in value:
            apply_defaults(schema["items"], item)
    return value


def as_json_schema(schema: dict[str, Any], closed: bool = True, root: bool = False) -> dict[str, Any]:
    """The structural schema as JSON Schema: Kubernetes extensions dropped, unknown fields refused
    (except under metadata, which the API server checks itself)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: as_json_schema(sub, closed=not (root and name == "metadata"))
                        for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = as_json_schema(value)
        else:
            out[key] = value
    if closed and "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


@functools.cache
def json_validator(kind: str) -> jsonschema.Draft7Validator:
    schema = as_json_schema(openapi(kind), root=True)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def schema_problems(schema: dict[str, Any], obj: dict[str, Any]) -> list[Problem]:
    problems = []
    for error in json_validator(obj["kind"]).iter_errors(obj):
        path = format_path(schema, list(error.absolute_path))
        names: list[str] = []
        if error.validator == "additionalProperties":
            names = [k for k in error.instance if k not in error.schema.get("properties", {})]
        elif error.validator == "required":
            names = [k for k in error.validator_value if k not in error.instance]
        for name in names or [""]:
            problems.append(Problem(join(path, name) if name else path, error.message, "schema"))
    return problems


def format_path(schema: dict[str, Any], parts: list[Any]) -> str:
    """A JSON path as ``load`` writes it: fields dotted, list indexes and map keys in brackets."""
    path = ""
    for part in parts:
        if isinstance(part, int):
            path, schema = f"{path}[{part}]", schema["items"]
        elif part in schema.get("properties", {}):
            path, schema = join(path, part), schema["properties"][part]
        else:
            path, schema = f"{path}[{part}]", schema["additionalProperties"]
    return path


def join(path: str, name: str) -> str:
    name = name.lstrip(".")
    return f"{path}.{name}" if path and name else path or name


@functools.cache
def cel_program(expression: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(expression))


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    result = cel_program(expression).evaluate(activation)
    if isinstance(result, celpy.CELEvalError):
        raise result
    return result


def cel_problems(schema: dict[str, Any], value: Any, old: Any, path: str) -> list[Problem]:
    problems = []
    for rule in schema.get("x-kubernetes-validations", []):
        transition = "oldSelf" in rule["rule"]
        if transition and old is None:
            continue
        activation = {"self": celpy.json_to_cel(value)}
        if transition:
            activation["oldSelf"] = celpy.json_to_cel(old)
        try:
            passed = bool(evaluate(rule["rule"], activation))
        except celpy.CELEvalError as exc:   # the API server refuses an object its rule cannot evaluate
            problems.append(Problem(path, f"rule could not be evaluated: {exc}", "cel", rule["rule"]))
            continue
        if not passed:
            message = (str(evaluate(rule["messageExpression"], activation)) if "messageExpression" in rule
                       else rule["message"])
            problems.append(Problem(join(path, rule.get("fieldPath", "")), message, "cel", rule["rule"]))
    if isinstance(value, dict) and "properties" in schema:
        for name, sub in schema["properties"].items():
            if name in value:
                before = old.get(name) if isinstance(old, dict) else None
                problems += cel_problems(sub, value[name], before, join(path, name))
    elif isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for key, item in value.items():
            problems += cel_problems(schema["additionalProperties"], item, None, f"{path}[{key}]")
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += cel_problems(schema["items"], item, None, f"{path}[{i}]")
    return problems


def all_rules() -> set[str]:
    """Every non-transition CEL rule of both CRDs."""
    found: set[str] = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            found.update(r["rule"] for r in schema.get("x-kubernetes-validations", []) if "oldSelf" not in r["rule"])
            for value in schema.values():
                walk(value)
    for kind in CRDS:
        walk(openapi(kind))
    return found


# --- the CRDs in the chart ---------------------------------------------------------------------------------
@pytest.mark.parametrize("manifest", crd_manifests() + peering_crds(), ids=file_name)
def test_chart_crds_are_the_generated_ones(manifest: dict[str, Any]) -> None:
    path = chart_path(CHART, manifest)
    assert path.exists() and path.read_text() == render(manifest), \
        f"{path.relative_to(ROOT)} is out of date with the model: run `{COMMAND}` from the repository root"
    assert yaml.safe_load(path.read_text()) == manifest


def test_crds_name_the_api_as_designed() -> None:
    table, pipeline = CRDS["HudiTable"]["spec"], CRDS["HudiPipeline"]["spec"]
    assert CRDS["HudiTable"]["metadata"]["name"] == "huditables.lakehouse.hudi.dev"
    assert table["names"]["shortNames"] == ["hudit", "htable"]
    assert pipeline["names"]["shortNames"] == ["hudip", "hpipe"]
    for spec in (table, pipeline):
        version = spec["versions"][0]
        assert (spec["group"], spec["scope"], version["name"]) == ("lakehouse.hudi.dev", "Namespaced", "v1alpha1")
        assert spec["names"]["categories"] == ["hudi", "lakehouse"]
        assert version["subresources"] == {"status": {}}
    assert [(c["name"], c["jsonPath"]) for c in table["versions"][0]["additionalPrinterColumns"]] == [
        ("Type", ".spec.tableType"), ("Phase", ".status.phase"), ("Last Commit", ".status.lastCommitInstant"),
        ("Pending Compactions", ".status.pendingCompactions"), ("Age", ".metadata.creationTimestamp")]
    assert [c["jsonPath"] for c in pipeline["versions"][0]["additionalPrinterColumns"]] == [
        ".spec.tableRef.name", ".spec.source.type", ".spec.state", ".status.phase",
        ".status.sparkApplication.state", ".status.lastCommitInstant", ".metadata.creationTimestamp"]
    spark = openapi("HudiTable")["properties"]["spec"]["properties"]["spark"]["properties"]
    assert spark["tolerations"]["items"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert {k: v for k, v in spark["affinity"].items() if k != "description"} == {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}
    # the security contexts are typed, so the API server refuses a misspelled field instead of pruning it
    assert spark["securityContext"]["x-kubernetes-map-type"] == "atomic"
    assert "readOnlyRootFilesystem" in spark["securityContext"]["properties"]


def _nodes(schema: Any, path: str = ""):
    if isinstance(schema, dict) and "type" in schema:
        yield path, schema
        for name, sub in schema.get("properties", {}).items():
            yield from _nodes(sub, f"{path}.{name}")
        if isinstance(schema.get("additionalProperties"), dict):
            yield from _nodes(schema["additionalProperties"], f"{path}[*]")
        if "items" in schema:
            yield from _nodes(schema["items"], f"{path}[]")


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_every_string_list_and_map_is_bounded_so_cel_rules_stay_under_the_cost_limit(kind: str) -> None:
    root = openapi(kind)
    for part in ("spec", "status"):
        for path, node in _nodes(root["properties"][part], part):
            if node["type"] == "string":
                assert "maxLength" in node or "enum" in node, path
            elif node["type"] == "array":
                assert "maxItems" in node, path
            elif node["type"] == "object" and "additionalProperties" in node:
                assert "maxProperties" in node, path
            assert "x-kubernetes-preserve-unknown-fields" not in node or path.endswith(PASS_THROUGH), path


PASS_THROUGH = ("spark.tolerations[]", "spark.affinity")     # Kubernetes structures, no rule reads into them


def test_every_rule_and_message_expression_compiles() -> None:
    env = celpy.Environment()
    for kind in CRDS:
        for _, node in _nodes(openapi(kind)):
            for rule in node.get("x-kubernetes-validations", []):
                env.compile(rule["rule"])
                if "messageExpression" in rule:
                    env.compile(rule["messageExpression"])


# --- examples ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_example_is_admitted_by_the_crd(name: str) -> None:
    assert admit(example(name)) == []


@pytest.mark.parametrize("path", sorted(LAKEHOUSE.glob("*.yaml")), ids=lambda p: p.name)
def test_the_demo_lakehouse_is_admitted_by_the_crds(path: Path) -> None:
    """examples/lakehouse/ as Kubernetes gets it: its variables replaced (here by their defaults)."""
    docs = [d for d in yaml.safe_load_all(substitute(path.read_text(), {}, str(path))) if d]
    assert docs and all(admit(doc) == [] for doc in docs)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_load_applies_the_defaults_the_crd_applies(name: str) -> None:
    resource = example(name)
    defaulted = apply_defaults(openapi(resource["kind"]), prune_nulls(copy.deepcopy(resource)))["spec"]
    assert to_json(load(resource).spec) == defaulted


# --- bad specs: refused by load and by the CRD ------------------------------------------------------------------
TABLE, SILVER_TABLE, CUSTOMERS = "orders-table.yaml", "orders-silver-table.yaml", "customers-table.yaml"
KAFKA, FILES = "orders-kafka-pipeline.yaml", "orders-files-pipeline.yaml"
DEBEZIUM, SILVER = "customers-debezium-pipeline.yaml", "silver-pipeline.yaml"


@dataclass(frozen=True)
class Bad:
    id: str
    example: str
    change: Callable[[dict[str, Any]], Any]
    path: str
    message: str        # a part of load's message (for CEL rules the CRD's message must equal load's)
    layer: str = "cel"

    def resource(self) -> dict[str, Any]:
        resource = example(self.example)
        self.change(resource)
        return resource


def spec(resource: dict[str, Any], *keys: str | int) -> Any:
    node = resource["spec"]
    for key in keys:
        node = node[key]
    return node


BAD = [
    # the cases the design names
    Bad("inline credentials in options", TABLE,
        lambda r: spec(r, "options").update({"hoodie.datasource.hive_sync.password": "hunter2"}),
        "spec.options", "option hoodie.datasource.hive_sync.password looks like a credential: put credentials in "
                        "a Secret and reference it"),
    Bad("SASL without secrets", KAFKA, lambda r: spec(r, "source", "kafka", "security").pop("jaasConfigSecret"),
        "spec.source.kafka", "security.protocol SASL_SSL needs usernameSecret and passwordSecret, or "
                             "jaasConfigSecret (Secret references); credentials are never written in the spec"),
    Bad("two source members", FILES,
        lambda r: spec(r, "source").update(kafka={"bootstrapServers": "kafka:9092", "topic": "orders"}),
        "spec.source", "set only the source member named by source.type"),
    Bad("scheduled mode without schedule", FILES, lambda r: spec(r, "mode").pop("schedule"),
        "spec.mode.schedule", "mode.type scheduled needs mode.schedule"),
    Bad("filterDupes with upsert", KAFKA, lambda r: spec(r).update(filterDupes=True),
        "spec.filterDupes", "contradicts operation upsert"),
    Bad("decimal without precision", SILVER_TABLE, lambda r: spec(r, "schema", "columns", 2).pop("precision"),
        "spec.schema.columns[2].precision", "column amount: type decimal needs precision"),
    Bad("schema with columns and avroSchemaRef", SILVER_TABLE,
        lambda r: spec(r, "schema").update(avroSchemaRef={"configMapName": "orders-schema", "key": "orders.avsc"}),
        "spec.schema", "schema takes columns or avroSchemaRef, not both"),
    Bad("smallFileLimit not below maxFileSize", TABLE,
        lambda r: spec(r).update(fileSizing={"maxFileSizeBytes": 1000, "smallFileLimitBytes": 1000}),
        "spec.fileSizing.smallFileLimitBytes", "fileSizing.smallFileLimitBytes (1000) must be below "
                                               "maxFileSizeBytes (1000)"),
    Bad("bad tableName", TABLE, lambda r: spec(r).update(tableName="1orders"),
        "spec.tableName", "must be a letter or '_' followed by letters, digits or '_'", "schema"),
    Bad("scheduled compaction on a COPY_ON_WRITE table", TABLE, lambda r: spec(r).update(tableType="COPY_ON_WRITE"),
        "spec.services.compaction.mode", "needs a MERGE_ON_READ table"),
    Bad("archival minCommits not below maxCommits", TABLE,
        lambda r: spec(r, "services", "archival").update(minCommits=40),
        "spec.services.archival.minCommits", "archival.minCommits (40) must be below maxCommits (40)"),
    Bad("duplicate quality rule names", KAFKA,
        lambda r: spec(r, "qualityRules").append({"name": "amount_not_negative", "expression": "amount < 1e9"}),
        "spec.qualityRules", "quality rule amount_not_negative is declared more than once"),
    # every other CEL rule
    Bad("SASL without mechanism", KAFKA, lambda r: spec(r, "source", "kafka", "security").pop("saslMechanism"),
        "spec.source.kafka.security.saslMechanism", "needs saslMechanism"),
    Bad("credential in Kafka options", KAFKA,
        lambda r: spec(r, "source", "kafka").update(options={"sasl.jaas.config": "org.apache...required;"}),
        "spec.source.kafka.options", "option sasl.jaas.config looks like a credential"),
    Bad("credential in sparkConf", TABLE,
        lambda r: spec(r, "spark").update(sparkConf={"spark.hadoop.fs.s3a.secret.key": "abc"}),
        "spec.spark.sparkConf", "option spark.hadoop.fs.s3a.secret.key looks like a credential"),
    Bad("credential in pipeline options", FILES,
        lambda r: spec(r).update(options={"hoodie.streamer.schemaprovider.registry.basic.auth": "u:p"}),
        "spec.options", "looks like a credential"),
    Bad("option that is not a Hudi option", TABLE, lambda r: spec(r, "options").update({"fs.s3a.endpoint": "x"}),
        "spec.options", "option fs.s3a.endpoint is not a Hudi option"),
    Bad("avro Kafka without a schema registry", DEBEZIUM,
        lambda r: spec(r, "source", "debezium", "kafka").pop("schemaRegistry"),
        "spec.source.debezium.kafka.schemaRegistry", "set schemaRegistry.url"),
    Bad("hudiIncremental with tableRef and basePath", SILVER,
        lambda r: spec(r, "source", "hudiIncremental").update(basePath="s3a://lake/bronze/orders"),
        "spec.source.hudiIncremental", "tableRef (a HudiTable) or basePath, not both"),
    Bad("duplicate view names", SILVER, lambda r: spec(r).update(views=[
        {"name": "orders", "tableRef": {"name": "orders"}}, {"name": "orders", "basePath": "/lake/orders"}]),
        "spec.views", "view orders is declared more than once"),
    Bad("view with tableRef and basePath", SILVER, lambda r: spec(r).update(views=[
        {"name": "orders", "tableRef": {"name": "orders"}, "basePath": "/lake/orders"}]),
        "spec.views[0]", "a view reads one Hudi table: set tableRef (a HudiTable) or basePath, not both"),
    Bad("source type without its member", FILES, lambda r: spec(r, "source").update(type="kafka"),
        "spec.source", "source.type kafka needs source.kafka"),
    Bad("transformation with sql and flatten", SILVER,
        lambda r: spec(r, "transformations", 0).update(sql="SELECT * FROM <SRC>"),
        "spec.transformations[0]", "exactly one of sql, sqlFileRef or flatten: true"),
    Bad("duplicate transformation names", SILVER, lambda r: spec(r, "transformations", 1).update(name="flatten"),
        "spec.transformations", "transformation names must be unique"),
    Bad("precision on a string column", SILVER_TABLE, lambda r: spec(r, "schema", "columns", 1).update(precision=3),
        "spec.schema.columns[1].type", "precision and scale apply to decimal columns only"),
    Bad("scale above precision", SILVER_TABLE, lambda r: spec(r, "schema", "columns", 2).update(scale=14),
        "spec.schema.columns[2].scale", "scale cannot exceed its precision"),
    Bad("empty schema", SILVER_TABLE, lambda r: spec(r).update(schema={}),
        "spec.schema", "schema needs columns or avroSchemaRef"),
    Bad("scheduled cleaning without schedule", TABLE, lambda r: spec(r, "services", "cleaning").update(mode="scheduled"),
        "spec.services.cleaning.schedule", "cleaning mode 'scheduled' needs a schedule"),
    Bad("scheduled compaction without schedule", TABLE, lambda r: spec(r, "services", "compaction").pop("schedule"),
        "spec.services.compaction.schedule", "compaction mode 'scheduled' needs a schedule"),
    Bad("scheduled clustering without schedule", SILVER_TABLE,
        lambda r: spec(r, "services").update(clustering={"mode": "scheduled", "sortColumns": ["status"]}),
        "spec.services.clustering.schedule", "clustering mode 'scheduled' needs a schedule"),
    Bad("scheduled indexing without schedule", TABLE,
        lambda r: spec(r, "services").update(indexing={"mode": "scheduled"}),
        "spec.services.indexing.schedule", "indexing mode 'scheduled' needs a schedule"),
    Bad("scheduled indexing without the metadata table", TABLE,
        lambda r: (spec(r).update(metadataTable={"enabled": False}),
                   spec(r, "services").update(indexing={"mode": "scheduled", "schedule": "@hourly"})),
        "spec.services.indexing.mode", "builds indexes in the metadata table"),
    Bad("ZORDER without sortColumns", SILVER_TABLE,
        lambda r: spec(r, "services").update(clustering={"mode": "scheduled", "schedule": "@daily", "layout": "ZORDER"}),
        "spec.services.clustering.sortColumns", "needs sortColumns"),
    Bad("archival minCommits not above retained commits", TABLE,
        lambda r: spec(r, "services", "cleaning").update(retainCommits=30),
        "spec.services.archival.minCommits", "must be above cleaning.retainCommits"),
    Bad("record index without the metadata table", TABLE,
        lambda r: spec(r).update(metadataTable={"enabled": False, "recordIndex": True}),
        "spec.metadataTable.enabled", "set metadataTable.enabled to true"),
    Bad("SIMPLE key generator with two keys", TABLE,
        lambda r: spec(r).update(recordKey=["order_id", "line"], keyGenerator="SIMPLE"),
        "spec.keyGenerator", "takes one recordKey field"),
    Bad("NON_PARTITION with partition fields", TABLE, lambda r: spec(r).update(keyGenerator="NON_PARTITION"),
        "spec.keyGenerator", "remove partitionFields"),
    Bad("resource name that makes no table name", CUSTOMERS,
        lambda r: r["metadata"].update(name="v2.customers"),
        "metadata.name", "metadata.name v2.customers does not make a table name"),
    *(Bad(f"lock settings of {section} under another provider", TABLE,
          lambda r, section=section, other=other: spec(r).update(concurrency={"lock": {
              "provider": other, section: {"url": "zk-0.zk"} if section == "zookeeper" else {},
              **({"zookeeper": {"url": "zk-0.zk"}} if other == "zookeeper" else {})}}),
          f"spec.concurrency.lock.{section}", f"lock.{section} holds the settings of provider {section}")
      for section, other in (("kubernetesLease", "fileSystem"), ("hiveMetastore", "kubernetesLease"),
                             ("zookeeper", "hiveMetastore"), ("fileSystem", "zookeeper"))),
    Bad("a lock for a single writer", TABLE,
        lambda r: spec(r).update(concurrency={"mode": "singleWriter", "lock": {"provider": "kubernetesLease"}}),
        "spec.concurrency.lock", "taken by optimistic concurrency control only"),
    # the structural schema
    Bad("unknown field", TABLE, lambda r: spec(r).update(recordkey=spec(r).pop("recordKey")),
        "spec.recordkey", "unknown field 'recordkey'; did you mean 'recordKey'?", "schema"),
    Bad("misspelled enum value", TABLE, lambda r: spec(r).update(tableType="MERGE_ON_REED"),
        "spec.tableType", "did you mean 'MERGE_ON_READ'?", "schema"),
    Bad("basePath that is no storage URI", TABLE, lambda r: spec(r).update(basePath="lake/orders"),
        "spec.basePath", "must be a storage URI", "schema"),
    Bad("missing recordKey", TABLE, lambda r: spec(r).pop("recordKey"), "spec.recordKey", "is required", "schema"),
    Bad("empty recordKey", TABLE, lambda r: spec(r).update(recordKey=[]), "spec.recordKey", "needs at least 1 item",
        "schema"),
    Bad("option value that is not a string", TABLE, lambda r: spec(r, "options").update({"hoodie.x": 5}),
        "spec.options[hoodie.x]", "quote it in YAML", "schema"),
    Bad("no executors", KAFKA, lambda r: spec(r, "spark", "executor").update(instances=0),
        "spec.spark.executor.instances", "must be at least 1", "schema"),
    Bad("schedule that is no cron", FILES, lambda r: spec(r, "mode").update(schedule="every 15 minutes"),
        "spec.mode.schedule", "must be a cron schedule", "schema"),
    Bad("inline password field", KAFKA,
        lambda r: spec(r, "source", "kafka", "security").update(password="hunter2"),
        "spec.source.kafka.security.password", "unknown field 'password'", "schema"),
]


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.id)
def test_bad_spec_is_refused_by_load_and_by_the_crd(bad: Bad) -> None:
    resource = bad.resource()
    with pytest.raises(SpecError) as refused:
        load(resource)
    assert refused.value.path == bad.path
    assert bad.message in refused.value.message
    problems = admit(resource)
    if bad.layer == "cel":
        assert (bad.path, refused.value.message) in {(p.path, p.message) for p in problems if p.layer == "cel"}, \
            problems
    else:
        assert bad.path in {p.path for p in problems if p.layer == "schema"}, problems
    assert all(not p.message.startswith("rule could not be evaluated") for p in problems), problems


def test_every_cel_rule_is_exercised_by_a_bad_spec() -> None:
    fired = {p.rule for bad in BAD for p in admit(bad.resource()) if p.layer == "cel"}
    assert all_rules() - fired == set()


# --- updates: a table's identity is fixed --------------------------------------------------------------------
@dataclass(frozen=True)
class Update:
    id: str
    change: Callable[[dict[str, Any]], Any]
    path: str | None            # None: the update is allowed
    message: str = ""           # a part of the message
    before: Callable[[dict[str, Any]], Any] = lambda r: None      # how the old table differs from the example

    def resources(self) -> tuple[dict[str, Any], dict[str, Any]]:
        old = example(TABLE)
        self.before(old)
        new = copy.deepcopy(old)
        self.change(new)
        return old, new


def bucketed(r: dict[str, Any]) -> None:
    spec(r).update(index={"type": "BUCKET", "numBuckets": 16})


UPDATES = [
    Update("basePath", lambda r: spec(r).update(basePath="s3a://lake/bronze/orders_v2"), "spec.basePath",
           "basePath cannot change: the table's files and timeline stay where they were written; create a new "
           "HudiTable and migrate the data into it"),
    Update("tableType", lambda r: (spec(r).update(tableType="COPY_ON_WRITE"),
                                   spec(r, "services", "compaction").update(mode="disabled")),
           "spec.tableType", "tableType cannot change"),
    Update("recordKey", lambda r: spec(r).update(recordKey=["order_id", "line_id"]), "spec.recordKey",
           "recordKey cannot change"),
    Update("recordKey renamed", lambda r: spec(r).update(recordKey=["id"]), "spec.recordKey", "recordKey cannot"),
    Update("partitionFields", lambda r: spec(r).update(partitionFields=["order_month"]), "spec.partitionFields",
           "partitionFields cannot change"),
    Update("partitionFields removed", lambda r: spec(r).pop("partitionFields"), "spec.partitionFields",
           "partitionFields cannot change"),
    Update("keyGenerator other than the derived one", lambda r: spec(r).update(keyGenerator="COMPLEX"),
           "spec.keyGenerator", "keyGenerator cannot change"),
    Update("keyGenerator removed", lambda r: spec(r).pop("keyGenerator"), "spec.keyGenerator",
           "keyGenerator cannot change", before=lambda r: spec(r).update(keyGenerator="COMPLEX")),
    Update("keyGenerator changed", lambda r: spec(r).update(keyGenerator="SIMPLE"), "spec.keyGenerator",
           "keyGenerator cannot change", before=lambda r: spec(r).update(keyGenerator="COMPLEX")),
    Update("index to BUCKET", bucketed, "spec.index.type", "index.type cannot change to or from BUCKET"),
    Update("index from BUCKET", lambda r: spec(r).update(index={"type": "SIMPLE"}), "spec.index.type",
           "index.type cannot change to or from BUCKET", before=bucketed),
    Update("bucket count", lambda r: spec(r, "index").update(numBuckets=32), "spec.index.numBuckets",
           "index.numBuckets cannot change on a BUCKET index", before=bucketed),
    # what may change
    Update("the derived keyGenerator written out", lambda r: spec(r).update(keyGenerator="SIMPLE"), None),
    Update("an explicit keyGenerator left out when it is the derived one", lambda r: spec(r).pop("keyGenerator"),
           None, before=lambda r: spec(r).update(keyGenerator="SIMPLE")),
    Update("numBuckets of an index that is not BUCKET", lambda r: spec(r).update(index={"numBuckets": 64}), None),
    Update("BUCKET to BUCKET with the same count", lambda r: spec(r, "index").update(updatePartitionPath=False),
           None, before=bucketed),
    Update("services, options and Spark settings",
           lambda r: (spec(r, "services", "cleaning").update(retainCommits=12), spec(r, "options").clear(),
                      spec(r, "spark").update(priorityClassName="lakehouse-batch")), None),
]


@pytest.mark.parametrize("update", UPDATES, ids=lambda u: u.id)
def test_identity_changes_are_refused_by_check_update_and_the_crds_transition_rules(update: Update) -> None:
    old, new = update.resources()
    assert admit(old) == [] and admit(new) == []            # each is a valid table on its own...
    problems = [(p.path, p.message) for p in admit(new, old=old)]
    if update.path is None:
        check_update(old, new)
        assert problems == []
        return
    with pytest.raises(SpecError) as refused:               # ...but not as an update of the other
        check_update(old, new)
    assert (refused.value.path, update.message in refused.value.message) == (update.path, True)
    assert (update.path, refused.value.message) in problems
    assert all(message.endswith(("migrate the data into it", "(with the new count)",
                                 "(or copy them to the new path first)", "is fine)")) for _, message in problems)


def transition_messages() -> set[str]:
    """The message of every transition rule (rule texts repeat: four fields say ``self == oldSelf``)."""
    found: set[str] = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            found.update(r["message"] for r in schema.get("x-kubernetes-validations", []) if "oldSelf" in r["rule"])
            for value in schema.values():
                walk(value)
    walk(openapi("HudiTable"))
    walk(openapi("HudiPipeline"))
    return found


def test_every_transition_rule_is_exercised_by_a_refused_update() -> None:
    fired = set()
    for update in UPDATES:
        old, new = update.resources()
        fired |= {p.message for p in admit(new, old=old) if "oldSelf" in p.rule}
    assert transition_messages() - fired == set()
    # basePath, tableType, recordKey, partitionFields, keyGenerator, index.type to/from BUCKET, numBuckets
    assert len(transition_messages()) == 7


def test_transition_rules_on_optional_fields_sit_where_adding_and_removing_are_seen() -> None:
    """The API server runs a transition rule only where the old object has the field, so rules on a
    field that may be absent (keyGenerator) sit on the parent, and field-level ones only on fields
    that are required or defaulted (always there)."""
    table_spec = openapi("HudiTable")["properties"]["spec"]

    def walk(schema: dict[str, Any], required: bool, path: str) -> None:
        for rule in schema.get("x-kubernetes-validations", []):
            if "oldSelf" in rule["rule"]:
                assert required, f"{path}: a transition rule on a field that may be absent"
        for name, sub in schema.get("properties", {}).items():
            walk(sub, required and (name in schema.get("required", ()) or "default" in sub), f"{path}.{name}")
    walk(table_spec, True, "spec")
