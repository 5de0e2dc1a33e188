"""The project's container images and chart registry, named once.

Each image is published as `<REGISTRY>/<name>:<project version>` for every platform in PLATFORMS,
and the charts as `<CHART_REGISTRY>/<chart>:<project version>`. The planner's default image
(planner/settings.py) is built from here; the charts' values, the Dockerfiles' header comments and
the docs are held to these names by tests/charts/test_images.py; the release workflow reads them by
running this file (`python operator/hudi_operator/images.py`), so it imports only the standard
library.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

REGISTRY = "ghcr.io/hudi-lakehouse"
CHART_REGISTRY = f"oci://{REGISTRY}/charts"
# Both images' Python: python:<PYTHON>-slim-bookworm (Debian 12, glibc GLIBC), the oldest
# pyproject.toml's requires-python allows. The dependency set is resolved for exactly this target.
PYTHON = "3.11"
GLIBC = "2.36"
# What the release builds; every pinned dependency has wheels for both (a test resolves them).
PLATFORMS = ("linux/amd64", "linux/arm64")


@dataclass(frozen=True)
class Image:
    name: str         # the repository under REGISTRY
    dockerfile: str   # built from the repository root, with the project's wheel in dist/

    @property
    def repository(self) -> str:
        return f"{REGISTRY}/{self.name}"

    def ref(self, tag: str) -> str:
        return f"{self.repository}:{tag}"


SPARK_JOBS = Image("spark-jobs", "jobs/Dockerfile")   # the jobs the planner launches; the metastore too
OPERATOR = Image("operator", "operator/Dockerfile")
IMAGES = (SPARK_JOBS, OPERATOR)


def github_outputs() -> str:
    """`key=value` lines for a GitHub Actions step's $GITHUB_OUTPUT (the release workflow's matrix)."""
    images = [{"name": image.name, "repository": image.repository, "dockerfile": image.dockerfile}
              for image in IMAGES]
    return "\n".join([
        f"registry-host={REGISTRY.split('/')[0]}",
        f"images={json.dumps(images)}",
        f"platforms={','.join(PLATFORMS)}",
        f"chart-registry={CHART_REGISTRY}",
    ])


if __name__ == "__main__":
    print(github_outputs())
