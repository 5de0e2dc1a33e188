"""The images and their release: one source of image names, Python and platforms
(hudi_operator/images.py) held against the charts, the planner, the Dockerfiles, the docs and the
release workflow; the Dockerfiles linted with hadolint and the workflow with jactionlint; the images'
dependency set resolved by pip's resolver for their Python and every platform they are built for
(this needs PyPI, as CI has). No Docker engine runs here, so the images themselves are not built."""
import functools
import http.server
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from fnmatch import fnmatch
from importlib.metadata import distribution, requires
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from hudi_operator import images
from hudi_operator.images import IMAGES, OPERATOR, PLATFORMS, PYTHON, SPARK_JOBS

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PINS = {Requirement(dep).name: str(Requirement(dep).specifier).removeprefix("==") for dep in PROJECT["dependencies"]}
BIN = Path(sys.executable).parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
CHARTS = sorted(path.parent.name for path in (ROOT / "charts").glob("*/Chart.yaml"))
# Pure-Python projects that publish only an sdist on PyPI: the image's pip builds their wheel, so the
# resolver is given their own requirements in their place, read from the venv's copy of the same pin.
SDIST_ONLY = ("pyspark",)


def _dockerfile(image) -> str:
    return (ROOT / image.dockerfile).read_text()


def _bases(text: str) -> list[str]:
    return re.findall(r"^FROM (\S+)", text, re.M)


def _header(text: str) -> str:
    """The Dockerfile's leading comment block."""
    return "\n".join(re.match(r"(?:#[^\n]*\n)+", text).group(0).splitlines())


def _python_base() -> str:
    return f"docker.io/library/python:{PYTHON}-slim-bookworm"


# --- the Dockerfiles -------------------------------------------------------------------------------

def test_spark_image_runs_the_official_entrypoint_of_the_pinned_pyspark():
    """Spark itself is the wheel's pyspark; only the Kubernetes entrypoint comes from the official image,
    of the same Spark version."""
    text = _dockerfile(SPARK_JOBS)
    assert f"docker.io/library/spark:{PINS['pyspark']}-scala2.13-java17-ubuntu" in _bases(text)
    assert re.search(r"^COPY --from=spark /opt/entrypoint.sh /opt/decom.sh /opt/$", text, re.M)
    assert re.findall(r"^ENTRYPOINT (.+)$", text, re.M) == ['["/opt/entrypoint.sh"]']
    assert re.search(r"^ENV SPARK_HOME=/opt/spark\b", text, re.M)
    # what the entrypoint starts: $SPARK_HOME/bin/spark-submit, ${SPARK_HOME}/jars/*, /usr/bin/tini
    assert 'for part in bin sbin jars python; do ln -s "${pyspark_dir}/${part}" "/opt/spark/${part}"' in text
    assert re.search(r"apt-get install [^\n]*\btini\b", text)


def test_spark_image_runs_the_java_the_tests_run():
    """Java 17 from Debian, the package `make java` installs for the tests (one Java, one Python)."""
    (java,) = re.findall(r"^JAVA_PKG\s*:=\s*(\S+)$", (ROOT / "Makefile").read_text(), re.M)
    (install,) = re.findall(r"apt-get install [^\n]*", _dockerfile(SPARK_JOBS))
    assert java in install.split()
    assert "java17" in _bases(_dockerfile(SPARK_JOBS))[0] and java.startswith("openjdk-17-")


def test_spark_image_adds_the_s3a_connector_of_pysparks_hadoop():
    """hadoop-aws must match the Hadoop client Spark runs, which is pyspark's own."""
    import pyspark

    (jar,) = Path(pyspark.__file__).parent.glob("jars/hadoop-client-api-*.jar")
    hadoop = jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    assert re.findall(r"^ARG HADOOP_VERSION=(\S+)$", _dockerfile(SPARK_JOBS), re.M) == [hadoop]


