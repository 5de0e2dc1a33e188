"""``hudictl platform`` drives the real helm through pyhelm3: ``template`` renders the umbrella chart
with --set/--values, and ``install --dry-run`` talks to kmock, an HTTP stand-in of the Kubernetes API
(no API server can run here): helm reads the server version and the release history from it and
changes nothing. A real install is not exercised: helm validates against the server's OpenAPI
document, which the stand-in does not serve."""
from __future__ import annotations

import asyncio
import subprocess
import sys

import kmock
import pytest
import yaml

from tests.support.helm import built_umbrella, helm_binary, load_all
from tests.support.kube_api import ApiServer, declare, write_kubeconfig


def hudictl_platform(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hudictl.cli", "platform", *args, "--helm", helm_binary()],
                          capture_output=True, text=True, timeout=120)


def test_template_renders_the_umbrella_with_values_files_and_sets(tmp_path):
    chart = built_umbrella(tmp_path)
    values = tmp_path / "prod.yaml"
    values.write_text(yaml.safe_dump({"global": {"storage": {"bucket": "prod-lake"}}, "hudi-operator": {"replicaCount": 3}}))
    done = hudictl_platform("template", "--chart", str(chart), "-f", str(values),
                            "--set", "hudi-operator.replicaCount=2", "--set", "kafka.enabled=false")
    assert done.returncode == 0, done.stderr
    objects = load_all(done.stdout)
    (operator,) = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("hudi-operator")]
    assert operator["spec"]["replicas"] == 2                                   # --set wins over --values
    assert not [o for o in objects if o["kind"] == "Kafka"]
    assert {"huditables.lakehouse.hudi.dev", "hudipipelines.lakehouse.hudi.dev"} <= {
        o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition"}


def test_bad_values_are_refused_by_the_charts_schema(tmp_path):
    done = hudictl_platform("template", "--chart", str(built_umbrella(tmp_path)),
                            "--set", "global.storage.bucket=s3://lake/x")
    assert done.returncode == 1 and "/global/storage/bucket" in done.stderr


@pytest.mark.asyncio
async def test_install_dry_run_against_the_api_stand_in_changes_nothing(tmp_path):
    chart = built_umbrella(tmp_path)
    server = ApiServer()
    declare(server, "v1/secrets", "Secret")
    declare(server, "v1/namespaces", "Namespace", namespaced=False)
    async with server, kmock.Server(server):
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server, "admin")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hudictl.cli", "platform", "install", "--dry-run", "--chart", str(chart),
            "--kubeconfig", str(kubeconfig), "--set", "global.storage.bucket=lake", "--helm", helm_binary(),
            stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(process.communicate(), 120)
        assert process.returncode == 0, err.decode()
        assert "revision 1 pending-install in hudi-platform" in err.decode()
        requests = [(r.method, r.url.path) for r in server]
        assert ("GET", "/api/v1/namespaces/hudi-platform/secrets") in requests      # the release history
        assert all(method == "GET" for method, _ in requests)
        assert not [key for key, obj in server.objects.items() if not obj.deleted]
