"""Who may call the REST API: credentials are required by default.

Credentials come from the worker config: ``rest.auth.token`` (``Authorization: Bearer``)
and/or ``rest.auth.basic`` (``user:password`` for ``Authorization: Basic``); either lets a
request in, and so does the console's session cookie, which only a request with one of them
can obtain (``POST /console/login``). Comparisons are constant-time so response timing does not
leak how much of a guess was right. ``sluice up``/``sluice connect`` generate a token when none
is configured (``token_file.py``), so a default start is never open.

With no credential at all, anyone who can reach the port controls every connector (and what it
reads and writes), so ``check_credentials`` refuses to build such an app unless
``rest.auth.allow.unauthenticated=true`` — and that opt-out is accepted only while
``rest.host.name`` is a loopback address, with a WARNING saying what it leaves open.

Every guarded request also passes the CSRF rules of ``csrf.py``. The OpenAPI document and
the docs pages stay public: they describe the API, hold no data, and the docs page must load
the schema before a user can enter credentials in it.
"""

from __future__ import annotations

import base64
import binascii
import logging
import secrets
from typing import Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBasic, HTTPBasicCredentials
from fastapi.security import HTTPBearer as _HTTPBearer

from hub.rest._loopback import is_loopback
from hub.rest._settings import secret, setting
from hub.rest.csrf import OriginPolicy
from hub.rest.errors import RestError
from hub.rest.sessions import SessionStore, session_of

__all__ = [
    "AuthPolicy",
    "Credentials",
    "InsecureBindError",
    "auth_dependencies",
    "check_bind",
    "check_credentials",
    "is_loopback",
]

log = logging.getLogger(__name__)

_bearer = _HTTPBearer(auto_error=False, description="rest.auth.token from the worker config")
_basic = HTTPBasic(auto_error=False, description="rest.auth.basic (user:password)")


class InsecureBindError(RuntimeError):
    """The REST API would accept unauthenticated calls (from other machines, or by default)."""


def _flag(worker_config: Any, key: str) -> bool:
    return str(setting(worker_config, key, "false")).strip().lower() == "true"


def check_credentials(
    worker_config: Any, allow_unauthenticated: bool | None = None, *, warn: bool = True
) -> bool:
    """True when credentials are configured; False for the explicit loopback opt-out (logged
    at WARNING unless ``warn`` is false: a start-up pre-check before the app says it again).

    Raises InsecureBindError when there are none and the opt-out is missing, or when the
    opt-out is asked for on an address other machines can reach.
    """
    if Credentials(worker_config).configured:
        return True
    host = str(setting(worker_config, "rest.host.name", "127.0.0.1"))
    if allow_unauthenticated is None:
        allow_unauthenticated = _flag(worker_config, "rest.auth.allow.unauthenticated")
    if not allow_unauthenticated:
        raise InsecureBindError(
            "refusing to serve the REST API without a credential: set rest.auth.token or "
            "rest.auth.basic (user:password) in the worker config (sluice up and sluice "
            "connect generate a token in <data dir>/hub.token when neither is set), or set "
            "rest.auth.allow.unauthenticated=true to serve it open on a loopback address"
        )
    if not is_loopback(host):
        raise InsecureBindError(
            f"refusing to serve the REST API on {host} without authentication: anyone who "
            "can reach it could run connectors. rest.auth.allow.unauthenticated=true is "
            "accepted only on a loopback rest.host.name; set rest.auth.token or "
            "rest.auth.basic (user:password) instead, or bind rest.host.name to 127.0.0.1."
        )
    if not warn:
        return False
    log.warning(
        "REST API serves unauthenticated requests (rest.auth.allow.unauthenticated=true): any "
        "process on this machine can control the hub; web pages still cannot (Host and Origin "
        "checks)",
        extra={"address": host},
    )
    return False


