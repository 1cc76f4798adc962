"""The registry's authentication: the hub REST API's mechanism and credentials, reused.

``hub.rest.auth`` decides who may call the hub's API (``rest.auth.token`` for Bearer,
``rest.auth.basic`` for Basic, and the refusal to serve an open API beyond loopback); the
registry applies exactly that to its own port, so one set of credentials opens both and a
change there (e.g. a generated token by default) reaches the registry without edits here.
Clients pass them the Confluent way: ``basic.auth.user.info`` with
``basic.auth.credentials.source=USER_INFO``, or a bearer token.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from hub.rest import auth as hub_auth
from hub.rest.errors import RestError


def check(settings: Any) -> None:
    """Raises ``hub.rest.auth.InsecureBindError`` for an open registry beyond loopback."""
    if settings is not None:
        hub_auth.check_bind(settings)


def dependencies(settings: Any) -> list[Any]:
    return hub_auth.auth_dependencies(settings) if settings is not None else []


def install_error_handler(app: FastAPI) -> None:
    async def on_rest_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RestError)
        return JSONResponse(
            {"error_code": exc.status_code, "message": exc.message},
            status_code=exc.status_code,
            headers=exc.headers,
        )

    app.add_exception_handler(RestError, on_rest_error)
