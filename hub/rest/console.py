"""The web console: its static pages under ``/ui`` and the broker data it needs under
``/console/api`` (topics, messages, consumer groups, rates) that Kafka Connect's API lacks.

Connectors are managed by the pages through the ordinary Connect endpoints; only broker data
lives here, read with standard Kafka clients against the worker's ``bootstrap.servers`` (see
``ui/``), so the console works the same against any Kafka cluster.

Authentication: the static files are public (like ``/docs``: they hold no data, and the page
must load before a user can type a token into it); every ``/console/api`` call is checked with
the REST API's own ``Authenticator`` against the worker config the herder runs with. The
console API is the pages' private backend, not a stable API, so it stays out of the OpenAPI
document.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Annotated, Any

from confluent_kafka import KafkaError, KafkaException
from fastapi import APIRouter, Body, Depends, Query, Request, Response
from fastapi.responses import FileResponse, RedirectResponse

from hub.rest._settings import setting
from hub.rest.auth import Authenticator, auth_configured
from hub.rest.errors import RestError
from ui import STATIC_DIR
from ui import groups as groups_api
from ui import messages as messages_api
from ui.kafka_admin import KafkaAdmin
from ui.rates import RateSampler

_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}
_STATUS = {
    KafkaError.TOPIC_ALREADY_EXISTS: 409,
    KafkaError.UNKNOWN_TOPIC_OR_PART: 404,
    KafkaError.GROUP_ID_NOT_FOUND: 404,
    KafkaError.NON_EMPTY_GROUP: 409,
    KafkaError.INVALID_CONFIG: 400,
    KafkaError.INVALID_PARTITIONS: 400,
    KafkaError.INVALID_REPLICATION_FACTOR: 400,
    KafkaError.TOPIC_EXCEPTION: 400,
    KafkaError.POLICY_VIOLATION: 400,
    KafkaError.INVALID_REQUEST: 400,
    KafkaError._TRANSPORT: 503,
    KafkaError._TIMED_OUT: 503,
    KafkaError._ALL_BROKERS_DOWN: 503,
}
_lock = threading.Lock()


class Console:
    """Per-app state: one admin client and one rate sampler, made on first use."""

    def __init__(self, worker_config: Any) -> None:
        client = worker_config.client_config("admin")
        internal = [
            setting(worker_config, key)
            for key in ("config.storage.topic", "offset.storage.topic", "status.storage.topic")
        ]
        self.admin = KafkaAdmin(client, [t for t in internal if t])
        interval = float(setting(worker_config, "console.rates.interval.ms", 5000)) / 1000
        self.rates = RateSampler(self.admin, interval=interval)


def _worker_config(request: Request) -> Any:
    return getattr(request.app.state.herder, "config", None)


def _authenticate(request: Request) -> None:
    config = _worker_config(request)
    if config is not None and auth_configured(config):
        Authenticator(config)(request, None, None)


def _console(request: Request) -> Console:
    state = request.app.state
    with _lock:
        console: Console | None = getattr(state, "console", None)
        if console is None:
            config = _worker_config(request)
            if config is None or not hasattr(config, "client_config"):
                raise RestError(503, "The console needs a worker with bootstrap.servers")
            console = state.console = Console(config)
    console.rates.touch()
    return console


ConsoleDep = Annotated[Console, Depends(_console)]


@contextmanager
def _translated() -> Iterator[None]:
    """Kafka and input errors as Connect-shaped REST errors with a fitting status."""
    try:
        yield
    except KafkaException as exc:
        err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
        status = _STATUS.get(err.code(), 500) if err is not None else 500
        raise RestError(status, err.str() if err is not None else str(exc)) from exc
    except groups_api.GroupBusyError as exc:
        raise RestError(409, str(exc)) from exc
    except LookupError as exc:
        raise RestError(404, str(exc.args[0] if exc.args else exc)) from exc
    except (ValueError, TypeError) as exc:
        raise RestError(400, str(exc)) from exc
    except TimeoutError as exc:
        raise RestError(503, str(exc) or "The Kafka cluster did not answer in time") from exc


@asynccontextmanager
async def _lifespan(app: Any) -> AsyncIterator[None]:
    """Stops the rate sampler with the app, so no thread outlives the server it served."""
    yield
    console: Console | None = getattr(app.state, "console", None)
    if console is not None:
        console.rates.stop()


router = APIRouter(include_in_schema=False, lifespan=_lifespan)
api = APIRouter(prefix="/console/api", dependencies=[Depends(_authenticate)])


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
    with _translated():
        return {**console.admin.overview(), "rates": console.rates.snapshot()}


@api.get("/rates")
def rates(console: ConsoleDep) -> dict[str, Any]:
    return console.rates.snapshot()


@api.get("/topics")
def list_topics(console: ConsoleDep) -> list[dict[str, Any]]:
    with _translated():
        rows = console.admin.topics()
    per_topic = console.rates.topic_rates()
    return [{**row, "messages_per_sec": per_topic.get(row["name"])} for row in rows]


@api.post("/topics", status_code=201)
def create_topic(console: ConsoleDep, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    name = str(body.get("name") or "").strip()
    if not name:
        raise RestError(400, "A topic name is required", {"name": ["required"]})
    with _translated():
        configs = {str(k): str(v) for k, v in (body.get("configs") or {}).items()}
        console.admin.create_topic(
            name,
            int(body.get("partitions") or 1),
            int(body.get("replication_factor") or 1),
            configs,
        )
        return console.admin.topic(name)


@api.get("/topics/{topic}")
def get_topic(console: ConsoleDep, topic: str) -> dict[str, Any]:
    with _translated():
        return console.admin.topic(topic)


@api.get("/topics/{topic}/partitions")
def get_partitions(console: ConsoleDep, topic: str) -> list[dict[str, Any]]:
    with _translated():
        partitions: list[dict[str, Any]] = console.admin.topic(topic)["partitions"]
        return partitions


@api.delete("/topics/{topic}", status_code=204)
def delete_topic(console: ConsoleDep, topic: str) -> Response:
    with _translated():
        console.admin.delete_topic(topic)
    return Response(status_code=204)


@api.patch("/topics/{topic}/configs")
def alter_configs(
    console: ConsoleDep, topic: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{key: value}`` sets keys; a ``null`` value returns the key to its default."""
    with _translated():
        set_ = {str(k): str(v) for k, v in body.items() if v is not None}
        console.admin.alter_topic_configs(topic, set_, [k for k, v in body.items() if v is None])
        return console.admin.topic(topic)


