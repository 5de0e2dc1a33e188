"""``python -m hudi_operator``: the operator process. Settings come from the environment (see
``settings.Settings.from_env``); the flags override them for a local run."""
from __future__ import annotations

import argparse
import dataclasses
import time

import kopf

from .settings import Settings

EXAMPLE = """examples:
  python -m hudi_operator -n lakehouse                 # one namespace, with the current kubeconfig
  PEERING_NAME=hudi-operator python -m hudi_operator   # all namespaces; HA with the other replicas
"""


def main(argv: list[str] | None = None) -> None:
    env = Settings.from_env()
    parser = argparse.ArgumentParser(prog="python -m hudi_operator", description=__doc__, epilog=EXAMPLE,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", "-n", action="append", dest="namespaces",
                        help="watch this namespace (repeatable); default: WATCH_NAMESPACES, else all")
    parser.add_argument("--peering", default=env.peering,
                        help="peering name: replicas sharing it keep one active (HA); default: "
                             "PEERING_NAME, else standalone")
    parser.add_argument("--priority", type=int, default=env.priority,
                        help="peering priority: the highest live replica works, the others stand by; "
                             "default: PEERING_PRIORITY, else the earliest started replica leads")
    parser.add_argument("--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)
    settings = dataclasses.replace(env, namespaces=tuple(args.namespaces or env.namespaces),
                                   peering=args.peering or None, priority=args.priority)

    from . import handlers  # noqa: F401  (importing registers the handlers with kopf)

    kopf.configure(verbose=args.verbose)
    kopf.run(standalone=settings.peering is None, peering_name=settings.peering,
             priority=settings.peering_priority(time.time()),
             clusterwide=settings.clusterwide, namespaces=list(settings.namespaces),
             liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz")


if __name__ == "__main__":
    main()