def test_the_metastore_finds_its_classpath_and_java_in_the_spark_image():
    """The Hive Metastore chart runs `java -cp "/opt/spark/jars/*"` from this image: java on PATH, and
    Spark's jars (Hive's metastore among them) with the PostgreSQL driver fetched beside them."""
    template = (ROOT / "charts" / "hive-metastore" / "templates" / "metastore.yaml").read_text()
    assert 'exec java -cp "/opt/spark/jars/*"' in template
    text = _dockerfile(SPARK_JOBS)
    assert re.search(r"apt-get install [^\n]*\bopenjdk-17-jre-headless\b", text)   # /usr/bin/java
    assert 'cp /tmp/jars/*.jar "${pyspark_dir}/jars/"' in text
    assert "org/postgresql/postgresql/" in (ROOT / "jobs" / "image" / "fetch_jars.py").read_text()


@pytest.mark.parametrize("image", IMAGES, ids=lambda image: image.name)
def test_images_run_the_one_python(image):
    """Both images on images.PYTHON, the floor of pyproject's requires-python, so the resolved
    dependency set is the one the images install."""
    bases = _bases(_dockerfile(image))
    assert bases[-1] == _python_base()
    assert all(base == _python_base() for base in bases if "/python:" in base)
    assert PROJECT["requires-python"] == f">={PYTHON}"


@pytest.mark.parametrize("image", IMAGES, ids=lambda image: image.name)
def test_images_install_the_wheel_and_pin_nothing_themselves(image):
    text = _dockerfile(image)
    assert "/tmp/dist/hudi_lakehouse-*.whl" in text
    installs = re.findall(r"pip install[^\n]*", text)
    assert installs and not any("==" in line for line in installs), f"{image.dockerfile}: versions belong in pyproject.toml"
    assert re.findall(r"^USER (\S+)$", text, re.M)[-1] in ("185", "10001"), f"{image.dockerfile} must end as a non-root user"


def test_build_context_holds_what_the_dockerfiles_use():
    """The images build from the repository root with an allow-list .dockerignore: every local file a
    Dockerfile copies or mounts is in it."""
    allowed = [line[1:] for line in (ROOT / ".dockerignore").read_text().splitlines() if line.startswith("!")]
    for image in IMAGES:
        text = _dockerfile(image)
        sources = re.findall(r"^COPY (?!--from)(\S+) ", text, re.M)
        sources += [m for m in re.findall(r"--mount=type=bind,source=([^,\s]+),target=", text)]
        assert sources, image.dockerfile
        for source in sources:
            probe = f"{source}/hudi_lakehouse-0.1.0-py3-none-any.whl" if source == "dist" else source
            assert any(fnmatch(probe, pattern) for pattern in allowed), f"{image.dockerfile}: {source} is not in .dockerignore's allow-list"
            assert source == "dist" or (ROOT / source).is_file(), source


# --- one source of image names -----------------------------------------------------------------------

def test_charts_and_the_planner_take_the_image_names_of_the_one_source():
    from hudi_operator.planner.settings import DEFAULT_IMAGE

    version = PROJECT["version"]
    assert DEFAULT_IMAGE == SPARK_JOBS.ref(version)
    for chart in CHARTS:
        meta = yaml.safe_load((ROOT / "charts" / chart / "Chart.yaml").read_text())
        assert (meta["version"], meta["appVersion"]) == (version, version), chart
    operator_values = yaml.safe_load((ROOT / "charts" / "hudi-operator" / "values.yaml").read_text())
    metastore_values = yaml.safe_load((ROOT / "charts" / "hive-metastore" / "values.yaml").read_text())
    # an empty tag is the chart's appVersion, the project version the release tags the images with
    assert operator_values["image"]["repository"] == OPERATOR.repository and operator_values["image"]["tag"] == ""
    assert operator_values["sparkImage"] == {"repository": SPARK_JOBS.repository, "tag": ""}
    assert metastore_values["image"]["repository"] == SPARK_JOBS.repository and metastore_values["image"]["tag"] == ""


@pytest.mark.parametrize("image", IMAGES, ids=lambda image: image.name)
def test_dockerfile_headers_and_docs_name_the_image_and_its_source(image):
    header = _header(_dockerfile(image))
    assert f"{image.repository}:<project version>" in header
    assert "operator/hudi_operator/images.py" in header
    assert f"docker build -f {image.dockerfile} " in header          # from the repository root
    readme = (ROOT / Path(image.dockerfile).parent / "README.md").read_text()
    assert f"{image.repository}:<project version>" in readme and "hudi_operator/images.py" in readme


