"""Object-store settings as Hadoop and Spark users already write them (``fs.s3a.*``), turned into
``pyarrow.fs.S3FileSystem`` arguments. Pure: no I/O, so it is tested without a server.

Settings come, lowest first, from the process defaults (:func:`configure`, fed from a Spark
session's ``spark.hadoop.fs.*`` conf, as Hadoop's ``Configuration`` is process-wide), the settings
of the read or write under way (:func:`scoped`, its options), the options a
:class:`~hudi_engine.storage.Storage` is given, and the base URI's
query (pyarrow's own names, ``s3://bucket/t?endpoint_override=host:9000&scheme=http``). Hadoop's
per-bucket form ``fs.s3a.bucket.<bucket>.<key>`` wins over ``fs.s3a.<key>`` for that bucket.
Without credentials in any of them, the AWS SDK's standard chain applies (environment, profile,
web identity for IRSA, instance metadata).
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Iterator, Mapping
from urllib.parse import parse_qsl

from ..errors import HoodieConfigError

PREFIX = "fs."            # every storage setting (fs.s3a.*, fs.gs.*, fs.azure.*) starts so
SPARK_PREFIX = "spark.hadoop."
S3A = "fs.s3a."

# The fs.s3a.* keys the engine reads, each with Hadoop's meaning and default.
ENDPOINT = "endpoint"                    # host[:port] or a URL; unset: AWS, by region
REGION = "endpoint.region"
ACCESS_KEY = "access.key"
SECRET_KEY = "secret.key"
SESSION_TOKEN = "session.token"
PATH_STYLE = "path.style.access"         # default false: virtual-hosted buckets, as Hadoop
SSL = "connection.ssl.enabled"           # default true: https when the endpoint names no scheme
CREDENTIALS_PROVIDER = "aws.credentials.provider"
ROLE_ARN = "assumed.role.arn"
ROLE_SESSION = "assumed.role.session.name"
ATTEMPTS = "attempts.maximum"            # Hadoop's default: 5
CONNECT_TIMEOUT = "connection.establish.timeout"
REQUEST_TIMEOUT = "connection.timeout"
SECRETS = (S3A + SECRET_KEY, S3A + SESSION_TOKEN)
DEFAULT_ATTEMPTS = 5

# Keys pyarrow's S3 URIs take in their query, as S3FileSystem keywords.
_URI_QUERY = {"region": str, "scheme": str, "endpoint_override": str, "access_key": str,
              "secret_key": str, "session_token": str, "role_arn": str,
              "force_virtual_addressing": lambda v: v.lower() == "true",
              "anonymous": lambda v: v.lower() == "true"}

# Where the AWS SDK's checksum defaults are refused by S3-compatible stores (Ceph RGW, older MinIO:
# "411 MissingContentLength"); Amazon S3 accepts either. Set for non-AWS endpoints unless the user
# set them.
CHECKSUM_ENV = {"AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
                "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}

_defaults: dict[str, str] = {}
_scoped: ContextVar[dict[str, str]] = ContextVar("hudi_storage_settings", default={})


def storage_settings(conf: Mapping[str, object] | None) -> dict[str, str]:
    """The storage settings among ``conf`` (read/write options or a Spark conf), with
    ``spark.hadoop.`` taken off as Spark does when it builds the Hadoop configuration."""
    found: dict[str, str] = {}
    for key, value in (conf or {}).items():
        if value is None:
            continue
        name = key[len(SPARK_PREFIX):] if key.startswith(SPARK_PREFIX) else key
        if name.startswith(PREFIX):
            found[name] = str(value)
    return found


def configure(conf: Mapping[str, object] | None) -> None:
    """Make ``conf``'s storage settings this process's defaults (later calls win per key)."""
    _defaults.update(storage_settings(conf))


@contextmanager
def scoped(conf: Mapping[str, object] | None) -> Iterator[None]:
    """``conf``'s storage settings over the process defaults while one read or write runs (in
    this thread); its Storage objects keep them when they travel to executors."""
    token = _scoped.set({**_scoped.get(), **storage_settings(conf)})
    try:
        yield
    finally:
        _scoped.reset(token)


def defaults() -> dict[str, str]:
    return {**_defaults, **_scoped.get()}


def split_query(uri: str) -> tuple[str, dict[str, str]]:
    """A base URI without its query, and the query's settings."""
    if "?" not in uri:
        return uri, {}
    bare, query = uri.split("?", 1)
    return bare, dict(parse_qsl(query, keep_blank_values=True))


def redacted(settings: Mapping[str, str]) -> dict[str, str]:
    """Settings fit for a log line or an error message."""
    return {k: ("****" if k in SECRETS or "secret" in k or "token" in k else v) for k, v in settings.items()}


