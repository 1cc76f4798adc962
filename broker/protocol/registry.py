"""The api-key table: which handler serves which Kafka API, and for which versions.

Handler modules in ``broker.protocol.handlers`` register themselves with :func:`handles` when
imported; the connection loop looks a request up by ``(api_key, api_version)`` and ApiVersions
advertises exactly the ranges registered here, so a version is advertised if and only if a
handler claims it. There is no central dispatcher to edit when an API is added (Kafka's
``KafkaApis`` match is the thing we avoid).

A handler is ``async def handler(ctx: RequestContext, request) -> response | None``. It returns
the kio response entity for ``ctx.api_version`` (``response_class(ctx)`` finds the class), or
``None`` when the protocol says no response is sent (Produce with ``acks=0``). Handlers must
turn expected failures into error codes in the response; an exception escaping a handler is a
bug: the connection logs it and closes, the broker keeps running. The one deliberate way to
drop a connection is raising :class:`CloseConnection` (Produce with ``acks=0`` that failed:
closing is the only signal such a producer gets, as in Kafka).

Handlers run on the event loop, one request at a time per connection (responses must go out in
request order), so a handler that waits (Fetch long-poll) only delays its own connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from broker.protocol._legacy_schemas import load_response
from broker.security.principal import ANONYMOUS, KafkaPrincipal

if TYPE_CHECKING:
    from broker.app import Broker
    from broker.security.sasl import SaslSession

Handler = Callable[["RequestContext", Any], Awaitable[Any]]
H = TypeVar("H", bound=Handler)


@dataclass
class RequestContext:
    """What a handler knows about the request besides its body."""

    broker: Broker
    """``broker.app.Broker``: ``.config``, ``.logs`` (LogManager), ``.coordinator``,
    ``.producer_ids``."""
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    hung_up: asyncio.Future[None] | None = None
    """Resolves when the client disconnects (a waiting handler may stop waiting then)."""
    throttle_ms: int = 0
    """Set by a handler whose client went over a byte-rate quota: the connection puts it in
    the response's ``throttle_time_ms`` and mutes the channel that long."""
    principal: KafkaPrincipal = ANONYMOUS
    """Who the connection authenticated as (``User:ANONYMOUS`` when it did not)."""
    listener: str = "PLAINTEXT"
    """The listener the client connected to: Metadata advertises that listener's address."""
    sasl: SaslSession | None = None
    """The connection's SASL exchange on a SASL listener (SaslHandshake/SaslAuthenticate)."""


class Deferred:
    """A response that completes later, returned by a handler that must wait for something
    other than this connection (cluster mode: Produce with acks=all waiting for the ISR).

    The connection starts ``awaitable`` at once and goes on reading the next request, but
    writes every response in request order: later responses queue behind this one. So a
    client pipelining acks=all produces (librdkafka does) gets their replication waits
    overlapped instead of serialised, while response order, which Kafka clients rely on, is
    kept. Only handlers whose side effects are already done when they return may defer
    (Produce appends before deferring), so request order is also the order of effects.
    """

    __slots__ = ("awaitable",)

    def __init__(self, awaitable: Awaitable[Any]) -> None:
        self.awaitable = awaitable


class CloseConnection(Exception):
    """Raised by a handler to close the client's connection without a response."""


@dataclass(frozen=True)
class Registration:
    """One handler and the inclusive version range it implements."""

    api_key: int
    min_version: int
    max_version: int
    handler: Handler


_REGISTRY: dict[int, Registration] = {}


def handles(api_key: int, min_version: int, max_version: int) -> Callable[[H], H]:
    """Decorator: registers ``async def handler(ctx, request)`` for those versions.

    Registering an api key twice is a programming error (two modules claiming one API) and
    raises at import time rather than silently shadowing one of them.
    """
    if min_version > max_version:
        raise ValueError(f"api {api_key}: min_version {min_version} > max_version {max_version}")

    def register(handler: H) -> H:
        existing = _REGISTRY.get(api_key)
        if existing is not None and existing.handler is not handler:
            raise RuntimeError(
                f"api {api_key} is already handled by "
                f"{existing.handler.__module__}.{existing.handler.__qualname__}"
            )
        _REGISTRY[api_key] = Registration(api_key, min_version, max_version, handler)
        return handler

    return register


def lookup(api_key: int) -> Registration | None:
    """The registration for an api key, or None if no handler claims it."""
    return _REGISTRY.get(api_key)


def registrations() -> list[Registration]:
    """Every registered API, ordered by api key (the order ApiVersions lists them in)."""
    return [_REGISTRY[key] for key in sorted(_REGISTRY)]


def response_class(ctx: RequestContext) -> Any:
    """The kio response entity class matching the request's api key and version."""
    return _response_class(ctx.api_key, ctx.api_version)


@cache
def _response_class(api_key: int, version: int) -> Any:
    # kio resolves schemas through importlib on every call; one lookup per (key, version)
    # is enough and was ~5% of the broker's CPU under a produce load.
    return load_response(api_key, version)
