"""The images' Dockerfiles and the charts agree with pyproject.toml, the one place versions are pinned
(no Docker engine runs here, so the images themselves are not built in tests)."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PINS = dict(re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", dep).groups() for dep in PROJECT["dependencies"])


def test_spark_image_is_the_pinned_pyspark_version_with_java_17():
    (base,) = re.findall(r"^FROM (\S+)", (ROOT / "jobs" / "Dockerfile").read_text(), re.M)
    assert base == f"docker.io/library/spark:{PINS['pyspark']}-scala2.13-java17-python3-ubuntu"


def test_spark_image_adds_the_s3a_connector_of_pysparks_hadoop():
    """hadoop-aws must match the Hadoop client Spark runs (pyspark ships the same as the image)."""
    import pyspark

    (jar,) = Path(pyspark.__file__).parent.glob("jars/hadoop-client-api-*.jar")
    hadoop = jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    assert re.findall(r"^ARG HADOOP_VERSION=(\S+)$", (ROOT / "jobs" / "Dockerfile").read_text(), re.M) == [hadoop]


def test_images_install_the_wheel_and_pin_nothing_themselves():
    for dockerfile in (ROOT / "jobs" / "Dockerfile", ROOT / "operator" / "Dockerfile"):
        text = dockerfile.read_text()
        assert "hudi_lakehouse-*.whl" in text
        installs = re.findall(r"pip install[^\n]*", text)
        assert installs and not any("==" in line for line in installs), f"{dockerfile}: versions belong in pyproject.toml"
        assert re.search(r"^USER (185|10001)$", text, re.M), f"{dockerfile} must end as a non-root user"


def test_charts_and_the_planners_default_image_carry_the_project_version():
    from hudi_operator.planner.settings import DEFAULT_IMAGE
    assert DEFAULT_IMAGE == f"ghcr.io/hudi-lakehouse/spark-jobs:{PROJECT['version']}"
    for chart in ("hudi-operator", "hive-metastore", "hudi-lakehouse"):
        assert yaml.safe_load((ROOT / "charts" / chart / "Chart.yaml").read_text())["appVersion"] == PROJECT["version"]
