"""The Spark session extension of ``extension/HudiSqlExtensions.scala``: built from source with the
Scala compiler that the pinned pyspark ships among its jars (so ``java`` is all it needs), once per
source and pyspark version, into a cache folder; and the session settings that load it.

``python -m hudi_engine.sql.jvm_extension`` builds it ahead of time (``make env``, the jobs image);
otherwise the first session that asks for it builds it (about 10 s).
"""
from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pyspark

from ..errors import HoodieError
from ..local_jvm import cache_dir, java, spark_jars

log = logging.getLogger(__name__)

EXTENSION_CLASS = "lakehouse.hudi.HudiSqlExtensions"
SOURCES = Path(__file__).with_name("extension")


def jar_path() -> Path:
    """Where the jar of these sources, built against this pyspark, is kept."""
    digest = hashlib.sha256(pyspark.__version__.encode())
    for source in sorted(SOURCES.glob("*.scala")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return cache_dir() / "jars" / f"hudi-sql-extension-{digest.hexdigest()[:16]}.jar"


def ensure_built() -> Path:
    """The extension's jar, built now if it is not yet: safe when several processes race to build it
    (each builds in a folder of its own and renames its jar into place)."""
    jar = jar_path()
    if jar.exists():
        return jar
    java_path = java()
    if java_path is None:
        raise HoodieError("building Hudi's Spark SQL extension needs `java` (Java 17, as Spark does): run `make java`")
    jar.parent.mkdir(parents=True, exist_ok=True)
    classpath = str(spark_jars() / "*")
    log.info("building Hudi's Spark SQL extension into %s (once per pyspark version)", jar)
    with tempfile.TemporaryDirectory(dir=jar.parent, prefix=".build-") as work:
        classes = Path(work) / "classes"
        classes.mkdir()
        command = [java_path, "-cp", classpath, "scala.tools.nsc.Main", "-classpath", classpath, "-nowarn",
                   "-d", str(classes), *map(str, sorted(SOURCES.glob("*.scala")))]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise HoodieError(f"building Hudi's Spark SQL extension failed (pyspark {pyspark.__version__}):\n"
                              f"{done.stdout}{done.stderr}")
        built = Path(work) / jar.name
        with zipfile.ZipFile(built, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(built, jar)
    return jar


def session_conf(conf: dict[str, str] | None = None) -> dict[str, str]:
    """``conf`` (a session's settings before it starts) with the extension added: on the driver's
    class path (py4j and Spark's extension loader both see it there) and in ``spark.sql.extensions``."""
    conf = dict(conf or {})
    jar = str(ensure_built())
    conf["spark.driver.extraClassPath"] = _joined(conf.get("spark.driver.extraClassPath"), jar, os.pathsep)
    conf["spark.sql.extensions"] = _joined(conf.get("spark.sql.extensions"), EXTENSION_CLASS, ",")
    return conf


def active(spark) -> bool:
    """Whether ``spark``'s application was started with the extension (the setting is static)."""
    return EXTENSION_CLASS in (spark.conf.get("spark.sql.extensions", "") or "").split(",")


def _joined(existing: str | None, value: str, sep: str) -> str:
    parts = [p for p in (existing or "").split(sep) if p]
    return sep.join(parts if value in parts else [*parts, value])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    log.info("%s", ensure_built())
