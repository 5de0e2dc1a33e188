"""One holder of a table's Kubernetes Lease lock, as its own process, so a test can kill or freeze it:

    python -m tests.support.lease_holder <base path> '<json options>'

It finds the API server through $KUBECONFIG (as a job run off the cluster does) and the lock through
the engine's ``lock_provider`` and the options, takes the lock and prints ``{"holder": identity}``; then,
for each line on stdin, checks it still holds it and prints ``{"held": true}`` or ``{"lost": message}``;
at the end of its input it releases the lock."""
from __future__ import annotations

import json
import sys

from hudi_engine.concurrency.locks import lock_provider
from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieLockError


def main(base_path: str, options: dict[str, str]) -> int:
    provider = lock_provider(base_path, HoodieConfig(options), purpose="a test's lease holder")
    try:
        if not provider.try_lock(30):
            print(json.dumps({"timeout": provider.holder()}), flush=True)
            return 1
        print(json.dumps({"holder": provider.identity}), flush=True)
        for _ in sys.stdin:
            try:
                provider.check_held()
                print(json.dumps({"held": True}), flush=True)
            except HoodieLockError as exc:
                print(json.dumps({"lost": str(exc)}), flush=True)
        provider.unlock()
        return 0
    finally:
        provider.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], json.loads(sys.argv[2])))
