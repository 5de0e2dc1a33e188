"""``python -m hudi_operator``: the operator process. Settings come from the environment (see
``settings.Settings.from_env``); the flags override them for a local run."""
from __future__ import annotations

import argparse
import dataclasses

import kopf

from .settings import Settings


def main(argv: list[str] | None = None) -> None:
    env = Settings.from_env()
    parser = argparse.ArgumentParser(prog="python -m hudi_operator", description=__doc__)
    parser.add_argument("--namespace", "-n", action="append", dest="namespaces",
                        help="watch this namespace (repeatable); default: WATCH_NAMESPACES, else all")
    parser.add_argument("--peering", default=env.peering,
                        help="peering name: replicas sharing it keep one active (HA); default: "
                             "PEERING_NAME, else standalone")
    parser.add_argument("--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)
    settings = dataclasses.replace(env, namespaces=tuple(args.namespaces or env.namespaces),
                                   peering=args.peering or None)

    from . import handlers  # noqa: F401  (importing registers the handlers with kopf)

    kopf.configure(verbose=args.verbose)
    kopf.run(standalone=settings.peering is None, peering_name=settings.peering,
             clusterwide=settings.clusterwide, namespaces=list(settings.namespaces),
             liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz")


if __name__ == "__main__":
    main()