def _s3a(settings: Mapping[str, str], bucket: str, key: str) -> str | None:
    return settings.get(f"{S3A}bucket.{bucket}.{key}", settings.get(S3A + key))


def _flag(settings: Mapping[str, str], bucket: str, key: str, default: bool) -> bool:
    value = _s3a(settings, bucket, key)
    if value is None or value == "":
        return default
    if value.strip().lower() not in ("true", "false"):
        raise HoodieConfigError(f"{S3A}{key}={value!r}: give true or false")
    return value.strip().lower() == "true"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def seconds(key: str, value: str) -> float:
    """A Hadoop duration (``30s``, ``200000`` meaning milliseconds, ``5m``) in seconds."""
    match = _DURATION.match(value)
    if not match:
        raise HoodieConfigError(f"{key}={value!r}: give a duration such as 30s or 60000 (milliseconds)")
    number, unit = float(match.group(1)), match.group(2) or "ms"
    return number * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


@dataclass(frozen=True)
class S3Settings:
    """S3FileSystem keywords for one bucket, and the retry attempts (a strategy object is built
    by the caller, which owns pyarrow)."""
    kwargs: tuple[tuple[str, object], ...]
    attempts: int
    custom_endpoint: bool

    def get(self, key: str):
        return dict(self.kwargs).get(key)

    def with_region(self, region: str) -> "S3Settings":
        return replace(self, kwargs=tuple(sorted({**dict(self.kwargs), "region": region}.items())))


def s3_settings(bucket: str, settings: Mapping[str, str], query: Mapping[str, str],
                environ: Mapping[str, str] = os.environ) -> S3Settings:
    """What S3FileSystem needs for ``bucket`` from Hadoop-style ``settings`` and a URI ``query``."""
    kwargs: dict[str, object] = {
        # A small file goes up as one PUT instead of a three-request multipart upload.
        "allow_delayed_open": True,
    }
    endpoint = _s3a(settings, bucket, ENDPOINT)
    # The AWS SDKs' own variable; pyarrow's convention (path-style) applies to it, Hadoop's to fs.s3a.endpoint.
    from_env = not endpoint
    endpoint = endpoint or environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        scheme, sep, host = endpoint.partition("://")
        if not sep:
            scheme, host = ("https" if _flag(settings, bucket, SSL, True) else "http"), endpoint
        if scheme not in ("http", "https"):
            raise HoodieConfigError(f"{S3A}{ENDPOINT}={endpoint!r}: give host[:port] or an http(s):// URL")
        kwargs["endpoint_override"] = host.rstrip("/")
        kwargs["scheme"] = scheme
        kwargs["force_virtual_addressing"] = not _flag(settings, bucket, PATH_STYLE, from_env)
    region = _s3a(settings, bucket, REGION)
    if region:
        kwargs["region"] = region
    access, secret = _s3a(settings, bucket, ACCESS_KEY), _s3a(settings, bucket, SECRET_KEY)
    if bool(access) != bool(secret):
        raise HoodieConfigError(f"{S3A}{ACCESS_KEY} and {S3A}{SECRET_KEY} go together: give both or neither "
                                "(neither uses the AWS credential chain)")
    if access:
        kwargs.update(access_key=access, secret_key=secret)
        token = _s3a(settings, bucket, SESSION_TOKEN)
        if token:
            kwargs["session_token"] = token
    provider = _s3a(settings, bucket, CREDENTIALS_PROVIDER) or ""
    if "Anonymous" in provider:
        kwargs["anonymous"] = True
    role = _s3a(settings, bucket, ROLE_ARN)
    if role and not access:
        kwargs["role_arn"] = role
        session = _s3a(settings, bucket, ROLE_SESSION)
        if session:
            kwargs["session_name"] = session
    for key, name in ((CONNECT_TIMEOUT, "connect_timeout"), (REQUEST_TIMEOUT, "request_timeout")):
        value = _s3a(settings, bucket, key)
        if value:
            kwargs[name] = seconds(S3A + key, value)
    attempts_text = _s3a(settings, bucket, ATTEMPTS)
    try:
        attempts = int(attempts_text) if attempts_text else DEFAULT_ATTEMPTS
    except ValueError:
        raise HoodieConfigError(f"{S3A}{ATTEMPTS}={attempts_text!r}: give a whole number") from None
    for key, value in query.items():
        convert = _URI_QUERY.get(key)
        if convert is None:
            raise HoodieConfigError(f"unknown S3 URI parameter {key!r}: use one of {', '.join(sorted(_URI_QUERY))}")
        kwargs[key] = convert(value)
    if "endpoint_override" in query:
        kwargs.setdefault("force_virtual_addressing", False)
    return S3Settings(tuple(sorted(kwargs.items())), max(1, attempts), "endpoint_override" in kwargs)
