"""``hudictl platform``: install, upgrade, uninstall or render the hudi-lakehouse Helm chart through
pyhelm3 (which drives the ``helm`` binary), so a platform team needs no Helm command lines of its
own. The chart's dependencies are built first when missing (``helm dependency build``)."""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from .compact import parse_conf

EXAMPLE = """examples:
  hudictl platform install --set global.storage.bucket=my-lakehouse --values prod.yaml --wait
  hudictl platform upgrade --set hudi-operator.replicaCount=2
  hudictl platform template --set kafka.enabled=false > lakehouse.yaml     # what would be applied
  hudictl platform uninstall                      # tables' data stays (deletionPolicy decides)
  hudictl platform install --dry-run --kubeconfig ~/.kube/staging

--set takes dotted keys; values are YAML (true, 2, [a,b]). The chart is charts/hudi-lakehouse of this
repository unless --chart names another (a folder or a packaged .tgz).
"""
ACTIONS = ("install", "upgrade", "uninstall", "template")
DEFAULT_CHART = Path(__file__).resolve().parents[2] / "charts" / "hudi-lakehouse"


def add_parser(sub) -> None:
    p = sub.add_parser("platform", help="install, upgrade, uninstall or render the platform's Helm chart",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("--release", default="hudi-lakehouse", help="Helm release name (default hudi-lakehouse)")
    p.add_argument("--namespace", "-n", default="hudi-platform", help="namespace of the release (created)")
    p.add_argument("--chart", type=Path, default=DEFAULT_CHART, help="the chart (default: charts/hudi-lakehouse)")
    p.add_argument("--values", "-f", action="append", type=Path, default=[], help="a values file (repeatable)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                   help="one value, dotted key (repeatable; wins over --values)")
    p.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    p.add_argument("--wait", action="store_true", help="wait until the release's pods are ready")
    p.add_argument("--timeout", default="10m", help="how long helm may take (default 10m)")
    p.add_argument("--kubeconfig", type=Path, help="kubeconfig (default: KUBECONFIG or ~/.kube/config)")
    p.add_argument("--helm", help="the helm binary (default: $HELM_BIN, helm on PATH, or .cache/tools/helm)")
    p.set_defaults(run=run)


def values_from(files: list[Path], sets: list[str]) -> dict[str, Any]:
    """Values files merged in order, then each --set (a dotted key, a YAML value) on top."""
    merged: dict[str, Any] = {}
    for path in files:
        _merge(merged, yaml.safe_load(path.read_text()) or {})
    for key, value in parse_conf(sets).items():
        node = merged
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise SystemExit(f"--set {key}: {part} is not a map in the values given")
        node[leaf] = yaml.safe_load(value) if value else ""
    return merged


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def helm_executable(explicit: str | None) -> str:
    found = explicit or os.environ.get("HELM_BIN") or shutil.which("helm")
    if not found:
        local = DEFAULT_CHART.parents[1] / ".cache" / "tools" / "helm"
        found = str(local) if local.exists() else None
    if not found:
        raise SystemExit("hudictl platform: no helm binary: install Helm, set HELM_BIN, or run .ci/install-helm")
    return found


def run(args: argparse.Namespace) -> int:
    from pyhelm3 import Client
    from pyhelm3.errors import Error as HelmError

    helm = helm_executable(args.helm)
    values = values_from(args.values, args.sets)
    client = Client(executable=helm, kubeconfig=args.kubeconfig, default_timeout=args.timeout)
    try:
        if args.action != "uninstall" and args.chart.is_dir():
            _build_dependencies(helm, args.chart)
        asyncio.run(_act(client, args, values))
    except HelmError as exc:
        print(f"hudictl platform {args.action}: helm refused: {str(exc).strip()}", file=sys.stderr)
        return 1
    return 0


async def _act(client, args: argparse.Namespace, values: dict[str, Any]) -> None:
    if args.action == "uninstall":
        await client.uninstall_release(args.release, namespace=args.namespace, dry_run=args.dry_run, wait=args.wait)
        print(f"hudictl platform: release {args.release} uninstalled from {args.namespace}"
              + (" (dry run)" if args.dry_run else ""), file=sys.stderr)
        return
    chart = await client.get_chart(args.chart)
    if args.action == "template":
        objects = await client.template_resources(chart, args.release, values, include_crds=True,
                                                  namespace=args.namespace)
        sys.stdout.write(yaml.safe_dump_all(list(objects), sort_keys=False))
        return
    revision = await client.install_or_upgrade_release(
        args.release, chart, values, namespace=args.namespace, create_namespace=True, dry_run=args.dry_run,
        wait=args.wait, atomic=args.wait)
    print(f"hudictl platform {args.action}: release {args.release} revision {revision.revision} "
          f"{revision.status.value} in {args.namespace}", file=sys.stderr)


def _build_dependencies(helm: str, chart: Path) -> None:
    """``helm dependency build`` when the chart's declared dependencies are not all in charts/."""
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    have = {p.name for p in (chart / "charts").glob("*")} if (chart / "charts").is_dir() else set()
    missing = [d["name"] for d in meta.get("dependencies") or ()
               if not any(name.startswith(f"{d['name']}-") or name == d["name"] for name in have)]
    if missing:
        print(f"hudictl platform: building the chart's dependencies ({', '.join(missing)})", file=sys.stderr)
        done = subprocess.run([helm, "dependency", "build", str(chart)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"hudictl platform: helm dependency build {chart} failed: {done.stderr.strip()}\n"
                             "the chart's repositories must be reachable, or give --chart a packaged chart")