class Credentials:
    """The configured token and basic user, checked against an ``Authorization`` header."""

    def __init__(self, worker_config: Any) -> None:
        self.token = secret(worker_config, "rest.auth.token")
        self.basic = secret(worker_config, "rest.auth.basic")
        if self.basic is not None and ":" not in self.basic:
            raise ValueError("rest.auth.basic must be 'user:password'")
        schemes = (["Bearer"] if self.token else []) + (["Basic"] if self.basic else [])
        self.challenge = ", ".join(f'{scheme} realm="sluice"' for scheme in schemes)

    @property
    def configured(self) -> bool:
        return bool(self.token or self.basic)

    def accepts(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if self.token and scheme.lower() == "bearer" and _same(value, self.token):
            return True
        return bool(
            self.basic and scheme.lower() == "basic" and _same(_decode_basic(value), self.basic)
        )

    def accepts_login(self, body: dict[str, Any]) -> bool:
        """A console sign-in body: ``{"token": ...}`` or ``{"user": ..., "password": ...}``."""
        token, user = body.get("token"), body.get("user")
        if isinstance(token, str) and token and self.token and _same(token, self.token):
            return True
        if isinstance(user, str) and self.basic:
            password = body.get("password")
            given = f"{user}:{password if isinstance(password, str) else ''}"
            return _same(given, self.basic)
        return False

    def require(self, request: Request) -> None:
        """401 unless the ``Authorization`` header carries a configured credential."""
        header = request.headers.get("authorization", "")
        if header and self.accepts(header):
            return
        message = "Authentication required" if not header else "Invalid credentials"
        raise RestError(401, message, headers={"WWW-Authenticate": self.challenge})


class AuthPolicy:
    """Per app: the credentials, the console's sessions and the origin rules.

    Called as a FastAPI dependency on every guarded router. The unused ``bearer``/``basic``
    parameters declare both schemes in the OpenAPI document, so the docs page offers an
    "Authorize" button; the check itself reads the header (or the session cookie) directly.
    """

    def __init__(self, worker_config: Any, allow_unauthenticated: bool | None = None) -> None:
        self.credentials = Credentials(worker_config)
        self.required = check_credentials(worker_config, allow_unauthenticated)
        self.sessions = SessionStore()
        origins = str(setting(worker_config, "access.control.allow.origin", "") or "")
        self.origins = OriginPolicy(origins.split(","))

    def __call__(
        self,
        request: Request,
        bearer: HTTPAuthorizationCredentials | None = Depends(_bearer),  # noqa: B008
        basic: HTTPBasicCredentials | None = Depends(_basic),  # noqa: B008
    ) -> None:
        self.check(request)

    def check(self, request: Request) -> None:
        """Authenticates ``request`` (401) and applies the CSRF rules (403)."""
        header = request.headers.get("authorization", "")
        if header and self.required:
            self.credentials.require(request)
            self.origins.check(request, cookie=False)
            return
        if self.required:
            if not self.sessions.valid(session_of(request)):
                self.credentials.require(request)  # raises 401 with the challenge
            self.origins.check(request, cookie=True)
            return
        self.origins.check(request, cookie=False)  # the loopback opt-out: Origin rules only


def check_bind(worker_config: Any, allow_unauthenticated: bool | None = None) -> None:
    """``check_credentials`` for another API served with the hub's credentials (the schema
    registry): refuses what the hub's own API would refuse."""
    check_credentials(worker_config, allow_unauthenticated)


def auth_dependencies(worker_config: Any) -> list[Any]:
    """Router dependencies for another API served with the hub's credentials (the schema
    registry): the ``Authorization`` header only (the console's cookie is the hub's own) and
    the Origin rule of ``csrf.py``; none without credentials (the loopback opt-out)."""
    credentials = Credentials(worker_config)
    if not credentials.configured:
        return []
    origins = str(setting(worker_config, "access.control.allow.origin", "") or "")
    policy = OriginPolicy(origins.split(","))

    def guard(
        request: Request,
        bearer: HTTPAuthorizationCredentials | None = Depends(_bearer),  # noqa: B008
        basic: HTTPBasicCredentials | None = Depends(_basic),  # noqa: B008
    ) -> None:
        credentials.require(request)
        policy.check(request, cookie=False)

    return [Depends(guard)]


def _decode_basic(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ""


def _same(given: str, expected: str) -> bool:
    return secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
