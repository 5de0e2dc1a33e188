"""What a local Spark driver's JVM starts with, beyond Spark's defaults: a class-data-sharing archive
(JDK 17's dynamic CDS) of the classes a Hudi session loads, made once per pyspark, Java and class
path. Spark loads and verifies some 20,000 classes as it starts; mapping them from the archive
instead makes a ``local_spark()`` session start in about 60% of the time (9 s instead of 14 s here),
and its first job too. Every ``hudictl run`` job and test process starts one.

``python -m hudi_engine.class_archive`` makes the archive (``make env`` runs it; about 30 s).
Sessions find it by their class path; a JVM that cannot use it (another Java, another class path)
starts without it, silently.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pyspark


# Where built artifacts (this archive, the SQL extension's jar) are kept: $HUDI_LAKEHOUSE_CACHE,
# else the user's cache folder.
CACHE_ENV = "HUDI_LAKEHOUSE_CACHE"
DUMP_ENV = "HUDI_JVM_ARCHIVE_DUMP"         # set by class_archive for the session that makes it
_OPTIONS = "spark.driver.extraJavaOptions"


def spark_jars() -> Path:
    """The jars of the pinned pyspark: Spark's class path, and the Scala compiler and Hive among them."""
    return Path(pyspark.__file__).parent / "jars"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                / "hudi-lakehouse")


def archive_path(class_path: str) -> Path:
    """The archive for drivers started with ``class_path`` (spark.driver.extraClassPath) before this
    pyspark's jars, by the ``java`` Spark would run."""
    java_path = java()
    digest = hashlib.sha256("\0".join((pyspark.__version__, pyspark.__file__, class_path, java_path or "",
                                       str(os.stat(java_path).st_mtime_ns) if java_path else "")).encode())
    return cache_dir() / "jvm" / f"spark-driver-{digest.hexdigest()[:16]}.jsa"


def with_archive(conf: dict[str, str]) -> dict[str, str]:
    """``conf`` (a local session's settings before it starts) using the archive, when there is one."""
    archive = archive_path(conf.get("spark.driver.extraClassPath", ""))
    if not archive.exists():
        return conf
    return _with_option(conf, f"-XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off")


def dump_option(conf: dict[str, str]) -> dict[str, str]:
    """In ``class_archive``'s workload: the session writes the classes it loaded at exit."""
    target = os.environ.get(DUMP_ENV)
    if not target:
        return conf
    return _with_option(conf, f"-XX:ArchiveClassesAtExit={target}")


def _with_option(conf: dict[str, str], option: str) -> dict[str, str]:
    return {**conf, _OPTIONS: " ".join(o for o in (conf.get(_OPTIONS), option) if o)}


def java() -> str | None:
    """The ``java`` Spark runs: $JAVA_HOME's, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = shutil.which("java", path=os.path.join(home, "bin")) if home else shutil.which("java")
    return os.path.realpath(found) if found else None
