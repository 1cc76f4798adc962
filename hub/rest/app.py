"""Builds the REST API around one herder: ``create_app(herder, worker_config)``.

The app holds no state of its own beyond the herder, the console's sign-in sessions and
per-worker log-level bookkeeping, so several apps (one per test) can live in one process. What
is not Kafka Connect's API comes from the caller: a ``PipelinesService`` for ``/pipelines`` and
routers of other packages (the web console's) are handed in by the application
(``sluice.web``), so this package imports no console or Spark code. ``create_app`` refuses an
insecure setup (no credential, or the unauthenticated opt-out beyond loopback:
``auth.check_credentials``) before any socket is opened: the caller learns at start-up, not
after someone else found the port.

Layers of a request, outermost first: the ``Host`` allow-list (``host_guard.py``, 421), CORS
when configured, then per router the ``AuthPolicy`` dependency (401, and the CSRF rules of
``csrf.py``, 403); routers handed in authenticate through ``app.state.auth`` the same way.
Webhook ingest authenticates per connector (``ingest.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from hub.rest import (
    connectors,
    health,
    ingest,
    limits,
    loggers,
    login,
    metrics,
    offsets,
    plugins,
    root,
    workers,
)
from hub.rest import pipelines as pipelines_module
from hub.rest._settings import setting
from hub.rest.auth import AuthPolicy
from hub.rest.errors import install_error_handlers
from hub.rest.host_guard import HostGuard, HostPolicy
from hub.rest.methods import AllowedMethods
from sluice import __version__

_DESCRIPTION = """\
Kafka Connect's REST API, served by a Sluice hub worker. Paths, payloads and status codes follow
Kafka Connect, so existing Connect tooling works. Errors are
`{"error_code": <status>, "message": "..."}`; invalid configs add `errors: {field: [reasons]}`.
"""


def create_app(
    herder: Any,
    worker_config: Any,
    *,
    allow_unauthenticated: bool | None = None,
    pipelines: Any = None,
    routers: Sequence[APIRouter] = (),
) -> FastAPI:
    """The FastAPI app serving ``herder``.

    ``worker_config`` supplies ``rest.host.name``, ``rest.auth.token`` / ``rest.auth.basic``
    (one is required) or ``rest.auth.allow.unauthenticated`` (loopback only);
    ``allow_unauthenticated`` overrides the latter. Raises ``auth.InsecureBindError`` when the
    API would be open. ``pipelines`` (a ``PipelinesService``) adds ``/pipelines`` behind the
    API's authentication; ``routers`` are added as they are (each authenticates its own
    routes through ``app.state.auth``, as the console's does).
    """
    policy = AuthPolicy(worker_config, allow_unauthenticated)
    app = FastAPI(
        title="Sluice hub REST API",
        version=__version__,
        description=_DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.herder = herder
    app.state.auth = policy
    app.state.worker_config = worker_config
    app.state.logger_levels_modified = {}
    install_error_handlers(app)
    # Middleware added later runs first: CORS answers preflights before OPTIONS is handled.
    app.add_middleware(AllowedMethods)
    _install_cors(app, worker_config)
    limits.install(app, worker_config)  # a refused body is never buffered
    app.add_middleware(HostGuard, policy=HostPolicy.from_config(worker_config))  # outermost
    # Without credentials (the loopback opt-out) no scheme is declared, so a stray or malformed
    # Authorization header cannot fail a request; Origin rules still apply (policy.check).
    secured = [Depends(policy if policy.required else policy.check)]
    app.state.metrics_registry = metrics.registry_for(herder, pipelines)
    for module in (root, connectors, offsets, plugins, loggers, metrics, workers):
        app.include_router(module.router, dependencies=secured)
    app.include_router(health.router)  # probes send no credentials (hub/rest/health.py)
    if pipelines is not None:
        pipelines_module.install(app, pipelines, secured)  # /pipelines
    app.include_router(ingest.router)  # webhook senders: per-connector auth (hub/rest/ingest.py)
    app.include_router(login.router)  # /console/login|logout|session: the console's sign-in
    for router in routers:
        app.include_router(router)
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
