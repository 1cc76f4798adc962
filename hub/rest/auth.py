"""Optional authentication of REST calls, and the refusal to serve an open API on a network.

Credentials come from the worker config: ``rest.auth.token`` (``Authorization: Bearer <token>``)
and/or ``rest.auth.basic`` (``user:password`` for ``Authorization: Basic``); either accepted
credential lets a request in. Comparisons are constant-time so response timing does not leak
how much of a guess was right.

With neither set, anyone who can reach the port controls every connector (and what they read
and write), so the API then serves only on a loopback address: ``check_bind`` refuses any
other ``rest.host.name`` unless ``rest.auth.allow.unauthenticated`` is true.

The OpenAPI document and the docs pages stay public: they describe the API, hold no data, and
the docs page must load the schema before a user can enter credentials in it.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import secrets
from typing import Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBasic, HTTPBasicCredentials
from fastapi.security import HTTPBearer as _HTTPBearer

from hub.rest._settings import secret, setting
from hub.rest.errors import RestError

_bearer = _HTTPBearer(auto_error=False, description="rest.auth.token from the worker config")
_basic = HTTPBasic(auto_error=False, description="rest.auth.basic (user:password)")


class InsecureBindError(RuntimeError):
    """The REST API would accept unauthenticated calls from other machines."""


def is_loopback(host: str) -> bool:
    if host.lower() in {"localhost", "localhost.localdomain"}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(worker_config: Any, allow_unauthenticated: bool | None = None) -> None:
    """Raises InsecureBindError when bound beyond loopback with no credentials configured."""
    host = str(setting(worker_config, "rest.host.name", "127.0.0.1"))
    if is_loopback(host) or auth_configured(worker_config):
        return
    if allow_unauthenticated is None:
        flag = setting(worker_config, "rest.auth.allow.unauthenticated", "false")
        allow_unauthenticated = str(flag).lower() == "true"
    if not allow_unauthenticated:
        raise InsecureBindError(
            f"refusing to serve the REST API on {host} without authentication: anyone who "
            "can reach it could run connectors. Set rest.auth.token or rest.auth.basic "
            "(user:password) in the worker config, bind rest.host.name to 127.0.0.1, or set "
            "rest.auth.allow.unauthenticated=true if a proxy in front of it authenticates."
        )


def auth_configured(worker_config: Any) -> bool:
    return bool(
        secret(worker_config, "rest.auth.token") or secret(worker_config, "rest.auth.basic")
    )


def auth_dependencies(worker_config: Any) -> list[Any]:
    """Router dependencies: none without credentials (so a stray or malformed Authorization
    header cannot fail a request to an open API), else the Authenticator."""
    if not auth_configured(worker_config):
        return []
    return [Depends(Authenticator(worker_config))]


class Authenticator:
    """A FastAPI dependency checking each request against the configured credentials.

    The unused ``bearer``/``basic`` parameters declare both schemes in the OpenAPI document, so
    the docs page offers an "Authorize" button; the check itself reads the header directly.
    """

    def __init__(self, worker_config: Any) -> None:
        self.token = secret(worker_config, "rest.auth.token")
        self.basic = secret(worker_config, "rest.auth.basic")
        if self.basic is not None and ":" not in self.basic:
            raise ValueError("rest.auth.basic must be 'user:password'")
        schemes = (["Bearer"] if self.token else []) + (["Basic"] if self.basic else [])
        self._challenge = ", ".join(f'{scheme} realm="sluice"' for scheme in schemes)

    def __call__(
        self,
        request: Request,
        bearer: HTTPAuthorizationCredentials | None = Depends(_bearer),  # noqa: B008
        basic: HTTPBasicCredentials | None = Depends(_basic),  # noqa: B008
    ) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if self.token and scheme.lower() == "bearer" and _same(value, self.token):
            return
        if self.basic and scheme.lower() == "basic" and _same(_decode_basic(value), self.basic):
            return
        message = "Authentication required" if not header else "Invalid credentials"
        raise RestError(401, message, headers={"WWW-Authenticate": self._challenge})


def _decode_basic(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ""


def _same(given: str, expected: str) -> bool:
    return secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
