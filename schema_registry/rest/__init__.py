"""The registry's REST API: Confluent Schema Registry's paths, bodies and error codes.

``create_app(registry, config)`` builds it. Authentication is the hub REST API's (one
mechanism, one set of credentials: ``schema_registry.rest.auth``). Every failure answers
``{"error_code": <Confluent code>, "message": ...}`` with Confluent's HTTP status.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from schema_registry.errors import RegistryError
from schema_registry.registry import SchemaRegistry
from schema_registry.rest import auth, config, schemas, subjects
from schema_registry.rest._common import MEDIA_TYPE

log = logging.getLogger(__name__)


def create_app(registry: SchemaRegistry, settings: Any = None) -> FastAPI:
    """The FastAPI app over ``registry``; ``settings`` (the worker config) gives the auth."""
    auth.check(settings)
    app = FastAPI(
        title="Sluice Schema Registry",
        description="Confluent Schema Registry's REST API, served by Sluice.",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.registry = registry
    secured = auth.dependencies(settings)
    for module in (config, subjects, schemas):
        app.include_router(module.router, dependencies=secured)
    app.add_exception_handler(RegistryError, _on_registry_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    auth.install_error_handler(app)
    app.add_exception_handler(Exception, _on_unexpected)
    return app


def _body(status: int, code: int, message: str, headers: Any = None) -> JSONResponse:
    return JSONResponse(
        {"error_code": code, "message": message},
        status_code=status,
        media_type=MEDIA_TYPE,
        headers=dict(headers or {}),
    )


async def _on_registry_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RegistryError)
    return _body(exc.status, exc.error_code, exc.message)


async def _on_validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()]
    # a version/id path segment that is not a number is Confluent's 42202 / 404 case
    return _body(422, 422, "Invalid request: " + "; ".join(parts))


async def _on_http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return _body(exc.status_code, exc.status_code, str(exc.detail), exc.headers)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("registry request failed", extra={"path": request.url.path}, exc_info=exc)
    return _body(500, 50001, f"Internal error: {type(exc).__name__}")
