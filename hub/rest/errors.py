"""Every failure becomes Kafka Connect's error body: ``{"error_code": N, "message": "..."}``.

Existing Connect clients parse that shape, so the herder's errors, FastAPI's request-validation
errors (422 in FastAPI, 400 in Connect), Starlette's 404/405 and unexpected exceptions all
answer with it. Config problems add ``errors: {field: [reasons]}`` so a client can show each
reason next to its field. An unexpected exception answers 500 with a one-line message and is
logged with its traceback here; the body never carries a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from hub.api.errors import ConfigError
from hub.plugins.errors import PluginNotFoundError
from hub.runtime.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConflictError,
    ForwardedError,
    HerderError,
    NotFoundError,
    RecordTooLargeError,
)

log = logging.getLogger(__name__)

_REQUEST_PARTS = {"body", "query", "path", "header", "cookie"}


class RestError(Exception):
    """An error the REST layer itself raises (bad request shape, auth), with its status."""

    def __init__(
        self,
        status_code: int,
        message: str,
        errors: Mapping[str, list[str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.errors = dict(errors or {})
        self.headers = dict(headers or {})


def error_response(
    status_code: int,
    message: str,
    errors: Mapping[str, list[str]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"error_code": status_code, "message": message}
    if errors:
        body["errors"] = dict(errors)
    return JSONResponse(body, status_code=status_code, headers=dict(headers or {}))


def config_error_message(errors: Mapping[str, list[str]], fallback: str) -> str:
    """One readable line listing every field and its reasons, for clients that show only it."""
    if not errors:
        return fallback
    parts = [f"{field}: {'; '.join(reasons)}" for field, reasons in errors.items()]
    return f"Connector configuration is invalid and contains {len(errors)} error(s): " + ", ".join(
        parts
    )


def validation_field_errors(raw: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """FastAPI validation errors -> field -> reasons; field is the location without its part.

    ``("body", "config", "topic")`` becomes ``config.topic``; ``("query", "includeTasks")``
    becomes ``includeTasks``; a body that is not JSON becomes ``body``.
    """
    errors: dict[str, list[str]] = {}
    for err in raw:
        loc = [str(part) for part in err.get("loc", ())]
        if loc and loc[0] in _REQUEST_PARTS and len(loc) > 1:
            loc = loc[1:]
        field = ".".join(loc) or "body"
        errors.setdefault(field, []).append(str(err.get("msg", "invalid value")))
    return errors


async def _on_rest_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RestError)
    return error_response(exc.status_code, exc.message, exc.errors, exc.headers)


async def _on_config_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ConfigError)
    return error_response(400, config_error_message(exc.errors, str(exc)), exc.errors)


# The runtime's and the plugins' errors carry no HTTP knowledge: their statuses live here.
_STATUS: tuple[tuple[type[Exception], int], ...] = (
    (NotFoundError, 404),
    (PluginNotFoundError, 404),
    (AlreadyExistsError, 409),
    (ConflictError, 409),
    (BadRequestError, 400),
    (RecordTooLargeError, 413),
)


def status_of(exc: Exception) -> int:
    """The HTTP status a runtime or plugin error answers with (500 when unlisted)."""
    return next((status for kind, status in _STATUS if isinstance(exc, kind)), 500)


async def _on_herder_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HerderError | PluginNotFoundError | RecordTooLargeError)
    status = status_of(exc)
    if status >= 500:
        log.error("herder error: %s", exc, exc_info=exc)
    return error_response(status, str(exc) or type(exc).__name__)


async def _on_forwarded_error(_request: Request, exc: Exception) -> JSONResponse:
    """The leader's own answer to a forwarded request, status and body unchanged."""
    assert isinstance(exc, ForwardedError)
    return JSONResponse(status_code=exc.status, content=exc.body)


async def _on_validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = validation_field_errors(exc.errors())
    summary = ", ".join(f"{field}: {'; '.join(reasons)}" for field, reasons in errors.items())
    return error_response(400, f"Invalid request: {summary}", errors)


async def _on_http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return error_response(exc.status_code, f"HTTP {exc.status_code} {message}", None, exc.headers)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error in %s %s", request.method, request.url.path, exc_info=exc)
    text = str(exc).splitlines()[0] if str(exc) else ""
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return error_response(500, f"Internal server error ({message})")


def install_error_handlers(app: FastAPI) -> None:
    """Registers the handlers; subclasses resolve to the most specific one (Starlette MRO)."""
    app.add_exception_handler(RestError, _on_rest_error)
    app.add_exception_handler(ConfigError, _on_config_error)
    app.add_exception_handler(HerderError, _on_herder_error)
    app.add_exception_handler(ForwardedError, _on_forwarded_error)
    app.add_exception_handler(PluginNotFoundError, _on_herder_error)
    app.add_exception_handler(RecordTooLargeError, _on_herder_error)  # a config too big to store
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
