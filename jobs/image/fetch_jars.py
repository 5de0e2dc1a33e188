"""Fetches the jars the Spark jobs image adds to Spark's own (a build stage of jobs/Dockerfile), each
checked against the SHA-1 the Maven repository publishes beside it:
- PostgreSQL's JDBC driver: the Hive Metastore chart runs the metastore from this image;
- the S3A connector, for users' own Spark code reading s3a:// (the engine reads and writes object
  stores through pyarrow and needs none of it): hadoop-aws at the Hadoop version of the image's Spark
  and the AWS SDK v2 bundle that Hadoop release is built against, read from its hadoop-project POM so
  the pair cannot drift apart.
Standard library only: it runs on the bare Python image.

    python fetch_jars.py --hadoop 3.4.2 --postgresql 42.7.4 /jars
"""
from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import tempfile
import urllib.request
from pathlib import Path

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
CHUNK = 1 << 20


def _read(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def aws_sdk_version(repository: str, hadoop: str) -> str:
    """The AWS SDK v2 version hadoop-aws <hadoop> was built and tested against."""
    pom = _read(f"{repository}/org/apache/hadoop/hadoop-project/{hadoop}/hadoop-project-{hadoop}.pom").decode()
    match = re.search(r"<aws-java-sdk-v2\.version>\s*([^<\s]+)\s*</aws-java-sdk-v2\.version>", pom)
    if not match:
        raise SystemExit(f"hadoop-project {hadoop}'s POM sets no aws-java-sdk-v2.version: is {hadoop} a Hadoop 3.4+ release?")
    return match.group(1)


def artifacts(repository: str, hadoop: str, postgresql: str) -> list[str]:
    """The jars' paths in the Maven repository."""
    sdk = aws_sdk_version(repository, hadoop)
    return [
        f"org/postgresql/postgresql/{postgresql}/postgresql-{postgresql}.jar",
        f"org/apache/hadoop/hadoop-aws/{hadoop}/hadoop-aws-{hadoop}.jar",
        f"software/amazon/awssdk/bundle/{sdk}/bundle-{sdk}.jar",
    ]


def fetch(repository: str, path: str, target_dir: Path) -> Path:
    """Streams one jar into target_dir (the SDK bundle is over 500 MB) and keeps it only if its SHA-1
    is the published one."""
    expected = _read(f"{repository}/{path}.sha1").decode().split()[0].lower()
    target = target_dir / path.rsplit("/", 1)[1]
    digest = hashlib.sha1()
    with urllib.request.urlopen(f"{repository}/{path}", timeout=60) as response, \
            tempfile.NamedTemporaryFile(dir=target_dir, delete=False) as partial:
        while chunk := response.read(CHUNK):
            digest.update(chunk)
            partial.write(chunk)
    if digest.hexdigest() != expected:
        Path(partial.name).unlink()
        raise SystemExit(f"{repository}/{path}: SHA-1 {digest.hexdigest()}, but the repository publishes {expected}")
    shutil.move(partial.name, target)
    target.chmod(0o644)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hadoop", required=True, help="the Hadoop version of the image's Spark")
    parser.add_argument("--postgresql", required=True, help="the PostgreSQL JDBC driver's version")
    parser.add_argument("--repository", default=MAVEN_CENTRAL, help="a Maven repository (default: Maven Central)")
    parser.add_argument("target_dir", type=Path)
    args = parser.parse_args(argv)
    args.target_dir.mkdir(parents=True, exist_ok=True)
    for path in artifacts(args.repository.rstrip("/"), args.hadoop, args.postgresql):
        print(fetch(args.repository.rstrip("/"), path, args.target_dir))


if __name__ == "__main__":
    main()