@api.get("/topics/{topic}/messages")
def browse(
    console: ConsoleDep,
    topic: str,
    start: str = "latest",
    partition: int | None = None,
    offset: int | None = None,
    timestamp: int | None = None,
    positions: Annotated[str, Query(description="p:o,p:o — continue a live tail")] = "",
    limit: int = 50,
    q: str = "",
) -> dict[str, Any]:
    with _translated():
        given = {
            int(p): int(o) for p, o in (pair.split(":") for pair in positions.split(",") if pair)
        }
        return messages_api.browse(
            console.admin, topic, start=start, partition=partition, offset=offset,
            timestamp_ms=timestamp, positions=given, limit=limit, text=q,
        )  # fmt: skip


@api.post("/topics/{topic}/messages", status_code=201)
def produce(
    console: ConsoleDep, topic: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    headers = body.get("headers") or {}
    if not isinstance(headers, dict):
        raise RestError(400, "headers must be an object of name: value", {"headers": ["object"]})
    partition = body.get("partition")
    with _translated():
        return messages_api.produce(
            console.admin, topic, value=body.get("value"), key=body.get("key"),
            headers={str(k): str(v) for k, v in headers.items()},
            partition=None if partition in (None, "") else int(partition),
        )  # fmt: skip


@api.get("/groups")
def list_groups(console: ConsoleDep) -> list[dict[str, Any]]:
    with _translated():
        return groups_api.list_groups(console.admin)


@api.get("/groups/{group}")
def get_group(console: ConsoleDep, group: str) -> dict[str, Any]:
    with _translated():
        return groups_api.describe(console.admin, group)


@api.post("/groups/{group}/reset-offsets")
def reset_offsets(
    console: ConsoleDep, group: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{"to": "earliest|latest|offset|timestamp", "topic"?, "offset"?, "timestamp"?}``."""
    with _translated():
        written = groups_api.reset_offsets(
            console.admin, group, to=str(body.get("to", "")), topic=body.get("topic") or None,
            offset=None if body.get("offset") in (None, "") else int(body["offset"]),
            timestamp_ms=None if body.get("timestamp") in (None, "") else int(body["timestamp"]),
        )  # fmt: skip
        return {"group_id": group, "offsets": written}


router.include_router(api)
