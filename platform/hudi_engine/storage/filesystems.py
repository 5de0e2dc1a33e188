"""The ``pyarrow.fs`` filesystem behind a base URI: one client per (scheme, bucket, settings) and
process, since an S3 client holds a connection pool and credentials worth reusing.

``s3a://`` and ``s3n://`` are Hadoop's spellings of ``s3://`` (the same bucket and key), ``gcs://``
of ``gs://`` and ``abfss://`` of ``abfs://`` over TLS; pyarrow opens all of them with no Hadoop JARs.
"""
from __future__ import annotations

import logging
import os
import posixpath
import threading
from typing import Mapping

import pyarrow.fs as pafs

from ..errors import HoodieConfigError
from .options import CHECKSUM_ENV, S3Settings, s3_settings

log = logging.getLogger(__name__)

S3_SCHEMES = ("s3", "s3a", "s3n")
SCHEMES = {**{s: "s3" for s in S3_SCHEMES}, "gs": "gs", "gcs": "gs", "abfs": "abfs", "abfss": "abfs",
           "hdfs": "hdfs", "file": "file"}

_clients: dict[tuple, pafs.FileSystem] = {}
_regions: dict[str, str | None] = {}
_lock = threading.Lock()


def scheme_of(uri: str) -> str:
    return uri.split("://", 1)[0].lower() if "://" in uri else "file"


def open_filesystem(uri: str, settings: Mapping[str, str], query: Mapping[str, str]) -> tuple[pafs.FileSystem, str]:
    """The filesystem for ``uri`` (no query) and the path of its root inside it."""
    scheme = scheme_of(uri)
    kind = SCHEMES.get(scheme)
    if kind is None:
        raise HoodieConfigError(f"{uri}: storage scheme {scheme!r} is not supported; use a local path, "
                                f"{', '.join(f'{s}://' for s in sorted(SCHEMES) if s != 'file')}")
    if kind == "file":
        path = uri.split("://", 1)[1] if "://" in uri else uri
        path = posixpath.abspath(path)
        return pafs.LocalFileSystem(), path.rstrip("/") or "/"
    if kind == "s3":
        bucket_and_key = uri.split("://", 1)[1]
        bucket = bucket_and_key.split("/", 1)[0]
        if not bucket:
            raise HoodieConfigError(f"{uri}: an S3 URI names a bucket: s3://<bucket>/<path>")
        return _s3(bucket, bucket_settings(bucket, settings, query)), bucket_and_key.rstrip("/")
    if query:
        raise HoodieConfigError(f"{uri}: only s3:// base paths take settings in their query")
    # gs, abfs and hdfs clients configure themselves from their URI and environment.
    fs, root = pafs.FileSystem.from_uri("gs://" + uri.split("://", 1)[1] if scheme == "gcs" else uri)
    return fs, root.rstrip("/")


def bucket_settings(bucket: str, settings: Mapping[str, str], query: Mapping[str, str]) -> S3Settings:
    """The S3 settings of ``bucket``; on AWS with no region given anywhere, the bucket's own region
    (asked of AWS once per process), as a bucket outside us-east-1 refuses requests signed for it."""
    s3 = s3_settings(bucket, settings, query)
    if s3.custom_endpoint or s3.get("region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"):
        return s3
    with _lock:
        if bucket not in _regions:
            try:
                _regions[bucket] = pafs.resolve_s3_region(bucket)
            except OSError as e:     # no route to AWS, or no such bucket: the SDK's default stands
                log.debug("region of bucket %s unknown (%s)", bucket, e)
                _regions[bucket] = None
        region = _regions[bucket]
    return s3.with_region(region) if region else s3


def _s3(bucket: str, s3: S3Settings) -> pafs.S3FileSystem:
    key = ("s3", s3)
    with _lock:
        client = _clients.get(key)
        if client is None:
            if s3.custom_endpoint:
                for name, value in CHECKSUM_ENV.items():
                    os.environ.setdefault(name, value)
            client = pafs.S3FileSystem(
                retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=s3.attempts), **dict(s3.kwargs))
            log.debug("S3 client for bucket %s at %s", bucket, s3.get("endpoint_override") or "AWS")
            _clients[key] = client
        return client