def test_no_other_image_or_chart_registry_name_anywhere():
    """Every ghcr.io name in the repository's files is one images.py defines (an image, the chart
    registry, or one of the charts in it)."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    charts = images.CHART_REGISTRY.removeprefix("oci://")
    known = {image.repository for image in IMAGES} | {charts} | {f"{charts}/{chart}" for chart in CHARTS}
    source = ROOT / "operator" / "hudi_operator" / "images.py"
    found: dict[str, set[str]] = {}
    for name in files:
        path = ROOT / name
        if path == source or not path.is_file() or path.suffix in (".tgz", ".gz", ".jar", ".parquet", ".png"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for ref in re.findall(r"ghcr\.io/[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*", text):
            found.setdefault(ref, set()).add(name)
    assert found, "the charts name their images"
    assert {ref: names for ref, names in found.items() if ref not in known} == {}


# --- the release workflow ----------------------------------------------------------------------------

def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps(job: str) -> list[dict]:
    return _workflow()["jobs"][job]["steps"]


def _outputs() -> dict[str, str]:
    """What images.py gives the workflow, run as the workflow runs it: a bare script, stdlib only."""
    out = subprocess.run([sys.executable, "-I", "operator/hudi_operator/images.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


def test_images_py_gives_the_workflow_every_image_and_platform():
    outputs = _outputs()
    assert json.loads(outputs["images"]) == [
        {"name": image.name, "repository": image.repository, "dockerfile": image.dockerfile} for image in IMAGES]
    assert outputs["platforms"].split(",") == list(PLATFORMS) == ["linux/amd64", "linux/arm64"]
    assert outputs["registry-host"] == "ghcr.io" and outputs["chart-registry"] == images.CHART_REGISTRY
    assert all((ROOT / image.dockerfile).is_file() for image in IMAGES)


def test_release_workflow_builds_scans_and_pushes_what_images_py_names():
    workflow = _workflow()
    assert workflow[True] == {"push": {"tags": ["v*"]}}     # PyYAML reads the key `on` as True
    wheel = workflow["jobs"]["wheel"]
    (facts,) = [step for step in wheel["steps"] if step.get("id") == "images"]
    assert facts["run"] == 'python3 operator/hudi_operator/images.py >> "$GITHUB_OUTPUT"'
    used = set(re.findall(r"steps\.images\.outputs\.([\w-]+)", WORKFLOW.read_text()))
    assert used and used <= set(_outputs()), "the workflow reads only what images.py prints"

    job = workflow["jobs"]["images"]
    assert job["strategy"]["matrix"]["image"] == "${{ fromJSON(needs.wheel.outputs.images) }}"
    steps = job["steps"]
    names = [step.get("uses", "").split("@")[0] for step in steps]
    builds = [step for step in steps if step.get("uses", "").startswith("docker/build-push-action@")]
    (scan,) = [step for step in steps if step.get("uses", "").startswith("aquasecurity/trivy-action@")]
    assert [build["with"]["file"] for build in builds] == ["${{ matrix.image.dockerfile }}"] * 2
    assert all(build["with"]["context"] == "." for build in builds)                # the repository root
    scanned, pushed = builds
    assert scanned["with"]["load"] is True and "push" not in scanned["with"]
    assert scan["with"]["image-ref"] == scanned["with"]["tags"] == pushed["with"]["tags"] == "${{ env.IMAGE_REF }}"
    assert job["env"]["IMAGE_REF"] == "${{ matrix.image.repository }}:${{ needs.wheel.outputs.version }}"
    assert (scan["with"]["severity"], scan["with"]["exit-code"]) == ("CRITICAL", "1")
    assert names.index("aquasecurity/trivy-action") < names.index("docker/login-action") < steps.index(pushed)
    assert pushed["with"]["push"] is True and pushed["with"]["platforms"] == "${{ needs.wheel.outputs.platforms }}"

    charts = workflow["jobs"]["charts"]
    assert set(charts["needs"]) == {"wheel", "images"}
    script = "\n".join(step.get("run", "") for step in charts["steps"])
    (released,) = re.findall(r"^\s*for chart in ([\w -]+); do$", script, re.M)
    assert sorted(released.split()) == CHARTS == ["hive-metastore", "hudi-lakehouse", "hudi-operator"]
    assert '"${HELM}" push "${RUNNER_TEMP}/charts/${chart}-${VERSION}.tgz" "${CHART_REGISTRY}"' in script
    assert "bash .ci/install-helm" in script                     # the helm the chart tests use


def test_release_workflow_pins_every_action_to_a_commit_of_a_release():
    uses = re.findall(r"uses: (\S+)@(\S+)(.*)$", WORKFLOW.read_text(), re.M)
    assert uses
    for action, ref, comment in uses:
        assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{action}@{ref}: pin a commit"
        assert re.fullmatch(r"\s+# v\d+\.\d+\.\d+", comment), f"{action}: say which release the commit is"


def test_release_workflow_header_says_it_cannot_run_here():
    assert "This workflow cannot run where the project is developed" in _header(WORKFLOW.read_text())


def _jactionlint(*args: str, stdin: str | None = None) -> list[dict]:
    result = subprocess.run(
        [str(BIN / "jactionlint"), "--no-online", "--profile", "pedantic", "--strict-exit",
         f"--shellcheck={BIN / 'shellcheck'}", "--format", "json", *args],
        cwd=ROOT, input=stdin, capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout or "[]")


def test_release_workflow_passes_jactionlint():
    """jactionlint (a maintained fork of actionlint; its wheel carries the binary) with every rule of
    its pedantic profile, shellcheck on the run: scripts and no ignores."""
    assert _jactionlint("--no-ignores", str(WORKFLOW.relative_to(ROOT))) == []
    broken = WORKFLOW.read_text().replace("needs: wheel\n", "needs: wheels\n", 1)
    assert {finding["id"] for finding in _jactionlint("-", stdin=broken)} >= {"undefined-job-needs"}


# --- hadolint -------------------------------------------------------------------------------------------

def _hadolint(path: str, tmp_path: Path, stdin: str | None = None) -> list[dict]:
    result = subprocess.run([str(BIN / "hadolint"), "--format", "json", "--failure-threshold", "style", path],
                            cwd=tmp_path, input=stdin, capture_output=True, text=True,
                            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})  # no stray config
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout or "[]")


@pytest.mark.parametrize("image", IMAGES, ids=lambda image: image.name)
def test_dockerfiles_pass_hadolint(image, tmp_path):
    """Every rule, at every level; a rule ignored inline only with the reason on the comment lines
    just above it."""
    path = ROOT / image.dockerfile
    assert _hadolint(str(path), tmp_path) == []
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines):
        if "hadolint ignore=" in line:
            above = lines[number - 1]
            assert above.startswith("# ") and "hadolint" not in above and len(above) > 40, \
                f"{image.dockerfile}:{number + 1}: say why the rule does not apply"
    assert {finding["code"] for finding in _hadolint("-", tmp_path, stdin="FROM python:latest\n")} == {"DL3007"}


# --- dependency resolution for the images' target ---------------------------------------------------

def _requirements() -> list[str]:
    """The wheel's dependencies as the images' pip sees them, sdist-only projects by their own
    requirements (read from the venv's copy of the same release, which must be pure Python)."""
    requirements = [dep for dep in PROJECT["dependencies"] if Requirement(dep).name not in SDIST_ONLY]
    for name in SDIST_ONLY:
        installed = distribution(name)
        assert installed.version == PINS[name], f"the venv's {name} is not pyproject's pin"
        assert "Tag: py3-none-any" in installed.read_text("WHEEL"), f"{name} is not pure Python"
        assert SpecifierSet(installed.metadata["Requires-Python"]).contains(PYTHON)
        requirements += [req for req in requires(name) or [] if "extra ==" not in req]
    return requirements


def _manylinux_tags(platform: str) -> list[str]:
    """Every manylinux tag the images' glibc (images.GLIBC) runs, newest first."""
    arch = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}[platform]
    major, minor = map(int, images.GLIBC.split("."))
    return [f"manylinux_{major}_{m}_{arch}" for m in range(minor, 16, -1)] + [f"manylinux2014_{arch}"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_image_dependencies_resolve_for_their_python_and_platform(platform, tmp_path):
    """pip's resolver, binary wheels only, for CPython images.PYTHON on the images' glibc: what the
    images' `pip install` of the wheel will find (nothing is downloaded but metadata)."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", "--report", str(report),
               "--python-version", PYTHON, "--implementation", "cp", "--abi", f"cp{PYTHON.replace('.', '')}"]
    for tag in _manylinux_tags(platform):
        command += ["--platform", tag]
    result = subprocess.run(command + _requirements(), capture_output=True, text=True, timeout=300)
    if result.returncode:
        # pip names the package: "No matching distribution found for X", or a conflict's "requested X"
        culprits = re.findall(r"(?:No matching distribution found for|requested) (\S+)", result.stderr)
        errors = "\n".join(line for line in result.stderr.splitlines() if not line.startswith("WARNING: Location"))
        pytest.fail(f"{platform}, CPython {PYTHON}, glibc {images.GLIBC}: {', '.join(culprits) or 'the set'} did not "
                    f"resolve to binary wheels:\n{errors[-3000:]}")
    installs = json.loads(report.read_text())["install"]
    resolved = {Requirement(item["metadata"]["name"]).name.lower().replace("_", "-"): item for item in installs}
    for name, pin in PINS.items():
        if name not in SDIST_ONLY:
            assert resolved[name.lower()]["metadata"]["version"] == pin, name
    for name, item in resolved.items():
        assert item["download_info"]["url"].endswith(".whl"), name


# --- the Spark image's jar fetcher ------------------------------------------------------------------

def _fetch_jars():
    spec = importlib.util.spec_from_file_location("fetch_jars", ROOT / "jobs" / "image" / "fetch_jars.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def maven(tmp_path):
    """A Maven repository layout served over HTTP on loopback: Hadoop 3.4.2's project POM naming its
    AWS SDK, and the three jars with their .sha1 files."""
    import hashlib

    repo = tmp_path / "repo"
    pom = repo / "org/apache/hadoop/hadoop-project/3.4.2/hadoop-project-3.4.2.pom"
    pom.parent.mkdir(parents=True)
    pom.write_text("<project><properties>\n  <aws-java-sdk-v2.version>2.29.52</aws-java-sdk-v2.version>\n"
                   "</properties></project>")
    for path in ("org/postgresql/postgresql/42.7.4/postgresql-42.7.4.jar",
                 "org/apache/hadoop/hadoop-aws/3.4.2/hadoop-aws-3.4.2.jar",
                 "software/amazon/awssdk/bundle/2.29.52/bundle-2.29.52.jar"):
        jar = repo / path
        jar.parent.mkdir(parents=True, exist_ok=True)
        jar.write_bytes(path.encode() * 5000)
        (repo / f"{path}.sha1").write_text(hashlib.sha1(jar.read_bytes()).hexdigest() + "  " + jar.name + "\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(repo))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield repo, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_fetch_jars_takes_the_sdk_hadoop_was_built_with_and_checks_every_jar(maven, tmp_path):
    repo, url = maven
    target = tmp_path / "jars"
    _fetch_jars().main(["--hadoop", "3.4.2", "--postgresql", "42.7.4", "--repository", url, str(target)])
    assert sorted(path.name for path in target.iterdir()) == [
        "bundle-2.29.52.jar", "hadoop-aws-3.4.2.jar", "postgresql-42.7.4.jar"]
    assert (target / "bundle-2.29.52.jar").read_bytes() == \
        (repo / "software/amazon/awssdk/bundle/2.29.52/bundle-2.29.52.jar").read_bytes()

    (repo / "org/apache/hadoop/hadoop-aws/3.4.2/hadoop-aws-3.4.2.jar").write_bytes(b"tampered")
    shutil.rmtree(target)
    with pytest.raises(SystemExit, match="hadoop-aws-3.4.2.jar: SHA-1 .* but the repository publishes"):
        _fetch_jars().main(["--hadoop", "3.4.2", "--postgresql", "42.7.4", "--repository", url, str(target)])
    assert not (target / "hadoop-aws-3.4.2.jar").exists() and not list(target.glob("tmp*"))
