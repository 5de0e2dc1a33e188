"""Connections to PostgreSQL for the sources that read it (the change-capture source and the JDBC
source), through psycopg, so no JDBC driver JAR is needed.

A source is configured with a URL in either spelling users have: libpq's
``postgresql://host:port/db?sslmode=require`` or JDBC's ``jdbc:postgresql://host:port/db?user=u``;
the user and password come from the source's own keys (a password file or a ``${secret:...}``
placeholder keeps it out of the spec). The settings travel to Spark tasks as a plain picklable
value, so executors connect the same way the driver does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from hudi_engine.errors import HoodieConfigError

SCHEMES = ("postgresql", "postgres")
JDBC_PREFIX = "jdbc:"
# Every session reads values in one spelling, whatever the server's defaults: the sources parse
# the text form of values (logical decoding and COPY both give text).
SESSION_SETTINGS = {"TimeZone": "UTC", "DateStyle": "ISO, YMD", "IntervalStyle": "iso_8601",
                    "extra_float_digits": "3", "bytea_output": "hex"}
# JDBC URL parameters that have a libpq equivalent under another name; the rest pass unchanged.
_JDBC_PARAMS = {"ssl": None, "loginTimeout": "connect_timeout", "ApplicationName": "application_name",
                "currentSchema": None}


class PostgresUnavailableError(RuntimeError):
    """The server could not be reached: worth retrying, unlike a HoodieConfigError."""


@dataclass(frozen=True)
class PostgresSettings:
    """Where and as whom to connect; ``params`` are libpq connection parameters."""
    host: str
    port: int
    dbname: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    params: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        return f"PostgreSQL {self.dbname} at {self.host}:{self.port}" + (f" as {self.user}" if self.user else "")

    def connect(self, *, autocommit: bool = True) -> Any:
        """An open psycopg connection with the sources' session settings."""
        import psycopg

        options = " ".join(f"-c {k}={v.replace(' ', '')}" for k, v in SESSION_SETTINGS.items())
        kwargs = {"host": self.host, "port": self.port, "dbname": self.dbname, "options": options,
                  **dict(self.params)}
        if self.user:
            kwargs["user"] = self.user
        if self.password is not None:
            kwargs["password"] = self.password
        try:
            return psycopg.connect(autocommit=autocommit, **kwargs)
        except psycopg.OperationalError as exc:
            message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            if "password authentication failed" in message or "role" in message and "does not exist" in message:
                raise HoodieConfigError(f"{self.describe()} refused the login: {message}; check the user and "
                                        "password options") from None
            if "database" in message and "does not exist" in message:
                raise HoodieConfigError(f"{self.describe()}: {message}; check the URL's database") from None
            raise PostgresUnavailableError(f"could not connect to {self.describe()}: {message}") from None


def parse_url(url: str, key: str) -> PostgresSettings:
    """Settings from a ``postgresql://`` or ``jdbc:postgresql://`` URL given as option ``key``."""
    text = url.strip()
    if text.startswith(JDBC_PREFIX):
        text = text[len(JDBC_PREFIX):]
    parts = urlsplit(text)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise HoodieConfigError(f"{key}={url!r} is not a PostgreSQL URL: write postgresql://host:5432/database "
                                "or jdbc:postgresql://host:5432/database")
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname:
        raise HoodieConfigError(f"{key}={url!r} names no database: add it after the host, e.g. "
                                "postgresql://host:5432/shop")
    try:
        port = parts.port or 5432
    except ValueError:
        raise HoodieConfigError(f"{key}={url!r} has a port that is not a number") from None
    query = dict(parse_qsl(parts.query))
    user = unquote(parts.username) if parts.username else query.pop("user", None)
    password = unquote(parts.password) if parts.password else query.pop("password", None)
    params = []
    for name, value in query.items():
        renamed = _JDBC_PARAMS.get(name, name)
        if renamed:
            params.append((renamed, value))
    return PostgresSettings(parts.hostname, port, dbname, user, password, tuple(sorted(params)))


def read_password_file(path: str | None, key: str) -> str | None:
    """The first line of a password file (a mounted Secret), as Hudi's JDBC source reads
    ``password.file``; None without a file."""
    if not path:
        return None
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise HoodieConfigError(f"{key}={path}: cannot read the password file ({exc.strerror})") from None
    return lines[0] if lines else ""


def with_login(settings: PostgresSettings, user: str | None, password: str | None,
               password_file: str | None, file_key: str) -> PostgresSettings:
    """The URL's settings with the user and password options over them."""
    if password is None:
        password = read_password_file(password_file, file_key)
    return PostgresSettings(settings.host, settings.port, settings.dbname, user or settings.user,
                            password if password is not None else settings.password, settings.params)
