"""Builds the REST API around one herder: ``create_app(herder, worker_config)``.

The app holds no state of its own beyond the herder and per-worker log-level bookkeeping, so
several apps (one per test) can live in one process. ``create_app`` refuses an insecure setup
(``auth.check_bind``) before any socket is opened: the caller learns at start-up, not after
someone else found the port.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from hub.rest import connectors, console, ingest, loggers, offsets, plugins, root
from hub.rest._settings import setting
from hub.rest.auth import auth_dependencies, check_bind
from hub.rest.errors import install_error_handlers
from sluice import __version__

_DESCRIPTION = """\
Kafka Connect's REST API, served by a Sluice hub worker. Paths, payloads and status codes follow
Kafka Connect, so existing Connect tooling works. Errors are
`{"error_code": <status>, "message": "..."}`; invalid configs add `errors: {field: [reasons]}`.
"""


def create_app(
    herder: Any, worker_config: Any, *, allow_unauthenticated: bool | None = None
) -> FastAPI:
    """The FastAPI app serving ``herder``.

    ``worker_config`` supplies ``rest.host.name`` and the optional ``rest.auth.token`` /
    ``rest.auth.basic`` / ``rest.auth.allow.unauthenticated``; ``allow_unauthenticated``
    overrides the latter (e.g. from a command-line flag). Raises ``auth.InsecureBindError``
    when the API would be open to the network.
    """
    check_bind(worker_config, allow_unauthenticated)
    app = FastAPI(
        title="Sluice hub REST API",
        version=__version__,
        description=_DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.herder = herder
    app.state.logger_levels_modified = {}
    install_error_handlers(app)
    _install_cors(app, worker_config)
    secured = auth_dependencies(worker_config)
    for module in (root, connectors, offsets, plugins, loggers):
        app.include_router(module.router, dependencies=secured)
    __import__("hub.rest.pipelines").rest.pipelines.install(app, secured)  # /pipelines
    app.include_router(ingest.router)  # webhook senders: per-connector auth (hub/rest/ingest.py)
    app.include_router(console.router)  # /ui is public; /console/api authenticates (console.py)
    return app


def _install_cors(app: FastAPI, worker_config: Any) -> None:
    """Cross-origin access for a web console on another origin, with Connect's worker keys.

    ``access.control.allow.origin`` ("*" or comma-separated origins) turns it on;
    ``access.control.allow.methods`` narrows the methods. Connect defaults those to
    GET,POST,HEAD; here the default is every method the API uses, because a console that
    cannot PUT, PATCH or DELETE cannot pause, edit or delete a connector.
    """
    origins = _csv(setting(worker_config, "access.control.allow.origin", ""))
    if not origins:
        return
    methods = _csv(setting(worker_config, "access.control.allow.methods", "")) or [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS",
    ]  # fmt: skip
    app.add_middleware(
        CORSMiddleware,
        allow_origins=origins,
        allow_methods=methods,
        allow_headers=["Authorization", "Content-Type", "Accept"],
    )


def _csv(value: Any) -> list[str]:
    return [part.strip() for part in str(value or "").split(",") if part.strip()]
