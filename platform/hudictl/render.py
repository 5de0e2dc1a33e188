"""``hudictl render``: the Kubernetes objects the operator would create for HudiTable and
HudiPipeline resources (job-config ConfigMaps, SparkApplications, ScheduledSparkApplications),
printed as multi-document YAML — the same planner the operator runs, with no cluster."""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

EXAMPLE = """examples:
  hudictl render -f operator/examples/orders-table.yaml -f operator/examples/orders-kafka-pipeline.yaml
  hudictl render -f lake.yaml --namespace analytics --image registry.local/hudi-jobs:dev | kubectl apply -f -

Files hold HudiTable and HudiPipeline documents (several per file, separated by ---); a pipeline's
HudiTable, and the upstream table of a hudiIncremental source, must be among them. ConfigMaps in the
files (SQL files, Avro schemas) are accepted and not printed. Objects rendered from files carry no
ownerReferences (there is no uid before the API server creates the resource). A resource the
operator would refuse is reported with its field, and the command exits 2.
"""
EXIT_INVALID = 2


def add_parser(sub) -> None:
    p = sub.add_parser("render", help="print the Spark operator objects and job-configs of resources",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_resource_arguments(p)
    p.add_argument("--image", help="Spark image of jobs whose spec sets none (the operator's default image)")
    from hudi_operator.api.table import LOCK_PROVIDERS
    p.add_argument("--lock-provider", choices=LOCK_PROVIDERS,
                   help="the platform's lock of tables with several writers whose spec.concurrency names none, "
                        "as the operator's chart sets it (lock.provider; default kubernetesLease)")
    p.set_defaults(run=run)


def add_resource_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--filename", dest="files", action="append", required=True, metavar="FILE",
                   help="YAML file of HudiTable/HudiPipeline resources, or a folder of them (its *.yaml and "
                        "*.yml files in name order), '-' for stdin; repeatable. ${VAR}, ${VAR:=default} and "
                        "${VAR:-default} in the files are replaced from the environment, as Flux's "
                        "post-build substitution does")
    p.add_argument("--namespace", default="default",
                   help="namespace of resources that name none (default: default)")


# ${NAME}, ${NAME:=default}, ${NAME:-default} (Flux's and the shell's spellings); the jobs' own
# ${secret:...} and ${env:...} placeholders do not match and reach the jobs unchanged.
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[=-]([^}]*))?\}")


def substitute(text: str, environ: Mapping[str, str], where: str) -> str:
    """``text`` with its variables replaced; an unset variable without a default is refused."""
    def value(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if environ.get(name):
            return environ[name]
        if default is None:
            raise SystemExit(f"hudictl: {where} uses ${{{name}}}, which is not set: export {name}=..., or write "
                             f"${{{name}:=<default>}} in the file")
        return default
    return _VARIABLE.sub(value, text)


def _files(paths: list[str]) -> Iterator[str]:
    for path in paths:
        if path != "-" and Path(path).is_dir():
            yield from sorted(str(p) for p in Path(path).iterdir() if p.suffix in (".yaml", ".yml"))
        else:
            yield path


def read_documents(paths: list[str], environ: Mapping[str, str] | None = None) -> Iterator[tuple[str, Any]]:
    """(file and document number, document) of every YAML document in the files."""
    for path in _files(paths):
        text = substitute(sys.stdin.read() if path == "-" else Path(path).read_text(),
                          os.environ if environ is None else environ, path)
        try:
            for number, doc in enumerate(yaml.safe_load_all(text), start=1):
                yield f"{path} document {number}", doc
        except yaml.YAMLError as exc:
            raise SystemExit(f"hudictl: {path} is not valid YAML: {exc}") from None


def load_resources(args: argparse.Namespace):
    from hudi_operator.planner.resource_set import ResourceSet
    return ResourceSet.from_documents(read_documents(args.files), args.namespace)


def report(exc) -> int:
    print(f"hudictl: {exc.resource}: {exc.path}: {exc.message}", file=sys.stderr)
    return EXIT_INVALID


def run(args: argparse.Namespace) -> int:
    from hudi_operator.planner import OperatorSettings
    from hudi_operator.planner.resource_set import ResourceError

    settings = OperatorSettings(namespace=args.namespace, **({"image": args.image} if args.image else {}),
                                **({"default_lock_provider": args.lock_provider} if args.lock_provider else {}))
    try:
        resources = load_resources(args)
        plans, problems = [], []
        for resource, plan in resources.plans(settings):
            try:
                plans.append((resource, plan()))
            except ResourceError as exc:
                if str(exc) not in map(str, problems):       # a table's refusal, met again by its pipelines
                    problems.append(exc)
    except ResourceError as exc:
        problems = [exc]
    if problems:
        for problem in problems:
            report(problem)
        return EXIT_INVALID
    sys.stdout.write("".join(_header(resource, plan) + dump_manifests(plan.manifests) for resource, plan in plans))
    return 0


def _header(resource, plan) -> str:
    """A comment before a table's objects: how its writers share it."""
    if resource.kind != "HudiTable" or plan.concurrency is None:
        return ""
    return f"# HudiTable/{resource.metadata.name} concurrency: {plan.concurrency.summary()}\n"


def dump_manifests(manifests: list[dict[str, Any]]) -> str:
    """Multi-document YAML; multi-line strings (job-configs) as literal blocks, readable as files."""
    return yaml.dump_all(manifests, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, explicit_start=True)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
