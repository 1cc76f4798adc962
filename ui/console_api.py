"""The web console: its static pages under ``/ui`` and the broker data it needs under
``/console/api`` (topics, messages, consumer groups, cluster, rates) that Kafka Connect's API
lacks.

Connectors are managed by the pages through the ordinary Connect endpoints; only broker data
lives here, read through the shared admin layer (``kafka_admin``) against the worker's
``bootstrap.servers``, so the console works the same against any Kafka cluster. The router
is the console's: the application adds it to the hub's REST app (``sluice.web``); it uses the
REST layer's authentication and error shape. Routes by resource: ``ui.api_topics``,
``ui.api_groups``, ``ui.api_cluster``, ``ui.api_security``; shared state and error translation:
``ui.console_state``.

Authentication: the static files are public (like ``/docs``: they hold no data, and the page
must load before a user can sign in); every ``/console/api`` call goes through the app's
``AuthPolicy`` like the Connect routes (credential header or session cookie, CSRF rules). The
console API is the pages' private backend, not a stable API, so it stays out of the OpenAPI
document.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import FileResponse, RedirectResponse

from hub.rest.errors import RestError
from ui import STATIC_DIR, api_cluster, api_groups, api_metrics, api_security, api_topics
from ui import schemas as schemas_api
from ui.console_state import Console, ConsoleDep, authenticate, translated

_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}


@asynccontextmanager
async def _lifespan(app: Any) -> AsyncIterator[None]:
    """Stops the rate sampler with the app, so no thread outlives the server it served."""
    yield
    console: Console | None = getattr(app.state, "console", None)
    if console is not None:
        console.rates.stop()


router = APIRouter(include_in_schema=False, lifespan=_lifespan)
api = APIRouter(prefix="/console/api", dependencies=[Depends(authenticate)])


# -- static pages -------------------------------------------------------------------------------
@router.api_route("/ui", methods=["GET", "HEAD"])
def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/")


@router.api_route("/ui/{path:path}", methods=["GET", "HEAD"])
def ui_file(path: str) -> Response:
    """A file of the console; ``/ui/`` is its single page (routes live in the URL hash)."""
    target = (STATIC_DIR / (path or "index.html")).resolve()
    if not target.is_relative_to(STATIC_DIR) or not target.is_file():
        raise RestError(404, "HTTP 404 Not Found")
    return FileResponse(
        target,
        media_type=_TYPES.get(target.suffix),
        headers={"Cache-Control": "no-cache"},  # revalidate: an upgraded hub serves new files
    )


# -- broker data --------------------------------------------------------------------------------
@api.get("/overview")
def overview(console: ConsoleDep) -> dict[str, Any]:
    with translated():
        return {**console.admin.overview(), "rates": console.rates.snapshot()}


@api.get("/rates")
def rates(console: ConsoleDep) -> dict[str, Any]:
    return console.rates.snapshot()


@api.get("/connectors/{name}/throughput")
def connector_throughput(name: str, request: Request) -> dict[str, Any]:
    """Record totals of the connector's tasks here, from the hub's own metrics collectors."""
    return api_metrics.connector_totals(request.app.state.metrics_registry, name)


@api.get("/schemas")
def list_subjects(console: ConsoleDep) -> dict[str, Any]:
    if console.registry is None:
        return {"configured": False, "subjects": []}
    with _registry_errors():
        return {"configured": True, "url": console.registry.client.urls[0],
                "subjects": schemas_api.subjects(console.registry.client)}  # fmt: skip


@api.get("/schemas/{subject}")
def get_subject(console: ConsoleDep, subject: str) -> dict[str, Any]:
    if console.registry is None:
        raise RestError(404, "No schema registry configured (schema.registry.url)")
    with _registry_errors():
        return schemas_api.subject(console.registry.client, subject)


@contextmanager
def _registry_errors() -> Iterator[None]:
    from schema_registry.client import RegistryClientError

    try:
        yield
    except RegistryClientError as exc:
        raise RestError(exc.status or 503, exc.message) from exc


api.include_router(api_topics.router)
api.include_router(api_groups.router)
api.include_router(api_cluster.router)
api.include_router(api_security.router)
router.include_router(api)
