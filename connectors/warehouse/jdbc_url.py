"""``connection.url``: Confluent JDBC URLs translated to SQLAlchemy URLs, or SQLAlchemy URLs as-is.

Users migrating from Confluent's JDBC sink have ``jdbc:postgresql://host:5432/db?user=...``
in their configs; SQLAlchemy wants ``postgresql+psycopg://user@host:5432/db``. Translated:

* ``jdbc:postgresql://host[:port]/db?k=v`` -> ``postgresql+psycopg://``; ``user``/``password``
  become the URL's credentials, ``sslmode``/``ssl=true``, ``connectTimeout``/``loginTimeout``,
  ``ApplicationName`` and ``currentSchema`` become their libpq equivalents; other (Java driver
  specific) parameters are dropped with a warning, since libpq would reject them.
* ``jdbc:sqlite:<path>`` -> ``sqlite:///<path>`` (``:memory:`` kept);
  ``jdbc:duckdb:<path>`` -> ``duckdb:///<path>`` (empty path = in memory).
* ``jdbc:mysql://`` and ``jdbc:mariadb://`` -> ``mysql://`` (the driver SQLAlchemy picks).

A plain ``postgresql://`` URL gets the psycopg 3 driver, the one installed with Sluice.
``connection.user``/``connection.password`` override whatever the URL carries.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, unquote, urlsplit

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

log = logging.getLogger(__name__)

_PG_PARAMS = {
    "sslmode": "sslmode",
    "sslrootcert": "sslrootcert",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "connecttimeout": "connect_timeout",
    "logintimeout": "connect_timeout",
    "applicationname": "application_name",
}


def to_sqlalchemy_url(url: str, user: str | None = None, password: str | None = None) -> URL:
    """The SQLAlchemy URL for ``url``; ValueError with a hint when it cannot be understood."""
    url = url.strip()
    if url.startswith("jdbc:"):
        result = _from_jdbc(url[len("jdbc:") :])
    else:
        try:
            result = make_url(url)
        except ArgumentError:
            raise ValueError(
                "not a JDBC URL (jdbc:postgresql://host:5432/db) nor a SQLAlchemy URL "
                "(postgresql+psycopg://user@host:5432/db)"
            ) from None
        if result.drivername in ("postgresql", "postgres"):
            result = result.set(drivername="postgresql+psycopg")
    if user:
        result = result.set(username=user)
    if password:
        result = result.set(password=password)
    return result


def _from_jdbc(rest: str) -> URL:
    scheme, _, tail = rest.partition(":")
    scheme = scheme.lower()
    if scheme == "sqlite":
        return URL.create("sqlite", database=tail or None)
    if scheme == "duckdb":
        return URL.create("duckdb", database=tail or ":memory:")
    if scheme in ("postgresql", "postgres"):
        return _network("postgresql+psycopg", tail, postgres=True)
    if scheme in ("mysql", "mariadb"):
        return _network("mysql", tail, postgres=False)
    raise ValueError(
        f"no translation for jdbc:{scheme} URLs; give a SQLAlchemy URL for that database instead"
    )


def _network(driver: str, tail: str, *, postgres: bool) -> URL:
    if not tail.startswith("//"):
        raise ValueError("expected jdbc:<db>://host[:port]/database")
    parts = urlsplit(tail)
    if "," in parts.netloc:
        raise ValueError("several hosts in one JDBC URL are not supported; give one host")
    query: dict[str, str] = {}
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        low = key.lower()
        if low == "user":
            user = value
        elif low == "password":
            password = value
        elif not postgres:
            query[key] = value
        elif low in _PG_PARAMS:
            query[_PG_PARAMS[low]] = value
        elif low == "ssl" and value.lower() == "true":
            query.setdefault("sslmode", "require")
        elif low == "currentschema":
            query["options"] = f"-csearch_path={value}"
        else:
            log.warning("connection.url: dropping JDBC-only parameter %r (no libpq form)", key)
    try:
        port = parts.port
    except ValueError:
        raise ValueError("the port in connection.url is not a number") from None
    return URL.create(
        driver,
        username=user,
        password=password,
        host=parts.hostname,
        port=port,
        database=parts.path.lstrip("/") or None,
        query=query,
    )


def require_driver(url: URL) -> None:
    """ValueError naming what to install when ``url``'s dialect or its driver is missing.

    Checked at validation, so a connector whose database driver is absent is refused by name
    instead of failing in its task; DuckDB comes with the ``duckdb`` extra.
    """
    backend = url.get_backend_name()
    try:
        url.get_dialect().import_dbapi()
    except (NoSuchModuleError, ImportError):
        if backend == "duckdb":
            hint = "pip install 'sluice[duckdb]'"
        else:
            hint = f"install the Python driver for {url.drivername}"
        raise ValueError(f"{backend} needs a driver that is not installed: {hint}") from None
